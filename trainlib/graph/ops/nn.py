"""Neural-network ops (`tl.nn`): activations, cross-entropies, convolution, pooling, dropout.

Owns: the OpDefs and public functions of `tl.nn`. Images are channels last
(NWC, NHWC, NDHWC), filters spatial-in-out; conv and pooling kernels are
written once for any number of spatial dims (2-D and 3-D ops share them; 1-D
runs as 2-D over a height of 1). Invariants: softmax, log_softmax and the cross-entropies subtract the
row maximum before exponentiating, so large logits never overflow; conv and
pooling share one geometry rule (`_geometry`, TensorFlow's SAME/VALID
arithmetic) and one set of window offsets (`_window_slices`, with `_window_view`
and `_tiled` as strided views of the same windows), so forward and backward
kernels agree on every padding. Convolutions are im2col (one strided copy) and
one matmul; their input gradient and the pooling gradients add each window back
with strided copies (one per window offset where windows overlap), never argmax
or np.add.at. Gradient ops of conv and pooling are linear in
their gradient input and have gradients themselves, so second order works.
"""
import itertools as _itertools
import math as _pymath

import numpy as _np

from .. import dtypes as _dt
from .. import threads as _threads
from ..errors import InvalidArgumentError, op_error
from ..op import apply, broadcast_shapes, convert_same_dtype, convert_to_tensor, defop, \
    normalize_axis, same_dtype, spec
from . import array as _array
from . import math as _math
from . import random as _random
from .common import float_infer as _float_infer, float_tensor as _float_tensor
from .math import erf, sigmoid, softplus, softsign, tanh  # noqa: F401 -- tl.nn has them, as TensorFlow

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "swish", "softplus", "erf",
    "softmax", "log_softmax", "sigmoid", "tanh",
    "sigmoid_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    "conv2d", "max_pool2d", "avg_pool2d", "dropout", "bias_add", "l2_normalize", "moments",
]


# ------------------------------------------------------------------ helpers

def _real_infer(name):
    def infer(x, **attrs):
        if x.dtype.is_bool or x.dtype.is_complex or x.dtype is _dt.resource:
            raise TypeError(f"{name} needs a real-valued tensor, got {x.dtype.name}")
        return spec(x.shape, x.dtype)
    return infer


def _real_tensor(x, op_name):
    """A tensor of `x` that must be real-valued (ints allowed, bools not), checked now."""
    x = convert_to_tensor(x)
    if x.dtype.is_bool or x.dtype.is_complex:
        raise op_error(InvalidArgumentError, op_name,
                       f"needs a real-valued tensor, got {x.dtype.name}; cast it with tl.cast")
    return x


def _rank_one_logits(logits, op_name):
    """Float logits of rank >= 1, checked now (eager calls skip inference)."""
    logits = _float_tensor(logits, op_name)
    if logits.shape.rank == 0:
        raise op_error(InvalidArgumentError, op_name, "logits must have >= 1 dimension, got a scalar")
    return logits


def _grad_infer(name):
    """Inference of the `*Grad` ops: (gradient, saved forward value) -> gradient's spec."""
    def infer(dy, saved, **attrs):
        same_dtype(name, dy, saved)
        return spec(broadcast_shapes(dy.shape, saved.shape), dy.dtype)
    return infer


# ------------------------------------------------------------------ activations
# Each activation with a non-smooth point gets a `*Grad` op that masks the
# incoming gradient in one pass; those ops are linear in the gradient, so their
# own gradient is the same op applied to the new incoming gradient.

_SAME_SIZE_INT = {2: "int16", 4: "int32", 8: "int64"}


def _keep_where(xp, mask, x):
    """`where(mask, x, 0)` (a select: NaN or inf outside the mask still gives 0), computed as
    the integer product of x's bits and the mask, which numpy runs several times faster."""
    ints = _SAME_SIZE_INT.get(x.dtype.itemsize)
    if ints is None or x.ndim == 0 or mask.shape != x.shape:
        return xp.where(mask, x, x.dtype.type(0))
    return (x.view(ints) * mask).view(x.dtype)


# elements a row slice of an elementwise kernel should hold at least to go to another thread
_ELEMENTWISE_SLICE = 1 << 18


def _on_rows(xp, like, part, out=None):
    """An elementwise kernel over row slices (axis 0) of arrays shaped as `like`, on trainlib's
    pool for large arrays: `part(lo, hi, out_rows)` writes each slice into `out` (made if
    None). None where the work is one slice (the caller takes its plain path)."""
    if like.ndim == 0 or like.size < 2 * _ELEMENTWISE_SLICE or xp.__name__ != "numpy":
        return None   # one slice (what `split` would say, without asking the pool per call)
    ranges = _threads.split(like.shape[0], like.size, _ELEMENTWISE_SLICE)
    if len(ranges) == 1:
        return None
    out = xp.empty(like.shape, dtype=like.dtype) if out is None else out
    _threads.run_split(lambda lo, hi: part(lo, hi, out[lo:hi]), ranges)
    return out


def _masked_grad(grad_op):
    return lambda op, g: (apply(grad_op, g, op.inputs[1], **op.attrs), None)


def _relu(xp, x, out=None, tmp=None):
    """max(x, 0); with `out`, written there (its fused form). Large arrays by row slices on the
    pool."""
    zero = x.dtype.type(0)
    done = _on_rows(xp, x, lambda lo, hi, rows: xp.maximum(x[lo:hi], zero, out=rows), out)
    return xp.maximum(x, zero, out=out) if done is None else done


defop("Relu", fresh_output=True, infer=_real_infer("Relu"), elementwise=True,
      grad=lambda op, dy: (apply("ReluGrad", dy, op.outputs[0]),), into=_relu,
      direct=lambda op: (_relu, None),
      c_expr="({0} < 0 ? ({T})0 : {0})", native="({T}(0) if {0} < 0 else {0})")(_relu)


@defop("ReluGrad", infer=_grad_infer("ReluGrad"), elementwise=True, grad=_masked_grad("ReluGrad"),
       fresh_output=True, native="({0} if {1} > 0 else {T}(0))")
def _relu_grad(xp, dy, y):
    ints = _SAME_SIZE_INT.get(dy.dtype.itemsize)
    if ints is not None and dy.shape == y.shape:
        zero = y.dtype.type(0)
        done = _on_rows(xp, dy, lambda lo, hi, rows: xp.multiply(
            dy[lo:hi].view(ints), y[lo:hi] > zero, out=rows.view(ints)))
        if done is not None:
            return done
    return _keep_where(xp, y > 0, dy)


@defop("Relu6", infer=_real_infer("Relu6"), elementwise=True,
       grad=lambda op, dy: (apply("Relu6Grad", dy, op.inputs[0]),),
       native="({T}(0) if {0} < 0 else ({T}(6) if {0} > 6 else {0}))")
def _relu6(xp, x):
    return xp.clip(x, x.dtype.type(0), x.dtype.type(6))


@defop("Relu6Grad", infer=_grad_infer("Relu6Grad"), elementwise=True,
       grad=_masked_grad("Relu6Grad"), native="({0} if {1} > 0 and {1} < 6 else {T}(0))")
def _relu6_grad(xp, dy, x):
    return _keep_where(xp, (x > 0) & (x < 6), dy)


@defop("LeakyRelu", infer=_float_infer("LeakyRelu"), elementwise=True,
       grad=lambda op, dy: (apply("LeakyReluGrad", dy, op.inputs[0], **op.attrs),),
       native=lambda alpha: f"({{0}} if {{0}} > 0 else {{0}} * {{T}}({float(alpha)!r}))")
def _leaky_relu(xp, x, alpha):
    return xp.where(x > 0, x, x * x.dtype.type(alpha))


@defop("LeakyReluGrad", infer=_grad_infer("LeakyReluGrad"), elementwise=True,
       grad=_masked_grad("LeakyReluGrad"),
       native=lambda alpha: f"({{0}} if {{1}} > 0 else {{0}} * {{T}}({float(alpha)!r}))")
def _leaky_relu_grad(xp, dy, x, alpha):
    return xp.where(x > 0, dy, dy * dy.dtype.type(alpha))


def _elu_grad_grad(op, g):
    dy, y = op.inputs
    return (apply("EluGrad", g, y), _math.where(_math.less(y, 0.0), g * dy, _array.zeros_like(g)))


@defop("Elu", infer=_float_infer("Elu"), elementwise=True,
       grad=lambda op, dy: (apply("EluGrad", dy, op.outputs[0]),),
       direct=lambda op: (_elu, None), native="({0} if {0} > 0 else nm.expm1({0}))")
def _elu(xp, x, out=None):
    """max(x, 0) + expm1(min(x, 0)) into `out` (a new array without one). numpy's float32
    expm1 is ~7x slower than its tanh, so float32 takes expm1(m) = 2t / (1 - t) with
    t = tanh(m / 2), exact algebra with no cancellation for m <= 0, within 3 ulp."""
    zero = x.dtype.type(0)
    if x.dtype != xp.float32 or x.ndim == 0:
        result = xp.where(x > 0, x, xp.expm1(xp.minimum(x, zero)))
        if out is None:
            return result
        out[...] = result
        return out
    t = xp.minimum(x, zero, out=out)
    t *= x.dtype.type(0.5)
    xp.tanh(t, out=t)
    d = xp.subtract(x.dtype.type(1), t)
    t += t
    t /= d                                 # expm1(min(x, 0))
    xp.maximum(x, zero, out=d)
    t += d
    return t


@defop("EluGrad", infer=_grad_infer("EluGrad"), elementwise=True, grad=_elu_grad_grad,
       native="({0} if {1} > 0 else {0} * ({1} + {T}(1)))")
def _elu_grad(xp, dy, y):
    return xp.where(y > 0, dy, dy * (y + y.dtype.type(1)))


def relu(features, name=None):
    """Rectified linear unit: max(features, 0).

    Args:
        features: a floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    Example:
        >>> tl.nn.relu([-1.0, 2.0])
        <tl.Tensor: shape=(2,), dtype=float32, numpy=array([0., 2.], dtype=float32)>
    """
    return apply("Relu", _real_tensor(features, "Relu"))


def relu6(features, name=None):
    """min(max(features, 0), 6).

    Example:
        >>> tl.nn.relu6([-1.0, 8.0]).numpy()
        array([0., 6.], dtype=float32)
    """
    return apply("Relu6", _real_tensor(features, "Relu6"))


def leaky_relu(features, alpha=0.2, name=None):
    """features where positive, alpha * features elsewhere.

    Example:
        >>> tl.nn.leaky_relu([-1.0, 2.0]).numpy()
        array([-0.2,  2. ], dtype=float32)
    """
    features = convert_to_tensor(features)
    if features.dtype.is_integer:  # TensorFlow computes integer features in float32
        features = _math.cast(features, _dt.float32)
    # alpha is a float32 attr in TensorFlow: float64 features see float32(alpha)
    return apply("LeakyRelu", _float_tensor(features, "LeakyRelu"),
                 alpha=float(_dt.float32.as_numpy_dtype(alpha)))


def elu(features, name=None):
    """Exponential linear unit: features where positive, exp(features) - 1 elsewhere.

    Example:
        >>> tl.nn.elu([0.0, 1.0]).numpy()
        array([0., 1.], dtype=float32)
    """
    return apply("Elu", _float_tensor(features, "Elu"))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None):
    """Scaled exponential linear unit: scale * (x if x > 0 else alpha * (exp(x) - 1)).

    Example:
        >>> float(tl.nn.selu(1.0))
        1.0507010221481323
    """
    e = elu(features)
    return _math.where(_math.greater(e, 0.0), e * _SELU_SCALE, e * (_SELU_SCALE * _SELU_ALPHA))


def silu(features, beta=1.0, name=None):
    """Sigmoid linear unit (swish): features * sigmoid(beta * features).

    Example:
        >>> float(tl.nn.silu(0.0))
        0.0
    """
    features = _float_tensor(features)
    return features * _math.sigmoid(features * beta if beta != 1.0 else features)


