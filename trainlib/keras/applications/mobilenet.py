"""`keras.applications.mobilenet` (re-exports `trainlib.applications.mobilenet`)."""
from ...applications.mobilenet import MobileNet, decode_predictions, preprocess_input  # noqa: F401
