"""`keras.applications.imagenet_utils` (re-exports `trainlib.applications.imagenet_utils`)."""
from ...applications.imagenet_utils import decode_predictions, preprocess_input  # noqa: F401
