"""`trainlib.keras.initializers`: Keras 3's `keras.initializers` names, re-exported from where they live."""
from ..initializers import *  # noqa: F401,F403
from ..initializers import __all__  # noqa: F401
