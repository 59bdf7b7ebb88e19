"""tf.nn's convolution family on TensorFlow and trainlib: conv1d/conv2d (grouped)/conv3d, the
transposed convolutions, depthwise and separable convolutions and 3-D pooling, values and
gradients with respect to input and filters (where TensorFlow's CPU kernels have them: dilated
3-D convolution is checked against numpy in tests/graph/ops/test_nn.py)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

RNG = np.random.default_rng(5)


def _a(*shape):
    return RNG.normal(size=shape).astype(np.float32)


CASES = {
    "conv1d": (lambda lib, x, f: lib.nn.conv1d(x, f, 2, "SAME"), (2, 9, 3), (3, 3, 4)),
    "conv1d_dilated": (lambda lib, x, f: lib.nn.conv1d(x, f, 1, "VALID", dilations=2),
                       (2, 9, 3), (3, 3, 2)),
    "conv2d_grouped": (lambda lib, x, f: lib.nn.conv2d(x, f, 1, "SAME"), (2, 5, 5, 4),
                       (3, 3, 2, 6)),
    "conv3d": (lambda lib, x, f: lib.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME"), (2, 4, 5, 4, 2),
               (2, 3, 2, 2, 3)),
    "conv2d_transpose": (lambda lib, x, f: lib.nn.conv2d_transpose(x, f, [2, 8, 7, 3], 2, "SAME"),
                         (2, 4, 4, 2), (3, 3, 3, 2)),
    "conv2d_transpose_valid": (lambda lib, x, f: lib.nn.conv2d_transpose(
        x, f, [2, 9, 9, 3], [1, 2, 2, 1], "VALID"), (2, 4, 4, 2), (3, 3, 3, 2)),
    "conv1d_transpose": (lambda lib, x, f: lib.nn.conv1d_transpose(x, f, [2, 10, 3], 2, "SAME"),
                         (2, 5, 2), (4, 3, 2)),
    "conv3d_transpose": (lambda lib, x, f: lib.nn.conv3d_transpose(x, f, [1, 4, 6, 4, 2], 2,
                                                                   "SAME"),
                         (1, 2, 3, 2, 3), (2, 2, 2, 2, 3)),
    "depthwise_conv2d": (lambda lib, x, f: lib.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME"),
                         (2, 5, 6, 3), (3, 3, 3, 2)),
    "depthwise_conv2d_dilated": (lambda lib, x, f: lib.nn.depthwise_conv2d(
        x, f, [1, 1, 1, 1], "VALID", dilations=[2, 2]), (1, 6, 6, 2), (2, 2, 2, 1)),
    # one input channel (im2col gathered offset by offset), 1x1 and tiling windows (stride =
    # kernel: the input gradient is one strided copy)
    "conv2d_one_channel": (lambda lib, x, f: lib.nn.conv2d(x, f, 1, "VALID"), (3, 7, 6, 1),
                           (3, 3, 1, 4)),
    "conv2d_1x1": (lambda lib, x, f: lib.nn.conv2d(x, f, 1, "SAME"), (2, 4, 5, 3), (1, 1, 3, 2)),
    "conv2d_tiling": (lambda lib, x, f: lib.nn.conv2d(x, f, 2, "VALID"), (2, 7, 6, 3),
                      (2, 2, 3, 4)),
    "conv2d_transpose_tiling": (lambda lib, x, f: lib.nn.conv2d_transpose(
        x, f, [2, 8, 6, 3], 2, "VALID"), (2, 4, 3, 2), (2, 2, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, xs, fs = CASES[name]
    x, f = _a(*xs), _a(*fs)
    check(lambda lib: fn(lib, lib.constant(x), lib.constant(f)), rtol=1e-4, atol=1e-5)
    if "dilated" in name or "grouped" in name:   # no such gradient kernels on TF's CPU
        return

    def grads(lib):
        xt, ft = lib.constant(x), lib.constant(f)
        with lib.GradientTape() as tape:
            tape.watch([xt, ft])
            y = fn(lib, xt, ft)
            loss = lib.reduce_sum(y * lib.cos(y))
        return tape.gradient(loss, [xt, ft])
    check(grads, rtol=1e-4, atol=1e-4)


def test_separable_conv2d():
    x, d, p = _a(2, 5, 5, 2), _a(3, 3, 2, 2), _a(1, 1, 4, 3)
    check(lambda lib: lib.nn.separable_conv2d(lib.constant(x), d, p, [1, 1, 1, 1], "SAME"),
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("pool", ["max_pool3d", "avg_pool3d"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool3d(pool, padding):
    x = _a(2, 5, 4, 5, 3)

    def run(lib):
        xt = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            y = getattr(lib.nn, pool)(xt, [1, 2, 3, 2, 1], [1, 2, 1, 2, 1], padding)
            loss = lib.reduce_sum(y * y)
        return y, tape.gradient(loss, xt)
    check(run, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("ksize,strides,padding", [(2, 2, "VALID"), (2, 2, "SAME"),
                                                   (3, 2, "SAME"), (3, 1, "VALID")])
def test_pool2d_gradients_with_ties(pool, ksize, strides, padding):
    """Rectified small integers tie in most windows: TensorFlow routes a max-pooling gradient
    to the first maximum of each window; tiling (stride = ksize) and overlapping windows."""
    x = np.maximum(RNG.integers(-2, 3, size=(2, 7, 6, 3)), 0).astype(np.float32)
    w = _a(2, 7, 6, 3)

    def run(lib):
        xt = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            y = getattr(lib.nn, pool)(xt, ksize, strides, padding)
            loss = lib.reduce_sum(y * w[:, :y.shape[1], :y.shape[2]])
        return y, tape.gradient(loss, xt)
    check(run, rtol=1e-5, atol=1e-5)
