"""`trainlib.keras.utils`: Keras 3's `keras.utils` names, re-exported from where they live."""
from ..utils import *  # noqa: F401,F403
from ..utils import __all__ as _utils_all

__all__ = list(_utils_all)
