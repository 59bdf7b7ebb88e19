"""The convolution, pooling, reshaping, merging, activation and regularization layer families
against numpy references of their formulas, with float64 finite-difference gradients for
inputs and weights, the same results in tl.function, channels-first forms, configs and fit.
"""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops.harness import numeric_gradient
from tests.graph.ops.test_nn import np_conv_transpose, np_convnd, np_poolnd

L = tl.layers


def np_depthwise(x, k, strides, padding, dilations=None):
    """Each channel c convolved with its own k[..., c, j] filters: output channel c*m + j."""
    m = k.shape[-1]
    outs = []
    for c in range(x.shape[-1]):
        for j in range(m):
            outs.append(np_convnd(x[..., c:c + 1], k[..., c:c + 1, j:j + 1], strides, padding,
                                  dilations))
    return np.concatenate(outs, axis=-1)


def np_bilinear(x, fh, fw):
    """Half-pixel-center bilinear upsampling, pixel by pixel."""
    n, h, w, c = x.shape
    out = np.zeros((n, h * fh, w * fw, c))
    for i in range(h * fh):
        for j in range(w * fw):
            sy = min(max((i + 0.5) / fh - 0.5, 0), h - 1)
            sx = min(max((j + 0.5) / fw - 0.5, 0), w - 1)
            y0, x0 = int(np.floor(sy)), int(np.floor(sx))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = sy - y0, sx - x0
            out[:, i, j] = ((1 - dy) * (1 - dx) * x[:, y0, x0] + (1 - dy) * dx * x[:, y0, x1] +
                            dy * (1 - dx) * x[:, y1, x0] + dy * dx * x[:, y1, x1])
    return out


def to_first(x):
    return np.moveaxis(x, -1, 1)


