"""tl.nn ops: numpy references (direct loops for conv/pooling), float64 finite-difference
gradients (also of the gradient ops themselves), stability on large logits, and errors."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

# ------------------------------------------------------------------ numpy references


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def _geometry(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = math.ceil(size / stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2
    return (size - eff) // stride + 1, 0


def np_conv2d(x, f, stride, padding, dilation=1):
    n, h, w, c = x.shape
    kh, kw, _, co = f.shape
    oh, pt = _geometry(h, kh, stride, dilation, padding)
    ow, pl = _geometry(w, kw, stride, dilation, padding)
    out = np.zeros((n, oh, ow, co), dtype=np.float64)
    for b in range(n):
        for r in range(oh):
            for s in range(ow):
                for i in range(kh):
                    for j in range(kw):
                        y, z = r * stride + i * dilation - pt, s * stride + j * dilation - pl
                        if 0 <= y < h and 0 <= z < w:
                            out[b, r, s] += x[b, y, z].astype(np.float64) @ f[i, j].astype(np.float64)
    return out.astype(x.dtype)


def np_pool(x, k, stride, padding, kind):
    n, h, w, c = x.shape
    oh, pt = _geometry(h, k, stride, 1, padding)
    ow, pl = _geometry(w, k, stride, 1, padding)
    out = np.zeros((n, oh, ow, c), dtype=x.dtype)
    for r in range(oh):
        for s in range(ow):
            rows = [y for y in range(r * stride - pt, r * stride - pt + k) if 0 <= y < h]
            cols = [z for z in range(s * stride - pl, s * stride - pl + k) if 0 <= z < w]
            window = x[:, rows][:, :, cols]
            out[:, r, s] = window.max(axis=(1, 2)) if kind == "max" else window.mean(axis=(1, 2))
    return out


def np_depthwise(x, f, padding="SAME"):
    return np.concatenate([np_conv2d(x[..., k:k + 1], f[:, :, k:k + 1], 1, padding)
                           for k in range(x.shape[-1])], axis=-1)


def np_lrn(x, r=2, bias=1.5, alpha=0.5, beta=0.75):
    sq = np.pad(x.astype(np.float64) ** 2, [(0, 0)] * 3 + [(r, r)])
    total = sum(sq[..., i:i + x.shape[-1]] for i in range(2 * r + 1))
    return (x / (bias + alpha * total) ** beta).astype(x.dtype)


def np_sigmoid_ce(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def np_sparse_ce(labels, logits):
    return -np.take_along_axis(np_log_softmax(logits), labels[..., None].astype(np.intp), -1)[..., 0]


def grad_of(fn, wrt):
    """A function of (*inputs, dy) returning d<fn(*inputs) . dy>/d inputs[wrt]: checking its
    gradient checks the gradient ops' own gradients (second order)."""
    def g(*args):
        *xs, dy = args
        with tl.GradientTape() as tape:
            tape.watch(xs[wrt])
            y = fn(*xs)
        return tape.gradient(y, xs[wrt], output_gradients=dy)
    return g


conv_same = lambda x, f: tl.nn.conv2d(x, f, 2, "SAME")  # noqa: E731
max_same = lambda x: tl.nn.max_pool2d(x, 2, 2, "SAME")  # noqa: E731
avg_same = lambda x: tl.nn.avg_pool2d(x, 3, 2, "SAME")  # noqa: E731

# N-d references: direct loops over output (or input) positions and window offsets.

def _nd_geometry(spatial, window, strides, dilations, padding):
    return [_geometry(n, k, s, d, padding) for n, k, s, d in zip(spatial, window, strides, dilations)]


def np_convnd(x, f, strides, padding, dilations=None):
    """Grouped N-d convolution (groups = in channels / filter in-channels), float64 loops."""
    rank = f.ndim - 2
    dilations = dilations or (1,) * rank
    geo = _nd_geometry(x.shape[1:-1], f.shape[:rank], strides, dilations, padding)
    cg, co = f.shape[-2:]
    groups = x.shape[-1] // cg
    og = co // groups
    out = np.zeros((x.shape[0],) + tuple(o for o, _ in geo) + (co,))
    for pos in itertools.product(*[range(o) for o, _ in geo]):
        for k in itertools.product(*[range(w) for w in f.shape[:rank]]):
            src = [p * s + i * d - b for p, s, i, d, (_, b) in zip(pos, strides, k, dilations, geo)]
            if all(0 <= v < n for v, n in zip(src, x.shape[1:-1])):
                v = x[(slice(None),) + tuple(src)].astype(np.float64)
                for g in range(groups):
                    out[(slice(None),) + pos + (slice(g * og, (g + 1) * og),)] += \
                        v[:, g * cg:(g + 1) * cg] @ f[k][:, g * og:(g + 1) * og]
    return out.astype(x.dtype)


def np_conv_transpose(x, f, out_spatial, strides, padding, dilations=None):
    """The adjoint of np_convnd (filters [..., out, in]) for an output of `out_spatial`."""
    rank = f.ndim - 2
    dilations = dilations or (1,) * rank
    geo = _nd_geometry(out_spatial, f.shape[:rank], strides, dilations, padding)
    out = np.zeros((x.shape[0],) + tuple(out_spatial) + (f.shape[-2],))
    for pos in itertools.product(*[range(n) for n in x.shape[1:-1]]):
        for k in itertools.product(*[range(w) for w in f.shape[:rank]]):
            dst = [p * s + i * d - b for p, s, i, d, (_, b) in zip(pos, strides, k, dilations, geo)]
            if all(0 <= v < n for v, n in zip(dst, out_spatial)):
                out[(slice(None),) + tuple(dst)] += x[(slice(None),) + pos] @ f[k].T
    return out.astype(x.dtype)


def np_poolnd(x, window, strides, padding, kind):
    geo = _nd_geometry(x.shape[1:-1], window, strides, (1,) * len(window), padding)
    out = np.zeros((x.shape[0],) + tuple(o for o, _ in geo) + (x.shape[-1],), dtype=x.dtype)
    for pos in itertools.product(*[range(o) for o, _ in geo]):
        ranges = [[v for v in range(p * s - b, p * s - b + w) if 0 <= v < n]
                  for p, s, w, (_, b), n in zip(pos, strides, window, geo, x.shape[1:-1])]
        win = x[np.ix_(range(x.shape[0]), *ranges, range(x.shape[-1]))]
        axes = tuple(range(1, len(window) + 1))
        out[(slice(None),) + pos] = win.max(axes) if kind == "max" else win.mean(axes)
    return out


conv3d_same = lambda x, f: tl.nn.conv3d(x, f, [1, 2, 1], "SAME")  # noqa: E731
max3d = lambda x: tl.nn.max_pool3d(x, 2, [1, 2, 2], "SAME")  # noqa: E731
avg3d = lambda x: tl.nn.avg_pool3d(x, [2, 2, 1], 1, "VALID")  # noqa: E731
transpose2d = lambda x, f: tl.nn.conv2d_transpose(x, f, [2, 5, 6, 3], [2, 3], "SAME")  # noqa: E731

