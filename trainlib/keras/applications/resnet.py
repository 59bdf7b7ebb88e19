"""`keras.applications.resnet` (re-exports `trainlib.applications.resnet`)."""
from ...applications.resnet import ResNet50, ResNet101, ResNet152, decode_predictions, preprocess_input  # noqa: F401
