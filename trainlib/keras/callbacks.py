"""`trainlib.keras.callbacks`: Keras 3's `keras.callbacks` names, re-exported from where they live."""
from ..callbacks import *  # noqa: F401,F403
from ..callbacks import __all__  # noqa: F401