swish = silu


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit: x * P(X <= x) for X ~ N(0, 1).

    Args:
        features: a floating-point tensor.
        approximate: use the tanh approximation instead of the exact erf form.

    Example:
        >>> round(float(tl.nn.gelu(1.0)), 4)
        0.8413
    """
    x = _float_tensor(features, "gelu")
    if approximate:
        # TensorFlow casts its constants from float32 (`cast(0.044715, dtype)`): so do we
        coeff = float(_dt.float32.as_numpy_dtype(0.044715))
        return 0.5 * x * (1.0 + _math.tanh(0.7978845608028654 * (x + coeff * _math.pow(x, 3))))
    return 0.5 * x * (1.0 + erf(x * float(_dt.float32.as_numpy_dtype(0.7071067811865476))))


# ------------------------------------------------------------------ softmax

def _softmax_infer(name):
    def infer(logits, axis=-1):
        if not logits.dtype.is_floating:
            raise TypeError(f"{name} needs floating-point logits, got {logits.dtype.name}")
        if logits.shape.rank == 0:
            raise ValueError(f"{name} needs logits of rank >= 1, got a scalar")
        normalize_axis(axis, logits.shape.rank)
        return spec(logits.shape, logits.dtype)
    return infer


def _softmax_backprop(dy, y, axis):
    """The gradient through y = softmax(logits, axis), given dy."""
    return (dy - _math.reduce_sum(dy * y, axis=axis, keepdims=True)) * y


def _softmax_grad(op, dy):
    return (_softmax_backprop(dy, op.outputs[0], op.attrs["axis"]),)


def _log_softmax_grad(op, dy):
    y, axis = op.outputs[0], op.attrs["axis"]
    return (dy - _math.reduce_sum(dy, axis=axis, keepdims=True) * _math.exp(y),)


def _shifted(xp, x, axis):
    if x.size == 0:  # an empty softmax is empty (max has no identity)
        return x
    return x - xp.max(x, axis=axis, keepdims=True)


@defop("Softmax", fresh_output=True, infer=_softmax_infer("Softmax"), grad=_softmax_grad)
def _softmax(xp, logits, axis=-1):
    """One new array, exponentiated and scaled where it lies (a pass and two allocations less
    than the plain composition)."""
    e = _shifted(xp, logits, axis)
    if e is logits:  # empty
        return xp.exp(e)
    xp.exp(e, out=e)
    return xp.divide(e, xp.sum(e, axis=axis, keepdims=True), out=e)


@defop("LogSoftmax", fresh_output=True, infer=_softmax_infer("LogSoftmax"), grad=_log_softmax_grad)
def _log_softmax(xp, logits, axis=-1):
    s = _shifted(xp, logits, axis)
    return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))


def softmax(logits, axis=None, name=None):
    """exp(logits) / sum(exp(logits), axis), computed without overflow.

    Args:
        logits: a floating-point tensor of rank >= 1.
        axis: the class axis (default -1).

    Returns:
        A tensor like `logits` whose slices along `axis` sum to 1.

    Example:
        >>> tl.nn.softmax([0.0, 0.0]).numpy()
        array([0.5, 0.5], dtype=float32)
    """
    return apply("Softmax", _rank_one_logits(logits, "Softmax"), axis=-1 if axis is None else int(axis))


def log_softmax(logits, axis=None, name=None):
    """logits - log(sum(exp(logits), axis)), computed without overflow.

    Example:
        >>> tl.nn.log_softmax([0.0, 0.0]).numpy()
        array([-0.6931472, -0.6931472], dtype=float32)
    """
    return apply("LogSoftmax", _rank_one_logits(logits, "LogSoftmax"),
                 axis=-1 if axis is None else int(axis))


# ------------------------------------------------------------------ cross-entropies

def _sigmoid_ce_infer(labels, logits):
    d = same_dtype("SigmoidCrossEntropyWithLogits", labels, logits)
    if not d.is_floating:
        raise TypeError(f"SigmoidCrossEntropyWithLogits needs floating-point tensors, got {d.name}")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"logits and labels must have the same shape, got logits {logits.shape} "
                         f"and labels {labels.shape}")
    return spec(logits.shape.merge_with(labels.shape), d)


def _sigmoid_ce_grad(op, dy):
    labels, logits = op.inputs
    return (dy * -logits, dy * (_math.sigmoid(logits) - labels))


@defop("SigmoidCrossEntropyWithLogits", infer=_sigmoid_ce_infer, grad=_sigmoid_ce_grad,
       elementwise=True, fresh_output=True)
def _sigmoid_ce(xp, labels, logits):
    if labels.shape != logits.shape:
        raise ValueError("shapes differ")  # explained by the inference rule
    # max(x, 0) + log1p(exp(-|x|)) is softplus(x): its kernel (fast in float32)
    out = _math._softplus(xp, logits)
    out -= logits * labels
    return out


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise binary cross-entropy of sigmoid(logits) against `labels`, without overflow.

    Computes max(x, 0) - x * z + log(1 + exp(-|x|)) for x = logits, z = labels.

    Args:
        labels: a float tensor of the shape of `logits`, values in [0, 1].
        logits: a float tensor.

    Returns:
        The per-element losses, shaped like `logits`.

    Raises:
        ValueError: if the shapes differ.

    Example:
        >>> float(tl.nn.sigmoid_cross_entropy_with_logits(1.0, 0.0))
        0.6931471824645996
    """
    labels, logits = convert_same_dtype("SigmoidCrossEntropyWithLogits", (labels, logits))
    return apply("SigmoidCrossEntropyWithLogits", labels, logits)


def _softmax_ce_infer(labels, logits, axis=-1):
    d = same_dtype("SoftmaxCrossEntropyWithLogits", labels, logits)
    if not d.is_floating:
        raise TypeError(f"SoftmaxCrossEntropyWithLogits needs floating-point tensors, got {d.name}")
    try:
        shape = broadcast_shapes(labels.shape, logits.shape)
    except ValueError:
        raise ValueError(f"logits and labels must be broadcastable, got logits {logits.shape} "
                         f"and labels {labels.shape}") from None
    if shape.rank is None:
        return spec(None, d)
    if shape.rank == 0:
        raise ValueError("SoftmaxCrossEntropyWithLogits needs logits of rank >= 1, got a scalar")
    dims = list(shape)
    del dims[normalize_axis(axis, shape.rank)]
    return spec(dims, d)


def _softmax_ce_grad(op, dy):
    labels, logits = op.inputs
    axis = op.attrs["axis"]
    dy = _array.expand_dims(dy, axis)
    return (dy * -log_softmax(logits, axis), dy * (softmax(logits, axis) - labels))


@defop("SoftmaxCrossEntropyWithLogits", infer=_softmax_ce_infer, grad=_softmax_ce_grad,
       fresh_output=True)
def _softmax_ce(xp, labels, logits, axis=-1):
    log_p = _log_softmax(xp, logits, axis)
    return -xp.sum(labels * log_p, axis=axis)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross-entropy between `labels` (a distribution per row) and softmax(logits).

    Args:
        labels: float tensor broadcastable to `logits`; each slice along `axis` a distribution
            (the logits gradient, softmax - labels as TensorFlow's, assumes it sums to 1).
        logits: unscaled log-probabilities.
        axis: the class axis.

    Returns:
        The losses, shaped like `logits` without `axis`.

    Example:
        >>> float(tl.nn.softmax_cross_entropy_with_logits([0.0, 1.0], [0.0, 0.0]))
        0.6931471824645996
    """
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    if labels.dtype is not logits.dtype and logits.dtype.is_floating:
        labels = _math.cast(labels, logits.dtype)  # TensorFlow casts the labels to the logits' dtype
    labels, logits = convert_same_dtype("SoftmaxCrossEntropyWithLogits", (labels, logits))
    return apply("SoftmaxCrossEntropyWithLogits", labels, logits, axis=int(axis))


def _sparse_ce_infer(labels, logits):
    if not labels.dtype.is_integer:
        raise TypeError(f"labels must be int32 or int64 class indices, got {labels.dtype.name}")
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be floating-point, got {logits.dtype.name}")
    if logits.shape.rank == 0:
        raise ValueError("logits must have rank >= 1 (the last axis holds the classes), got a scalar")
    if logits.shape.rank is not None and not labels.shape.is_compatible_with(logits.shape[:-1]):
        raise ValueError(f"labels must have the shape of logits without its last dim: logits "
                         f"{logits.shape} needs labels {logits.shape[:-1]}, got {labels.shape}")
    return spec(logits.shape[:-1] if logits.shape.rank is not None else labels.shape, logits.dtype)


_UNSIGNED = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def _check_labels(xp, labels, num_classes):
    if labels.size == 0:
        return
    # one reduction: read as unsigned, a negative label is larger than any class count
    unsigned = labels.view(_UNSIGNED[labels.dtype.itemsize])
    if (_np.maximum.reduce(unsigned, axis=None) if type(unsigned) is _np.ndarray
            else unsigned.max()) < num_classes:
        return
    bad = (labels < 0) | (labels >= num_classes)
    if bool(xp.any(bad)):
        value = int(labels[bad].ravel()[0])
        raise InvalidArgumentError(f"Received a label value of {value} which is outside the valid "
                                   f"range of [0, {num_classes}).")


def _sparse_softmax_minus_onehot(xp, labels, logits):
    p = _softmax(xp, logits, -1)
    onehot = labels[..., None] == xp.arange(logits.shape[-1], dtype=labels.dtype)
    return p - onehot.astype(p.dtype)


@defop("SparseSoftmaxCrossEntropyWithLogits", fresh_output=True, infer=_sparse_ce_infer,
       grad=lambda op, dy: (None, _array.expand_dims(dy, -1) *
                            apply("SparseSoftmaxCrossEntropyWithLogitsGrad", *op.inputs)))
def _sparse_ce(xp, labels, logits):
    if labels.shape != logits.shape[:-1]:
        raise ValueError("shapes differ")  # explained by the inference rule
    _check_labels(xp, labels, logits.shape[-1])
    log_p = _log_softmax(xp, logits, -1)
    return -xp.take_along_axis(log_p, labels[..., None].astype(xp.intp), axis=-1)[..., 0]


@defop("SparseSoftmaxCrossEntropyWithLogitsGrad", fresh_output=True,
       infer=lambda labels, logits: spec(logits.shape, logits.dtype),
       grad=lambda op, g: (None, _softmax_backprop(g, softmax(op.inputs[1]), -1)))
def _sparse_ce_grad(xp, labels, logits):
    """softmax(logits) - one_hot(labels): the loss's gradient per unit incoming gradient."""
    return _sparse_softmax_minus_onehot(xp, labels, logits)


_ROW_STARTS = {}   # (xp, rows, classes) -> arange(0, rows * classes, classes), never written


def _row_starts(xp, rows, n):
    """Where each of `rows` rows of `n` classes starts in the flat array (made once per
    shape: the same few batch shapes come back every step)."""
    key = (xp.__name__, rows, n)
    starts = _ROW_STARTS.get(key)
    if starts is None:
        if len(_ROW_STARTS) > 64:
            _ROW_STARTS.clear()
        starts = _ROW_STARTS[key] = xp.arange(0, rows * n, n)
    return starts


def _sparse_ce_and_grad_infer(labels, logits):
    return _sparse_ce_infer(labels, logits), spec(logits.shape, logits.dtype)


@defop("SparseSoftmaxCrossEntropyWithLogitsAndGrad", infer=_sparse_ce_and_grad_infer,
       differentiable=False, num_outputs=2)
def _sparse_ce_and_grad(xp, labels, logits):
    """(SparseSoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogitsGrad) of the
    same inputs from one softmax, bit for bit what the two kernels give (TensorFlow's own
    op returns both): `graph/passes/xent.py` puts it in the place of such a pair."""
    n = logits.shape[-1]
    if labels.shape != logits.shape[:-1] or labels.size == 0 or n == 0:
        return _sparse_ce(xp, labels, logits), _sparse_ce_grad(xp, labels, logits)
    _check_labels(xp, labels, n)
    rows = logits.reshape(-1, n)
    # the ufuncs' reduce, as the methods call it, without their Python wrapper (a small step
    # runs this once per batch)
    host = type(rows) is _np.ndarray
    peak = _np.maximum.reduce(rows, axis=1, keepdims=True) if host else \
        rows.max(axis=1, keepdims=True)
    shifted = rows - peak
    e = xp.exp(shifted)
    total = _np.add.reduce(e, axis=1, keepdims=True) if host else e.sum(axis=1, keepdims=True)
    at = labels.reshape(-1) + _row_starts(xp, rows.shape[0], n)   # each label in the flat rows
    # log(sum) - s[label] is exactly -(s[label] - log(sum)), the forward kernel's value
    loss = xp.log(total[:, 0])
    loss -= shifted.reshape(-1).take(at)
    grad = xp.divide(e, total, out=e)
    flat = grad.reshape(-1)
    flat[at] = flat.take(at) - 1   # minus the one-hot rows: p - 1 at the label, p - 0 is p
    return loss.reshape(labels.shape), grad.reshape(logits.shape)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross-entropy between integer class `labels` and softmax(logits).

    Args:
        labels: int32/int64 tensor of shape logits.shape[:-1], values in [0, num_classes).
        logits: float tensor [..., num_classes].

    Returns:
        The losses, shaped like `labels`.

    Raises:
        InvalidArgumentError: for a label outside [0, num_classes) (when the op runs).

    Example:
        >>> float(tl.nn.sparse_softmax_cross_entropy_with_logits(1, [0.0, 0.0]))
        0.6931471824645996
    """
    labels = convert_to_tensor(labels, dtype_hint=_dt.int32)
    logits = convert_to_tensor(logits, dtype_hint=_dt.float32)
    return apply("SparseSoftmaxCrossEntropyWithLogits", labels, logits)


# ------------------------------------------------------------------ conv and pooling geometry
# Every conv and pooling op works on N spatial dims (N = 2 or 3; 1-D runs as 2-D over a
# height of 1). Attributes hold one entry per spatial dim: `strides`, `dilations`, `ksize`;
# explicit paddings are flat (before_0, after_0, before_1, after_1, ...).

def _spatial(value, name, default=None, rank=2):
    """One int per spatial dim from an int, or a list of 1, `rank` or `rank` + 2 ints (the
    last: channels-last with 1 at batch and channels), as TensorFlow reads them."""
    if value is None:
        value = default
    if isinstance(value, int):
        return (value,) * rank
    values = [int(v) for v in value]
    if len(values) == 1:
        return (values[0],) * rank
    if len(values) == rank:
        return tuple(values)
    if len(values) == rank + 2:
        if values[0] != 1 or values[-1] != 1:
            raise ValueError(f"{name} of length {rank + 2} must be 1 in the batch and channel dims "
                             f"(channels last), got {values}")
        return tuple(values[1:-1])
    raise ValueError(f"{name} must be an int or a list of 1, {rank} or {rank + 2} ints, "
                     f"got {value!r}")


def _padding_attrs(padding, rank=2):
    """(padding string, flat explicit pads (before, after) per spatial dim, or None)."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of [before, after] pairs, "
                             f"got {padding!r}")
        return mode, None
    pairs = [tuple(int(v) for v in p) for p in padding]
    if len(pairs) == rank + 2:
        if pairs[0] != (0, 0) or pairs[-1] != (0, 0):
            raise ValueError(f"explicit padding must be 0 in the batch and channel dims, got {padding}")
        pairs = pairs[1:-1]
    if len(pairs) != rank or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(f"explicit padding must be {rank} [before, after] pairs of non-negative "
                         f"ints (or {rank + 2}, channels last), got {padding!r}")
    return "EXPLICIT", tuple(v for p in pairs for v in p)


