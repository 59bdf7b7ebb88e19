"""`trainlib.keras.saving`: Keras 3's `keras.saving` names, re-exported from where they live."""
from ..saving import *  # noqa: F401,F403
from ..saving import __all__  # noqa: F401
