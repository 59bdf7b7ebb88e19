"""`tl.constraints` (Keras 3's `keras.constraints`): projections applied to a weight after
each optimizer update.

Owns: Constraint and MaxNorm, MinMaxNorm, NonNeg, UnitNorm with Keras 3's formulas
(norms over `axis`, epsilon 1e-7), defaults and string names, and `get`/`serialize`/
`deserialize`. `add_weight(constraint=...)` attaches one to a Variable; the optimizer
assigns `constraint(variable)` right after that variable's update, inside the same
train-step graph.
"""
from .object_registry import Configurable, Family
from .graph.op import convert_to_tensor
from .graph.ops import math as _math

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]

_EPSILON = 1e-7


def _norms(w, axis):
    return _math.sqrt(_math.reduce_sum(_math.square(w), axis=axis, keepdims=True))


class Constraint(Configurable):
    """Base class: `constraint(w)` returns the projected weight (the default: `w` itself).

    Example:
        >>> tl.constraints.NonNeg()(tl.constant([-1.0, 1.0])).numpy()
        array([0., 1.], dtype=float32)
    """

    def __call__(self, w):
        return w


class MaxNorm(Constraint):
    """Rescales the weights along `axis` whose L2 norm exceeds `max_value` down to it.

    Args:
        max_value: the largest norm (default 2).
        axis: the axis (or axes) the norms are taken over (default 0: each unit's
            incoming weights of a Dense kernel).
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = _math.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (_EPSILON + norms))


class NonNeg(Constraint):
    """Sets negative weights to zero."""

    def __call__(self, w):
        return _math.maximum(convert_to_tensor(w), 0.0)


class UnitNorm(Constraint):
    """Divides the weights along `axis` by their L2 norm.

    Args:
        axis: the axis (or axes) the norms are taken over (default 0).
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        return w / (_EPSILON + _norms(w, self.axis))


class MinMaxNorm(Constraint):
    """Moves the L2 norms along `axis` into [min_value, max_value], by `rate`:
    `norm -> rate * clip(norm, min_value, max_value) + (1 - rate) * norm`.

    Args:
        min_value: the smallest norm (default 0.0).
        max_value: the largest norm (default 1.0).
        rate: 1.0 enforces the bounds at once, less moves towards them.
        axis: the axis (or axes) the norms are taken over (default 0).
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = self.rate * _math.clip_by_value(norms, float(self.min_value),
                                                  float(self.max_value)) + (1 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

_BY_NAME = {cls.__name__: cls for cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}
_BY_NAME.update({"constraint": Constraint, "max_norm": MaxNorm, "min_max_norm": MinMaxNorm,
                 "non_neg": NonNeg, "unit_norm": UnitNorm})


_FAMILY = Family("constraint", "keras.constraints", Constraint, _BY_NAME)
# Keras 3's keras.constraints.get / serialize / deserialize
get, serialize, deserialize = _FAMILY.get, _FAMILY.serialize, _FAMILY.deserialize
