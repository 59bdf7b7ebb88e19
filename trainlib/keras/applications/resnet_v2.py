"""`keras.applications.resnet_v2` (re-exports `trainlib.applications.resnet_v2`)."""
from ...applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2, decode_predictions, preprocess_input  # noqa: F401
