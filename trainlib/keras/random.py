"""`trainlib.keras.random`: Keras 3's `keras.random` names, re-exported from where they live."""
from ..keras_random import *  # noqa: F401,F403
from ..keras_random import __all__  # noqa: F401
