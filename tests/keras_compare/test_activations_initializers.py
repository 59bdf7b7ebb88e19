"""Keras 3 vs trainlib: every `keras.activations` function gives Keras's values (relu's
negative_slope / max_value / threshold too), `get`/`deserialize` resolve the same names, and
every `keras.initializers` name exists with Keras's config; VarianceScaling's modes and
distributions draw with Keras's variance (values differ: another generator), the deterministic
initializers (Identity, Constant, STFT...) give Keras's values.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib import keras as tk  # noqa: E402

X = np.linspace(-3.0, 3.0, 30, dtype=np.float32).reshape(5, 6)
FUNCTIONS = sorted(n for n in dir(keras.activations)
                   if not n.startswith("_") and n not in ("get", "serialize", "deserialize"))
KWARGS = {"threshold": dict(threshold=0.5, default_value=-1.0)}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_activation_values(name):
    kw = KWARGS.get(name, {})
    want = np.asarray(getattr(keras.activations, name)(X, **kw))
    got = getattr(tk.activations, name)(tl.constant(X), **kw).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    assert tk.activations.get(name) is getattr(tk.activations, name) or name in ("swish",)
    assert tk.activations.deserialize(keras.activations.serialize(
        getattr(keras.activations, name))) is tk.activations.get(name)


@pytest.mark.parametrize("kw", [dict(negative_slope=0.1), dict(max_value=6.0),
                                dict(max_value=2.0), dict(threshold=1.0),
                                dict(negative_slope=0.2, max_value=2.5, threshold=-1.0),
                                dict(negative_slope=0.3, threshold=0.5)], ids=repr)
def test_relu_options(kw):
    np.testing.assert_allclose(tk.activations.relu(tl.constant(X), **kw).numpy(),
                               np.asarray(keras.activations.relu(X, **kw)), rtol=1e-6, atol=1e-6)


INITIALIZERS = sorted(n for n in dir(keras.initializers)
                      if not n.startswith("_") and n not in ("get", "serialize", "deserialize"))


@pytest.mark.parametrize("name", INITIALIZERS)
def test_initializer_names_and_configs(name):
    k_cls, t_cls = getattr(keras.initializers, name), getattr(tk.initializers, name)
    if name in ("Initializer",):
        return
    # trainlib's Identity also saves its gain (Keras's config drops it)
    assert set(t_cls().get_config()) - {"seed"} >= set(k_cls().get_config()) - {"seed"}
    if name not in ("Constant", "constant"):  # Keras's get("constant") fails: no value
        assert type(tk.initializers.get(name)).__name__ == \
            type(keras.initializers.get(name)).__name__


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform",
                                          "normal", "Uniform"])
@pytest.mark.parametrize("shape", [(200, 300), (3, 3, 16, 32)], ids=str)
def test_variance_scaling_draws_keras_variance(mode, distribution, shape):
    kw = dict(scale=2.0, mode=mode, distribution=distribution, seed=1)
    want = np.asarray(keras.initializers.VarianceScaling(**kw)(shape))
    got = tk.initializers.VarianceScaling(**kw)(shape).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.std(), want.std(), rtol=0.04)
    np.testing.assert_allclose(np.abs(got).max(), np.abs(want).max(),
                               rtol=0.05 if "uniform" in distribution.lower() else 0.25)
    assert tk.initializers.VarianceScaling(**kw).get_config()["distribution"] == \
        keras.initializers.VarianceScaling(**kw).get_config()["distribution"]


@pytest.mark.parametrize("build", [
    lambda k: k.initializers.Identity(gain=2.0)((3, 5)),
    lambda k: k.initializers.Constant(1.5)((2, 3)),
    lambda k: k.initializers.Zeros()((2,)),
    lambda k: k.initializers.Ones()((2, 2)),
    lambda k: k.initializers.STFT("imag", "hann", "density", True)((16, 1, 9)),
    lambda k: k.initializers.STFT("real", "hamming", "spectrum")((8, 1, 5)),
    lambda k: k.initializers.STFT("real", None, None)((8, 1, 5)),
], ids=["identity", "constant", "zeros", "ones", "stft_imag", "stft_hamming", "stft_plain"])
def test_deterministic_initializers_match(build):
    np.testing.assert_allclose(build(tk).numpy(), np.asarray(build(keras)), rtol=1e-5, atol=2e-6)


def test_orthogonal_is_orthogonal_with_gain():
    w = tk.initializers.Orthogonal(gain=3.0, seed=2)((4, 6)).numpy()
    np.testing.assert_allclose(w @ w.T, 9.0 * np.eye(4), atol=1e-4)