def relu_ref(x, slope, max_value, threshold):
    y = np.where(x > threshold, x, 0.0)
    if max_value is not None:
        y = np.minimum(y, max_value)
    return y - slope * np.maximum(threshold - x, 0)


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# name -> (layer factory, input shapes, reference(inputs, weights))
CASES = {
    "Conv1D_causal": (lambda: L.Conv1D(3, 3, padding="causal", dilation_rate=2, activation="tanh"),
                      [(2, 7, 2)], lambda xs, w: np.tanh(np_convnd(
                          np.pad(xs[0], [(0, 0), (4, 0), (0, 0)]), w[0], (1,), "VALID", (2,)) + w[1])),
    "Conv1D_strided": (lambda: L.Conv1D(2, 2, strides=2, padding="same"), [(2, 7, 3)],
                       lambda xs, w: np_convnd(xs[0], w[0], (2,), "SAME") + w[1]),
    "Conv2D_groups": (lambda: L.Conv2D(4, 2, groups=2, use_bias=False), [(2, 4, 5, 4)],
                      lambda xs, w: np_convnd(xs[0], w[0], (1, 1), "VALID")),
    "Conv2D_channels_first": (lambda: L.Conv2D(3, 2, strides=2, data_format="channels_first"),
                              [(2, 2, 5, 5)], lambda xs, w: to_first(
                                  np_convnd(np.moveaxis(xs[0], 1, -1), w[0], (2, 2), "VALID") + w[1])),
    "Conv3D": (lambda: L.Conv3D(2, 2, padding="same"), [(1, 3, 3, 2, 2)],
               lambda xs, w: np_convnd(xs[0], w[0], (1, 1, 1), "SAME") + w[1]),
    "Conv1DTranspose": (lambda: L.Conv1DTranspose(2, 3, strides=2), [(2, 4, 2)],
                        lambda xs, w: np_conv_transpose(xs[0], w[0], (9,), (2,), "VALID") + w[1]),
    "Conv2DTranspose_output_padding": (
        lambda: L.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1),
        [(1, 3, 2, 2)],
        lambda xs, w: np_conv_transpose(xs[0], w[0], (6, 4), (2, 2), "SAME") + w[1]),
    "Conv2DTranspose_dilated": (lambda: L.Conv2DTranspose(2, 2, dilation_rate=2), [(1, 3, 3, 1)],
                                lambda xs, w: np_conv_transpose(xs[0], w[0], (5, 5), (1, 1),
                                                                "VALID", (2, 2)) + w[1]),
    "Conv3DTranspose": (lambda: L.Conv3DTranspose(1, 2, strides=2, padding="same"),
                        [(1, 2, 2, 1, 2)],
                        lambda xs, w: np_conv_transpose(xs[0], w[0], (4, 4, 2), (2, 2, 2),
                                                        "SAME") + w[1]),
    "DepthwiseConv1D": (lambda: L.DepthwiseConv1D(2, depth_multiplier=2), [(2, 5, 2)],
                        lambda xs, w: np_depthwise(xs[0], w[0], (1,), "VALID") + w[1]),
    "DepthwiseConv2D": (lambda: L.DepthwiseConv2D(2, strides=2, padding="same"), [(1, 5, 4, 3)],
                        lambda xs, w: np_depthwise(xs[0], w[0], (2, 2), "SAME") + w[1]),
    "SeparableConv2D": (lambda: L.SeparableConv2D(2, 2, depth_multiplier=2), [(1, 4, 3, 2)],
                        lambda xs, w: np_depthwise(xs[0], w[0], (1, 1), "VALID") @ w[1][0, 0] + w[2]),
    "SeparableConv1D": (lambda: L.SeparableConv1D(3, 2, padding="same"), [(2, 4, 2)],
                        lambda xs, w: np_depthwise(xs[0], w[0], (1,), "SAME") @ w[1][0] + w[2]),
    "MaxPooling1D": (lambda: L.MaxPooling1D(3, 2, padding="same"), [(2, 7, 2)],
                     lambda xs, w: np_poolnd(xs[0], (3,), (2,), "SAME", "max")),
    "MaxPooling3D": (lambda: L.MaxPooling3D((2, 1, 2)), [(1, 4, 3, 4, 2)],
                     lambda xs, w: np_poolnd(xs[0], (2, 1, 2), (2, 1, 2), "VALID", "max")),
    "AveragePooling1D": (lambda: L.AveragePooling1D(2, 1), [(2, 5, 2)],
                         lambda xs, w: np_poolnd(xs[0], (2,), (1,), "VALID", "avg")),
    "AveragePooling3D": (lambda: L.AveragePooling3D(2, padding="same"), [(1, 3, 3, 2, 1)],
                         lambda xs, w: np_poolnd(xs[0], (2, 2, 2), (2, 2, 2), "SAME", "avg")),
    "AveragePooling2D_channels_first": (
        lambda: L.AveragePooling2D(2, data_format="channels_first"), [(1, 2, 4, 4)],
        lambda xs, w: to_first(np_poolnd(np.moveaxis(xs[0], 1, -1), (2, 2), (2, 2), "VALID",
                                         "avg"))),
    "GlobalAveragePooling3D": (lambda: L.GlobalAveragePooling3D(), [(2, 2, 3, 2, 3)],
                               lambda xs, w: xs[0].mean((1, 2, 3))),
    "GlobalMaxPooling1D_channels_first": (
        lambda: L.GlobalMaxPooling1D(data_format="channels_first", keepdims=True), [(2, 3, 5)],
        lambda xs, w: xs[0].max(2, keepdims=True)),
    "Reshape": (lambda: L.Reshape((-1, 2)), [(2, 3, 4)], lambda xs, w: xs[0].reshape(2, 6, 2)),
    "Permute": (lambda: L.Permute((3, 1, 2)), [(2, 3, 4, 5)],
                lambda xs, w: xs[0].transpose(0, 3, 1, 2)),
    "RepeatVector": (lambda: L.RepeatVector(3), [(2, 4)],
                     lambda xs, w: np.repeat(xs[0][:, None], 3, axis=1)),
    "UpSampling1D": (lambda: L.UpSampling1D(2), [(2, 3, 2)], lambda xs, w: np.repeat(xs[0], 2, 1)),
    "UpSampling2D_bilinear": (lambda: L.UpSampling2D((2, 3), interpolation="bilinear"),
                              [(1, 3, 4, 2)], lambda xs, w: np_bilinear(xs[0], 2, 3)),
    "UpSampling3D": (lambda: L.UpSampling3D((2, 1, 2)), [(1, 2, 2, 2, 1)],
                     lambda xs, w: np.repeat(np.repeat(xs[0], 2, 1), 2, 3)),
    "ZeroPadding1D": (lambda: L.ZeroPadding1D((2, 1)), [(2, 3, 2)],
                      lambda xs, w: np.pad(xs[0], [(0, 0), (2, 1), (0, 0)])),
    "ZeroPadding2D_channels_first": (
        lambda: L.ZeroPadding2D(((1, 0), (0, 2)), data_format="channels_first"), [(1, 2, 3, 3)],
        lambda xs, w: np.pad(xs[0], [(0, 0), (0, 0), (1, 0), (0, 2)])),
    "ZeroPadding3D": (lambda: L.ZeroPadding3D((1, 0, 2)), [(1, 2, 2, 2, 1)],
                      lambda xs, w: np.pad(xs[0], [(0, 0), (1, 1), (0, 0), (2, 2), (0, 0)])),
    "Cropping1D": (lambda: L.Cropping1D(1), [(2, 5, 2)], lambda xs, w: xs[0][:, 1:-1]),
    "Cropping2D": (lambda: L.Cropping2D(((1, 0), (0, 2))), [(1, 4, 5, 2)],
                   lambda xs, w: xs[0][:, 1:, :-2]),
    "Cropping3D": (lambda: L.Cropping3D((1, 0, 1)), [(1, 4, 3, 4, 1)],
                   lambda xs, w: xs[0][:, 1:-1, :, 1:-1]),
    "Add": (L.Add, [(2, 3), (2, 3), (2, 3)], lambda xs, w: xs[0] + xs[1] + xs[2]),
    "Subtract": (L.Subtract, [(2, 3), (2, 3)], lambda xs, w: xs[0] - xs[1]),
    "Multiply": (L.Multiply, [(2, 3), (2, 3)], lambda xs, w: xs[0] * xs[1]),
    "Average": (L.Average, [(2, 3), (2, 3)], lambda xs, w: (xs[0] + xs[1]) / 2),
    "Maximum": (L.Maximum, [(2, 3), (2, 3)], lambda xs, w: np.maximum(xs[0], xs[1])),
    "Minimum": (L.Minimum, [(2, 3), (2, 3)], lambda xs, w: np.minimum(xs[0], xs[1])),
    "Concatenate": (lambda: L.Concatenate(axis=1), [(2, 3), (2, 2)],
                    lambda xs, w: np.concatenate(xs, 1)),
    "Dot": (lambda: L.Dot((1, 2)), [(2, 3, 4), (2, 5, 3)],
            lambda xs, w: np.einsum("bij,bki->bjk", xs[0], xs[1])),
    "Dot_normalized": (lambda: L.Dot(-1, normalize=True), [(2, 4), (2, 4)],
                       lambda xs, w: np.sum(xs[0] * xs[1], -1, keepdims=True) / np.sqrt(
                           (xs[0] ** 2).sum(-1, keepdims=True) * (xs[1] ** 2).sum(-1, keepdims=True))),
    "ReLU": (lambda: L.ReLU(max_value=1.0, negative_slope=0.2, threshold=0.3), [(3, 5)],
             lambda xs, w: relu_ref(xs[0], 0.2, 1.0, 0.3)),
    "ReLU6": (lambda: L.ReLU(max_value=6.0), [(3, 5)], lambda xs, w: np.clip(xs[0], 0, 6)),
    # the slope is a float32 attribute, as TensorFlow's (and so Keras's) leaky_relu
    "LeakyReLU": (L.LeakyReLU, [(3, 5)],
                  lambda xs, w: np.where(xs[0] > 0, xs[0], float(np.float32(0.3)) * xs[0])),
    "PReLU": (lambda: L.PReLU(alpha_initializer="random_uniform", shared_axes=2), [(2, 3, 4)],
              lambda xs, w: np.maximum(xs[0], 0) - w[0] * np.maximum(-xs[0], 0)),
    "ELU": (lambda: L.ELU(0.5), [(3, 5)],
            lambda xs, w: np.where(xs[0] > 0, xs[0], 0.5 * np.expm1(xs[0]))),
    "Softmax_axes": (lambda: L.Softmax(axis=[1, 2]), [(2, 3, 2)],
                     lambda xs, w: np.exp(xs[0]) / np.exp(xs[0]).sum((1, 2), keepdims=True)),
    "Masking": (lambda: L.Masking(0.5), [(2, 4, 3)],
                lambda xs, w: xs[0] * np.any(xs[0] != 0.5, -1, keepdims=True)),
}


