"""`trainlib.keras.metrics`: Keras 3's `keras.metrics` names, re-exported from where they live."""
from ..metrics import *  # noqa: F401,F403
from ..metrics import __all__  # noqa: F401
