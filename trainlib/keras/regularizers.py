"""`trainlib.keras.regularizers`: Keras 3's `keras.regularizers` names, re-exported from where they live."""
from ..regularizers import *  # noqa: F401,F403
from ..regularizers import __all__  # noqa: F401
