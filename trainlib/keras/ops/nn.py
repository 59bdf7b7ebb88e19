"""`trainlib.keras.ops.nn`: Keras 3's neural-network ops over trainlib's nn ops.

Owns: Keras's signatures and defaults for activations (`gelu` approximate by default, `elu` with
alpha...), convolutions and pooling in `channels_last` / `channels_first` (1-D and 2-D; 1-D runs
as 2-D with a unit height; `conv`, `conv_transpose` and pooling also 3-D, on the 3-D ops),
attention, normalizations, cross-entropies (from logits or from
probabilities, with Keras's reuse of the logits behind a sigmoid/softmax output), one-hot
encodings and block rearrangements. Invariants: compositions of trainlib ops only; the
convolution family calls the existing Conv2D/Conv3D and pool ops (grouped convolution is
the conv op itself, with fewer filter in-channels than input channels), `conv_transpose` is
Conv2DBackpropInput / Conv3DBackpropInputV2 (the ops the gradients of Conv2D / Conv3D use), so
nothing here has a kernel of its own.
"""
import numpy as _np

from ... import activations as _act
from ...activations import (celu, glu, hard_shrink, hard_sigmoid, hard_silu, hard_tanh,  # noqa: F401
                            soft_shrink, sparse_plus, sparse_sigmoid, sparsemax, squareplus,
                            tanh_shrink, threshold)
from ...activations import hard_silu as hard_swish  # noqa: F401
from ... import losses as _losses
from ...graph import dtypes as _dt
from ...graph.ops import array as _a
from ...graph.ops import complex as _cx
from ...graph.ops import math as _m
from ...graph.ops import nn as _nn
from ...graph.ops import normalization as _norm
from ...graph.op import apply as _apply
from ...layers.convolutional import transpose_output_size as _transpose_output_size
from ...layers.adaptive_pooling import adaptive_pool as _adaptive_pool
from . import linalg as _klinalg
from . import numpy as _knp
from ._convert import floatx_dtype as _floatx, floating as _float, promote as _promote, tensor as _t

__all__ = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss",
    "depth_to_space", "depthwise_conv", "dot_product_attention", "elu", "fold", "gelu", "glu",
    "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "layer_normalization",
    "leaky_relu", "log_sigmoid", "log_softmax", "max_pool", "moments", "multi_hot", "normalize",
    "one_hot", "polar", "psnr", "relu", "relu6", "rms_normalization", "selu", "separable_conv", "sigmoid",
    "silu", "soft_shrink", "softmax", "softplus", "softsign", "space_to_depth",
    "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus",
    "swish", "tanh_shrink", "threshold", "unfold",
]

_EPSILON = 1e-7


def _c(x, dtype):
    return _m.cast(x, dtype)


# ------------------------------------------------------------------ activations

def relu(x):
    """max(x, 0) (integers stay integers, as Keras)."""
    x = _t(x)
    if x.dtype.is_integer:
        return _m.maximum(x, _m.cast(0, x.dtype))
    return _nn.relu(_float(x))


def relu6(x):
    """min(max(x, 0), 6) (integers stay integers, as Keras)."""
    x = _t(x)
    if x.dtype.is_integer:
        return _m.minimum(_m.maximum(x, _m.cast(0, x.dtype)), _m.cast(6, x.dtype))
    return _nn.relu6(_float(x))


