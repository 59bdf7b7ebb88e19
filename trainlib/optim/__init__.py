"""`tl.optim`: optimizers (Keras 3's math) and learning-rate schedules.

`get("adam")` resolves the strings `Model.compile` accepts.
"""
from . import schedules  # noqa: F401
from .base import Optimizer
from .optimizers import SGD, Adagrad, Adam, AdamW, RMSprop
from .loss_scale_optimizer import LossScaleOptimizer

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LossScaleOptimizer",
           "schedules", "get"]

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
            "lossscaleoptimizer": LossScaleOptimizer}


def get(identifier):
    """An optimizer from a name ("adam", "sgd", ...) or an instance.

    Raises:
        ValueError: for an unknown name.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer {identifier!r}; expected one of {sorted(_BY_NAME)}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier["class_name"].lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer class {identifier['class_name']!r}")
        return cls.from_config(identifier["config"])
    raise TypeError(f"Could not interpret optimizer {identifier!r}")