CONV_ND_CASES = [
    OpCase("conv3d_same", ["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"],
           conv3d_same, lambda x, f: np_convnd(x, f, (1, 2, 1), "SAME"),
           [(2, 3, 4, 3, 2), (2, 2, 3, 2, 3)], rtol=1e-4),
    OpCase("conv3d_dilated_grouped", ["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"],
           lambda x, f: tl.nn.conv3d(x, f, 1, "VALID", dilations=[1, 2, 1]),
           lambda x, f: np_convnd(x, f, (1, 1, 1), "VALID", (1, 2, 1)),
           [(1, 3, 5, 3, 4), (2, 2, 2, 2, 4)], rtol=1e-4),
    OpCase("conv3d_backprop_input_grad", ["Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
                                          "Conv3D"],
           grad_of(conv3d_same, 0), None, [(1, 3, 4, 2, 2), (2, 2, 2, 2, 2), (1, 3, 2, 2, 2)]),
    OpCase("conv3d_backprop_filter_grad", ["Conv3DBackpropFilterV2", "Conv3DBackpropInputV2",
                                           "Conv3D"],
           grad_of(conv3d_same, 1), None, [(1, 3, 4, 2, 2), (2, 2, 2, 2, 2), (1, 3, 2, 2, 2)]),
    OpCase("conv2d_grouped", ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"],
           lambda x, f: tl.nn.conv2d(x, f, [2, 1], "SAME"),
           lambda x, f: np_convnd(x, f, (2, 1), "SAME"), [(2, 5, 4, 6), (3, 2, 2, 9)], rtol=1e-4),
    OpCase("conv2d_grouped_backprop_grads", ["Conv2DBackpropInput", "Conv2DBackpropFilter"],
           grad_of(lambda x, f: tl.nn.conv2d(x, f, 1, "VALID"), 1), None,
           [(1, 4, 3, 4), (2, 2, 2, 4), (1, 3, 2, 4)]),
    OpCase("conv2d_transpose", ["Conv2DBackpropInput", "Conv2D", "Conv2DBackpropFilter"],
           transpose2d, lambda x, f: np_conv_transpose(x, f, (5, 6), (2, 3), "SAME"),
           [(2, 3, 2, 2), (3, 2, 3, 2)], rtol=1e-4),
    OpCase("conv1d_transpose_valid", ["Conv2DBackpropInput"],
           lambda x, f: tl.nn.conv1d_transpose(x, f, [2, 9, 3], 2, "VALID"),
           lambda x, f: np_conv_transpose(x, f, (9,), (2,), "VALID"), [(2, 4, 2), (3, 3, 2)],
           rtol=1e-4),
    OpCase("conv3d_transpose_dilated", ["Conv3DBackpropInputV2", "Conv3D",
                                        "Conv3DBackpropFilterV2"],
           lambda x, f: tl.nn.conv3d_transpose(x, f, [1, 3, 4, 3, 2], 1, "SAME", dilations=2),
           lambda x, f: np_conv_transpose(x, f, (3, 4, 3), (1, 1, 1), "SAME", (2, 2, 2)),
           [(1, 3, 4, 3, 2), (2, 2, 2, 2, 2)], rtol=1e-4),
    OpCase("max_pool3d", ["MaxPool3D", "MaxPool3DGrad"], max3d,
           lambda x: np_poolnd(x, (2, 2, 2), (1, 2, 2), "SAME", "max"), [(2, 3, 5, 4, 2)]),
    OpCase("max_pool3d_grad_grad", ["MaxPool3DGrad", "MaxPool3DGradGrad"], grad_of(max3d, 0),
           None, [(1, 3, 4, 3, 2), (1, 3, 2, 2, 2)]),
    OpCase("max_pool3d_grad_grad_grad", ["MaxPool3DGradGrad", "MaxPool3DGrad"],
           lambda x, g, gg: grad_of(lambda d: grad_of(max3d, 0)(x, d), 0)(g, gg), None,
           [(1, 2, 4, 4, 1), (1, 2, 2, 2, 1), (1, 2, 4, 4, 1)]),
    OpCase("avg_pool3d", ["AvgPool3D", "AvgPool3DGrad"], avg3d,
           lambda x: np_poolnd(x, (2, 2, 1), (1, 1, 1), "VALID", "avg"), [(2, 3, 4, 2, 2)]),
    OpCase("avg_pool3d_same_grad_grad", ["AvgPool3DGrad", "AvgPool3D"],
           grad_of(lambda x: tl.nn.avg_pool3d(x, 2, 2, "SAME"), 0), None,
           [(1, 3, 3, 2, 2), (1, 2, 2, 1, 2)]),
]


