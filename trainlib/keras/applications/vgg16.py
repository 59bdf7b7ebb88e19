"""`keras.applications.vgg16` (re-exports `trainlib.applications.vgg16`)."""
from ...applications.vgg16 import VGG16, decode_predictions, preprocess_input  # noqa: F401
