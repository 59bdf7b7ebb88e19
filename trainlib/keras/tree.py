"""`trainlib.keras.tree`: Keras 3's `keras.tree` names, re-exported from where they live."""
from ..tree import *  # noqa: F401,F403
from ..tree import __all__  # noqa: F401
