"""`trainlib.keras.layers`: Keras 3's `keras.layers` names, re-exported from where they live."""
from ..layers import *  # noqa: F401,F403
from ..layers import __all__  # noqa: F401
