"""GroupNormalization, UnitNormalization, AlphaDropout and Lambda against numpy formulas, finite
differences in float64, configs and Lambda's refusal to load a lambda unless safe_mode=False."""
import numpy as np
import pytest

import trainlib as tl

from ._reference import check_layer_gradients

RNG = np.random.default_rng(2)


def _group_norm_reference(x, groups, gamma, beta, eps=1e-3):
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(n, -1, groups, c // groups)
    mean = g.mean(axis=(1, 3), keepdims=True)
    var = g.var(axis=(1, 3), keepdims=True)
    out = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    return out * gamma + beta


def test_group_normalization_matches_numpy_and_gradients():
    layer = tl.layers.GroupNormalization(groups=2, gamma_initializer="random_normal",
                                         beta_initializer="random_normal")
    x = RNG.normal(size=(3, 4, 5, 6)).astype(np.float32) * 2 + 1
    gamma, beta = layer(x) is not None and layer.get_weights()
    np.testing.assert_allclose(layer(x).numpy(), _group_norm_reference(x, 2, gamma, beta),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tl.function(layer)(x).numpy(), layer(x).numpy(), rtol=1e-6)
    inst = tl.layers.GroupNormalization(groups=-1, dtype="float64")
    x64 = RNG.normal(size=(2, 3, 4))
    inst(x64)
    assert inst.groups == 4
    inst.set_weights([RNG.normal(size=4), RNG.normal(size=4)])
    check_layer_gradients(lambda lay, xs: lay(xs[0]), inst, [x64])
    with pytest.raises(ValueError, match="must be a multiple"):
        tl.layers.GroupNormalization(groups=4)(np.ones((1, 6), np.float32))
    with pytest.raises(ValueError, match="cannot be more than"):
        tl.layers.GroupNormalization(groups=8)(np.ones((1, 6), np.float32))
    with pytest.raises(ValueError, match="groups"):
        tl.layers.GroupNormalization(groups=0)


def test_group_normalization_channels_first_and_symbolic_shape():
    layer = tl.layers.GroupNormalization(groups=3, axis=1)
    x = RNG.normal(size=(2, 6, 5)).astype(np.float32)
    want = _group_norm_reference(np.moveaxis(x, 1, -1), 3, 1.0, 0.0)
    np.testing.assert_allclose(layer(x).numpy(), np.moveaxis(want, -1, 1), rtol=1e-4, atol=1e-5)
    kt = tl.layers.GroupNormalization(groups=2)(tl.keras.Input((None, 4)))
    assert kt.shape == (None, None, 4)


def test_unit_normalization():
    x = RNG.normal(size=(3, 4, 5))
    layer = tl.layers.UnitNormalization(axis=(1, 2), dtype="float64")
    want = x / np.sqrt((x ** 2).sum(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-10)
    np.testing.assert_array_equal(tl.layers.UnitNormalization()(np.zeros((1, 3))).numpy(), 0.0)
    check_layer_gradients(lambda lay, xs: lay(xs[0]), layer, [x])
    with pytest.raises(TypeError, match="axis"):
        tl.layers.UnitNormalization(axis="last")


def test_alpha_dropout_statistics_and_identity():
    layer = tl.layers.AlphaDropout(0.2, seed=5)
    x = RNG.normal(size=(200, 100)).astype(np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    # the affine correction keeps the mean and variance of unit-normal inputs
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1.0) < 0.05
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.2, atol=1e-5)
    assert 0.17 < dropped.mean() < 0.23
    kept = ~dropped
    np.testing.assert_allclose(y[kept], a * x[kept] - a * alpha_p * 0.2, rtol=1e-5, atol=1e-5)
    step = tl.function(lambda t: layer(t, training=True))
    assert not np.array_equal(step(x).numpy(), step(x).numpy())
    with pytest.raises(ValueError, match="rate"):
        tl.layers.AlphaDropout(1.5)


def _double(x):
    return x * 2.0


def test_lambda_layer_and_safe_mode():
    offset = 3.0
    layer = tl.layers.Lambda(lambda x, k=1.0: x * k + offset, arguments={"k": 2.0})
    np.testing.assert_allclose(layer(np.ones((1, 2), np.float32)).numpy(), [[5.0, 5.0]])
    config = layer.get_config()
    assert config["function"]["class_name"] == "__lambda__"
    with pytest.raises(ValueError, match="safe_mode=False"):
        tl.layers.Lambda.from_config(config)
    again = tl.layers.Lambda.from_config(config, safe_mode=False)
    np.testing.assert_allclose(again(np.ones((1, 2), np.float32)).numpy(), [[5.0, 5.0]])
    named = tl.layers.Lambda(_double)
    with pytest.raises(ValueError, match="neither registered nor in custom_objects"):
        tl.layers.Lambda.from_config(named.get_config())   # this module is not trainlib's
    rebuilt = tl.layers.Lambda.from_config(named.get_config(), custom_objects={"_double": _double})
    assert rebuilt.function is _double
    assert tl.layers.Lambda.from_config(named.get_config(), safe_mode=False).function is _double
    model = tl.Sequential([tl.layers.Input((3,)), tl.layers.Lambda(_double), tl.layers.Dense(1)])
    assert model(np.ones((2, 3), np.float32)).shape == (2, 1)
    with pytest.raises(ValueError, match="callable"):
        tl.layers.Lambda(3)


@pytest.mark.parametrize("layer", [
    tl.layers.GroupNormalization(groups=4, axis=1, epsilon=1e-5, center=False),
    tl.layers.UnitNormalization(axis=[1, 2]),
    tl.layers.AlphaDropout(0.3, noise_shape=(None, 1), seed=4),
])
def test_config_round_trip(layer):
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()
