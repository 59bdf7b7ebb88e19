"""`trainlib.keras.preprocessing`: tf.keras 2's `keras.preprocessing` (image generators,
`sequence.pad_sequences`), re-exported from where they live."""
from . import image, sequence  # noqa: F401
