"""Wrapper, InputSpec, SpectralNormalization and RMSNormalization against numpy formulas,
finite differences in float64, configs, and the same results eagerly, in tl.function and
in fit."""
import numpy as np
import pytest

import trainlib as tl

from ._reference import check_layer_gradients

L = tl.keras.layers
RNG = np.random.default_rng(7)


def _rms_reference(x, scale, axes, eps=1e-6):
    return x / np.sqrt((x ** 2).mean(axis=tuple(axes), keepdims=True) + eps) * scale


def test_rms_normalization_matches_numpy_gradients_and_config():
    x = RNG.normal(size=(3, 4, 5)) * 3 + 1
    layer = L.RMSNormalization(dtype="float64")
    layer(x)
    assert layer.axis == [-1] and layer.get_weights()[0].shape == (5,)
    scale = RNG.normal(size=5)
    layer.set_weights([scale])
    np.testing.assert_allclose(layer(x).numpy(), _rms_reference(x, scale, [-1]), rtol=1e-12)
    check_layer_gradients(lambda lay, xs: lay(xs[0]), layer, [x])
    two = L.RMSNormalization(axis=[2, 1], epsilon=0.1, dtype="float64")
    two(x)
    assert two.axis == [1, 2] and two.scale.shape == (4, 5)
    np.testing.assert_allclose(two(x).numpy(), _rms_reference(x, 1.0, [1, 2], 0.1), rtol=1e-12)
    again = L.RMSNormalization.from_config(two.get_config())
    assert again.get_config() == two.get_config()
    half = L.RMSNormalization(dtype="float16")(x.astype(np.float16))
    assert half.dtype == tl.float16
    x32 = x.astype(np.float32)
    plain = L.RMSNormalization()
    np.testing.assert_allclose(tl.function(plain)(x32).numpy(), plain(x32).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="out of bounds"):
        L.RMSNormalization(axis=3).compute_output_shape((2, 3, 4))


def _sn_reference(kernel, u, iterations):
    w = kernel.reshape(-1, kernel.shape[-1])

    def normalize(a):
        return a * min(1.0 / np.sqrt((a ** 2).sum()), 1e7)
    for _ in range(iterations):
        v = normalize(u @ w.T)
        u = normalize(v @ w)
    sigma = (v @ w @ u.T).item()
    return u, kernel / sigma


@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_normalization_training_step_matches_numpy(iterations):
    dense = L.Dense(3, dtype="float64")
    sn = L.SpectralNormalization(dense, power_iterations=iterations, dtype="float64")
    x = RNG.normal(size=(4, 5))
    out = sn(x)   # inference: the wrapped layer, kernel as it is
    kernel, u, bias = [w.copy() for w in sn.get_weights()]
    assert [w.shape for w in sn.get_weights()] == [(5, 3), (1, 3), (3,)]
    assert [w.name.split(":")[0] for w in sn.trainable_weights] == ["kernel", "bias"]
    np.testing.assert_allclose(out.numpy(), x @ kernel + bias, rtol=1e-12)
    want_u, want_kernel = _sn_reference(kernel, u, iterations)
    y = sn(x, training=True)
    np.testing.assert_allclose(sn.vector_u.numpy(), want_u, rtol=1e-10)
    np.testing.assert_allclose(dense.kernel.numpy(), want_kernel, rtol=1e-10)
    np.testing.assert_allclose(y.numpy(), x @ want_kernel + bias, rtol=1e-10)
    # the normalized kernel has spectral norm ~1 after enough steps
    for _ in range(30):
        sn(x, training=True)
    assert abs(np.linalg.svd(dense.kernel.numpy(), compute_uv=False)[0] - 1.0) < 1e-3
    # gradients: those of the wrapped layer at the kernel it reads
    check_layer_gradients(lambda lay, xs: lay(xs[0]), sn, [x])