CASES = [
    OpCase("relu", ["Relu", "ReluGrad"], tl.nn.relu, lambda x: np.maximum(x, 0), [(3, 4)]),
    OpCase("relu_grad_grad", ["ReluGrad"], grad_of(tl.nn.relu, 0), None, [(3, 4), (3, 4)]),
    OpCase("relu6", ["Relu6", "Relu6Grad"], tl.nn.relu6, lambda x: np.clip(x, 0, 6), [(5,)],
           low=-3, high=9),
    OpCase("relu6_grad_grad", ["Relu6Grad"], grad_of(tl.nn.relu6, 0), None, [(6,), (6,)],
           low=-3, high=9),
    OpCase("leaky_relu", ["LeakyRelu", "LeakyReluGrad"], lambda x: tl.nn.leaky_relu(x, 0.1),
           lambda x: np.where(x > 0, x, x * x.dtype.type(0.1)), [(7,)]),
    OpCase("leaky_relu_grad_grad", ["LeakyReluGrad"], grad_of(tl.nn.leaky_relu, 0), None,
           [(6,), (6,)]),
    OpCase("elu", ["Elu", "EluGrad"], tl.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [(2, 5)]),
    OpCase("elu_grad_grad", ["EluGrad"], grad_of(tl.nn.elu, 0), None, [(6,), (6,)]),
    OpCase("selu", ["Elu"], tl.nn.selu,
           lambda x: (1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)))
           .astype(x.dtype), [(6,)]),
    OpCase("softplus", ["Softplus"], tl.nn.softplus, lambda x: np.logaddexp(x, 0), [(4, 3)],
           low=-30, high=30),
    OpCase("silu", ["Sigmoid"], tl.nn.silu, lambda x: x / (1 + np.exp(-x)), [(5,)]),
    OpCase("erf", ["Erf"], tl.nn.erf, np_erf, [(50,)], low=-6, high=6, rtol=1e-6, atol=1e-7),
    OpCase("gelu", ["Erf"], tl.nn.gelu, lambda x: (0.5 * x * (1 + np_erf(x / np.sqrt(2)))).astype(x.dtype),
           [(9,)], low=-4, high=4),
    OpCase("gelu_tanh", ["Tanh"], lambda x: tl.nn.gelu(x, approximate=True),
           lambda x: (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))
           .astype(x.dtype), [(9,)], low=-4, high=4),
    OpCase("softmax", ["Softmax"], tl.nn.softmax, np_softmax, [(3, 5)]),
    OpCase("softmax_axis0", ["Softmax"], lambda x: tl.nn.softmax(x, axis=0),
           lambda x: np_softmax(x, 0), [(3, 5)]),
    OpCase("log_softmax", ["LogSoftmax"], tl.nn.log_softmax, np_log_softmax, [(2, 6)]),
    OpCase("sigmoid_ce", ["SigmoidCrossEntropyWithLogits"],
           lambda z, x: tl.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), np_sigmoid_ce,
           [(3, 4), (3, 4)]),
    # labels are normalized first: the logits gradient assumes distributions, as TensorFlow's
    OpCase("softmax_ce", ["SoftmaxCrossEntropyWithLogits", "Softmax", "LogSoftmax"],
           lambda z, x: tl.nn.softmax_cross_entropy_with_logits(z / tl.reduce_sum(z, -1, True), x),
           lambda z, x: -(z / z.sum(-1, keepdims=True) * np_log_softmax(x)).sum(-1),
           [(3, 4), (3, 4)], low=0.1, high=3),
    OpCase("softmax_ce_axis0", ["SoftmaxCrossEntropyWithLogits"],
           lambda z, x: tl.nn.softmax_cross_entropy_with_logits(z / tl.reduce_sum(z, 0, True), x,
                                                                axis=0),
           lambda z, x: -(z / z.sum(0, keepdims=True) * np_log_softmax(x, 0)).sum(0),
           [(4, 2), (4, 2)], low=0.1, high=3),
    OpCase("sparse_ce", ["SparseSoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogitsGrad"],
           lambda labels, x: tl.nn.sparse_softmax_cross_entropy_with_logits(labels, x), np_sparse_ce,
           [(2, 3), (2, 3, 4)], low=0, high=4, ints=[0]),
    OpCase("sparse_ce_grad_grad", ["SparseSoftmaxCrossEntropyWithLogitsGrad", "Softmax"],
           lambda labels, x, dy: grad_of(lambda lg: tl.nn.sparse_softmax_cross_entropy_with_logits(
               labels, lg), 0)(x, dy), None, [(3,), (3, 4), (3,)], low=0, high=4, ints=[0]),
    OpCase("conv2d_same", ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"], conv_same,
           lambda x, f: np_conv2d(x, f, 2, "SAME"), [(2, 5, 4, 2), (3, 2, 2, 3)], rtol=1e-4),
    OpCase("conv2d_valid_dilated", ["Conv2D"], lambda x, f: tl.nn.conv2d(x, f, 1, "VALID", dilations=2),
           lambda x, f: np_conv2d(x, f, 1, "VALID", 2), [(1, 5, 6, 2), (2, 2, 2, 2)], rtol=1e-4),
    OpCase("conv2d_backprop_input_grad", ["Conv2DBackpropInput", "Conv2DBackpropFilter", "Conv2D"],
           grad_of(conv_same, 0), None, [(1, 4, 3, 2), (3, 2, 2, 2), (1, 2, 2, 2)]),
    OpCase("conv2d_backprop_filter_grad", ["Conv2DBackpropFilter", "Conv2DBackpropInput", "Conv2D"],
           grad_of(conv_same, 1), None, [(1, 4, 3, 2), (3, 2, 2, 2), (1, 2, 2, 2)]),
    OpCase("max_pool_same", ["MaxPool", "MaxPoolGrad"], max_same,
           lambda x: np_pool(x, 2, 2, "SAME", "max"), [(2, 5, 3, 2)]),
    OpCase("max_pool_grad_grad", ["MaxPoolGrad", "MaxPoolGradGrad"], grad_of(max_same, 0), None,
           [(1, 5, 3, 2), (1, 3, 2, 2)]),
    OpCase("max_pool_grad_grad_grad", ["MaxPoolGradGrad", "MaxPoolGrad"],
           lambda x, g, gg: grad_of(lambda d: grad_of(max_same, 0)(x, d), 0)(g, gg), None,
           [(1, 4, 4, 1), (1, 2, 2, 1), (1, 4, 4, 1)]),
    OpCase("avg_pool_same", ["AvgPool", "AvgPoolGrad"], avg_same,
           lambda x: np_pool(x, 3, 2, "SAME", "avg"), [(2, 5, 4, 2)]),
    OpCase("avg_pool_grad_grad", ["AvgPoolGrad", "AvgPool"], grad_of(avg_same, 0), None,
           [(1, 5, 4, 2), (1, 3, 2, 2)]),
    OpCase("bias_add", ["BiasAdd"], tl.nn.bias_add, lambda v, b: v + b, [(2, 3, 4), (4,)]),
    OpCase("l2_normalize", ["Rsqrt"], lambda x: tl.nn.l2_normalize(x, axis=1),
           lambda x: x / np.sqrt((x * x).sum(1, keepdims=True)), [(3, 4)]),
    OpCase("moments", ["Mean"], lambda x: tl.nn.moments(x, axes=[0, 2]),
           lambda x: (x.mean((0, 2)), x.var((0, 2))), [(3, 2, 4)]),
] + [
    OpCase("conv1d", ["Conv2D", "ExpandDims", "Squeeze"],
           lambda x, f: tl.nn.conv1d(x, f, 2, "SAME"),
           lambda x, f: np_conv2d(x[:, None], f[None], 2, "SAME")[:, 0], [(2, 5, 2), (3, 2, 3)],
           rtol=1e-4),
    OpCase("conv1d_dilated_valid", ["Conv2D"],
           lambda x, f: tl.nn.conv1d(x, f, [1, 1, 1], "VALID", dilations=2),
           lambda x, f: np_conv2d(x[:, None], f[None], 1, "VALID", 2)[:, 0], [(1, 6, 2), (2, 2, 1)],
           rtol=1e-4),
    OpCase("max_pool1d", ["MaxPool"], lambda x: tl.nn.max_pool1d(x, 2, 2, "SAME"),
           lambda x: np_pool(x[:, None], 2, 2, "SAME", "max")[:, 0], [(2, 5, 3)]),
    OpCase("avg_pool1d", ["AvgPool"], lambda x: tl.nn.avg_pool1d(x, [3], [1, 2, 1], "VALID"),
           lambda x: np.stack([x[:, i:i + 3].mean(1) for i in (0, 2, 4)], 1), [(1, 7, 2)]),
    OpCase("depthwise_conv2d", ["Conv2D", "Mul"],
           lambda x, f: tl.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME"), np_depthwise,
           [(1, 4, 3, 2), (2, 2, 2, 3)], rtol=1e-4),
    OpCase("separable_conv2d", ["Conv2D"],
           lambda x, f, p: tl.nn.separable_conv2d(x, f, p, [1, 1, 1, 1], "VALID"),
           lambda x, f, p: np_conv2d(np_depthwise(x, f, "VALID"), p, 1, "VALID"),
           [(1, 4, 3, 2), (2, 2, 2, 2), (1, 1, 4, 3)], rtol=1e-4),
    OpCase("embedding_lookup", ["GatherV2"],
           lambda p, i: tl.nn.embedding_lookup(p, i), lambda p, i: p[i], [(5, 3), (2, 2)],
           low=0, high=5, ints=[1]),
    OpCase("embedding_lookup_max_norm", ["GatherV2", "Maximum"],
           lambda p, q: tl.nn.embedding_lookup([p, q], tl.constant([[4, 0], [1, 1]]), max_norm=1.0),
           lambda p, q: _max_norm_ref(np.concatenate([p, q])[[[4, 0], [1, 1]]], 1.0),
           [(3, 2), (2, 2)]),
    OpCase("l2_loss", ["L2Loss"], tl.nn.l2_loss, lambda x: (x * x).sum() / x.dtype.type(2),
           [(3, 4)], dtypes=("float16", "float32", "float64"), rtol=1e-4),
    OpCase("softsign", ["Softsign"], tl.nn.softsign, lambda x: x / (1 + np.abs(x)), [(3, 4)],
           low=-5, high=5),
    OpCase("log_poisson_loss", ["Exp"], tl.nn.log_poisson_loss, lambda t, x: np.exp(x) - x * t,
           [(4,), (4,)]),
    OpCase("log_poisson_loss_full", ["SelectV2"],
           lambda t, x: tl.nn.log_poisson_loss(t, x, compute_full_loss=True),
           lambda t, x: np.exp(x) - x * t + np.where(t <= 1, 0, t * np.log(t) - t + 0.5 *
                                                     np.log(2 * np.pi * t)),
           [(6,), (6,)], low=0.1, high=3.0),
    OpCase("weighted_ce", ["Log1p", "Relu"],
           lambda z, x: tl.nn.weighted_cross_entropy_with_logits(z, x, 3.0),
           lambda z, x: (1 - z) * x + (1 + 2 * z) * np.log1p(np.exp(-x)), [(2, 3), (2, 3)],
           low=0.1, high=3.0),
    OpCase("batch_normalization", ["Rsqrt"],
           lambda x, m, v, o, s: tl.nn.batch_normalization(x, m, v, o, s, 1e-3),
           lambda x, m, v, o, s: (x - m) / np.sqrt(v + x.dtype.type(1e-3)) * s + o,
           [(2, 3), (3,), (3,), (3,), (3,)], low=0.2, high=2.0, rtol=1e-4),
    OpCase("batch_normalization_no_affine", ["Rsqrt"],
           lambda x, m, v: tl.nn.batch_normalization(x, m, v, None, None, 0.5),
           lambda x, m, v: (x - m) / np.sqrt(v + x.dtype.type(0.5)), [(2, 3), (3,), (3,)],
           low=0.2, high=2.0),
    OpCase("local_response_normalization", ["AddN", "Pow"],
           lambda x: tl.nn.local_response_normalization(x, 2, 1.5, 0.5, 0.75), np_lrn,
           [(1, 2, 2, 6)], rtol=1e-4),
    OpCase("compute_average_loss", ["Sum"],
           lambda x, w: tl.nn.compute_average_loss(x, sample_weight=w, global_batch_size=8),
           lambda x, w: ((x * w).sum() / 8).astype(x.dtype), [(4,), (4,)]),
    OpCase("compute_average_loss_batch", ["Sum"], tl.nn.compute_average_loss,
           lambda x: (x.sum() / len(x)).astype(x.dtype), [(4,)]),
] + CONV_ND_CASES


