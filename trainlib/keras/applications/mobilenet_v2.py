"""`keras.applications.mobilenet_v2` (re-exports `trainlib.applications.mobilenet_v2`)."""
from ...applications.mobilenet_v2 import MobileNetV2, decode_predictions, preprocess_input  # noqa: F401
