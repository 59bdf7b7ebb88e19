"""`trainlib.keras.models`: Keras 3's `keras.models` names, re-exported from where they live."""
from ..models import *  # noqa: F401,F403
from ..models import __all__  # noqa: F401
