"""`trainlib.keras.constraints`: Keras 3's `keras.constraints` names, re-exported from where they live."""
from ..constraints import *  # noqa: F401,F403
from ..constraints import __all__  # noqa: F401
