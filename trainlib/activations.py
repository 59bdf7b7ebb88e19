"""`tl.activations`: activation functions by Keras name ("relu", "softmax", ...).

Owns: the name -> function table and `get`/`serialize`. Each activation is a
thin call of public ops, so it traces and differentiates like any op.
`sigmoid` and `softmax` remember their inputs (`logits_of`), eager and traced, as
Keras 3 keeps `_keras_logits`, so the cross-entropy losses compute from the logits
(other traced outputs are recognized by their Sigmoid/Softmax op).
"""
import weakref

from .graph import dtypes as _dt
from .graph.op import convert_to_tensor
from .graph.ops import array as array_ops
from .graph.ops import math as math_ops
from .graph.ops import nn as nn_ops
from .graph.tensor import _TensorBase

_EAGER_LOGITS = {}   # id(output) -> (weak reference to it, its logits)


def _keep_logits(output, logits):
    # traced outputs too: Keras's losses read `_keras_logits` whatever the op (the sigmoid
    # cross-entropy of a softmax output is taken of the softmax's logits, eager and traced)
    if isinstance(output, _TensorBase):
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
           "softplus", "swish", "silu", "exponential", "leaky_relu", "get", "serialize",
           "deserialize", "relu6", "softsign", "log_sigmoid", "mish", "hard_sigmoid", "hard_silu",
           "hard_swish", "celu", "glu", "tanh_shrink", "hard_tanh", "hard_shrink", "soft_shrink",
           "threshold", "sparse_plus", "sparse_sigmoid", "squareplus", "sparsemax"]


def _floating(x):
    """`x` as a floating tensor (ints and bools become float32, as Keras's activations do)."""
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    return x if x.dtype.is_floating else math_ops.cast(x, _dt.float32)