def _geometry(size, k, stride, dilation, padding, explicit=None):
    """(output size, pad before, pad after) of one spatial dim, TensorFlow's arithmetic."""
    effective = (k - 1) * dilation + 1
    if padding == "SAME":
        if size is None:
            return None, None, None
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    if size is None:
        return None, before, after
    padded = size + before + after
    if padded < effective:
        raise ValueError(f"Computed output size would be negative: input size {size}"
                         f"{f' (padded {padded})' if padding == 'EXPLICIT' else ''} is smaller "
                         f"than the effective window size {effective} with {padding} padding")
    return (padded - effective) // stride + 1, before, after


def _plan(shape, window, strides, dilations, padding, explicit):
    """Each spatial dim's geometry, [(out, before, after), ...], of a channels-last `shape`."""
    ex = explicit or (0,) * (2 * len(window))
    return [_geometry(shape[1 + i], window[i], strides[i], dilations[i], padding, ex[2 * i:2 * i + 2])
            for i in range(len(window))]


def _outs(plan):
    return tuple(p[0] for p in plan)


def _prod(values):
    total = 1
    for v in values:
        total *= v
    return total


def _padded_shape(shape, plan):
    return (shape[0],) + tuple(shape[1 + i] + p[1] + p[2] for i, p in enumerate(plan)) + \
        (shape[-1],)


def _interior(shape, plan):
    """The slices of a padded array that hold the unpadded array of `shape`."""
    return (slice(None),) + tuple(slice(p[1], p[1] + shape[1 + i]) for i, p in enumerate(plan))


def _pad(xp, x, plan, value=0):
    """`x` with the plan's padding around its spatial dims (`x` itself without padding): one
    allocation and one copy, where xp.pad makes several passes."""
    if not any(p[1] or p[2] for p in plan):
        return x
    out = xp.full(_padded_shape(x.shape, plan), value, dtype=x.dtype)
    out[_interior(x.shape, plan)] = x
    return out


def _window_slices(window, strides, dilations, outs):
    """For each window offset (row-major over the window's dims), the tuple of slices of the
    padded input that it sees at every output position."""
    per_dim = [[slice(i * d, i * d + (o - 1) * s + 1, s) for i in range(k)]
               for k, s, d, o in zip(window, strides, dilations, outs)]
    return [(slice(None),) + s for s in _itertools.product(*per_dim)]


def _window_view(xp, xpad, window, strides, dilations, outs):
    """(N, *outs, *window, C): every window of the padded input as one strided view, no copy
    (the geometry keeps every index inside `xpad`)."""
    n, st = len(window), xpad.strides
    shape = (xpad.shape[0],) + tuple(outs) + tuple(window) + (xpad.shape[-1],)
    steps = (st[0],) + tuple(st[1 + i] * strides[i] for i in range(n)) + \
        tuple(st[1 + i] * dilations[i] for i in range(n)) + (st[-1],)
    return xp.lib.stride_tricks.as_strided(xpad, shape, steps)


def _tiles(window, strides, dilations, outs):
    """Whether the windows tile the input without overlap (stride = window, no dilation)."""
    return all(k == s and (d == 1 or k == 1) for k, s, d in zip(window, strides, dilations)) \
        and min(outs, default=1) > 0


def _tiled(a, window, outs):
    """The windows of a tiling geometry as a view (N, o_0, k_0, o_1, k_1, ..., C) of `a`."""
    n = len(window)
    crop = a[(slice(None),) + tuple(slice(0, o * k) for o, k in zip(outs, window))]
    return crop.reshape((a.shape[0],) + tuple(v for ok in zip(outs, window) for v in ok) +
                        (a.shape[-1],))


def _interleave(n):
    """The axes permutation (N, *outs, *window, C) -> (N, o_0, k_0, o_1, k_1, ..., C)."""
    return (0,) + tuple(a for i in range(n) for a in (1 + i, 1 + n + i)) + (1 + 2 * n,)


def _batch_ranges(xp, n, work):
    """Slices [lo, hi) of a batch of `n` for trainlib's thread pool (`threads.split`), `work`
    the elements the whole batch moves; one slice off numpy (CuPy runs on its device)."""
    return _threads.split(n, work) if xp.__name__ == "numpy" else [(0, n)]


def _by_batch(xp, n, work, part):
    """Runs `part(lo, hi)` over batch slices on the pool (one call for small work or off
    numpy); the results in slice order."""
    return _threads.run_split(part, _batch_ranges(xp, n, work))


def _patches(xp, x, window, strides, dilations, plan):
    """im2col: the (P, K*C) matrix of every window of the padded input (P = batch * output
    positions, K = window size), each row ordered (window..., C) as the filter's rows.
    One copy through a strided view; a one-channel input is copied offset by offset into a
    (K, P) array whose transpose is returned (a strided view's 1-wide rows copy slowly, and
    matmul reads the transpose in place)."""
    outs = _outs(plan)
    xpad = _pad(xp, x, plan)
    p, k = x.shape[0] * _prod(outs), _prod(window)
    if x.shape[-1] == 1:
        cols = xp.empty((k, x.shape[0]) + outs, dtype=x.dtype)
        for i, s in enumerate(_window_slices(window, strides, dilations, outs)):
            cols[i] = xpad[s + (0,)]
        return cols.reshape(k, p).T
    view = _window_view(xp, xpad, window, strides, dilations, outs)
    return xp.ascontiguousarray(view).reshape(p, k * x.shape[-1])


def _col2im(xp, cols, x_shape, window, strides, dilations, plan, out=None):
    """The adjoint of `_patches`: adds each window's values back where the window read them,
    into an array of `x_shape` (written into `out` if given); `cols` is offset-major,
    (K, N, *outs, C), so each window offset's values are one contiguous block. Tiling windows
    are one strided copy; overlapping ones one strided accumulation per window offset."""
    outs, n = _outs(plan), len(window)
    padded = _padded_shape(x_shape, plan)
    unpadded = padded == tuple(x_shape)
    if _tiles(window, strides, dilations, outs):
        covered = all(o * k == size for o, k, size in zip(outs, window, padded[1:-1]))
        if unpadded and out is not None:
            acc = out
            if not covered:
                _zero_border(acc, window, outs)
        else:
            acc = (xp.empty if covered else xp.zeros)(padded, dtype=cols.dtype)
        by_offset = cols.reshape(tuple(window) + cols.shape[1:])
        # (k_0.., N, o_0.., C) -> (N, o_0, k_0, o_1, k_1, ..., C)
        perm = (n,) + tuple(a for i in range(n) for a in (n + 1 + i, i)) + (2 * n + 1,)
        _tiled(acc, window, outs)[...] = by_offset.transpose(perm)
    else:
        if unpadded and out is not None:
            acc = out
            acc[...] = 0
        else:
            acc = xp.zeros(padded, dtype=cols.dtype)
        for k, s in enumerate(_window_slices(window, strides, dilations, outs)):
            acc[s] += cols[k]
    result = acc if unpadded else acc[_interior(x_shape, plan)]
    if out is None or result is out:
        return result
    out[...] = result
    return out


def _zero_border(a, window, outs):
    """Zeros what tiling windows leave uncovered at the end of each spatial dim of `a`."""
    for i, (k, o) in enumerate(zip(window, outs)):
        if o * k < a.shape[1 + i]:
            a[(slice(None),) * (1 + i) + (slice(o * k, None),)] = 0


# ------------------------------------------------------------------ convolution (2-D and 3-D)
# One kernel per direction serves Conv2D and Conv3D (and grouped convolution: the filter's
# in-channels divide the input's channels into groups, as TensorFlow infers them); depthwise
# convolution is the grouped case with one channel per group; transposed convolution is the
# input gradient op applied to the transposed conv's input.