def _max_norm_ref(e, max_norm):
    norm = np.sqrt((e * e).sum(-1, keepdims=True))
    return (e * max_norm / np.maximum(norm, max_norm)).astype(e.dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_case(case):
    rng = np.random.default_rng(1)
    for dtype in case.dtypes:
        arrays = make_inputs(case, dtype, rng)
        if case.ref is not None:
            check_against_numpy(case, arrays)
        if case.grad and dtype == "float64":
            check_gradient(case, arrays)


# ------------------------------------------------------------------ conv and pooling, any geometry

geometry = st.fixed_dictionaries({
    "n": st.integers(1, 2), "h": st.integers(1, 6), "w": st.integers(1, 6), "c": st.integers(1, 3),
    "k": st.integers(1, 3), "stride": st.integers(1, 3), "padding": st.sampled_from(["SAME", "VALID"]),
})


@given(geometry, st.sampled_from(["max", "avg"]))
def test_pool_matches_loops(g, kind):
    if g["padding"] == "VALID" and g["k"] > min(g["h"], g["w"]):
        return
    x = np.random.default_rng(0).normal(size=(g["n"], g["h"], g["w"], g["c"]))
    pool = tl.nn.max_pool2d if kind == "max" else tl.nn.avg_pool2d
    got = pool(x, g["k"], g["stride"], g["padding"]).numpy()
    np.testing.assert_allclose(got, np_pool(x, g["k"], g["stride"], g["padding"], kind), atol=1e-12)


def np_pool_grad(x, w, k, stride, padding, kind):
    """d sum(pool(x) * w) / dx by loops: each window's weight to its first maximum (row-major,
    as TensorFlow) or spread over its real positions."""
    n, h, wd, c = x.shape
    oh, pt = _geometry(h, k, stride, 1, padding)
    ow, pl = _geometry(wd, k, stride, 1, padding)
    dx = np.zeros_like(x)
    for b in range(n):
        for ch in range(c):
            for r in range(oh):
                for s in range(ow):
                    cells = [(y, z) for y in range(r * stride - pt, r * stride - pt + k)
                             for z in range(s * stride - pl, s * stride - pl + k)
                             if 0 <= y < h and 0 <= z < wd]
                    if kind == "max":
                        best = max(cells, key=lambda yz: (x[b, yz[0], yz[1], ch], -cells.index(yz)))
                        dx[b, best[0], best[1], ch] += w[b, r, s, ch]
                    else:
                        for y, z in cells:
                            dx[b, y, z, ch] += w[b, r, s, ch] / len(cells)
    return dx


@given(geometry, st.sampled_from(["max", "avg"]))
def test_pool_gradients_match_loops(g, kind):
    """Tied maxima (small integers) take the first window position, on tiling (stride = ksize)
    and overlapping windows alike; SAME windows average over their real positions only."""
    if g["padding"] == "VALID" and g["k"] > min(g["h"], g["w"]):
        return
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(g["n"], g["h"], g["w"], g["c"])).astype(np.float64)
    pool = tl.nn.max_pool2d if kind == "max" else tl.nn.avg_pool2d
    xt = tl.constant(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = pool(xt, g["k"], g["stride"], g["padding"])
        w = rng.normal(size=y.shape)
        loss = tl.reduce_sum(y * w)
    np.testing.assert_allclose(tape.gradient(loss, xt).numpy(),
                               np_pool_grad(x, w, g["k"], g["stride"], g["padding"], kind),
                               atol=1e-12)


def test_max_pool_gradient_routes_inf_and_nan_to_the_maximum_only():
    x = tl.constant(np.array([1.0, 3.0, 2.0, 0.0, 5.0, 4.0, 6.0, 7.0]).reshape(1, 2, 4, 1))
    for dy in (np.inf, np.nan):
        with tl.GradientTape() as tape:
            tape.watch(x)
            loss = tl.reduce_sum(tl.nn.max_pool2d(x, 2, 2, "VALID") * dy)
        got = tape.gradient(loss, x).numpy().ravel()
        np.testing.assert_array_equal(np.isnan(got) | np.isinf(got),
                                      [0, 0, 0, 0, 1, 0, 0, 1])
        assert (got[[0, 1, 2, 3, 5, 6]] == 0).all()


@given(geometry, st.integers(1, 2), st.integers(1, 3))
def test_conv2d_and_its_gradients_match_loops(g, dilation, out_channels):
    """Values, input and filter gradients on any geometry: one input channel, 1x1 and tiling
    windows (stride = kernel), dilation, SAME and VALID."""
    dilation = dilation if g["stride"] == 1 else 1
    if g["padding"] == "VALID" and (g["k"] - 1) * dilation + 1 > min(g["h"], g["w"]):
        return
    rng = np.random.default_rng(0)
    x = rng.normal(size=(g["n"], g["h"], g["w"], g["c"]))
    f = rng.normal(size=(g["k"], g["k"], g["c"], out_channels))
    xt, ft = tl.constant(x), tl.constant(f)
    with tl.GradientTape() as tape:
        tape.watch([xt, ft])
        y = tl.nn.conv2d(xt, ft, g["stride"], g["padding"], dilations=dilation)
        dy = rng.normal(size=y.shape)
    np.testing.assert_allclose(y.numpy(), np_conv2d(x, f, g["stride"], g["padding"], dilation),
                               atol=1e-12)
    with tape:
        loss = tl.reduce_sum(y * dy)
    dx, df = tape.gradient(loss, [xt, ft])
    np.testing.assert_allclose(dx.numpy(), np_conv_transpose(
        dy, f, (g["h"], g["w"]), (g["stride"],) * 2, g["padding"], (dilation,) * 2), atol=1e-10)
    # the filter gradient by loops: each filter tap sees the input at its offset
    oh, pt = _geometry(g["h"], g["k"], g["stride"], dilation, g["padding"])
    ow, pl = _geometry(g["w"], g["k"], g["stride"], dilation, g["padding"])
    want = np.zeros_like(f)
    for r, s, i, j in itertools.product(range(oh), range(ow), range(g["k"]), range(g["k"])):
        yy, zz = r * g["stride"] + i * dilation - pt, s * g["stride"] + j * dilation - pl
        if 0 <= yy < g["h"] and 0 <= zz < g["w"]:
            want[i, j] += x[:, yy, zz].T @ dy[:, r, s]
    np.testing.assert_allclose(df.numpy(), want, atol=1e-10)


@given(geometry, st.integers(1, 2), st.integers(1, 2))
def test_depthwise_conv2d_input_gradient_matches_loops(g, dilation, multiplier):
    """The input gradient of depthwise convolution (stride 1: a correlation of dy with the
    flipped filter; other strides: per window offset) against the dense equivalent's adjoint."""
    dilation = dilation if g["stride"] == 1 else 1
    if g["padding"] == "VALID" and (g["k"] - 1) * dilation + 1 > min(g["h"], g["w"]):
        return
    rng = np.random.default_rng(0)
    c = g["c"]
    x = tl.constant(rng.normal(size=(g["n"], g["h"], g["w"], c)))
    f = rng.normal(size=(g["k"], g["k"], c, multiplier))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.depthwise_conv2d(x, f, [1, g["stride"], g["stride"], 1], g["padding"],
                                   dilations=[dilation, dilation])
        dy = rng.normal(size=y.shape)
        loss = tl.reduce_sum(y * dy)
    dense = np.zeros((g["k"], g["k"], c, c * multiplier))
    for ch in range(c):
        dense[:, :, ch, ch * multiplier:(ch + 1) * multiplier] = f[:, :, ch]
    want = np_conv_transpose(dy, dense, (g["h"], g["w"]), (g["stride"],) * 2, g["padding"],
                             (dilation,) * 2)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want, atol=1e-10)


