"""`trainlib.keras.mixed_precision`: Keras 3's `keras.mixed_precision` names, re-exported from
where they live."""
from ..mixed_precision import *  # noqa: F401,F403
from ..mixed_precision import __all__ as _policies
from ..optim.loss_scale_optimizer import LossScaleOptimizer  # noqa: F401

__all__ = list(_policies) + ["LossScaleOptimizer"]
