"""`trainlib.keras.preprocessing.image`: `ImageDataGenerator` and the image file helpers,
re-exported from where they live."""
from ...image_generator import *  # noqa: F401,F403
from ...image_generator import __all__  # noqa: F401
