"""`keras.applications.resnet50`: ResNet50 with ResNet's `preprocess_input` and
`decode_predictions` (all defined in `resnet.py`; this module only re-exports)."""
from .resnet import ResNet50, decode_predictions, preprocess_input  # noqa: F401