def test_conv_gradients_any_geometry():
    rng = np.random.default_rng(3)
    for stride, padding, k in [(1, "VALID", 2), (3, "SAME", 3), (2, "VALID", 1)]:
        case = OpCase(f"conv_{stride}_{padding}_{k}", ["Conv2D"],
                      lambda x, f: tl.nn.conv2d(x, f, stride, padding), None,
                      [(1, 5, 4, 2), (k, k, 2, 2)])
        check_gradient(case, make_inputs(case, "float64", rng))


def test_explicit_padding_and_strides_forms():
    x = np.random.default_rng(0).normal(size=(1, 4, 4, 1))
    f = np.ones((3, 3, 1, 1))
    explicit = tl.nn.conv2d(x, f, [1, 1, 1, 1], [[0, 0], [1, 1], [1, 1], [0, 0]]).numpy()
    np.testing.assert_allclose(explicit, tl.nn.conv2d(x, f, [1], "SAME").numpy())


def test_max_pool_routes_gradient_to_first_maximum():
    x = tl.constant(np.array([1.0, 3.0, 3.0, 0.0]).reshape(1, 2, 2, 1))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.max_pool2d(x, 2, 2, "VALID")
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().ravel(), [0, 1, 0, 0])


def test_avg_pool_same_divides_by_real_positions():
    y = tl.nn.avg_pool2d(tl.ones([1, 3, 3, 1]), 2, 2, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [1, 1, 1, 1])


def test_conv2d_in_a_function_matches_eager():
    x = np.random.default_rng(0).normal(size=(2, 5, 5, 3)).astype(np.float32)
    f = np.random.default_rng(1).normal(size=(3, 3, 3, 4)).astype(np.float32)

    @tl.function
    def step(x, f):
        with tl.GradientTape() as tape:
            tape.watch(f)
            y = tl.nn.relu(tl.nn.conv2d(x, f, 2, "SAME"))
            loss = tl.reduce_sum(tl.nn.max_pool2d(y, 2, 1, "SAME"))
        return loss, tape.gradient(loss, f)

    got = step(tl.constant(x), tl.constant(f))
    fc = tl.constant(f)
    with tl.GradientTape() as tape:
        tape.watch(fc)
        loss = tl.reduce_sum(tl.nn.max_pool2d(tl.nn.relu(tl.nn.conv2d(x, fc, 2, "SAME")), 2, 1, "SAME"))
    np.testing.assert_allclose(got[0].numpy(), loss.numpy(), rtol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), tape.gradient(loss, fc).numpy(), rtol=1e-5)


def test_conv2d_static_shapes_while_tracing():
    @tl.function(input_signature=[tl.TensorSpec([None, 7, 6, 3], tl.float32)])
    def f(x):
        y = tl.nn.conv2d(x, tl.ones([3, 3, 3, 5]), 2, "SAME")
        assert y.shape.as_list() == [None, 4, 3, 5]
        z = tl.nn.max_pool2d(y, 2, 2, "VALID")
        assert z.shape.as_list() == [None, 2, 1, 5]
        return z

    assert f(tl.ones([2, 7, 6, 3])).shape == (2, 2, 1, 5)


