"""`trainlib.keras.optimizers.schedules`: learning-rate schedules, re-exported from `trainlib.optim.schedules`."""
from ...optim.schedules import *  # noqa: F401,F403
from ...optim.schedules import __all__  # noqa: F401