def sigmoid(x):
    """1 / (1 + exp(-x)) (the output remembers its logits for the cross-entropies)."""
    return _act.sigmoid(_float(x))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis` (None: over all elements)."""
    x = _float(x)
    if axis is None:
        return _a.reshape(_act.softmax(_a.reshape(x, [-1])), _a.shape(x))
    return _act.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along `axis` (None: over all elements)."""
    x = _float(x)
    if axis is None:
        return _a.reshape(_nn.log_softmax(_a.reshape(x, [-1])), _a.shape(x))
    return _nn.log_softmax(x, axis=axis)


def softplus(x):
    """log(1 + exp(x))."""
    return _m.softplus(_float(x))


def softsign(x):
    """x / (1 + |x|)."""
    return _m.softsign(_float(x))


def silu(x):
    """x * sigmoid(x)."""
    return _nn.silu(_float(x))


swish = silu


def log_sigmoid(x):
    """log(sigmoid(x)), computed stably."""
    return _m.log_sigmoid(_float(x))


def leaky_relu(x, negative_slope=0.2):
    """x if x > 0 else negative_slope * x."""
    return _nn.leaky_relu(_float(x), alpha=negative_slope)


def elu(x, alpha=1.0):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    x = _float(x)
    res = _nn.elu(x)
    return res if alpha == 1 else _m.where(_m.greater(x, 0), res, _c(alpha, x.dtype) * res)


def selu(x):
    """Scaled ELU with the self-normalizing constants."""
    return _nn.selu(_float(x))


def gelu(x, approximate=True):
    """Gaussian error linear unit (tanh approximation by default, as Keras)."""
    x = _float(x)
    if x.dtype is _dt.float16:  # computed in float32 (float16 erf is too coarse), as TensorFlow
        return _m.cast(_nn.gelu(_m.cast(x, _dt.float32), approximate=approximate), _dt.float16)
    return _nn.gelu(x, approximate=approximate)


# ------------------------------------------------------------------ encodings and losses

def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """One-hot encodings of the integer x (negative indices give all zeros), floatx by default."""
    if sparse:
        raise NotImplementedError("trainlib has no sparse tensors (one_hot(sparse=True))")
    x = _t(x)
    if x.dtype not in (_dt.int32, _dt.int64):
        x = _m.cast(x, _dt.int64)
    d = _dt.as_dtype(dtype or _floatx())
    if d.is_bool:
        return _m.cast(_a.one_hot(x, num_classes, axis=axis, dtype=_dt.int32), _dt.bool)
    return _a.one_hot(x, num_classes, axis=axis, dtype=d)


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """Multi-hot encodings: the one-hot rows of each sample combined (batched if rank > 1)."""
    num_classes = kwargs.pop("num_tokens", num_classes)
    x = _t(inputs)
    red = 1 if x.shape.rank > 1 else 0
    d = _dt.as_dtype(dtype or _floatx())
    if d.is_bool:
        return _m.reduce_any(one_hot(x, num_classes, axis, "bool", sparse), red)
    return _m.reduce_max(one_hot(x, num_classes, axis, d, sparse), red)


def _same_shapes(name, target, output):
    if target.shape.rank != output.shape.rank:
        raise ValueError(f"Arguments `target` and `output` of {name} must have the same rank "
                         f"(ndim). Received: target.shape={target.shape}, output.shape={output.shape}")
    for e1, e2 in zip(target.shape, output.shape):
        if e1 is not None and e2 is not None and e1 != e2:
            raise ValueError(f"Arguments `target` and `output` of {name} must have the same shape. "
                             f"Received: target.shape={target.shape}, output.shape={output.shape}")


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy (no reduction)."""
    output, from_logits = _losses._from_activation(output, from_logits, "Sigmoid")  # noqa: SLF001
    target, output = _promote(target, output, floating=True)
    _same_shapes("binary_crossentropy", target, output)
    if from_logits:
        return _nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    p = _m.clip_by_value(output, _EPSILON, 1.0 - _EPSILON)
    return -(target * _m.log(p) + (1.0 - target) * _m.log(1.0 - p))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of one-hot (or soft) targets along `axis` (no batch reduction)."""
    output, from_logits = _losses._from_activation(output, from_logits, "Softmax")  # noqa: SLF001
    target, output = _promote(target, output, floating=True)
    if target.shape.rank is not None and target.shape.rank < 1:
        raise ValueError("Arguments `target` and `output` must be at least rank 1")
    _same_shapes("categorical_crossentropy", target, output)
    if from_logits:
        return _nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    p = output / _m.reduce_sum(output, axis, keepdims=True)
    p = _m.clip_by_value(p, _EPSILON, 1.0 - _EPSILON)
    return -_m.reduce_sum(target * _m.log(p), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer targets (no batch reduction); axis must be the last."""
    output, from_logits = _losses._from_activation(output, from_logits, "Softmax")  # noqa: SLF001
    output = _float(output)
    if axis not in (-1, output.shape.rank - 1):
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    target = _t(target)
    if target.shape.rank == output.shape.rank and target.shape[-1] == 1:
        target = _a.squeeze(target, [-1])
    if target.shape.rank != output.shape.rank - 1:
        raise ValueError("Argument `output` must have rank (ndim) `target.ndim - 1`. Received: "
                         f"target.shape={target.shape}, output.shape={output.shape}")
    target = _m.cast(target, _dt.int64)
    if not from_logits:
        output = _m.log(_m.clip_by_value(output, _EPSILON, 1.0 - _EPSILON))
    return _nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


# ------------------------------------------------------------------ normalization

def moments(x, axes, keepdims=False, synchronized=False):
    """(mean, variance) of x over `axes`."""
    x = _float(x)
    ax = [axes] if isinstance(axes, int) else list(axes)
    mean = _m.reduce_mean(x, ax, keepdims=True)
    var = _m.reduce_mean(_m.square(x - _a.stop_gradient(mean)), ax, keepdims=True) - \
        _m.square(mean - _a.stop_gradient(mean))
    if not keepdims:
        mean, var = _a.squeeze(mean, ax), _a.squeeze(var, ax)
    return mean, var


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, statistics along `axis`."""
    x = _float(x)
    rank = x.shape.rank

    def shaped(v):
        if v is None:
            return None
        v = _t(v, x.dtype)
        if axis in (-1, rank - 1) or v.shape.rank == rank:
            return v
        shape = [1] * rank
        shape[axis] = -1
        return _a.reshape(v, shape)
    inv = _m.rsqrt(shaped(variance) + _c(epsilon, x.dtype))
    if scale is not None:
        inv = inv * shaped(scale)
    out = x * inv - shaped(mean) * inv
    return out + shaped(offset) if offset is not None else out


def _fits_layer_norm(x, gamma, beta, axes):
    """Whether the LayerNorm op computes this layer_normalization: trailing axes of a known
    shape, gamma and beta both given with exactly that shape."""
    rank = x.shape.rank
    if gamma is None or beta is None or axes != list(range(rank - len(axes), rank)):
        return False
    trailing = x.shape.as_list()[rank - len(axes):]
    return None not in trailing and all(
        list(_np.shape(v) if not hasattr(v, "shape") else v.shape) == trailing
        for v in (gamma, beta))


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """x normalized over `axis` (mean 0, variance 1), then scaled by gamma and shifted by beta."""
    rms_scaling = kwargs.pop("rms_scaling", False)
    if kwargs:
        raise TypeError(f"layer_normalization got unexpected arguments {sorted(kwargs)}")
    eps = 1e-7 if epsilon is None else epsilon
    x0 = _t(x)
    x = _float(x0) if x0.dtype not in (_dt.float16,) else _m.cast(x0, _dt.float32)
    rank = x.shape.rank
    ax = sorted([a % rank for a in ([axis] if isinstance(axis, int) else axis)])
    bshape = [1] * rank
    for a in ax:
        bshape[a] = x.shape[a]

    def bc(v):
        if v is None:
            return None
        v = _t(v, x.dtype)
        if v.shape.rank != rank and ax != [rank - 1]:
            return _a.reshape(v, bshape)
        return v
    if rms_scaling:
        inv = _m.rsqrt(_m.reduce_variance(x, ax, keepdims=True) + _c(eps, x.dtype))
        out = x * inv
        if gamma is not None:
            out = out * bc(gamma)
    elif _fits_layer_norm(x, gamma, beta, ax):  # one op, as LayerNormalization's layer
        out = _norm.layer_norm(x, _t(gamma, x.dtype), _t(beta, x.dtype), eps, len(ax))
    else:
        mean, var = moments(x, ax, keepdims=True)
        inv = _m.rsqrt(var + _c(eps, x.dtype))
        if gamma is not None:
            inv = inv * bc(gamma)
        res = -mean * inv
        if beta is not None:
            res = res + bc(beta)
        out = x * inv + res
    return _m.cast(out, x0.dtype)  # back to the input's dtype, integers too, as Keras


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """x / sqrt(mean(x^2) + epsilon) over `axis`, times scale."""
    eps = 1e-7 if epsilon is None else epsilon
    x0 = _t(x)
    x = _float(x0) if x0.dtype is not _dt.float16 else _m.cast(x0, _dt.float32)
    if x.shape.rank == 0:
        x = _a.expand_dims(x, 0)
    ax = sorted(axis) if isinstance(axis, (list, tuple)) else axis
    out = x * _m.rsqrt(_m.reduce_mean(_m.square(x), ax, keepdims=True) + _c(eps, x.dtype))
    if scale is not None:
        out = out * _t(scale, x.dtype)
    return _m.cast(out, x0.dtype)  # back to the input's dtype, integers too, as Keras


def normalize(x, axis=-1, order=2, epsilon=None):
    """x divided by its `order`-norm along `axis`."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = _float(x)
    if x.shape.rank == 0:
        x = _a.expand_dims(x, 0)
    eps = 1e-7 if epsilon is None else epsilon
    if order == 2:
        inv = _m.rsqrt(_m.reduce_sum(_m.square(x), axis, keepdims=True))
        return x * _m.minimum(inv, _c(1.0 / eps, x.dtype))
    return x / _m.maximum(_klinalg.norm(x, order, axis, keepdims=True), _c(eps, x.dtype))


def polar(abs_, angle):
    """The complex64 tensor abs_ * (cos(angle) + i sin(angle))."""
    r, a = _promote(abs_, angle, floating=True)
    r, a = _m.cast(r, _dt.float32), _m.cast(a, _dt.float32)
    return _cx.complex(r * _m.cos(a), r * _m.sin(a))


def psnr(x1, x2, max_val):
    """Peak signal-to-noise ratio: 20 log10(max_val) - 10 log10(mse)."""
    a, b = _promote(x1, x2, floating=True)
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"Input shapes {a.shape} and {b.shape} must match for PSNR calculation.")
    mse = _m.reduce_mean(_m.square(a - b))
    return 20.0 * _knp.log10(_c(max_val, b.dtype)) - 10.0 * _knp.log10(mse)


# ------------------------------------------------------------------ convolution and pooling

def _tuple(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(e) for e in v)
    if len(v) != n:
        raise ValueError(f"{name} needs {n} values, got {v}")
    return v


def _spatial_rank(x, name):
    r = x.shape.rank - 2
    if r not in (1, 2):
        raise NotImplementedError(f"keras.ops.{name}: trainlib supports 1-D and 2-D inputs here "
                                  f"(rank 3 or 4; conv and pooling also rank 5), got rank "
                                  f"{x.shape.rank}")
    return r


def _to_nhwc(x, data_format, r):
    """x as NHWC (1-D inputs get a unit height)."""
    if data_format == "channels_first":
        x = _a.transpose(x, [0] + list(range(2, r + 2)) + [1])
    return _a.expand_dims(x, 1) if r == 1 else x


def _from_nhwc(y, data_format, r):
    if r == 1:
        y = _a.squeeze(y, [1])
    if data_format == "channels_first":
        y = _a.transpose(y, [0, r + 1] + list(range(1, r + 1)))
    return y


def _data_format(data_format):
    df = data_format or "channels_last"
    if df not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {df!r}")
    return df


def _padding(padding):
    p = padding.upper()
    if p not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'same' or 'valid', got {padding!r}")
    return p


def _hw(v, r):
    return (1,) + v if r == 1 else v


def _channels_last(x, df):
    return _a.transpose(x, [0] + list(range(2, x.shape.rank)) + [1]) if df == "channels_first" else x


def _channels_back(y, df):
    r = y.shape.rank
    return _a.transpose(y, [0, r - 1] + list(range(1, r - 1))) if df == "channels_first" else y


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """N-D convolution (1-D, 2-D, 3-D); kernel [*spatial, in_channels / groups, out_channels]
    (a kernel with fewer in-channels than the input makes a grouped convolution)."""
    x, k = _promote(inputs, kernel, floating=True)
    df = _data_format(data_format)
    if x.shape.rank == 5:
        s, d = _tuple(strides, 3, "strides"), _tuple(dilation_rate, 3, "dilation_rate")
        out = _nn.conv3d(_channels_last(x, df), k, list(s), _padding(padding), dilations=list(d))
        return _channels_back(out, df)
    r = _spatial_rank(x, "conv")
    s, d = _tuple(strides, r, "strides"), _tuple(dilation_rate, r, "dilation_rate")
    kk = _a.expand_dims(k, 0) if r == 1 else k
    out = _nn.conv2d(_to_nhwc(x, df, r), kk, list(_hw(s, r)), _padding(padding),
                     dilations=list(_hw(d, r)))
    return _from_nhwc(out, df, r)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise convolution; kernel [*spatial, in_channels, multiplier]."""
    x, k = _promote(inputs, kernel, floating=True)
    df = _data_format(data_format)
    r = _spatial_rank(x, "depthwise_conv")
    s, d = _tuple(strides, r, "strides"), _tuple(dilation_rate, r, "dilation_rate")
    kk = _a.expand_dims(k, 0) if r == 1 else k
    out = _nn.depthwise_conv2d(_to_nhwc(x, df, r), kk, [1, *_hw(s, r), 1], _padding(padding),
                               dilations=list(_hw(d, r)))
    return _from_nhwc(out, df, r)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    """Depthwise convolution followed by a 1x1 (pointwise) convolution."""
    y = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(y, pointwise_kernel, 1, "valid", data_format)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1):
    """Transposed convolution (the gradient of `conv` with respect to its input);
    kernel [*spatial, out_channels, in_channels]."""
    x, k = _promote(inputs, kernel, floating=True)
    df = _data_format(data_format)
    if x.shape.rank == 5:
        s, d = _tuple(strides, 3, "strides"), _tuple(dilation_rate, 3, "dilation_rate")
        op = (None,) * 3 if output_padding is None else _tuple(output_padding, 3, "output_padding")
        out = _conv_transpose3d(_channels_last(x, df), k, s, d, _padding(padding), op)
        return _channels_back(out, df)
    r = _spatial_rank(x, "conv_transpose")
    s, d = _tuple(strides, r, "strides"), _tuple(dilation_rate, r, "dilation_rate")
    op = None if output_padding is None else _tuple(output_padding, r, "output_padding")
    p = _padding(padding)
    y = _to_nhwc(x, df, r)
    kk = _a.expand_dims(k, 0) if r == 1 else k
    spatial = list(y.shape[1:3])
    ksz = list(kk.shape[:2])
    ss, dd = _hw(s, r), _hw(d, r)
    ops = (None, None) if op is None else ((0,) + op if r == 1 else op)
    out_hw = [_transpose_output_size(spatial[i], ksz[i], ss[i], p, ops[i], dd[i]) for i in range(2)]
    if r == 1:
        out_hw[0] = 1
    batch = _a.shape(y)[0:1]
    like = _a.zeros(_a.concat([batch, out_hw, [kk.shape[2]]], 0), y.dtype)
    # TensorFlow's conv_transpose: the input gradient of a conv of the output shape
    out = _apply("Conv2DBackpropInput", like, kk, y, strides=tuple(ss), padding=p,
                 explicit_paddings=None, dilations=tuple(dd))
    return _from_nhwc(out, df, r)


def _conv_transpose3d(x, k, s, d, padding, output_padding):
    """A channels-last 3-D transposed convolution: the input gradient of a 3-D convolution
    whose input has Keras's output length (as the 2-D case)."""
    out_len = [_transpose_output_size(x.shape[i + 1], k.shape[i], s[i], padding,
                                      output_padding[i], d[i]) for i in range(3)]
    like = _a.zeros(_a.concat([_a.shape(x)[0:1], out_len, [k.shape[3]]], 0), x.dtype)
    return _apply("Conv3DBackpropInputV2", like, k, x, strides=tuple(s), padding=padding,
                  explicit_paddings=None, dilations=tuple(d))


def _pool(fn, inputs, pool_size, strides, padding, data_format, name):
    x = _float(inputs)
    df = _data_format(data_format)
    if x.shape.rank == 5:
        ps = _tuple(pool_size, 3, "pool_size")
        s = ps if strides is None else _tuple(strides, 3, "strides")
        pool3d = _nn.avg_pool3d if fn is _nn.avg_pool2d else _nn.max_pool3d
        out = pool3d(_channels_last(x, df), [1, *ps, 1], [1, *s, 1], _padding(padding))
        return _channels_back(out, df)
    r = _spatial_rank(x, name)
    ps = _tuple(pool_size, r, "pool_size")
    s = ps if strides is None else _tuple(strides, r, "strides")
    out = fn(_to_nhwc(x, df, r), [1, *_hw(ps, r), 1], [1, *_hw(s, r), 1], _padding(padding))
    return _from_nhwc(out, df, r)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Max pooling over windows of `pool_size` (1-D and 2-D)."""
    return _pool(_nn.max_pool2d, inputs, pool_size, strides, padding, data_format, "max_pool")


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Average pooling over windows of `pool_size` (padding excluded from the count)."""
    return _pool(_nn.avg_pool2d, inputs, pool_size, strides, padding, data_format, "average_pool")


def _adaptive(mode, inputs, output_size, data_format):
    x = _float(inputs)
    return _adaptive_pool(x, _tuple(output_size, x.shape.rank - 2, "output_size"),
                          _data_format(data_format), mode)


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to a fixed `output_size` (Keras's bins: floor start, ceil end)."""
    return _adaptive("average", inputs, output_size, data_format)


def adaptive_max_pool(inputs, output_size, data_format=None):
    """Max pooling to a fixed `output_size` (Keras's bins: floor start, ceil end)."""
    return _adaptive("max", inputs, output_size, data_format)


def depth_to_space(x, block_size, data_format="channels_last"):
    """Moves depth into blocks of block_size x block_size pixels (4-D images)."""
    return _blocks_nhwc(_nn.depth_to_space, x, block_size, data_format)


def space_to_depth(x, block_size, data_format="channels_last"):
    """Moves blocks of block_size x block_size pixels into depth (4-D images)."""
    return _blocks_nhwc(_nn.space_to_depth, x, block_size, data_format)


def _blocks_nhwc(fn, x, block_size, data_format):
    x = _t(x)
    if data_format == "channels_first":
        return _a.transpose(fn(_a.transpose(x, [0, 2, 3, 1]), block_size), [0, 3, 1, 2])
    return fn(x, block_size)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _unfold_index(h, w, k, d, s):
    nh = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1
    nw = (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    rows = (_np.arange(nh)[None, :] * s[0] + _np.arange(k[0])[:, None] * d[0])  # [kh, nh]
    cols = (_np.arange(nw)[None, :] * s[1] + _np.arange(k[1])[:, None] * d[1])  # [kw, nw]
    flat = rows[:, None, :, None] * w + cols[None, :, None, :]  # [kh, kw, nh, nw]
    return flat.reshape(-1), nh, nw


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of an NCHW image: [N, C * kh * kw, L] (PyTorch's unfold)."""
    x = _t(x)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if any(p):
        x = _a.pad(x, [[0, 0], [0, 0], [p[0], p[0]], [p[1], p[1]]])
    _, c, h, w = x.shape
    idx, nh, nw = _unfold_index(h, w, k, d, s)
    flat = _a.reshape(x, [-1, c, h * w])
    patches = _a.gather(flat, _a.constant(idx.astype(_np.int32)), axis=2)
    return _a.reshape(patches, [-1, c * k[0] * k[1], nh * nw])


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The inverse arrangement of `unfold`, overlapping values summed: [N, C, oh, ow]."""
    x = _t(x)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    o = _pair(output_size)
    h, w = o[0] + 2 * p[0], o[1] + 2 * p[1]
    ckk = x.shape[1]
    c = ckk // (k[0] * k[1])
    idx, nh, nw = _unfold_index(h, w, k, d, s)
    blocks = _a.reshape(x, [-1, c, k[0] * k[1] * nh * nw])
    moved = _a.transpose(blocks, [2, 0, 1])
    summed = _m.unsorted_segment_sum(moved, _a.constant(idx.astype(_np.int32)), h * w)
    out = _a.reshape(_a.transpose(summed, [1, 2, 0]), [-1, c, h, w])
    if any(p):
        out = out[:, :, p[0]:h - p[0], p[1]:w - p[1]]
    return out


# ------------------------------------------------------------------ attention

def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """softmax(q k^T * scale + bias, masked) v for [batch, seq, heads, dim] inputs."""
    if flash_attention:
        raise ValueError("Flash attention is not supported by trainlib.")
    q, k, v = _promote(query, key, value, floating=True)
    if q.shape.rank != 4:
        raise ValueError("`dot_product_attention` only supports 4D inputs. Received: "
                         f"query.shape={q.shape}, key.shape={k.shape}, value.shape={v.shape}.")
    hq, hk = q.shape[2], k.shape[2]
    if hq is not None and hk is not None and hq > hk:  # grouped-query attention
        k = _a.repeat(k, hq // hk, axis=2)
        v = _a.repeat(v, hq // hk, axis=2)
    if scale is None:
        scale = 1.0 / float(_np.sqrt(k.shape[-1]))
    logits = _m.einsum("BTNH,BSNH->BNTS", q, k) * _c(scale, q.dtype)
    if attn_logits_soft_cap is not None:
        cap = _c(attn_logits_soft_cap, q.dtype)
        logits = _m.tanh(logits / cap) * cap
    if bias is not None:
        logits = logits + _t(bias, q.dtype)
    if mask is not None or is_causal:
        keep = None
        if mask is not None:
            keep = _m.cast(_t(mask), _dt.bool)
        if is_causal:
            t, s = logits.shape[2], logits.shape[3]
            causal = _m.less_equal(_a.reshape(_a.range(s), [1, s]), _a.reshape(_a.range(t), [t, 1]))
            keep = causal if keep is None else _m.logical_and(keep, causal)
        large = -0.7 * (65500.0 if q.dtype is _dt.float16 else 3.38953e38)
        logits = _m.where(keep, logits, _a.fill(_a.shape(logits), _c(large, q.dtype)))
    probs = _nn.softmax(logits, axis=-1)
    return _m.einsum("BNTS,BSNH->BTNH", probs, v)


# ------------------------------------------------------------------ CTC

def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """Connectionist temporal classification loss per sample: -log p(target | output), output
    being logits [batch, time, classes] and target padded labels [batch, max_label_length]
    (tl.nn.ctc_loss, batch-major, the blank at `mask_index`)."""
    logits = _float(output)
    if logits.dtype is _dt.float16:  # computed in float32, as Keras
        logits = _m.cast(logits, _dt.float32)
    return _nn.ctc_loss(target, logits, target_length, output_length, logits_time_major=False,
                        blank_index=mask_index)


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
               merge_repeated=True, mask_index=0):
    """Greedy CTC decoding: (labels [1, batch, time] padded with -1 (int32), scores [batch, 1],
    the negated sum of the best logit per step); beam search is not implemented."""
    if strategy != "greedy":
        raise NotImplementedError("keras.ops.ctc_decode: trainlib implements strategy='greedy' only")
    x = _float(inputs)
    if x.dtype is _dt.float16:  # scores in float32, as Keras
        x = _m.cast(x, _dt.float32)
    steps, classes = x.shape[1], x.shape[2]
    lengths = _m.cast(_t(sequence_lengths), _dt.int32)
    blank = mask_index % classes
    best = _m.argmax(x, axis=-1, output_type=_dt.int32)  # [batch, time]
    valid = _m.less(_a.reshape(_a.range(steps), [1, steps]), _a.expand_dims(lengths, 1))
    prev = _a.concat([_a.fill(_a.stack([_a.shape(best)[0], 1]), -1), best[:, :-1]], 1)
    keep = _m.logical_and(valid, _m.not_equal(best, blank))
    if merge_repeated:
        keep = _m.logical_and(keep, _m.not_equal(best, prev))
    slot = _m.cumsum(_m.cast(keep, _dt.int32), axis=1) - 1  # output position of each kept label
    hits = _m.logical_and(_a.expand_dims(keep, 2), _m.equal(
        _a.expand_dims(slot, 2), _a.reshape(_a.range(steps), [1, 1, steps])))  # [b, t, j]
    labels = _m.reduce_sum(_m.where(hits, _a.expand_dims(best, 2), _a.zeros_like(_m.cast(
        hits, _dt.int32))), 1)
    decoded = _m.where(_m.reduce_any(hits, 1), labels, _a.fill(_a.shape(labels), -1))
    top = _m.reduce_max(x, -1)
    scores = -_m.reduce_sum(_m.where(valid, top, _a.zeros_like(top)), 1, keepdims=True)
    return _a.expand_dims(decoded, 0), scores