# ------------------------------------------------------------------ stability


def test_cross_entropies_are_stable_on_large_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [-5000.0, 5000.0, 0.0]])
    labels = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    dense = tl.nn.softmax_cross_entropy_with_logits(labels, logits).numpy()
    np.testing.assert_allclose(dense, [0.0, 5000.0])
    sparse = tl.nn.sparse_softmax_cross_entropy_with_logits(np.array([0, 2]), logits).numpy()
    np.testing.assert_allclose(sparse, [0.0, 5000.0])
    sig = tl.nn.sigmoid_cross_entropy_with_logits(np.array([1.0, 0.0]), np.array([-800.0, 800.0]))
    np.testing.assert_allclose(sig.numpy(), [800.0, 800.0])
    assert np.all(np.isfinite(tl.nn.softmax(logits.astype(np.float32)).numpy()))
    np.testing.assert_allclose(tl.nn.log_softmax(logits).numpy()[0], [0.0, -1000.0, -2000.0])
    assert tl.nn.softplus(tl.constant(1000.0)).numpy() == 1000.0


def test_cross_entropy_gradients_on_large_logits_are_finite():
    logits = tl.constant([[1000.0, 0.0, -1000.0]])
    with tl.GradientTape() as tape:
        tape.watch(logits)
        loss = tl.nn.sparse_softmax_cross_entropy_with_logits([1], logits)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), [[1.0, -1.0, 0.0]])


# ------------------------------------------------------------------ dropout


def test_dropout_scales_kept_values_and_drops_about_rate():
    tl.random.set_seed(5)
    y = tl.nn.dropout(tl.ones([10000]), rate=0.3).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.03
    assert tl.nn.dropout(tl.ones([3]), 0.0).numpy().tolist() == [1, 1, 1]


def test_dropout_noise_shape_and_gradient():
    tl.random.set_seed(1)
    x = tl.ones([4, 50])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.dropout(x, 0.5, noise_shape=[4, 1])
    rows = y.numpy()
    assert all(len(set(r)) == 1 for r in rows)  # one mask value per row
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), rows)


def test_dropout_draws_a_fresh_mask_on_every_graph_call():
    f = tl.function(lambda x: tl.nn.dropout(x, 0.5))
    x = tl.ones([64])
    assert not np.array_equal(f(x).numpy(), f(x).numpy())


@pytest.mark.parametrize("rate", [1.0, -0.1, 1.5])
def test_dropout_rejects_bad_rates(rate):
    with pytest.raises(ValueError, match="rate"):
        tl.nn.dropout(tl.ones([2]), rate)


# ------------------------------------------------------------------ errors


def test_bad_padding_string():
    with pytest.raises(ValueError, match="SAME"):
        tl.nn.conv2d(tl.ones([1, 3, 3, 1]), tl.ones([1, 1, 1, 1]), 1, "FULL")
    with pytest.raises(ValueError, match="VALID"):
        tl.nn.max_pool2d(tl.ones([1, 3, 3, 1]), 2, 1, "same_ish")


def test_conv2d_channel_mismatch_names_both_counts():
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"3 channels.*4 input channels"):
        tl.nn.conv2d(tl.ones([1, 5, 5, 3]), tl.ones([3, 3, 4, 2]), 1, "SAME")


def test_conv2d_rank_dtype_and_window_errors():
    with pytest.raises(tl.errors.InvalidArgumentError, match="4-D"):
        tl.nn.conv2d(tl.ones([5, 5, 3]), tl.ones([3, 3, 3, 2]), 1, "SAME")
    with pytest.raises(tl.errors.InvalidArgumentError, match="float64"):
        tl.nn.conv2d(tl.ones([1, 5, 5, 3]), tl.ones([3, 3, 3, 2], dtype=tl.float64), 1, "SAME")
    with pytest.raises(tl.errors.InvalidArgumentError, match="negative"):
        tl.nn.conv2d(tl.ones([1, 2, 2, 1]), tl.ones([3, 3, 1, 1]), 1, "VALID")
    with pytest.raises(ValueError, match="NHWC"):
        tl.nn.conv2d(tl.ones([1, 2, 2, 1]), tl.ones([1, 1, 1, 1]), 1, "SAME", data_format="NCHW")


def test_sparse_labels_out_of_range():
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"label value of 3 .*\[0, 3\)"):
        tl.nn.sparse_softmax_cross_entropy_with_logits([0, 3], tl.zeros([2, 3]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="label value of -1"):
        tl.nn.sparse_softmax_cross_entropy_with_logits([-1], tl.zeros([1, 3]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="labels must have the shape"):
        tl.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], tl.zeros([2, 3]))


def test_float_only_ops_reject_integers_eagerly():
    for fn in (tl.nn.softmax, tl.nn.elu, tl.nn.erf, tl.nn.gelu, lambda x: tl.nn.dropout(x, 0.5),
               lambda x: tl.nn.avg_pool2d(tl.reshape(x, [1, 2, 1, 1]), 1, 1, "SAME")):
        with pytest.raises(tl.errors.InvalidArgumentError, match="floating-point"):
            fn(tl.constant([1, 2]))