_CONV_OPS = {2: ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
             3: ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")}


def _conv_names(op):
    return _CONV_OPS[len(op.attrs["strides"])]


def _conv_attrs(op):
    return {k: op.attrs[k] for k in ("strides", "padding", "explicit_paddings", "dilations")}


def _check_image(name, x, what="input", rank=2):
    if x.shape.rank is not None and x.shape.rank != rank + 2:
        layout = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[rank]
        raise ValueError(f"{name} needs a {rank + 2}-D {layout} {what}, got shape {x.shape}")


def _conv_infer(name, rank):
    def infer(x, f, strides, padding, explicit_paddings, dilations):
        d = same_dtype(name, x, f)
        if not d.is_floating:
            raise TypeError(f"{name} needs floating-point tensors, got {d.name}")
        _check_image(name, x, rank=rank)
        if f.shape.rank is not None and f.shape.rank != rank + 2:
            raise ValueError(f"{name} needs {rank + 2}-D filters [spatial..., in_channels, "
                             f"out_channels], got shape {f.shape}")
        xs = list(x.shape) if x.shape.rank is not None else [None] * (rank + 2)
        fs = list(f.shape) if f.shape.rank is not None else [None] * (rank + 2)
        if xs[-1] is not None and fs[-2] is not None and (
                fs[-2] == 0 or xs[-1] % fs[-2] or (fs[-1] is not None and fs[-1] % (xs[-1] // fs[-2]))):
            raise ValueError(f"input has {xs[-1]} channels but the filters expect {fs[-2]} input "
                             f"channels (or a divisor of the input's channels, as many groups as "
                             f"divide the output channels) (input shape {x.shape}, filter shape "
                             f"{f.shape})")
        if None in fs[:rank]:
            return spec([xs[0]] + [None] * rank + [fs[-1]], d)
        plan = _plan(xs, fs[:rank], strides, dilations, padding, explicit_paddings)
        return spec([xs[0]] + list(_outs(plan)) + [fs[-1]], d)
    return infer


def _conv_grad(op, dy):
    x, f = op.inputs
    _, back_input, back_filter = _conv_names(op)
    attrs = _conv_attrs(op)
    return (apply(back_input, x, f, dy, **attrs), apply(back_filter, x, f, dy, **attrs))


def _conv_geometry(x_shape, f, strides, padding, explicit_paddings, dilations):
    """(plan, P = batch * output positions, K = window size, groups) of one convolution."""
    rank = f.ndim - 2
    plan = _plan(x_shape, f.shape[:rank], strides, dilations, padding, explicit_paddings)
    return plan, x_shape[0] * _prod(_outs(plan)), _prod(f.shape[:rank]), \
        x_shape[-1] // max(f.shape[-2], 1)


# Depthwise convolution works on pieces of the batch whose output stays in the cache
# (about this many elements) through the multiply-add of every window offset, the pieces of
# a batch slice on one of the pool's threads.
_DEPTHWISE_PIECE = 1 << 16


def _depthwise_pieces(xp, n, out, work, piece):
    """piece(a, b) over consecutive batch ranges of about `_DEPTHWISE_PIECE` output elements
    each, the batch slices on the pool; `out` the (batch, ...) output, `work` the passes over
    it."""
    per = max(1, _DEPTHWISE_PIECE // max(out[0].size, 1))

    def part(lo, hi):
        for a in range(lo, hi, per):
            piece(a, min(a + per, hi))
    _by_batch(xp, n, out.size * work, part)


def _offset_mac(xp, src, slices, w, out):
    """The depthwise correlation of one batch piece: out (n, *outs, C, M) = the sum over window
    offsets k of src[slices[k]] (n, *outs, C) times w[k] (C, M), channel by channel: one
    multiply and one add per offset (an einsum over the strided window view runs no BLAS and
    several times slower)."""
    one = w.shape[-1] == 1   # no trailing dim of 1: numpy's inner loop would run 1 element long
    acc, w = (out[..., 0], w[..., 0]) if one else (out, w)
    tmp = None
    for k, s in enumerate(slices):
        term = src[s] if one else src[s][..., None]
        if k == 0:
            xp.multiply(term, w[k], out=acc)
            continue
        if tmp is None:
            tmp = xp.empty(acc.shape, dtype=acc.dtype)
        xp.add(acc, xp.multiply(term, w[k], out=tmp), out=acc)
    return out


def _conv_kernel(xp, x, f, strides, padding, explicit_paddings, dilations, bias=None):
    """A convolution's output, plus `bias` (one per out channel) if given: the FusedConv ops'
    kernel too, which adds it to each batch slice right after its matmul (while the slice is
    in the cache, on the slice's thread), the same additions BiasAdd makes."""
    rank = f.ndim - 2
    plan, p, k, groups = _conv_geometry(x.shape, f, strides, padding, explicit_paddings, dilations)
    cg, co = f.shape[-2], f.shape[-1]
    out_shape = (x.shape[0],) + _outs(plan) + (co,)
    if p == 0:
        return xp.zeros(out_shape, dtype=x.dtype)
    og = co // groups
    if cg == 1 and groups > 1:   # depthwise: a multiply-add per window offset
        out = xp.empty(out_shape, dtype=x.dtype)
        by_channel = out.reshape(out_shape[:-1] + (groups, og))
        slices = _window_slices(f.shape[:rank], strides, dilations, _outs(plan))
        _depthwise_pieces(xp, x.shape[0], by_channel, len(slices), lambda a, b: _offset_mac(
            xp, _pad(xp, x[a:b], plan), slices, f.reshape(k, groups, og), by_channel[a:b]))
        if bias is not None:
            xp.add(out, bias, out=out)
        return out
    out = xp.empty(out_shape, dtype=x.dtype)

    def part(lo, hi):   # im2col and matmul of a batch slice, written into its rows of `out`
        cols = _patches(xp, x[lo:hi], f.shape[:rank], strides, dilations, plan)
        _conv_from_patches(xp, cols, f, out[lo:hi])
        if bias is not None:
            xp.add(out[lo:hi], bias, out=out[lo:hi])
    _by_batch(xp, x.shape[0], p * k * x.shape[-1], part)
    return out


def _conv_from_patches(xp, cols, f, out):
    """A convolution's output from the im2col patches of its input, written into `out`
    (batch, *outs, out channels; C-contiguous): one matmul, or one batched matmul
    (G, P, K*Cg) @ (G, K*Cg, Og) over the groups."""
    p, cg, co = cols.shape[0], f.shape[-2], f.shape[-1]
    k = _prod(f.shape[:-2])
    groups = cols.shape[1] // (k * cg)
    if groups == 1:
        xp.matmul(cols, f.reshape(k * cg, co), out=out.reshape(p, co))
        return out
    og = co // groups
    a = cols.reshape(p, k, groups, cg).transpose(2, 0, 1, 3).reshape(groups, p, k * cg)
    b = f.reshape(k, cg, groups, og).transpose(2, 0, 1, 3).reshape(groups, k * cg, og)
    out[...] = xp.matmul(a, b).transpose(1, 0, 2).reshape(out.shape)
    return out


def _backprop_input_grad(op, g):
    x, f, dy = op.inputs
    conv, _, back_filter = _conv_names(op)
    attrs = _conv_attrs(op)
    # linear in (f, dy): dx = B(f, dy); d/dy is conv(g, f), d/df the filter gradient of g
    return (None, apply(back_filter, g, f, dy, **attrs), apply(conv, g, f, **attrs))


def _conv_backprop_input(xp, x, f, dy, strides, padding, explicit_paddings, dilations):
    """Gradient of a convolution with respect to its input; `x` is read only for its shape:
    each window's share (dy times the filter, one matmul) added back where the window read."""
    rank = f.ndim - 2
    plan, p, k, groups = _conv_geometry(x.shape, f, strides, padding, explicit_paddings, dilations)
    cg, co = f.shape[-2], f.shape[-1]
    if p == 0:
        return xp.zeros(x.shape, dtype=dy.dtype)
    if cg == 1 and groups > 1 and max(strides) == 1:
        dx = _depthwise_input_grad(xp, x.shape, f, dy, dilations, plan)
        if dx is not None:
            return dx
    if cg == 1 and groups > 1:   # depthwise: each offset's share added straight into the input
        f3 = f.reshape(k, groups, co // groups)
        dy4 = dy.reshape(dy.shape[:-1] + (groups, co // groups))
        dx = xp.zeros(_padded_shape(x.shape[:-1] + (groups,), plan), dtype=dy.dtype)
        for i, window in enumerate(_window_slices(f.shape[:rank], strides, dilations, _outs(plan))):
            dx[window] += xp.einsum("...cm,cm->...c", dy4, f3[i])
        return dx[_interior(x.shape, plan)]
    dx = xp.empty(x.shape, dtype=dy.dtype)

    def part(lo, hi):   # a batch slice's share of dx, written into its rows
        d, rows = dy[lo:hi], (hi - lo) * (p // x.shape[0])
        if groups == 1:   # (P, Co) @ (K, Co, C): each offset's share a contiguous (P, C) block
            cols = xp.matmul(d.reshape(rows, co), f.reshape(k, cg, co).transpose(0, 2, 1))
        else:
            og = co // groups
            a = d.reshape(rows, groups, og).transpose(1, 0, 2)
            b = f.reshape(k, cg, groups, og).transpose(2, 3, 0, 1).reshape(groups, og, k * cg)
            cols = xp.matmul(a, b).reshape(groups, rows, k, cg).transpose(2, 1, 0, 3)
        cols = cols.reshape((k,) + d.shape[:-1] + (cg * groups,))
        _col2im(xp, cols, dx[lo:hi].shape, f.shape[:rank], strides, dilations, plan,
                out=dx[lo:hi])
    _by_batch(xp, x.shape[0], p * k * x.shape[-1], part)
    return dx


def _depthwise_input_grad(xp, x_shape, f, dy, dilations, plan):
    """The input gradient of a stride-1 depthwise convolution as a correlation: `dy`, padded so
    that every input position sees a whole window, against the spatially flipped filter, one
    einsum over the window view (as the forward kernel). None where the convolution's padding
    exceeds the window (the padded dy would need cropping)."""
    rank = f.ndim - 2
    window = f.shape[:rank]
    pads = [((kk - 1) * d - p[1], x_shape[1 + i] - p[0] + p[1])
            for i, (kk, d, p) in enumerate(zip(window, dilations, plan))]
    if min(v for pair in pads for v in pair) < 0:
        return None
    groups, m = x_shape[-1], f.shape[-1] // x_shape[-1]
    k = _prod(window)
    flipped = f.reshape((k, groups, m))[::-1]   # row-major offsets reversed: every dim flipped
    slices = _window_slices(window, (1,) * rank, dilations, tuple(x_shape[1:-1]))
    padding = [(None, before, after) for before, after in pads]
    dx = xp.empty(x_shape, dtype=dy.dtype)
    if m == 1:
        _depthwise_pieces(xp, x_shape[0], dx, len(slices), lambda a, b: _offset_mac(
            xp, _pad(xp, dy[a:b], padding), slices, flipped, dx[a:b, ..., None]))
        return dx

    def piece(a, b):   # several filters per channel: each offset's products summed over them
        dyp = _pad(xp, dy[a:b], padding)
        dyp = dyp.reshape(dyp.shape[:-1] + (groups, m))
        acc = dx[a:b]
        for i, s in enumerate(slices):
            term = xp.einsum("...cm,cm->...c", dyp[s], flipped[i])
            if i == 0:
                acc[...] = term
            else:
                acc += term
    _depthwise_pieces(xp, x_shape[0], dx, len(slices), piece)
    return dx


def _backprop_filter_grad(op, g):
    x, f, dy = op.inputs
    conv, back_input, _ = _conv_names(op)
    attrs = _conv_attrs(op)
    return (apply(back_input, x, g, dy, **attrs), None, apply(conv, x, g, **attrs))


def _conv_backprop_filter(xp, x, f, dy, strides, padding, explicit_paddings, dilations):
    """Gradient of a convolution with respect to its filters; `f` is read only for its shape:
    the im2col patches' transpose times dy, one matmul."""
    rank = f.ndim - 2
    plan, p, k, groups = _conv_geometry(x.shape, f, strides, padding, explicit_paddings, dilations)
    cg, co = f.shape[-2], f.shape[-1]
    if p == 0:
        return xp.zeros(f.shape, dtype=dy.dtype)
    og = co // groups
    if cg == 1 and groups > 1:   # depthwise: per window offset, a product summed over positions
        slices = _window_slices(f.shape[:rank], strides, dilations, _outs(plan))
        by_channel = dy.reshape(dy.shape[:-1] + (groups, og))
        return _sum_parts(_by_batch(xp, x.shape[0], dy.size * len(slices), lambda lo, hi: (
            _offset_products(xp, _pad(xp, x[lo:hi], plan), slices, by_channel[lo:hi])))
        ).reshape(f.shape)
    return _sum_parts(_by_batch(xp, x.shape[0], p * k * x.shape[-1], lambda lo, hi: _filter_from_patches(
        xp, _patches(xp, x[lo:hi], f.shape[:rank], strides, dilations, plan), dy[lo:hi], f.shape)))


def _sum_parts(parts):
    """The batch slices' partial sums added in slice order (the same bits for the same
    thread count), into the first."""
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total


def _offset_products(xp, src, slices, dy):
    """A depthwise filter gradient's share of a batch slice: (K, C, M), per window offset k
    the sum over positions of src[slices[k]] (n, *outs, C) times dy (n, *outs, C, M), one
    einsum each (a multiply and a sum in one pass)."""
    positions = "nopq"[:dy.ndim - 2]
    if dy.shape[-1] == 1:
        spec, d = f"{positions}c,{positions}c->c", dy[..., 0]
    else:
        spec, d = f"{positions}c,{positions}cm->cm", dy
    return xp.stack([xp.einsum(spec, src[s], d).reshape(dy.shape[-2:]) for s in slices])


def _filter_from_patches(xp, cols, dy, filter_shape):
    """A convolution's filter gradient from the im2col patches of its input: the patches'
    transpose times dy, one matmul (one batched matmul over the groups)."""
    p, cg, co = cols.shape[0], filter_shape[-2], filter_shape[-1]
    k = _prod(filter_shape[:-2])
    groups = cols.shape[1] // (k * cg)
    if groups == 1:
        return xp.matmul(cols.T, dy.reshape(p, co)).reshape(filter_shape)
    og = co // groups
    a = cols.reshape(p, k, groups, cg).transpose(2, 1, 3, 0).reshape(groups, k * cg, p)
    b = dy.reshape(p, groups, og).transpose(1, 0, 2)
    return xp.matmul(a, b).reshape(groups, k, cg, og).transpose(1, 2, 0, 3).reshape(filter_shape)


for _rank, (_conv, _back_input, _back_filter) in _CONV_OPS.items():
    defop(_conv, fresh_output=True, infer=_conv_infer(_conv, _rank), grad=_conv_grad)(_conv_kernel)
    defop(_back_input, infer=lambda x, f, dy, **attrs: spec(x.shape, dy.dtype),
          grad=_backprop_input_grad, fresh_output=True)(_conv_backprop_input)
    defop(_back_filter, infer=lambda x, f, dy, **attrs: spec(f.shape, dy.dtype),
          grad=_backprop_filter_grad, fresh_output=True)(_conv_backprop_filter)


# ------------------------------------------------------------------ convolution + bias
# Made only by the graph pass `passes/conv_bias.py` (after autodiff, so not differentiable):
# a BiasAdd of a convolution's output that nothing else reads becomes one FusedConv2D /
# FusedConv3D (TensorFlow's _FusedConv2D with BiasAdd), the Conv kernel with its bias.

_FUSED_CONV = {"Conv2D": "FusedConv2D", "Conv3D": "FusedConv3D"}


def _fused_conv_infer(name, rank):
    conv_infer = _conv_infer(name, rank)

    def infer(x, f, bias, **attrs):
        out = conv_infer(x, f, **attrs)
        return spec(out.shape, same_dtype(name, x, f, bias))
    return infer


def _fused_conv(xp, x, f, bias, **attrs):
    return _conv_kernel(xp, x, f, bias=bias, **attrs)


for _rank, _name in ((2, "FusedConv2D"), (3, "FusedConv3D")):
    defop(_name, fresh_output=True, infer=_fused_conv_infer(_name, _rank),
          differentiable=False)(_fused_conv)


# ------------------------------------------------------------------ shared im2col patches
# Made only by the graph pass `passes/conv_patches.py` (after autodiff, so not differentiable):
# convolutions and filter gradients that read one input with one window geometry become one
# ConvPatches op feeding ConvFromPatches / ConvFilterFromPatches, whose kernels are the second
# halves of the Conv and ConvBackpropFilter kernels above (the same numpy calls, same results).

def _conv_patches(xp, x, window, strides, padding, explicit_paddings, dilations):
    """im2col of `x`: (P, K*C), as the Conv kernels make it (may be a view of `x`)."""
    plan = _plan(x.shape, window, strides, dilations, padding, explicit_paddings)
    if x.shape[0] * _prod(_outs(plan)) == 0:
        return xp.zeros((0, _prod(window) * x.shape[-1]), dtype=x.dtype)
    return _patches(xp, x, window, strides, dilations, plan)


def _patches_infer(x, window, strides, padding, explicit_paddings, dilations):
    xs = list(x.shape)
    plan = _plan(xs, window, strides, dilations, padding, explicit_paddings)
    outs = _outs(plan)
    rows = None if xs[0] is None or None in outs else xs[0] * _prod(outs)
    return spec([rows, None if xs[-1] is None else _prod(window) * xs[-1]], x.dtype)


def _from_patches_infer(cols, f, outs):
    rows = cols.shape[0] if cols.shape.rank is not None else None
    n = None if rows is None or _prod(outs) == 0 else rows // _prod(outs)
    return spec([n] + list(outs) + [f.shape[-1]], same_dtype("ConvFromPatches", cols, f))


def _conv_from_patches_kernel(xp, cols, f, outs):
    n = cols.shape[0] // max(_prod(outs), 1)
    out = xp.empty((n,) + tuple(outs) + (f.shape[-1],), dtype=cols.dtype)
    rows = _prod(outs)

    def part(lo, hi):
        _conv_from_patches(xp, cols[lo * rows:hi * rows], f, out[lo:hi])
    _by_batch(xp, n, cols.size, part)
    return out


def _filter_from_patches_kernel(xp, cols, dy, filter_shape):
    n, rows = dy.shape[0], _prod(dy.shape[1:-1])
    return _sum_parts(_by_batch(xp, n, cols.size, lambda lo, hi: _filter_from_patches(
        xp, cols[lo * rows:hi * rows], dy[lo:hi], tuple(filter_shape))))


defop("ConvPatches", infer=_patches_infer, differentiable=False)(_conv_patches)
defop("ConvFromPatches", infer=_from_patches_infer, differentiable=False,
      fresh_output=True)(_conv_from_patches_kernel)
defop("ConvFilterFromPatches", infer=lambda cols, dy, filter_shape: spec(filter_shape, dy.dtype),
      differentiable=False, fresh_output=True)(_filter_from_patches_kernel)


_LAYOUTS = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _check_data_format(data_format, rank=2):
    layout = _LAYOUTS[rank]
    if data_format not in (layout, None):
        raise ValueError(f"data_format must be {layout!r} (channels last), got {data_format!r}; "
                         f"transpose channels-first data to channels last with tl.transpose")


def _conv_args(op_name, strides, padding, dilations, rank):
    mode, explicit = _padding_attrs(padding, rank)
    strides = _spatial(strides, "strides", rank=rank)
    dilations = _spatial(dilations, "dilations", 1, rank=rank)
    if min(strides) < 1 or min(dilations) < 1:
        raise ValueError(f"{op_name}: strides and dilations must be >= 1, got {strides} and "
                         f"{dilations}")
    if max(strides) > 1 and max(dilations) > 1:
        raise ValueError(f"{op_name}: strides > 1 together with dilations > 1 are not supported "
                         "(as TensorFlow)")
    return dict(strides=strides, padding=mode, explicit_paddings=explicit, dilations=dilations)


def _convolve(rank, input, filters, strides, padding, dilations):  # noqa: A002
    op_name = _CONV_OPS[rank][0]
    x, f = convert_same_dtype(op_name, (input, filters))
    _float_tensor(x, op_name)
    return apply(op_name, x, f, **_conv_args(op_name, strides, padding, dilations, rank))


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """2-D convolution (cross-correlation, as TensorFlow) of NHWC images with HWIO filters.

    Args:
        input: float tensor [batch, height, width, in_channels].
        filters: tensor [filter_height, filter_width, in_channels / groups, out_channels];
            a filter with fewer in-channels than the input makes a grouped convolution.
        strides: int or list of 1, 2 or 4 ints.
        padding: "SAME", "VALID", or explicit [[top, bottom], [left, right]] (or 4 NHWC pairs).
        data_format: "NHWC" only.
        dilations: int or list of 1, 2 or 4 ints (default 1).

    Returns:
        A tensor [batch, out_height, out_width, out_channels].

    Raises:
        InvalidArgumentError: on mismatched channels, ranks or dtypes.
        ValueError: on a bad padding, strides or data_format.

    Example:
        >>> tl.nn.conv2d(tl.ones([1, 5, 5, 3]), tl.ones([3, 3, 3, 8]), 1, "SAME").shape
        TensorShape([1, 5, 5, 8])
    """
    _check_data_format(data_format)
    return _convolve(2, input, filters, strides, padding, dilations)


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """3-D convolution of NDHWC volumes with [depth, height, width, in, out] filters.

    Args: as `conv2d`, with three spatial dims (strides and dilations: 1, 3 or 5 ints).

    Example:
        >>> tl.nn.conv3d(tl.ones([1, 4, 4, 4, 2]), tl.ones([2, 2, 2, 2, 3]), 1, "VALID").shape
        TensorShape([1, 3, 3, 3, 3])
    """
    _check_data_format(data_format, 3)
    return _convolve(3, input, filters, strides, padding, dilations)


def _static_shape(output_shape, op_name):
    """A list of ints (or a 1-D int tensor) naming the transposed conv's output shape."""
    if isinstance(output_shape, (list, tuple)) and all(
            isinstance(v, int) or hasattr(v, "__index__") for v in output_shape):
        return [int(v) for v in output_shape]
    value = convert_to_tensor(output_shape)
    if value.dtype not in (_dt.int32, _dt.int64) or value.shape.rank != 1:
        raise op_error(InvalidArgumentError, op_name,
                       f"output_shape must be a 1-D int32/int64 tensor, got {value.shape} "
                       f"{value.dtype.name}")
    return value


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """The transpose (gradient) of a convolution, for 1, 2 or 3 spatial dims.

    Args:
        input: float tensor [batch, spatial..., in_channels].
        filters: [spatial..., out_channels, in_channels] (conv's filter of the reverse direction).
        output_shape: the output's full shape [batch, spatial..., out_channels] (list or tensor).
        strides, padding, dilations: those of the convolution being transposed.

    Example:
        >>> tl.nn.conv_transpose(tl.ones([1, 2, 2, 1]), tl.ones([2, 2, 3, 1]), [1, 4, 4, 3],
        ...                      2).shape
        TensorShape([1, 4, 4, 3])
    """
    x = _float_tensor(input, "conv_transpose")
    rank = x.shape.rank - 2 if x.shape.rank is not None else None
    if rank not in (1, 2, 3):
        raise ValueError(f"conv_transpose needs an input of rank 3, 4 or 5, got shape {x.shape}")
    _check_data_format(data_format, rank)
    if rank == 1:
        shape = _static_shape(output_shape, "conv1d_transpose")
        shape = [shape[0], 1] + shape[1:] if isinstance(shape, list) else \
            _array.concat([shape[:1], _array.ones([1], shape.dtype), shape[1:]], 0)
        out = conv_transpose(_array.expand_dims(x, 1), _array.expand_dims(filters, 0), shape,
                             [1, _one_dim(strides, "strides")], padding,
                             dilations=[1, _one_dim(dilations, "dilations", 1)])
        return _array.squeeze(out, [1])
    op_name = _CONV_OPS[rank][1]
    x, f = convert_same_dtype(op_name, (x, filters))
    shape = _static_shape(output_shape, op_name)
    attrs = _conv_args(op_name, strides, padding, dilations, rank)
    if isinstance(shape, list):
        if len(shape) != rank + 2:
            raise ValueError(f"{op_name}: output_shape must have {rank + 2} entries, got {shape}")
        expected = _conv_infer(op_name, rank)(spec(shape, x.dtype), f, **attrs).shape
        if x.shape.rank is not None and not expected.is_compatible_with(x.shape):
            raise ValueError(f"{op_name}: output_shape {shape} convolves to {expected}, but the "
                             f"input has shape {x.shape}")
    # the input-gradient op reads its first input only for the shape: a broadcast scalar
    carrier = _array.broadcast_to(_array.zeros([], x.dtype), shape)
    return apply(op_name, carrier, f, x, **attrs)


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """Transposed 2-D convolution: filters [h, w, out_channels, in_channels] (see conv_transpose).

    Example:
        >>> tl.nn.conv2d_transpose(tl.ones([1, 3, 3, 2]), tl.ones([3, 3, 4, 2]), [1, 6, 6, 4],
        ...                        2).shape
        TensorShape([1, 6, 6, 4])
    """
    _check_data_format(data_format)
    return conv_transpose(input, filters, output_shape, strides, padding, None, dilations)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NDHWC", dilations=None, name=None):
    """Transposed 3-D convolution: filters [d, h, w, out_channels, in_channels]."""
    _check_data_format(data_format, 3)
    return conv_transpose(input, filters, output_shape, strides, padding, None, dilations)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """Transposed 1-D convolution: filters [w, out_channels, in_channels]."""
    _check_data_format(data_format, 1)
    return conv_transpose(input, filters, output_shape, strides, padding, None, dilations)


# ------------------------------------------------------------------ pooling (2-D and 3-D)

_POOL_OPS = {2: {"MaxPool": "MaxPool", "MaxPoolGrad": "MaxPoolGrad",
                 "MaxPoolGradGrad": "MaxPoolGradGrad", "AvgPool": "AvgPool",
                 "AvgPoolGrad": "AvgPoolGrad"},
             3: {"MaxPool": "MaxPool3D", "MaxPoolGrad": "MaxPool3DGrad",
                 "MaxPoolGradGrad": "MaxPool3DGradGrad", "AvgPool": "AvgPool3D",
                 "AvgPoolGrad": "AvgPool3DGrad"}}


def _pool_name(op, kind):
    return _POOL_OPS[len(op.attrs["ksize"])][kind]


def _pool_infer(name):
    def infer(x, ksize, strides, padding):
        rank = len(ksize)
        _check_image(name, x, rank=rank)
        if not x.dtype.is_floating:
            raise TypeError(f"{name} needs a floating-point input, got {x.dtype.name}")
        xs = list(x.shape) if x.shape.rank is not None else [None] * (rank + 2)
        plan = _plan(xs, ksize, strides, (1,) * rank, padding, None)
        return spec([xs[0]] + list(_outs(plan)) + [xs[-1]], x.dtype)
    return infer


def _pool_plan(x_shape, ksize, strides, padding):
    return _plan(x_shape, ksize, strides, (1,) * len(ksize), padding, None)


def _pooled_shape(x_shape, plan):
    return (x_shape[0],) + _outs(plan) + (x_shape[-1],)


def _pool_attrs(op):
    return {k: op.attrs[k] for k in ("ksize", "strides", "padding")}


def _pool_windows(xp, x, ksize, strides, padding, value):
    """(padded input, plan, the slices of it each window offset reads) of a pooling op."""
    plan = _pool_plan(x.shape, ksize, strides, padding)
    return (_pad(xp, x, plan, value), plan,
            _window_slices(ksize, strides, (1,) * len(ksize), _outs(plan)))


def _window_reduce(ufunc, xpad, slices, out=None):
    """`ufunc` (maximum, add) folded over the window offsets' slices: K - 1 passes (into `out`
    if given)."""
    if len(slices) == 1:
        if out is None:
            return xpad[slices[0]].copy()
        out[...] = xpad[slices[0]]
        return out
    out = ufunc(xpad[slices[0]], xpad[slices[1]], out=out)
    for s in slices[2:]:
        ufunc(out, xpad[s], out=out)
    return out


def _dim_slices(dim, k, s, o):
    """Per window offset along spatial dim `dim`, the slice of it every output reads."""
    return [(slice(None),) * (1 + dim) + (slice(i, i + (o - 1) * s + 1, s),) for i in range(k)]


def _pool_reduce(ufunc, xpad, ksize, strides, outs, out=None):
    """`ufunc` (maximum, add) over every pooling window (into `out` if given); never a view of
    `xpad`. Tiling windows fold over the window offsets (prod(k_i) - 1 passes over the
    output); overlapping ones one spatial dim at a time (a box window is separable):
    sum(k_i - 1) passes over shrinking arrays."""
    if _tiles(ksize, strides, (1,) * len(ksize), outs):
        return _window_reduce(ufunc, xpad, _window_slices(ksize, strides, (1,) * len(ksize), outs),
                              out)
    acc, reduced = xpad, False
    for dim, (k, s, o) in enumerate(zip(ksize, strides, outs)):
        if k == 1:
            acc = acc[_dim_slices(dim, 1, s, o)[0]]
        else:
            acc, reduced = _window_reduce(ufunc, acc, _dim_slices(dim, k, s, o)), True
    if out is not None:
        out[...] = acc
        return out
    return acc if reduced else acc.copy()


def _pool_spread(xp, g, padded, ksize, strides, outs):
    """The adjoint of `_pool_reduce` with add: each value of `g` (N, *outs, C) added back over
    its window, into an array of the `padded` shape: one strided copy for tiling windows, one
    spatial dim at a time for overlapping ones."""
    n = len(ksize)
    if _tiles(ksize, strides, (1,) * n, outs):
        return _col2im(xp, xp.broadcast_to(g, (_prod(ksize),) + g.shape), padded, ksize,
                       strides, (1,) * n, [(o, 0, 0) for o in outs])
    for dim in reversed(range(len(ksize))):
        k, s, o = ksize[dim], strides[dim], outs[dim]
        if k == 1 and s == 1 and o == padded[1 + dim]:
            continue
        spread = xp.zeros(g.shape[:1 + dim] + (padded[1 + dim],) + g.shape[2 + dim:],
                          dtype=g.dtype)
        for window in _dim_slices(dim, k, s, o):
            spread[window] += g
        g = spread
    return g


def _first_max_masks(xp, xpad, slices, y):
    """Per window offset, where that offset holds its window's first maximum (row-major
    order), the one position TensorFlow routes a max-pooling gradient to."""
    taken = None
    for i, s in enumerate(slices):
        hit = xpad[s] == y
        if taken is None:
            taken = hit.copy() if len(slices) > 1 else hit
        else:
            hit = xp.greater(hit, taken, out=hit)   # a maximum not taken by an earlier offset
            if i < len(slices) - 1:
                taken |= hit
        yield hit


def _max_pool(xp, x, ksize, strides, padding):
    if 0 in x.shape:
        plan = _pool_plan(x.shape, ksize, strides, padding)
        return xp.zeros(_pooled_shape(x.shape, plan), dtype=x.dtype)
    plan = _pool_plan(x.shape, ksize, strides, padding)
    out = xp.empty(_pooled_shape(x.shape, plan), dtype=x.dtype)
    _by_batch(xp, x.shape[0], x.size, lambda lo, hi: _pool_reduce(
        xp.maximum, _pad(xp, x[lo:hi], plan, -xp.inf), ksize, strides, _outs(plan), out[lo:hi]))
    return out


def _route_to_first_max(xp, mask, dy, out):
    """out = dy where mask, else 0: the integer product of dy's bits and the mask (a select:
    inf or NaN outside the mask still gives 0, and no pass to look for them; np.where on
    broadcast operands is several times slower)."""
    ints = _SAME_SIZE_INT.get(dy.dtype.itemsize)
    if ints is None or out.dtype != dy.dtype:
        out[...] = xp.where(mask, dy, dy.dtype.type(0))
    else:
        xp.multiply(dy.view(ints), mask, out=out.view(ints))


def _max_pool_grad(xp, x, y, dy, ksize, strides, padding):
    """Routes each output gradient to the first maximum of its window (as TensorFlow), `y` the
    pooled output: masks per window offset, no argmax. Tiling windows (stride = ksize) write
    each input position once. Batch slices run on the thread pool."""
    if 0 in x.shape or 0 in dy.shape:
        return xp.zeros(x.shape, dtype=dy.dtype)
    dx = xp.empty(x.shape, dtype=dy.dtype)
    _by_batch(xp, x.shape[0], x.size, lambda lo, hi: _max_pool_grad_into(
        xp, x[lo:hi], y[lo:hi], dy[lo:hi], ksize, strides, padding, dx[lo:hi]))
    return dx


def _max_pool_grad_into(xp, x, y, dy, ksize, strides, padding, out):
    """`_max_pool_grad` of one batch slice, written into `out` (the slice's rows of dx)."""
    xpad, plan, slices = _pool_windows(xp, x, ksize, strides, padding, -xp.inf)
    n, outs = len(ksize), _outs(plan)
    if _tiles(ksize, strides, (1,) * n, outs):
        # one comparison over the input, the ties broken offset by offset on the boolean mask,
        # one product: the fewest passes over input-sized arrays
        expand = (slice(None),) + (slice(None), None) * n
        mask = _tiled(xpad, ksize, outs) == y[expand]
        offsets = [(slice(None),) + tuple(a for i in offset for a in (slice(None), i))
                   for offset in _itertools.product(*[range(k) for k in ksize])]
        taken = mask[offsets[0]].copy()
        for i, s in enumerate(offsets[1:], 2):
            hit = xp.greater(mask[s], taken, out=mask[s])   # a maximum no earlier offset took
            if i < len(offsets):
                taken |= hit
        dx = out if xpad.shape == x.shape else xp.empty(xpad.shape, dtype=dy.dtype)
        _zero_border(dx, ksize, outs)
        _route_to_first_max(xp, mask, dy[expand], _tiled(dx, ksize, outs))
    else:
        dx = out if xpad.shape == x.shape else xp.empty(xpad.shape, dtype=dy.dtype)
        dx[...] = 0
        routed = xp.empty_like(dy)
        for s, mask in zip(slices, _first_max_masks(xp, xpad, slices, y)):
            _route_to_first_max(xp, mask, dy, routed)
            dx[s] += routed
    if dx is not out:
        out[...] = dx[_interior(x.shape, plan)]


def _max_pool_grad_grad(xp, x, y, g, ksize, strides, padding):
    """Picks, for each window, `g` at the position of the window's first maximum."""
    plan = _pool_plan(x.shape, ksize, strides, padding)
    if 0 in x.shape:
        return xp.zeros(_pooled_shape(x.shape, plan), dtype=g.dtype)
    xpad, plan, slices = _pool_windows(xp, x, ksize, strides, padding, -xp.inf)
    gpad = _pad(xp, g, plan)
    out = xp.zeros(_pooled_shape(x.shape, plan), dtype=g.dtype)
    for s, mask in zip(slices, _first_max_masks(xp, xpad, slices, y)):
        xp.copyto(out, gpad[s], where=mask)
    return out


def _avg_counts(xp, x_shape, dtype, ksize, strides, padding):
    """How many real (unpadded) input positions each output window covers: the window size
    without padding, else an array [1, *outs, 1]."""
    plan = _pool_plan(x_shape, ksize, strides, padding)
    if not any(p[1] or p[2] for p in plan):
        return _prod(ksize)
    ones = _pad(xp, xp.ones((1,) + tuple(x_shape[1:-1]) + (1,), dtype=dtype), plan)
    return _pool_reduce(xp.add, ones, ksize, strides, _outs(plan))


def _avg_pool(xp, x, ksize, strides, padding):
    plan = _pool_plan(x.shape, ksize, strides, padding)
    if 0 in x.shape:
        return xp.zeros(_pooled_shape(x.shape, plan), dtype=x.dtype)
    total = _pool_reduce(xp.add, _pad(xp, x, plan), ksize, strides, _outs(plan))
    total /= _avg_counts(xp, x.shape, x.dtype, ksize, strides, padding)
    return total


def _avg_pool_grad(xp, x, dy, ksize, strides, padding):
    """Spreads each output gradient evenly over its window's real positions; `x` gives the shape."""
    plan = _pool_plan(x.shape, ksize, strides, padding)
    if 0 in x.shape or 0 in dy.shape:
        return xp.zeros(x.shape, dtype=dy.dtype)
    share = dy / _avg_counts(xp, x.shape, dy.dtype, ksize, strides, padding)
    dx = _pool_spread(xp, share, _padded_shape(x.shape, plan), ksize, strides, _outs(plan))
    return dx[_interior(x.shape, plan)] if dx.shape != x.shape else dx


for _names in _POOL_OPS.values():
    # as TensorFlow's, the max-pooling gradient ops read the pooled output `y` too
    defop(_names["MaxPool"], fresh_output=True, infer=_pool_infer(_names["MaxPool"]),
          grad=lambda op, dy: (apply(_pool_name(op, "MaxPoolGrad"), op.inputs[0], op.outputs[0],
                                     dy, **_pool_attrs(op)),))(_max_pool)
    defop(_names["MaxPoolGrad"], fresh_output=True,
          infer=lambda x, y, dy, **attrs: spec(x.shape, dy.dtype),
          grad=lambda op, g: (None, None, apply(_pool_name(op, "MaxPoolGradGrad"), *op.inputs[:2],
                                                g, **_pool_attrs(op))))(_max_pool_grad)
    defop(_names["MaxPoolGradGrad"],
          infer=lambda x, y, g, **attrs: spec(y.shape, g.dtype),
          grad=lambda op, gg: (None, None, apply(_pool_name(op, "MaxPoolGrad"), *op.inputs[:2], gg,
                                                 **_pool_attrs(op))))(_max_pool_grad_grad)
    defop(_names["AvgPool"], fresh_output=True, infer=_pool_infer(_names["AvgPool"]),
          grad=lambda op, dy: (apply(_pool_name(op, "AvgPoolGrad"), op.inputs[0], dy,
                                     **_pool_attrs(op)),))(_avg_pool)
    defop(_names["AvgPoolGrad"], fresh_output=True,
          infer=lambda x, dy, **attrs: spec(x.shape, dy.dtype),
          grad=lambda op, g: (None, apply(_pool_name(op, "AvgPool"), g,
                                          **_pool_attrs(op))))(_avg_pool_grad)


def _pool(op_name, input, ksize, strides, padding, data_format, rank=2):  # noqa: A002
    _check_data_format(data_format, rank)
    x = _float_tensor(input, op_name)
    mode, explicit = _padding_attrs(padding, rank)
    if explicit is not None:
        raise ValueError(f"{op_name} padding must be 'SAME' or 'VALID', got {padding!r}")
    ksize, strides = _spatial(ksize, "ksize", rank=rank), _spatial(strides, "strides", rank=rank)
    if min(ksize) < 1 or min(strides) < 1:
        raise ValueError(f"ksize and strides must be >= 1, got {ksize} and {strides}")
    return apply(op_name, x, ksize=ksize, strides=strides, padding=mode)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Max over each ksize window of NHWC images.

    Args:
        input: float tensor [batch, height, width, channels].
        ksize: window size: int or list of 1, 2 or 4 ints.
        strides: int or list of 1, 2 or 4 ints.
        padding: "SAME" or "VALID" (SAME pads with -inf, so padding never wins).

    Returns:
        A tensor [batch, out_height, out_width, channels].

    Example:
        >>> tl.nn.max_pool2d(tl.ones([1, 4, 4, 1]), 2, 2, "VALID").shape
        TensorShape([1, 2, 2, 1])
    """
    return _pool("MaxPool", input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Mean over each ksize window of NHWC images (SAME: over the window's real positions only).

    Args: as `max_pool2d`.

    Example:
        >>> tl.nn.avg_pool2d(tl.ones([1, 3, 3, 1]), 2, 2, "SAME").numpy().ravel()
        array([1., 1., 1., 1.], dtype=float32)
    """
    return _pool("AvgPool", input, ksize, strides, padding, data_format)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Max over each ksize window of NDHWC volumes (ksize, strides: 1, 3 or 5 ints).

    Example:
        >>> tl.nn.max_pool3d(tl.ones([1, 4, 4, 4, 1]), 2, 2, "VALID").shape
        TensorShape([1, 2, 2, 2, 1])
    """
    return _pool("MaxPool3D", input, ksize, strides, padding, data_format, 3)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Mean over each ksize window of NDHWC volumes (SAME: over real positions only)."""
    return _pool("AvgPool3D", input, ksize, strides, padding, data_format, 3)


def _one_dim(value, name, default=None):
    """An int from an int or a list of 1 or 3 ints (3: NWC with 1 at N and C), as TensorFlow."""
    return _spatial(value, name, default, rank=1)[0]


def _rank_is(x, rank, op_name, what="input"):
    if x.shape.rank is not None and x.shape.rank != rank:
        raise op_error(InvalidArgumentError, op_name,
                       f"{what} must have rank {rank}, got shape {x.shape}")


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """1-D convolution of [batch, width, in_channels] inputs with [width, in, out] filters
    (a 2-D convolution over a height of 1).

    Args:
        stride: int or list of 1 or 3 ints.
        padding: "SAME", "VALID" or [[left, right]].
        dilations: int or list of 1 or 3 ints (default 1).

    Example:
        >>> tl.nn.conv1d(tl.ones([1, 5, 2]), tl.ones([3, 2, 4]), 1, "SAME").shape
        TensorShape([1, 5, 4])
    """
    _check_data_format(data_format, 1)
    x, f = convert_same_dtype("Conv2D", (input, filters))
    _rank_is(x, 3, "conv1d")
    _rank_is(f, 3, "conv1d", "filters")
    if not isinstance(padding, str):
        pairs = [list(p) for p in padding]
        padding = [[0, 0], pairs[1 if len(pairs) == 3 else 0]]
    out = conv2d(_array.expand_dims(x, 1), _array.expand_dims(f, 0),
                 [1, _one_dim(stride, "stride")], padding,
                 dilations=[1, _one_dim(dilations, "dilations", 1)])
    return _array.squeeze(out, [1])


def _pool1d(pool, input, ksize, strides, padding, data_format):  # noqa: A002
    _check_data_format(data_format, 1)
    x = _float_tensor(input, "pool1d")
    _rank_is(x, 3, "pool1d")
    out = pool(_array.expand_dims(x, 1), [1, _one_dim(ksize, "ksize")],
               [1, _one_dim(strides, "strides")], padding)
    return _array.squeeze(out, [1])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max over each window of [batch, width, channels] inputs (see `max_pool2d`)."""
    return _pool1d(max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Mean over each window of [batch, width, channels] inputs (see `avg_pool2d`)."""
    return _pool1d(avg_pool2d, input, ksize, strides, padding, data_format)


def _depthwise_filter(f, op_name, rank=2):
    """[spatial..., c, m] depthwise filters as [spatial..., 1, c*m] grouped-conv filters
    (group k = input channel k makes output channels k*m .. k*m + m - 1)."""
    if f.shape.rank != rank + 2 or None in f.shape.as_list()[-2:]:
        raise op_error(InvalidArgumentError, op_name,
                       f"filter must be a {rank + 2}-D tensor [spatial..., in_channels, "
                       f"multiplier] with known channels, got {f.shape}")
    shape = f.shape.as_list()
    if None in shape:
        target = _array.concat([_array.shape(f)[:-2], [1, shape[-2] * shape[-1]]], 0)
    else:
        target = shape[:-2] + [1, shape[-2] * shape[-1]]
    return _array.reshape(f, target)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,  # noqa: A002
                     name=None):
    """Convolves each input channel with its own `multiplier` filters; outputs in_channels *
    multiplier channels (channel k*multiplier + j from input channel k and filter j).

    Args:
        input: float [batch, height, width, in_channels].
        filter: [filter_height, filter_width, in_channels, multiplier].
        strides: int or list of 1, 2 or 4 ints.
        padding: "SAME", "VALID" or explicit pairs.
        dilations: int or list of 1 or 2 ints.

    Example:
        >>> tl.nn.depthwise_conv2d(tl.ones([1, 4, 4, 2]), tl.ones([2, 2, 2, 3]), [1, 1, 1, 1],
        ...                        "VALID").shape
        TensorShape([1, 3, 3, 6])
    """
    _check_data_format(data_format)
    x, f = convert_same_dtype("DepthwiseConv2dNative", (input, filter))
    if x.shape.rank is not None and x.shape[-1] is not None and f.shape.rank == 4 and \
            f.shape[-2] is not None and x.shape[-1] != f.shape[-2]:
        raise op_error(InvalidArgumentError, "DepthwiseConv2dNative",
                       f"input has {x.shape[-1]} channels but the filter {f.shape} expects "
                       f"{f.shape[-2]}")
    f = _depthwise_filter(f, "DepthwiseConv2dNative")
    return conv2d(x, f, strides, padding, dilations=dilations)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """`depthwise_conv2d` followed by a 1x1 conv2d with `pointwise_filter` [1, 1, c*m, out]."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    return conv2d(y, pointwise_filter, 1, "VALID")


# ------------------------------------------------------------------ bias, dropout, normalization

def _bias_add_infer(value, bias):
    d = same_dtype("BiasAdd", value, bias)
    if bias.shape.rank is not None and bias.shape.rank != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    if value.shape.rank is not None:
        if value.shape.rank < 2:
            raise ValueError(f"value must have rank >= 2, got shape {value.shape}")
        c, b = value.shape[-1], bias.shape[0] if bias.shape.rank else None
        if c is not None and b is not None and c != b:
            raise ValueError(f"bias has {b} elements but value has {c} channels in its last dim "
                             f"(value shape {value.shape})")
    return spec(value.shape, d)


# the driver sums dy down to the bias's shape; channels last, so numpy's broadcasting: an
# elementwise op (fused with its activation under jit_compile)
def _bias_add_direct(op):
    """`xp.add` itself (into planned buffers) when the shapes are static and fit, which the
    inference rule checked while tracing; else the kernel, which checks them."""
    value, bias = op.inputs
    if value.shape.rank is None or value.shape.rank < 2 or bias.shape.rank != 1 or \
            value.shape[-1] is None or value.shape[-1] != bias.shape[0]:
        return None
    return "add", None


@defop("BiasAdd", fresh_output=True, infer=_bias_add_infer, grad=lambda op, dy: (dy, dy),
       elementwise=True, into="add", direct=_bias_add_direct, c_expr="({0} + {1})",
       native="({0} + {1})")
def _bias_add(xp, value, bias):
    if bias.ndim != 1 or value.ndim < 2 or bias.shape[0] != value.shape[-1]:
        raise ValueError("shapes differ")  # explained by the inference rule
    if value.dtype == bias.dtype:   # large values by row slices on the pool
        done = _on_rows(xp, value, lambda lo, hi, rows: xp.add(value[lo:hi], bias, out=rows))
        if done is not None:
            return done
    return value + bias


def bias_add(value, bias, data_format=None, name=None):
    """Adds a 1-D `bias` along the last (channel) dim of `value`.

    Args:
        value: tensor of rank >= 2, channels last.
        bias: 1-D tensor with one value per channel.

    Example:
        >>> tl.nn.bias_add(tl.zeros([2, 3]), [1.0, 2.0, 3.0]).numpy()[0]
        array([1., 2., 3.], dtype=float32)
    """
    if data_format not in (None, "NHWC", "N...C"):
        raise ValueError(f"bias_add supports channels-last data only, got data_format={data_format!r}")
    value, bias = convert_same_dtype("BiasAdd", (value, bias))
    return apply("BiasAdd", value, bias)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeros each element with probability `rate` and scales the rest by 1 / (1 - rate).

    Inside a tl.function a fresh mask is drawn on every call.

    Args:
        x: a floating-point tensor.
        rate: the drop probability, a float in [0, 1).
        noise_shape: shape of the mask, broadcastable to x (e.g. [batch, 1, 1, channels]).
        seed: an op seed (combined with `tl.random.set_seed`).

    Raises:
        ValueError: for a rate outside [0, 1).
        InvalidArgumentError: for a non-float x.

    Example:
        >>> tl.random.set_seed(0); y = tl.nn.dropout(tl.ones([4]), 0.5)
        >>> sorted(set(y.numpy().tolist())) <= [0.0, 2.0]
        True
    """
    x = _float_tensor(x, "dropout")
    if isinstance(rate, (int, float)):
        if not 0 <= rate < 1:
            raise ValueError(f"rate must be a scalar in [0, 1), got {rate}")
        if rate == 0:
            return x
    if noise_shape is None:
        noise_shape = x.shape.as_list() if x.shape.is_fully_defined() else _array.shape(x)
    elif isinstance(noise_shape, (list, tuple)) and None in noise_shape:
        noise_shape = [x.shape[i] if d is None else d for i, d in enumerate(noise_shape)]
    keep = _math.greater_equal(_random.uniform(noise_shape, dtype=x.dtype, seed=seed), rate)
    return x * (_math.cast(keep, x.dtype) * (1.0 / (1.0 - rate)))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x**2, axis), epsilon)).

    Example:
        >>> tl.nn.l2_normalize([3.0, 4.0]).numpy()
        array([0.6, 0.8], dtype=float32)
    """
    x = _float_tensor(x, "l2_normalize")
    square_sum = _math.reduce_sum(_math.square(x), axis=axis, keepdims=True)
    return x * _math.rsqrt(_math.maximum(square_sum, epsilon))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of `x` over `axes` (the variance's gradient ignores the mean's, as TF).

    Args:
        x: a floating-point tensor.
        axes: the axes to reduce (a list of ints).
        keepdims: keep reduced axes with length 1.

    Returns:
        (mean, variance).

    Example:
        >>> m, v = tl.nn.moments(tl.constant([1.0, 3.0]), axes=[0])
        >>> float(m), float(v)
        (2.0, 1.0)
    """
    x = _float_tensor(x)
    axes = [int(a) for a in axes] if isinstance(axes, (list, tuple)) else axes
    mean = _math.reduce_mean(x, axis=axes, keepdims=True)
    variance = _math.reduce_mean(_math.square(x - _array.stop_gradient(mean)), axis=axes,
                                 keepdims=True)
    if not keepdims:
        mean, variance = _array.squeeze(mean, axes), _array.squeeze(variance, axes)
    return mean, variance


# ------------------------------------------------------------------ more of tf.nn
# The losses and normalizations below are TensorFlow's own compositions.

from .math import in_top_k, top_k  # noqa: E402,F401 -- tl.nn.top_k / in_top_k, as TensorFlow

__all__ += ["conv1d", "conv3d", "conv_transpose", "conv1d_transpose", "conv2d_transpose",
            "conv3d_transpose", "depthwise_conv2d", "separable_conv2d", "max_pool1d",
            "avg_pool1d", "max_pool3d", "avg_pool3d",
            "embedding_lookup", "l2_loss", "softsign", "log_poisson_loss",
            "weighted_cross_entropy_with_logits", "batch_normalization",
            "local_response_normalization", "lrn", "compute_average_loss", "top_k", "in_top_k"]


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of `params` at `ids` (a gather along axis 0).

    Args:
        params: a tensor [vocab, ...], or a list of shards split along axis 0 in order
            (TensorFlow's 'div' strategy, so they concatenate back to the table).
        ids: an int tensor of row indices.
        max_norm: if set, each looked-up embedding with a larger L2 norm is scaled down to it.

    Example:
        >>> tl.nn.embedding_lookup(tl.constant([[0.0, 1.0], [2.0, 3.0]]), [1, 1]).numpy()
        array([[2., 3.],
               [2., 3.]], dtype=float32)
    """
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("embedding_lookup needs at least one params tensor")
        params = params[0] if len(params) == 1 else _array.concat(list(params), 0)
    params = convert_to_tensor(params)
    ids = convert_to_tensor(ids)
    out = _array.gather(params, ids)
    if max_norm is None:
        return out
    if out.shape.rank is None or ids.shape.rank is None:
        raise ValueError("embedding_lookup with max_norm needs params and ids of known rank")
    axes = list(range(ids.shape.rank, out.shape.rank))
    return _math.clip_by_norm(out, max_norm, axes=axes or None)


def _l2_loss_infer(t):
    if not t.dtype.is_floating:
        raise TypeError(f"L2Loss needs a floating-point tensor, got {t.dtype.name}")
    return spec([], t.dtype)


@defop("L2Loss", infer=_l2_loss_infer, grad=lambda op, dy: (dy * op.inputs[0],))
def _l2_loss(xp, t):
    return ((t * t).sum(dtype=t.dtype) * t.dtype.type(0.5)).astype(t.dtype)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar (floating dtypes).

    Example:
        >>> tl.nn.l2_loss(tl.constant([1.0, 2.0])).numpy()
        2.5
    """
    return apply("L2Loss", _float_tensor(t, "L2Loss"))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's term for targets > 1 with
    `compute_full_loss`, as TensorFlow.

    Example:
        >>> float(tl.nn.log_poisson_loss(tl.constant(1.0), tl.constant(0.0)))
        1.0
    """
    log_input, targets = convert_same_dtype("log_poisson_loss", (log_input, targets))
    result = _math.exp(log_input) - log_input * targets
    if not compute_full_loss:
        return result
    stirling = targets * _math.log(targets) - targets + 0.5 * _math.log(2 * _pymath.pi * targets)
    small = _math.logical_and(_math.greater_equal(targets, 0.0), _math.less_equal(targets, 1.0))
    return result + _math.where(small, _array.zeros_like(targets), stirling)


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross-entropy with the positive term weighted by `pos_weight`, computed stably:
    (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0)).

    Example:
        >>> round(float(tl.nn.weighted_cross_entropy_with_logits(1.0, 0.0, 2.0)), 4)
        1.3863
    """
    labels, logits = convert_same_dtype("weighted_cross_entropy_with_logits", (labels, logits))
    logits = _float_tensor(logits, "weighted_cross_entropy_with_logits")
    log_weight = 1 + (pos_weight - 1) * labels
    return (1 - labels) * logits + log_weight * (
        _math.log1p(_math.exp(-_math.abs(logits))) + relu(-logits))


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, as TensorFlow computes it
    (offset and scale may be None).

    Example:
        >>> tl.nn.batch_normalization(tl.constant([2.0]), 1.0, 4.0, None, None, 0.0).numpy()
        array([0.5], dtype=float32)
    """
    x = _float_tensor(x)
    inv = _math.rsqrt(variance + convert_to_tensor(variance_epsilon, dtype_hint=x.dtype))
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else -mean * inv
    return x * _math.cast(inv, x.dtype) + _math.cast(shift, x.dtype)


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,  # noqa: A002
                                 name=None):
    """input / (bias + alpha * sum of squares over 2 * depth_radius + 1 channels) ** beta, over
    the last dim of a 4-D tensor, as TensorFlow's LRN.

    Example:
        >>> tl.nn.local_response_normalization(tl.ones([1, 1, 1, 1]), 1, 0.0, 1.0, 1.0).numpy()
        array([[[[1.]]]], dtype=float32)
    """
    x = _float_tensor(input, "LRN")
    _rank_is(x, 4, "LRN")
    r = int(depth_radius)
    padded = _array.pad(_math.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    windows = [padded[..., i:(i - 2 * r) or None] for i in range(2 * r + 1)]
    square_sum = windows[0] if len(windows) == 1 else _math.add_n(windows)
    return x / _math.pow(bias + alpha * square_sum, beta)


lrn = local_response_normalization


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None,
                         name=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (default: the batch size,
    the first dim), as TensorFlow outside a distribution strategy.

    Example:
        >>> tl.nn.compute_average_loss(tl.constant([1.0, 2.0, 3.0]), global_batch_size=6).numpy()
        1.0
    """
    loss = _float_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * _math.cast(sample_weight, loss.dtype)
    if global_batch_size is None:
        global_batch_size = _math.cast(_array.shape(loss)[0], loss.dtype) if loss.shape.rank else \
            _math.cast(1, loss.dtype)
    else:
        global_batch_size = _math.cast(global_batch_size, loss.dtype)
    return _math.reduce_sum(loss) / global_batch_size


# ------------------------------------------------------------------ rank-generic names of tf.nn
# TensorFlow's `max_pool`, `avg_pool`, `pool`, `convolution` pick the 1-, 2- or 3-D op from the
# input's rank; they are dispatchers, not ops of their own.

__all__ += ["max_pool", "avg_pool", "pool", "convolution", "atrous_conv2d", "crelu",
            "normalize_moments", "sufficient_statistics", "weighted_moments",
            "depth_to_space", "space_to_depth"]


def _by_rank(fn_name, input, table):  # noqa: A002
    x = convert_to_tensor(input)
    spatial = None if x.shape.rank is None else x.shape.rank - 2
    if spatial not in table:
        raise ValueError(f"{fn_name} needs an input of rank 3, 4 or 5 ([batch, *spatial, "
                         f"channels]), got shape {x.shape}")
    return x, table[spatial]


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Max pooling of a 3-D, 4-D or 5-D channels-last input (`max_pool1d/2d/3d` by rank).

    Example:
        >>> tl.nn.max_pool(tl.reshape(tl.range(4.0), [1, 4, 1]), 2, 2, "VALID").numpy().ravel()
        array([1., 3.], dtype=float32)
    """
    x, fn = _by_rank("max_pool", input, {1: max_pool1d, 2: max_pool2d, 3: max_pool3d})
    return fn(x, ksize, strides, padding, data_format or _LAYOUTS[x.shape.rank - 2])


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Average pooling of a 3-D, 4-D or 5-D channels-last input (`avg_pool1d/2d/3d` by rank)."""
    x, fn = _by_rank("avg_pool", input, {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d})
    return fn(x, ksize, strides, padding, data_format or _LAYOUTS[x.shape.rank - 2])


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,  # noqa: A002
         dilations=None, name=None):
    """TensorFlow's `tf.nn.pool`: "MAX" or "AVG" pooling over window_shape (dilations of 1).

    Raises:
        ValueError: for another pooling_type or dilations other than 1.
    """
    if dilations is not None and any(int(d) != 1 for d in _as_list(dilations)):
        raise ValueError(f"pool supports dilations of 1 only, got {dilations}")
    kinds = {"MAX": max_pool, "AVG": avg_pool}
    if pooling_type not in kinds:
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    return kinds[pooling_type](input, list(window_shape), strides or 1, padding, data_format)


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                dilations=None, name=None):
    """N-D convolution of a channels-last input (`conv1d/2d/3d` by rank).

    Example:
        >>> x = tl.ones([1, 3, 3, 1]); w = tl.ones([2, 2, 1, 1])
        >>> tl.nn.convolution(x, w).shape
        TensorShape([1, 2, 2, 1])
    """
    x, fn = _by_rank("convolution", input, {1: conv1d, 2: conv2d, 3: conv3d})
    layout = data_format or _LAYOUTS[x.shape.rank - 2]
    return fn(x, filters, 1 if strides is None else strides, padding, layout, dilations)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """2-D dilated ("atrous") convolution: conv2d with stride 1 and dilation `rate`."""
    return conv2d(value, filters, 1, padding, dilations=int(rate))


def crelu(features, axis=-1, name=None):
    """Concatenated ReLU: relu(x) and relu(-x) joined along `axis` (twice the channels).

    Example:
        >>> tl.nn.crelu(tl.constant([1.0, -2.0])).numpy()
        array([1., 0., 0., 2.], dtype=float32)
    """
    x = _float_tensor(features, "CRelu")
    return _array.concat([relu(x), relu(-x)], axis)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over `axes`, as TensorFlow.

    Example:
        >>> [float(v) for v in tl.nn.sufficient_statistics(tl.constant([1.0, 3.0]), [0])[:3]]
        [2.0, 4.0, 10.0]
    """
    x = _float_tensor(x)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes = [int(a) % x.shape.rank for a in _as_list(axes)] if x.shape.rank is not None \
        else _as_list(axes)
    dims = _array.shape(x)
    count = _math.reduce_prod(_math.cast(_array.gather(dims, axes), x.dtype))
    if shift is not None:
        shift = convert_to_tensor(shift, dtype=x.dtype)
        centered = x - shift
    else:
        centered = x
    m = _math.reduce_sum(centered, axes, keepdims=keep)
    v = _math.reduce_sum(_math.square(centered), axes, keepdims=keep)
    return count, m, v, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from `sufficient_statistics`' sums.

    Example:
        >>> s = tl.nn.sufficient_statistics(tl.constant([1.0, 3.0]), [0])
        >>> [float(v) for v in tl.nn.normalize_moments(*s)]
        [2.0, 1.0]
    """
    divisor = _math.reciprocal(counts)
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    variance = variance_ss * divisor - _math.square(shifted_mean)
    return mean, variance


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """Mean and variance of `x` over `axes`, each element weighted by `frequency_weights`
    (broadcast against x); a zero total weight gives 0, as TensorFlow's divide_no_nan.

    Example:
        >>> m, v = tl.nn.weighted_moments(tl.constant([1.0, 3.0]), [0], tl.constant([1.0, 3.0]))
        >>> float(m), float(v)
        (2.5, 0.75)
    """
    x = _float_tensor(x)
    w = _math.cast(convert_to_tensor(frequency_weights), x.dtype)
    axes = _as_list(axes)
    total = _math.reduce_sum(w * _array.ones_like(x), axes, keepdims=True)
    mean = _math.divide_no_nan(_math.reduce_sum(w * x, axes, keepdims=True), total)
    variance = _math.divide_no_nan(
        _math.reduce_sum(w * _math.square(x - _array.stop_gradient(mean)), axes, keepdims=True),
        total)
    if not keepdims:
        mean, variance = _array.squeeze(mean, axes), _array.squeeze(variance, axes)
    return mean, variance


def _blocks(fn_name, input, block_size, data_format):  # noqa: A002
    if data_format not in ("NHWC", None):
        raise ValueError(f"{fn_name} supports data_format 'NHWC', got {data_format!r}; transpose "
                         f"channels-first images with tl.transpose")
    x = convert_to_tensor(input)
    if x.shape.rank != 4:
        raise ValueError(f"{fn_name} needs 4-D NHWC images, got shape {x.shape}")
    b = int(block_size)
    if b < 2:
        raise ValueError(f"{fn_name}: block_size must be >= 2, got {block_size}")
    return x, b


def _block_dims(x):
    """The four dims of NHWC `x`: Python ints where static (the batch always -1), else scalars."""
    dims = _array.shape(x)
    return [-1] + [d if d is not None else dims[i] for i, d in enumerate(x.shape) if i]


def _block_shape(dims):
    """A reshape target from ints and scalar tensors (static when all are ints)."""
    if all(isinstance(d, int) for d in dims):
        return dims
    if dims[0] == -1:
        dims = [-1] + list(dims[1:])
    return _array.stack([_math.cast(d, _dt.int32) if not isinstance(d, int) else d for d in dims])


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves depth into spatial blocks: [n, h, w, c*b*b] -> [n, h*b, w*b, c] (TensorFlow's
    DCR order).

    Example:
        >>> tl.nn.depth_to_space(tl.reshape(tl.range(4.0), [1, 1, 1, 4]), 2).numpy().ravel()
        array([0., 1., 2., 3.], dtype=float32)
    """
    x, b = _blocks("depth_to_space", input, block_size, data_format)
    _, h, w, c = x.shape
    if c is not None and c % (b * b):
        raise ValueError(f"depth_to_space: depth {c} is not divisible by block_size^2 = {b * b}")
    n, h, w, c = _block_dims(x)
    y = _array.reshape(x, _block_shape([n, h, w, b, b, c // (b * b)]))
    y = _array.transpose(y, [0, 1, 3, 2, 4, 5])
    return _array.reshape(y, _block_shape([n, h * b, w * b, c // (b * b)]))


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves spatial blocks into depth: [n, h*b, w*b, c] -> [n, h, w, c*b*b].

    Example:
        >>> tl.nn.space_to_depth(tl.reshape(tl.range(4.0), [1, 2, 2, 1]), 2).numpy().ravel()
        array([0., 1., 2., 3.], dtype=float32)
    """
    x, b = _blocks("space_to_depth", input, block_size, data_format)
    _, h, w, c = x.shape
    if (h is not None and h % b) or (w is not None and w % b):
        raise ValueError(f"space_to_depth: height and width must be divisible by block_size "
                         f"{b}, got shape {x.shape}")
    n, h, w, c = _block_dims(x)
    y = _array.reshape(x, _block_shape([n, h // b, b, w // b, b, c]))
    y = _array.transpose(y, [0, 1, 3, 2, 4, 5])
    return _array.reshape(y, _block_shape([n, h // b, w // b, c * b * b]))



# ------------------------------------------------------------------ CTC

__all__ += ["ctc_loss"]


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None,
             blank_index=None, name=None):
    """Connectionist temporal classification loss per example, -log p(labels | logits), as
    `tf.nn.ctc_loss` with dense labels: the forward algorithm in log space over the static
    time axis (its gradient is the tape's through those ops).

    Args:
        labels: int [batch, max_label_length], padded beyond label_length.
        logits: [time, batch, classes] (or [batch, time, classes] with logits_time_major=False),
            unnormalized.
        label_length, logit_length: int [batch].
        blank_index: the blank class (default 0; negative counts from the end).

    Example:
        >>> loss = tl.nn.ctc_loss([[1]], tl.zeros([2, 1, 3]), [1], [2])
        >>> round(float(loss[0]), 4)  # -log(3 / 9): three paths of probability 1/9
        1.0986
    """
    if unique is not None:
        raise ValueError("ctc_loss(unique=...) is not supported")
    logits = _float_tensor(logits, "CTCLoss")
    if logits_time_major:
        logits = _array.transpose(logits, [1, 0, 2])
    dtype = logits.dtype
    labels = _math.cast(convert_to_tensor(labels), _dt.int32)
    tlen = _math.cast(convert_to_tensor(label_length), _dt.int32)
    olen = _math.cast(convert_to_tensor(logit_length), _dt.int32)
    _, steps, classes = logits.shape
    max_len = labels.shape[1]
    if steps is None or max_len is None or classes is None:
        raise ValueError("ctc_loss needs static time, label-length and class dims, got logits "
                         f"{logits.shape} and labels {labels.shape}")
    blank = (0 if blank_index is None else int(blank_index)) % classes
    logp = log_softmax(logits, axis=-1)
    blanks = _array.fill(_array.shape(labels), blank)
    ext = _array.reshape(_array.stack([blanks, labels], -1), [-1, 2 * max_len])
    ext = _array.concat([ext, blanks[:, :1]], 1)  # [batch, 2L + 1]: blank, l1, blank, ..., blank
    size = 2 * max_len + 1
    pos = _array.reshape(_array.range(size), [1, size])
    previous = _array.concat([_array.fill(_array.stack([_array.shape(ext)[0], 2]), -1),
                              ext[:, :-2]], 1)
    skip = _math.logical_and(_math.not_equal(ext, blank), _math.not_equal(ext, previous))
    neg = _math.cast(-1e30, dtype)
    neg_fill = _array.fill(_array.shape(ext), neg)

    def emit(t):
        return _array.gather(logp[:, t, :], ext, axis=1, batch_dims=1)

    def shifted(a, k):
        return _array.concat([_array.fill(_array.stack([_array.shape(a)[0], k]), neg),
                              a[:, :-k]], 1)

    def logsumexp3(a, b, c):
        top = _math.maximum(_math.maximum(a, b), c)
        return top + _math.log(_math.exp(a - top) + _math.exp(b - top) + _math.exp(c - top))

    alpha = _math.where(_math.less(pos, 2), emit(0), neg_fill)
    for t in range(1, steps):
        step = logsumexp3(alpha, shifted(alpha, 1),
                          _math.where(skip, shifted(alpha, 2), neg_fill)) + emit(t)
        alpha = _math.where(_math.less(t, _array.expand_dims(olen, 1)), step, alpha)
    last = _array.gather(alpha, _array.expand_dims(2 * tlen, 1), axis=1, batch_dims=1)[:, 0]
    before = _array.gather(alpha, _array.expand_dims(_math.maximum(2 * tlen - 1, 0), 1), axis=1,
                           batch_dims=1)[:, 0]
    before = _math.where(_math.greater(tlen, 0), before, _array.fill(_array.shape(tlen), neg))
    top = _math.maximum(last, before)
    return -(top + _math.log(_math.exp(last - top) + _math.exp(before - top)))
