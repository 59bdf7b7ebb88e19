"""`tl.types`: type names for annotations and isinstance checks (TensorFlow's `tf.types`).
Only re-exports: `tl.types.experimental` lives in `experimental.py`."""
from . import experimental  # noqa: F401