def test_bias_add_and_cross_entropy_shape_errors():
    with pytest.raises(tl.errors.InvalidArgumentError, match="bias has 3 elements"):
        tl.nn.bias_add(tl.zeros([2, 4]), tl.zeros([3]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="same shape"):
        tl.nn.sigmoid_cross_entropy_with_logits(tl.zeros([2]), tl.zeros([3]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="same shape"):
        tl.nn.sigmoid_cross_entropy_with_logits(tl.zeros([3, 1]), tl.zeros([3, 4]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="bias has 1 elements"):
        tl.nn.bias_add(tl.zeros([2, 4]), tl.zeros([1]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="labels must have the shape"):
        tl.nn.sparse_softmax_cross_entropy_with_logits([0], tl.zeros([2, 3]))


def test_added_nn_functions_reject_bad_arguments():
    with pytest.raises(tl.errors.InvalidArgumentError, match="rank 3"):
        tl.nn.conv1d(tl.ones([2, 5]), tl.ones([3, 2, 3]), 1, "SAME")
    with pytest.raises(ValueError, match="NWC"):
        tl.nn.conv1d(tl.ones([1, 5, 2]), tl.ones([3, 2, 3]), 1, "SAME", data_format="NCW")
    with pytest.raises(tl.errors.InvalidArgumentError, match="L2Loss"):
        tl.nn.l2_loss(tl.constant([1, 2]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="Softsign"):
        tl.nn.softsign(tl.constant([1, 2]))

    @tl.function(input_signature=[tl.TensorSpec([1, 4, 4, 2]), tl.TensorSpec([None, 2, None, 1])])
    def depthwise(x, f):
        return tl.nn.depthwise_conv2d(x, f, 1, "SAME")
    with pytest.raises(tl.errors.InvalidArgumentError, match="known channels"):
        depthwise.get_concrete_function()

    @tl.function(input_signature=[tl.TensorSpec([1, 4, 4, 2]), tl.TensorSpec([None, None, 2, 1])])
    def depthwise_any_window(x, f):   # unknown spatial dims are fine: a grouped conv2d
        return tl.nn.depthwise_conv2d(x, f, 1, "SAME")
    out = depthwise_any_window(tl.ones([1, 4, 4, 2]), tl.ones([2, 2, 2, 1]))
    np.testing.assert_allclose(out.numpy(), tl.nn.depthwise_conv2d(
        tl.ones([1, 4, 4, 2]), tl.ones([2, 2, 2, 1]), 1, "SAME").numpy())
    with pytest.raises(tl.errors.InvalidArgumentError, match="expects 3"):
        tl.nn.depthwise_conv2d(tl.ones([1, 4, 4, 2]), tl.ones([2, 2, 3, 1]), 1, "SAME")


def test_nn_aliases_of_math():
    assert tl.nn.top_k is tl.math.top_k and tl.nn.in_top_k is tl.math.in_top_k
    assert tl.nn.lrn is tl.nn.local_response_normalization
    np.testing.assert_allclose(tl.math.softsign(tl.constant([1.0])).numpy(), [0.5])


# ------------------------------------------------------------------ fast float32 kernels

_WIDE = np.concatenate([np.linspace(-120, 120, 48001), [0.0, -0.0, 1e-30, -1e-30, 1e-8, -88.7,
                                                         -103.9, 88.7, 17.0, -17.0]])


def _ulps(got, want):
    """|got - want| in float32 ulps of `want`, where `want` is a normal float32 number."""
    keep = np.abs(want) > 1.2e-38
    spacing = np.spacing(np.abs(want[keep]).astype(np.float32)).astype(np.float64)
    return np.abs(got[keep].astype(np.float64) - want[keep]) / spacing


@pytest.mark.filterwarnings("error")
def test_float32_softplus_sigmoid_and_erf_are_accurate_over_the_whole_range():
    x = _WIDE.astype(np.float32)
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        softplus = np.logaddexp(x64, 0.0)
        sigmoid = 1.0 / (1.0 + np.exp(-x64))
    # within a few ulps everywhere, tails included, with no overflow warning
    assert _ulps(tl.nn.softplus(x).numpy(), softplus).max() <= 4
    assert _ulps(tl.sigmoid(x).numpy(), sigmoid).max() <= 3
    assert tl.nn.softplus(np.float32(0.0)).numpy() == np.float32(np.log(2.0))
    small = np.linspace(-6, 6, 20001).astype(np.float32)
    erf = np.array([math.erf(v) for v in small.astype(np.float64)])
    assert _ulps(tl.math.erf(small).numpy(), erf).max() <= 3
    special = np.array([np.inf, -np.inf, np.nan, 1e-30], np.float32)
    np.testing.assert_array_equal(tl.nn.softplus(special).numpy()[:3], [np.inf, 0.0, np.nan])
    np.testing.assert_array_equal(tl.sigmoid(special).numpy()[:3], [1.0, 0.0, np.nan])
    np.testing.assert_array_equal(tl.math.erf(special).numpy()[:3], [1.0, -1.0, np.nan])
    assert tl.math.erf(special).numpy()[3] == np.float32(1e-30 * 2 / np.sqrt(np.pi))


def test_sigmoid_and_softplus_write_into_planned_buffers():
    @tl.function
    def f(x):
        return tl.sigmoid(x * 2.0) + tl.nn.softplus(x * 3.0)

    x = np.linspace(-30, 30, 4096, dtype=np.float32)
    src = f.get_concrete_function(tl.constant(x)).python_source
    assert "k_sigmoid(xp, " in src and "k_softplus(xp, " in src and src.count("out=") >= 4
    for _ in range(2):
        np.testing.assert_allclose(f(tl.constant(x)).numpy(),
                                   1 / (1 + np.exp(-2.0 * x)) + np.logaddexp(3.0 * x, 0),
                                   rtol=2e-6, atol=1e-7)
    for dtype, rtol in ((np.float64, 1e-12), (np.float16, 2e-3)):   # the stable formulas
        a = x.astype(dtype)
        want = 1 / (1 + np.exp(-2.0 * a.astype(np.float64))) + np.logaddexp(3.0 * a, 0)
        got = tl.function(lambda t: tl.sigmoid(t * 2.0) + tl.nn.softplus(t * 3.0))(tl.constant(a))
        np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=rtol, atol=rtol)


@pytest.mark.filterwarnings("error")
def test_float32_elu_is_accurate_and_writes_into_planned_buffers():
    x = np.concatenate([np.linspace(-100, 20, 40001), [0.0, -1e-30, -1e-8, -88.0]]).astype(np.float32)
    want = np.where(x > 0, x.astype(np.float64), np.expm1(np.minimum(x, 0).astype(np.float64)))
    assert _ulps(tl.nn.elu(x).numpy(), want).max() <= 3
    special = tl.nn.elu(np.array([np.nan, -np.inf, np.inf], np.float32)).numpy()
    np.testing.assert_array_equal(special, [np.nan, -1.0, np.inf])
    f = tl.function(lambda t: tl.nn.elu(t * 2.0) * 3.0)
    assert "k_elu(xp, " in f.get_concrete_function(tl.constant(x)).python_source
    np.testing.assert_allclose(f(tl.constant(x)).numpy(), 3 * np.where(x > 0, 2 * x, np.expm1(2.0 * np.minimum(x, 0))),
                               rtol=3e-6, atol=1e-7)
    np.testing.assert_allclose(tl.nn.elu(x.astype(np.float64)).numpy(), want, rtol=1e-15)


# ------------------------------------------------------------------ batch slices on threads

def _kernels_split_and_whole(monkeypatch, fn, splitting=None):
    """fn() with trainlib's pool at three threads and every batch slice worth a hand-off, and
    with one thread (one slice); `splitting` of the kernels fn calls (default all) must have
    split."""
    from trainlib.graph import threads
    monkeypatch.setattr(threads, "MIN_SPLIT_WORK", 1)
    slices = []
    run_split = threads.run_split
    monkeypatch.setattr(threads, "run_split",
                        lambda part, ranges: slices.append(len(ranges)) or run_split(part, ranges))
    try:
        tl.config.threading.set_intra_op_parallelism_threads(3)
        split = fn()
        counts = slices[:]
        tl.config.threading.set_intra_op_parallelism_threads(1)
        whole = fn()
    finally:
        tl.config.threading.set_intra_op_parallelism_threads(0)
        monkeypatch.undo()
    assert len(counts) == (len(split) if splitting is None else splitting) and min(counts) > 1
    return split, whole


@given(geometry, st.integers(1, 2), st.sampled_from([1, 2]))
def test_conv_and_pool_kernels_on_batch_slices_match_one_slice(g, dilation, groups):
    """The conv and pooling kernels split the batch over the pool's threads: pooling gives the
    same values to the bit, the matmuls to rounding (BLAS may block fewer rows otherwise, and
    the filter gradient sums over the batch)."""
    from trainlib.graph.ops import nn as nn_ops

    dilation = dilation if g["stride"] == 1 else 1
    if g["padding"] == "VALID" and (g["k"] - 1) * dilation + 1 > min(g["h"], g["w"]):
        return
    rng = np.random.default_rng(1)
    cg = g["c"] if groups == 1 else g["c"] + 1   # grouped, not depthwise (one channel a group)
    x = rng.normal(size=(5, g["h"], g["w"], cg * groups)).astype(np.float32)
    f = rng.normal(size=(g["k"], g["k"], cg, 2 * groups)).astype(np.float32)
    attrs = dict(strides=(g["stride"],) * 2, padding=g["padding"], explicit_paddings=None,
                 dilations=(dilation,) * 2)
    pool = dict(ksize=(g["k"],) * 2, strides=(g["stride"],) * 2, padding=g["padding"])
    y = nn_ops._conv_kernel(np, x, f, **attrs)
    dy = rng.normal(size=y.shape).astype(np.float32)
    pooled = nn_ops._max_pool(np, x, **pool)
    dp = rng.normal(size=pooled.shape).astype(np.float32)
    x_ties = rng.integers(0, 3, size=x.shape).astype(np.float32)   # tied maxima: first taken
    pooled_ties = nn_ops._max_pool(np, x_ties, **pool)
    cols = nn_ops._conv_patches(np, x, (g["k"],) * 2, **attrs)
    outs = y.shape[1:3]

    def run():
        return [nn_ops._max_pool(np, x, **pool),
                nn_ops._max_pool_grad(np, x, pooled, dp, **pool),
                nn_ops._max_pool_grad(np, x_ties, pooled_ties, dp, **pool),
                nn_ops._conv_kernel(np, x, f, **attrs),
                nn_ops._conv_backprop_input(np, x, f, dy, **attrs),
                nn_ops._conv_from_patches_kernel(np, cols, f, outs),
                nn_ops._conv_backprop_filter(np, x, f, dy, **attrs),
                nn_ops._filter_from_patches_kernel(np, cols, dy, f.shape)]

    split, whole = _kernels_split_and_whole(pytest.MonkeyPatch(), run)
    for a, b in zip(split[:3], whole[:3]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(split[3:], whole[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)


def test_relu_its_gradient_and_bias_add_on_row_slices_match_one_slice():
    from trainlib.graph.ops import nn as nn_ops

    rng = np.random.default_rng(2)
    x = rng.normal(size=(7, 3, 5, 4)).astype(np.float32)
    x[0, 0, 0, :2] = [np.nan, -np.inf]   # a select, not a product: NaN outside the mask gives 0
    dy = rng.normal(size=x.shape).astype(np.float32)
    dy[1, 1, 1, 1] = np.inf
    bias = rng.normal(size=4).astype(np.float32)
    buffer = np.empty_like(x)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(nn_ops, "_ELEMENTWISE_SLICE", 1)

    def run():
        into = nn_ops._relu(np, x, out=buffer).copy()
        return [nn_ops._relu(np, x), into, nn_ops._relu_grad(np, dy, np.maximum(x, 0)),
                nn_ops._relu_grad(np, np.where(np.isnan(x), 0, x), dy),
                nn_ops._bias_add(np, x, bias)]

    split, whole = _kernels_split_and_whole(monkeypatch, run)
    for a, b in zip(split, whole):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(split[0], np.maximum(x, 0))
    np.testing.assert_array_equal(split[2], np.where(x > 0, dy, 0))
    np.testing.assert_array_equal(split[4], x + bias)


@pytest.mark.parametrize("stride,multiplier,padding", [(1, 1, "SAME"), (1, 2, "VALID"),
                                                      (2, 1, "SAME"), (1, 3, "SAME")])
def test_depthwise_kernels_on_batch_slices_match_one_slice_and_the_dense_conv(
        stride, multiplier, padding, monkeypatch):
    """Depthwise convolution: a multiply-add per window offset over batch pieces on the pool;
    the same values as the dense convolution with a block-diagonal filter."""
    from trainlib.graph.ops import nn as nn_ops

    monkeypatch.setattr(nn_ops, "_DEPTHWISE_PIECE", 1)   # one image a piece
    rng = np.random.default_rng(5)
    c = 3
    x = rng.normal(size=(6, 7, 6, c))
    f = rng.normal(size=(3, 3, 1, c * multiplier))
    attrs = dict(strides=(stride,) * 2, padding=padding, explicit_paddings=None,
                 dilations=(1, 1))
    dense = np.zeros((3, 3, c, c * multiplier))
    for ch in range(c):
        dense[:, :, ch, ch * multiplier:(ch + 1) * multiplier] = f[:, :, 0, ch * multiplier:
                                                                       (ch + 1) * multiplier]
    y = nn_ops._conv_kernel(np, x, dense, **attrs)
    dy = rng.normal(size=y.shape)

    def run():
        return [nn_ops._conv_kernel(np, x, f, **attrs),
                nn_ops._conv_backprop_input(np, x, f, dy, **attrs),
                nn_ops._conv_backprop_filter(np, x, f, dy, **attrs)]

    # (a strided input gradient adds each offset's share into the whole batch: one slice)
    split, whole = _kernels_split_and_whole(monkeypatch, run, 3 if stride == 1 else 2)
    np.testing.assert_array_equal(split[0], whole[0])
    for a, b in zip(split, whole):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(split[0], y, atol=1e-12)
    np.testing.assert_allclose(split[1], nn_ops._conv_backprop_input(np, x, dense, dy, **attrs),
                               atol=1e-12)
    dense_df = nn_ops._conv_backprop_filter(np, x, dense, dy, **attrs)
    want = np.stack([dense_df[:, :, ch, ch * multiplier:(ch + 1) * multiplier]
                     for ch in range(c)], axis=2).reshape(f.shape)
    np.testing.assert_allclose(split[2], want, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 40), classes=st.integers(1, 12), dtype=st.sampled_from([np.float32, np.float64]),
       label_dtype=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2 ** 16))
def test_sparse_ce_and_grad_kernel_is_the_two_kernels_bit_for_bit(rows, classes, dtype, label_dtype, seed):
    """The joined loss-and-gradient kernel (reductions without numpy's wrappers, row starts kept
    per shape) gives exactly what the separate forward and gradient kernels give, on a first
    and a repeated shape."""
    from trainlib.graph.op import get_opdef
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((rows, classes)) * 5).astype(dtype)
    labels = rng.integers(0, classes, rows).astype(label_dtype)
    joined = get_opdef("SparseSoftmaxCrossEntropyWithLogitsAndGrad").kernel
    loss = get_opdef("SparseSoftmaxCrossEntropyWithLogits").kernel(np, labels, logits)
    grad = get_opdef("SparseSoftmaxCrossEntropyWithLogitsGrad").kernel(np, labels, logits)
    for _ in range(2):
        got_loss, got_grad = joined(np, labels, logits)
        np.testing.assert_array_equal(got_loss, loss)
        np.testing.assert_array_equal(got_grad, grad)
    bad = labels.copy()
    bad[-1] = classes
    with pytest.raises(tl.errors.InvalidArgumentError):
        joined(np, bad, logits)
