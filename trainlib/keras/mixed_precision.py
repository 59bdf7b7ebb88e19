"""`trainlib.keras.mixed_precision`: Keras 3's `keras.mixed_precision` names, re-exported from
where they live."""
from ..mixed_precision import *  # noqa: F401,F403
from ..mixed_precision import __all__  # noqa: F401
