"""`tl.activations`: activation functions by Keras name ("relu", "softmax", ...).

Owns: the name -> function table and `get`/`serialize`. Each activation is a
thin call of public ops, so it traces and differentiates like any op.
`sigmoid` and `softmax` remember their eager inputs (`logits_of`), as Keras 3
keeps `_keras_logits`, so the cross-entropy losses compute from the logits
(traced outputs are recognized by their Sigmoid/Softmax op instead).
"""
import weakref

from .graph.ops import math as math_ops
from .graph.ops import nn as nn_ops
from .graph.tensor import Tensor

_EAGER_LOGITS = {}   # id(eager output) -> (weak reference to it, its logits)


def _keep_logits(output, logits):
    if isinstance(output, Tensor):
        key = id(output)
        _EAGER_LOGITS[key] = (weakref.ref(output, lambda _: _EAGER_LOGITS.pop(key, None)), logits)
    return output


def logits_of(output, op_type):
    """The logits `output` was computed from by a `op_type` ("Sigmoid"/"Softmax") op, or None.

    Keras 3 (TensorFlow backend) finds them the same two ways: the logits an
    activation kept on its eager output, or the input of the op that made a
    traced tensor.
    """
    entry = _EAGER_LOGITS.get(id(output))
    if entry is not None and entry[0]() is output:
        return entry[1]
    op = getattr(output, "op", None)
    if op is not None and getattr(op, "type", None) == op_type and len(op.inputs) == 1:
        return op.inputs[0]
    return None

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "linear", "elu", "selu",
           "softplus", "swish", "silu", "exponential", "leaky_relu", "get", "serialize"]


def relu(x):
    """max(x, 0)."""
    return nn_ops.relu(x)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return _keep_logits(math_ops.sigmoid(x), x)


def tanh(x):
    """Hyperbolic tangent."""
    return math_ops.tanh(x)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`."""
    return _keep_logits(nn_ops.softmax(x, axis=axis), x)


def log_softmax(x, axis=-1):
    """log(softmax(x)) along `axis`, computed stably."""
    return nn_ops.log_softmax(x, axis=axis)


def gelu(x, approximate=False):
    """Gaussian error linear unit (Keras default: the exact erf form)."""
    return nn_ops.gelu(x, approximate=approximate)


def linear(x):
    """The identity."""
    return x


def elu(x, alpha=1.0):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    return math_ops.where(x > 0, x, alpha * (math_ops.exp(math_ops.minimum(x, 0.0)) - 1.0))


def selu(x):
    """Scaled ELU with Keras's constants."""
    alpha, scale = 1.67326324, 1.05070098
    return scale * elu(x, alpha)


def softplus(x):
    """log(1 + exp(x)), computed stably."""
    return math_ops.maximum(x, 0.0) + math_ops.log1p(math_ops.exp(-math_ops.abs(x)))


def swish(x):
    """x * sigmoid(x)."""
    return x * math_ops.sigmoid(x)


silu = swish


def exponential(x):
    """exp(x)."""
    return math_ops.exp(x)


def leaky_relu(x, negative_slope=0.2):
    """x if x > 0 else negative_slope * x."""
    return math_ops.maximum(x, x * negative_slope)


_BY_NAME = {f.__name__: f for f in (relu, sigmoid, tanh, softmax, log_softmax, gelu, linear, elu,
                                     selu, softplus, swish, exponential, leaky_relu)}
_BY_NAME["silu"] = swish


def get(identifier):
    """The activation for a name, None (linear) or a callable.

    Raises:
        ValueError: for an unknown name.
    """
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation {identifier!r}; expected one of {sorted(_BY_NAME)}")
        return fn
    raise TypeError(f"Could not interpret activation {identifier!r}")


def serialize(activation):
    """The Keras name of an activation (its function name for custom callables)."""
    return getattr(activation, "__name__", str(activation))
