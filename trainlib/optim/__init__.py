"""`tl.optim`: optimizers (Keras 3's math) and learning-rate schedules.

`get("adam")` resolves the strings `Model.compile` accepts.
"""
from . import schedules  # noqa: F401
from .base import Optimizer, serialize
from .optimizers import SGD, Adagrad, Adam, AdamW, RMSprop
from .more_optimizers import (Adadelta, Adafactor, Adamax, Ftrl, Lamb, Lion, Muon, Nadam,
                              ScheduleFreeAdamW)
from .loss_scale_optimizer import LossScaleOptimizer
from .multi_optimizer import MultiOptimizer, OptimizerMap

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor",
           "Adamax", "Ftrl", "Lamb", "Lion", "Muon", "Nadam", "ScheduleFreeAdamW",
           "LossScaleOptimizer", "MultiOptimizer", "OptimizerMap", "schedules", "get",
           "serialize", "deserialize"]

_BY_NAME = {cls.__name__.lower(): cls for cls in (
    SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adafactor, Adamax, Ftrl, Lamb, Lion, Muon, Nadam,
    ScheduleFreeAdamW, LossScaleOptimizer, MultiOptimizer)}


def deserialize(config, custom_objects=None):
    """The optimizer a `serialize` dict (or a Keras 3 one) describes; class names match
    case-insensitively, `custom_objects` ({name: class}) adds user optimizers.

    Raises:
        ValueError: for an unknown class name.
    """
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer class {name!r}; expected one of "
                         f"{sorted(c.__name__ for c in _BY_NAME.values())} or a custom_objects "
                         "entry")
    config = dict(config.get("config", {}))
    if issubclass(cls, MultiOptimizer):   # its inner optimizers may be custom ones too
        return cls.from_config(config, custom_objects)
    return cls.from_config(config)


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
        return deserialize(identifier)
    raise TypeError(f"Could not interpret optimizer {identifier!r}")
