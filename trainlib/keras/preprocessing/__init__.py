"""`trainlib.keras.preprocessing`: tf.keras 2's `keras.preprocessing` (image generators, text,
`sequence.pad_sequences`), re-exported from where they live."""
from . import image, sequence, text  # noqa: F401