def _arrays(name, shapes):
    rng = np.random.default_rng(len(name))
    xs = [rng.uniform(-2, 2, size=s) for s in shapes]
    if name == "Masking":
        xs[0][1, 2] = 0.5
    if name.startswith("ReLU"):   # keep clear of the kinks, where differences are one-sided
        xs[0] = np.where(np.abs(xs[0] - 0.3) < 0.05, xs[0] + 0.2, xs[0])
        xs[0] = np.where(np.abs(xs[0]) < 0.05, xs[0] + 0.2, xs[0])
    return xs


def _arg(ts):
    return ts if len(ts) > 1 else ts[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_numpy_and_finite_differences(name):
    make, shapes, ref = CASES[name]
    xs = _arrays(name, shapes)
    layer = make() if not isinstance(make, type) else make()
    layer = type(layer).from_config({**layer.get_config(), "dtype": "float64"})
    y = layer(_arg([tl.constant(x) for x in xs]))
    weights = layer.get_weights()
    np.testing.assert_allclose(y.numpy(), ref(xs, weights), rtol=1e-10, atol=1e-10)

    fn = tl.function(lambda *ts: layer(_arg(list(ts))))
    np.testing.assert_allclose(fn(*[tl.constant(x) for x in xs]).numpy(), y.numpy(), rtol=1e-12)

    rng = np.random.default_rng(0)
    cot = rng.uniform(0.5, 1.5, size=tuple(y.shape))
    n = len(xs)

    def scalar(arrays):
        layer.set_weights(arrays[n:])
        return float(np.sum(layer(_arg([tl.constant(a) for a in arrays[:n]])).numpy() * cot))

    ts = [tl.constant(x) for x in xs]
    layer.set_weights(weights)
    with tl.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        loss = tl.reduce_sum(layer(_arg(ts)) * cot)
    grads = tape.gradient(loss, ts + list(layer.trainable_weights))
    arrays = [x.copy() for x in xs] + [w.copy() for w in weights]
    if name == "Masking":   # a jump at masked steps: their gradient is 0, elsewhere cot
        keep = np.any(xs[0] != 0.5, -1, keepdims=True)
        np.testing.assert_array_equal(grads[0].numpy(), cot * keep)
        return
    for i, g in enumerate(grads):
        want = numeric_gradient(scalar, [a.copy() for a in arrays], i)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}: gradient {i}")


