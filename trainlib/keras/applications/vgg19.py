"""`keras.applications.vgg19` (re-exports `trainlib.applications.vgg19`)."""
from ...applications.vgg19 import VGG19, decode_predictions, preprocess_input  # noqa: F401
