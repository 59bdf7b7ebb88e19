"""`tl.regularizers` (Keras 3's `keras.regularizers`): penalties on weights and activations.

Owns: Regularizer and its L1, L2, L1L2 and OrthogonalRegularizer subclasses with
Keras 3's formulas, defaults, argument checks and string names ("l1", "l2",
"l1l2", "orthogonal_regularizer" and the class names), and `get`/`serialize`/
`deserialize` in Keras 3's config form. A regularizer maps a tensor to a scalar
penalty in that tensor's dtype; layers add it to `layer.losses`, which `fit` adds
to the loss.
"""
import math

import numpy as np

from .object_registry import Configurable, Family
from .graph.op import convert_to_tensor
from .graph.ops import array as _array, math as _math

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "get", "serialize", "deserialize"]


def _check_factor(value, name):
    if isinstance(value, bool) or not isinstance(value, (float, int)) or math.isinf(value) \
            or math.isnan(value) or value < 0:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


class Regularizer(Configurable):
    """Base class: `regularizer(x)` is a scalar penalty; subclasses implement `__call__`
    and `get_config` (`Configurable.get_config` when the config is the `__init__` arguments).

    Example:
        >>> tl.regularizers.L2(2.0)(tl.ones((5, 5))).numpy()
        50.0
    """

    def __call__(self, x):
        return 0.0

    def get_config(self):
        raise NotImplementedError(f"{self} does not implement get_config()")


class L1L2(Regularizer):
    """`l1 * sum(|x|) + l2 * sum(x**2)` (by name: "l1l2" or "l1_l2", both factors 0.0).

    Args:
        l1: the L1 factor (default 0.0).
        l2: the L2 factor (default 0.0).
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _check_factor(0.0 if l1 is None else l1, "l1")
        self.l2 = _check_factor(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        penalty = _math.cast(0.0, x.dtype)
        if self.l1:
            penalty = penalty + _math.cast(self.l1, x.dtype) * _math.reduce_sum(_math.abs(x))
        if self.l2:
            penalty = penalty + _math.cast(self.l2, x.dtype) * _math.reduce_sum(_math.square(x))
        return penalty

    get_config = Configurable.get_config


class L1(Regularizer):
    """`l1 * sum(|x|)`.

    Args:
        l1: the factor (default 0.01).
    """

    def __init__(self, l1=0.01):
        self.l1 = _check_factor(0.01 if l1 is None else l1, "l1")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return _math.cast(self.l1, x.dtype) * _math.reduce_sum(_math.abs(x))

    def get_config(self):
        return {"l1": float(np.float32(self.l1))}  # Keras holds it as a float32 tensor


class L2(Regularizer):
    """`l2 * sum(x**2)`.

    Args:
        l2: the factor (default 0.01).
    """

    def __init__(self, l2=0.01):
        self.l2 = _check_factor(0.01 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return _math.cast(self.l2, x.dtype) * _math.reduce_sum(_math.square(x))

    get_config = Configurable.get_config


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a rank-2 weight towards orthogonality:
    `factor * 0.5 * sum(|N N^T - diag|) / (n (n - 1) / 2)` over the L2-normalized rows N.

    Args:
        factor: the factor (default 0.01).
        mode: "rows" (default) or "columns".
    """

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _check_factor(factor, "factor")
        if mode not in ("rows", "columns"):
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", '
                             f'"columns"}}. Received: mode={mode}')
        self.mode = mode

    def __call__(self, x):
        x = convert_to_tensor(x)
        if x.shape.rank != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={tuple(x.shape)}")
        axis = 1 if self.mode == "rows" else 0
        # Keras's L2 normalize: x * min(rsqrt(sum(x**2)), 1 / epsilon), epsilon 1e-7
        inv_norm = _math.rsqrt(_math.reduce_sum(_math.square(x), axis=axis, keepdims=True))
        n = x * _math.minimum(inv_norm, _math.cast(1e7, x.dtype))
        if self.mode == "rows":
            product, size = _math.matmul(n, _array.transpose(n)), x.shape[0]
        else:
            product, size = _math.matmul(_array.transpose(n), n), x.shape[1]
        off_diagonal = product * (1.0 - _array.eye(size, dtype=x.dtype))
        pairs = size * (size - 1.0) / 2.0
        return _math.cast(self.factor, x.dtype) * 0.5 * \
            _math.reduce_sum(_math.abs(off_diagonal)) / pairs

    def get_config(self):
        return {"factor": float(np.float32(self.factor)), "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer

_BY_NAME = {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
# Keras 3 names them by its snake case of the class name ("l1l2"); its docs say "l1_l2"
_BY_NAME.update({"regularizer": Regularizer, "l1": L1, "l2": L2, "l1l2": L1L2, "l1_l2": L1L2,
                 "orthogonal_regularizer": OrthogonalRegularizer})


_FAMILY = Family("regularizer", "keras.regularizers", Regularizer, _BY_NAME)
# Keras 3's keras.regularizers.get / serialize / deserialize
get, serialize, deserialize = _FAMILY.get, _FAMILY.serialize, _FAMILY.deserialize
