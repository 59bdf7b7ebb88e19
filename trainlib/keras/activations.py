"""`trainlib.keras.activations`: Keras 3's `keras.activations` names, re-exported from where they live."""
from ..activations import *  # noqa: F401,F403
from ..activations import __all__  # noqa: F401
