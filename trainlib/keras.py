"""`tl.keras`: the Keras-level names under Keras's module layout, so ported code keeps working."""
from . import activations, callbacks, initializers, layers, losses, metrics, models  # noqa: F401
from . import optim as optimizers  # noqa: F401
from .models import Model, Sequential  # noqa: F401
