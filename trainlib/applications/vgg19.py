"""`keras.applications.vgg19`: VGG19 (built in `vgg.py`; this module only re-exports)."""
from .vgg import VGG19, decode_predictions, preprocess_input  # noqa: F401