def _cast(value, dtype):
    return math_ops.cast(value, dtype)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with Keras's options: a slope below the threshold, a cap at max_value, a
    threshold other than 0 (values at or below it give 0, or the slope's line).

    Example:
        >>> tl.activations.relu([-2.0, 1.0, 8.0], negative_slope=0.5, max_value=6.0).numpy()
        array([-1.,  1.,  6.], dtype=float32)
    """
    if negative_slope == 0 and max_value is None and threshold == 0:
        return nn_ops.relu(x)
    x = _floating(x)
    if negative_slope != 0 and max_value is None and threshold == 0:
        return nn_ops.leaky_relu(x, alpha=negative_slope)
    if negative_slope != 0:
        below = nn_ops.relu(_cast(threshold, x.dtype) - x)
    if threshold != 0:
        out = math_ops.where(math_ops.greater(x, _cast(threshold, x.dtype)), x,
                             array_ops.zeros_like(x))
    elif max_value == 6:
        out, max_value = nn_ops.relu6(x), None
    else:
        out = nn_ops.relu(x)
    if max_value is not None:
        out = math_ops.clip_by_value(out, _cast(0.0, x.dtype), _cast(max_value, x.dtype))
    if negative_slope != 0:
        out = out - _cast(negative_slope, x.dtype) * below
    return out


def relu6(x):
    """min(max(x, 0), 6)."""
    return nn_ops.relu6(x)


def softsign(x):
    """x / (1 + |x|)."""
    return math_ops.softsign(_floating(x))


def log_sigmoid(x):
    """log(sigmoid(x)), computed stably."""
    return math_ops.log_sigmoid(_floating(x))


def mish(x):
    """x * tanh(softplus(x)).

    Example:
        >>> round(float(tl.activations.mish(1.0)), 5)
        0.8651
    """
    x = _floating(x)
    return x * math_ops.tanh(math_ops.softplus(x))


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


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    x = _floating(x)
    return nn_ops.relu6(x + _cast(3.0, x.dtype)) / _cast(6.0, x.dtype)


def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = _floating(x)
    return x * hard_sigmoid(x)


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _floating(x)
    zero = array_ops.zeros_like(x)
    a = _cast(alpha, x.dtype)
    return math_ops.maximum(x, zero) + a * math_ops.expm1(math_ops.minimum(x, zero) / a)


def glu(x, axis=-1):
    """a * sigmoid(b) for the halves a, b of x along `axis`."""
    x = _floating(x)
    if x.shape[axis] is not None and x.shape[axis] % 2:
        raise ValueError(f"glu: axis size must be divisible by 2, got shape {x.shape} and axis {axis}")
    a, b = array_ops.split(x, 2, axis=axis)
    return a * math_ops.sigmoid(b)


def tanh_shrink(x):
    """x - tanh(x)."""
    x = _floating(x)
    return x - math_ops.tanh(x)


def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = _floating(x)
    return math_ops.minimum(math_ops.maximum(x, _cast(-1.0, x.dtype)), _cast(1.0, x.dtype))


def hard_shrink(x, threshold=0.5):
    """x where |x| > threshold, else 0."""
    x = _floating(x)
    return math_ops.where(math_ops.greater(math_ops.abs(x), _cast(threshold, x.dtype)), x, array_ops.zeros_like(x))


def soft_shrink(x, threshold=0.5):
    """x - threshold above it, x + threshold below -threshold, else 0."""
    x = _floating(x)
    t = _cast(threshold, x.dtype)
    return math_ops.where(math_ops.greater(x, t), x - t, math_ops.where(math_ops.less(x, -t), x + t, array_ops.zeros_like(x)))


def threshold(x, threshold, default_value):  # noqa: A002 -- Keras's names
    """x where x > threshold, else default_value."""
    x = _floating(x)
    return math_ops.where(math_ops.greater(x, _cast(threshold, x.dtype)), x,
                    array_ops.broadcast_to(_cast(default_value, x.dtype), array_ops.shape(x)))


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 for |x| < 1, x for x >= 1."""
    x = _floating(x)
    return math_ops.where(math_ops.less_equal(x, -1.0), array_ops.zeros_like(x),
                    math_ops.where(math_ops.less(x, 1.0), 0.25 * math_ops.square(x + 1.0), x))


def sparse_sigmoid(x):
    """0 for x <= -1, (x + 1) / 2 for |x| < 1, 1 for x >= 1."""
    x = _floating(x)
    return math_ops.where(math_ops.less_equal(x, -1.0), array_ops.zeros_like(x),
                    math_ops.where(math_ops.greater_equal(x, 1.0), array_ops.ones_like(x), 0.5 * (x + 1.0)))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    x = _floating(x)
    return (x + math_ops.sqrt(math_ops.square(x) + _cast(b, x.dtype))) / _cast(2.0, x.dtype)


def sparsemax(x, axis=-1):
    """The Euclidean projection of x onto the probability simplex along `axis`."""
    x = _floating(x)
    rank = x.shape.rank
    axis %= rank
    s = array_ops.sort(x, axis=axis, direction="DESCENDING")
    cs = math_ops.cumsum(s, axis=axis)
    n = x.shape[axis]
    shape = [1] * rank
    shape[axis] = n
    r = array_ops.reshape(math_ops.cast(array_ops.range(1, n + 1), x.dtype), shape)
    support = math_ops.greater(s - (cs - 1.0) / r, 0.0)
    k = math_ops.reduce_sum(math_ops.cast(support, x.dtype), axis=axis, keepdims=True)
    tau = (math_ops.reduce_sum(math_ops.where(support, cs, array_ops.zeros_like(cs)), axis=axis, keepdims=True) - 1.0) / k
    return math_ops.maximum(x - tau, array_ops.zeros_like(x))


hard_swish = hard_silu


_BY_NAME = {f.__name__: f for f in (relu, sigmoid, tanh, softmax, log_softmax, gelu, linear, elu,
                                     selu, softplus, swish, exponential, leaky_relu, relu6, softsign,
                                     log_sigmoid, mish, hard_sigmoid, hard_silu, celu, glu,
                                     tanh_shrink, hard_tanh, hard_shrink, soft_shrink, threshold,
                                     sparse_plus, sparse_sigmoid, squareplus, sparsemax)}
_BY_NAME["silu"] = swish
_BY_NAME["hard_swish"] = hard_silu


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


def deserialize(config, custom_objects=None):
    """The activation a name or a serialized config names (custom_objects first).

    Example:
        >>> tl.activations.deserialize("mish") is tl.activations.mish
        True
    """
    if isinstance(config, dict):
        config = config.get("config", config.get("class_name"))
        if isinstance(config, dict):
            config = config.get("name")
    if custom_objects and config in custom_objects:
        return custom_objects[config]
    return get(config)
