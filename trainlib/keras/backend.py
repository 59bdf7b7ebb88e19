"""`trainlib.keras.backend`: Keras 3's `keras.backend` names and tf.keras 2's helpers, re-exported
from where they live."""
from ..backend import *  # noqa: F401,F403
from ..backend import __all__  # noqa: F401