def test_spectral_normalization_graph_fit_zero_kernel_and_config():
    conv = L.Conv2D(2, 2, kernel_initializer="zeros")
    sn = L.SpectralNormalization(conv)
    x = RNG.normal(size=(2, 5, 5, 1)).astype(np.float32)
    sn(x, training=True)     # an all-zero kernel is left alone (no NaN)
    np.testing.assert_array_equal(conv.kernel.numpy(), 0.0)
    assert np.isfinite(sn.vector_u.numpy()).all()
    eager = L.SpectralNormalization(L.Dense(3, kernel_initializer="ones"), power_iterations=2)
    graph = L.SpectralNormalization(L.Dense(3, kernel_initializer="ones"), power_iterations=2)
    x2 = RNG.normal(size=(4, 3)).astype(np.float32)
    eager(x2), graph(x2)
    graph.set_weights(eager.get_weights())
    step = tl.function(lambda t: graph(t, training=True))
    for _ in range(2):
        np.testing.assert_allclose(step(x2).numpy(), eager(x2, training=True).numpy(),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(graph.layer.kernel.numpy(), eager.layer.kernel.numpy(), rtol=1e-5)
    model = tl.keras.Sequential([tl.keras.Input((3,)),
                                 L.SpectralNormalization(L.Dense(4)), L.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    u0 = model.layers[0].vector_u.numpy().copy()
    model.fit(x2, np.ones((4, 1), np.float32), epochs=1, verbose=0)
    assert not np.allclose(model.layers[0].vector_u.numpy(), u0)   # updated inside fit
    config = eager.get_config()
    assert config["power_iterations"] == 2 and config["layer"]["class_name"] == "Dense"
    again = L.SpectralNormalization.from_config(config)
    assert again.get_config()["layer"]["config"]["units"] == 3
    with pytest.raises(ValueError, match="power_iterations"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="no attribute 'kernel' nor 'embeddings'"):
        L.SpectralNormalization(L.Dropout(0.1))(x2)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        eager(np.ones((2, 4), np.float32))


def test_wrapper_is_the_base_of_time_distributed_and_round_trips():
    class Twice(L.Wrapper):
        def call(self, x):
            return 2.0 * self.layer(x)

    layer = Twice(L.Dense(2, kernel_initializer="ones"))
    np.testing.assert_allclose(layer(np.ones((1, 3), np.float32)).numpy(), [[6.0, 6.0]])
    assert [w.name.split(":")[0] for w in layer.weights] == ["kernel", "bias"]
    again = Twice.from_config(layer.get_config())
    assert again.layer.get_config()["units"] == 2
    assert isinstance(L.TimeDistributed(L.Dense(2)), L.Wrapper)
    with pytest.raises(ValueError, match="supplied to Wrapper"):
        Twice("dense")


def test_input_spec_checks_like_keras():
    class Fixed(L.Layer):
        def __init__(self, spec, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = spec

        def call(self, x):
            return x

    ok = np.ones((2, 3), np.float32)
    Fixed(L.InputSpec(ndim=2, axes={-1: 3}, dtype="float32"))(ok)
    Fixed(L.InputSpec(shape=(None, 3, 1), allow_last_axis_squeeze=True))(ok)
    cases = [(L.InputSpec(ndim=3), "expected ndim=3, found ndim=2"),
             (L.InputSpec(min_ndim=3), "expected min_ndim=3, found ndim=2"),
             (L.InputSpec(max_ndim=1), "expected max_ndim=1, found ndim=2"),
             (L.InputSpec(dtype="int32"), "expected dtype=int32, found dtype=float32"),
             (L.InputSpec(axes={1: 4}), "expected axis 1 of input shape to have value 4"),
             (L.InputSpec(shape=(None, 5)), r"expected shape=\(None, 5\)"),
             ([L.InputSpec(), L.InputSpec()], "expects 2 input"),
             ]
    for spec, message in cases:
        with pytest.raises(ValueError, match=message):
            Fixed(spec)(ok)
    with pytest.raises(ValueError, match="expected ndim=3"):      # symbolic calls too
        Fixed(L.InputSpec(ndim=3))(tl.keras.Input((3,)))
    spec = L.InputSpec(shape=(None, 4), name="x")
    assert spec.ndim == 2 and repr(spec) == "InputSpec(shape=(None, 4), ndim=2)"
    assert L.InputSpec.from_config(spec.get_config()).get_config() == spec.get_config()
    with pytest.raises(TypeError, match="integer keys"):
        L.InputSpec(axes={"a": 1})
    with pytest.raises(ValueError, match="greater than the maximum"):
        L.InputSpec(ndim=2, axes={3: 1})
