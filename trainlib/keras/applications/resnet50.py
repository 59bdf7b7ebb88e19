"""`keras.applications.resnet50` (re-exports `trainlib.applications.resnet50`)."""
from ...applications.resnet50 import ResNet50, decode_predictions, preprocess_input  # noqa: F401
