"""`trainlib.keras.optimizers`: Keras 3's optimizers and `schedules`, re-exported from `trainlib.optim`."""
from ...optim import *  # noqa: F401,F403
from ...optim import __all__ as _optim_all
from . import schedules  # noqa: F401

__all__ = list(_optim_all)