def test_noise_layers_are_active_only_while_training():
    x = np.ones((2000, 8))
    for layer in (L.GaussianNoise(0.5, seed=1), L.GaussianDropout(0.2, seed=1),
                  L.SpatialDropout1D(0.5, seed=1)):
        np.testing.assert_array_equal(layer(x.reshape(2000, 4, 2)).numpy(), x.reshape(2000, 4, 2))
    noisy = L.GaussianNoise(0.5, seed=1)(x, training=True).numpy()
    assert abs(noisy.std() - 0.5) < 0.02 and abs(noisy.mean() - 1) < 0.02
    gd = L.GaussianDropout(0.2, seed=1)(x, training=True).numpy()
    assert abs(gd.std() - np.sqrt(0.2 / 0.8)) < 0.02 and abs(gd.mean() - 1) < 0.02
    sd = L.SpatialDropout2D(0.5, seed=1)(np.ones((400, 3, 3, 4)), training=True).numpy()
    per_map = sd[:, 0, 0, :]
    assert set(np.unique(sd)) <= {0.0, 2.0}
    assert np.all(sd == per_map[:, None, None, :])      # whole feature maps kept or dropped
    assert abs((per_map == 0).mean() - 0.5) < 0.05
    assert np.array_equal(L.Identity()(x).numpy(), x)


def test_softmax_mask_zeroes_masked_positions():
    x = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    mask = np.array([[True, False, True], [False, False, False]])
    y = L.Softmax()(x, mask=mask).numpy()
    np.testing.assert_allclose(y[0], np.array([np.exp(1), 0, np.exp(3)]) / (np.exp(1) + np.exp(3)))
    np.testing.assert_array_equal(y[1], 0)


def test_residual_model_trains_in_fit_and_matches_in_a_function():
    tl.random.set_seed(0)
    inputs = L.Input((8, 8, 1))
    h = L.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    r = L.SeparableConv2D(4, 3, padding="same")(h)
    h = L.add([h, r])
    h = L.Conv2DTranspose(2, 2, strides=2)(L.MaxPooling2D()(h))
    h = L.concatenate([L.GlobalAveragePooling2D()(h), L.GlobalMaxPooling2D()(h)])
    model = tl.Model(inputs, L.Dense(2, activation="softmax")(h))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 8, 8, 1)).astype(np.float32)
    y = (x.mean((1, 2, 3)) > 0).astype(np.int32)
    model.compile(tl.optim.Adam(0.02), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy(), rtol=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="causal"):
        L.Conv2D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="evenly divisible"):
        L.Conv2D(4, 3, groups=3)
    with pytest.raises(ValueError, match="evenly divisible"):
        L.Conv2D(4, 3, groups=2)(np.ones((1, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.Conv1D(2, 3)(np.ones((1, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.Subtract()([np.ones((2, 2))] * 3)
    with pytest.raises(ValueError, match="list of inputs"):
        L.Add()(np.ones((2, 2)))
    with pytest.raises(ValueError, match="total size"):
        L.Reshape((5,))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="smaller than the corresponding"):
        L.Cropping1D(2)(np.ones((1, 4, 1)))
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="lanczos3")
