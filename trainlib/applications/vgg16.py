"""`keras.applications.vgg16`: VGG16 (built in `vgg.py`; this module only re-exports)."""
from .vgg import VGG16, decode_predictions, preprocess_input  # noqa: F401
