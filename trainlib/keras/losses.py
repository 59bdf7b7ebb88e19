"""`trainlib.keras.losses`: Keras 3's `keras.losses` names, re-exported from where they live."""
from ..losses import *  # noqa: F401,F403
from ..losses import __all__  # noqa: F401
