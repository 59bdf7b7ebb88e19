"""`keras.activations` and `keras.initializers` hold Keras 3.15's names (the lists below, from
`dir(keras.activations)` and `dir(keras.initializers)`); the added activations against numpy
formulas, relu's Keras options, and the initializers' Keras aliases and VarianceScaling's
accepted spellings. (`tests/keras_compare/test_activations_initializers.py` checks values
against Keras itself.)
"""
import numpy as np
import pytest

import trainlib as tl
from trainlib import keras

KERAS_ACTIVATIONS = """celu deserialize elu exponential gelu get glu hard_shrink hard_sigmoid
    hard_silu hard_swish hard_tanh leaky_relu linear log_sigmoid log_softmax mish relu relu6 selu
    serialize sigmoid silu soft_shrink softmax softplus softsign sparse_plus sparse_sigmoid
    sparsemax squareplus swish tanh tanh_shrink threshold""".split()
KERAS_INITIALIZERS = """Constant GlorotNormal GlorotUniform HeNormal HeUniform Identity
    IdentityInitializer Initializer LecunNormal LecunUniform Ones Orthogonal OrthogonalInitializer
    RandomNormal RandomUniform STFT STFTInitializer TruncatedNormal VarianceScaling Zeros constant
    deserialize get glorot_normal glorot_uniform he_normal he_uniform identity lecun_normal
    lecun_uniform ones orthogonal random_normal random_uniform serialize stft truncated_normal
    variance_scaling zeros""".split()
X = np.linspace(-3, 3, 13).astype(np.float32)


def test_every_keras_name_is_there():
    assert [n for n in KERAS_ACTIVATIONS if not hasattr(keras.activations, n)] == []
    assert [n for n in KERAS_INITIALIZERS if not hasattr(keras.initializers, n)] == []


@pytest.mark.parametrize("name,ref", [
    ("mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("relu6", lambda x: np.clip(x, 0, 6)),
    ("softsign", lambda x: x / (1 + np.abs(x))),
    ("log_sigmoid", lambda x: -np.log1p(np.exp(-x))),
    ("hard_sigmoid", lambda x: np.clip(x + 3, 0, 6) / 6),
    ("hard_swish", lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("squareplus", lambda x: (x + np.sqrt(x * x + 4)) / 2),
    ("celu", lambda x: np.maximum(x, 0) + np.minimum(np.expm1(x), 0)),
])
def test_added_activations(name, ref):
    fn = keras.activations.get(name)
    np.testing.assert_allclose(fn(tl.constant(X)).numpy(), ref(X.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)
    assert keras.activations.deserialize(name) is fn
    assert keras.activations.deserialize({"class_name": "function", "config": name}) is fn


def test_relu_keras_options():
    got = keras.activations.relu(tl.constant(X), negative_slope=0.1, max_value=2.0, threshold=1.0)
    want = np.where(X > 1.0, np.minimum(X, 2.0), 0.0) - 0.1 * np.maximum(1.0 - X, 0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(keras.activations.relu(tl.constant(X), max_value=6.0).numpy(),
                                  np.clip(X, 0, 6))


def test_initializer_aliases_and_variance_scaling_spellings():
    assert keras.initializers.glorot_uniform is keras.initializers.GlorotUniform
    assert keras.initializers.IdentityInitializer is keras.initializers.Identity
    assert isinstance(keras.initializers.get("stft"), keras.initializers.STFT)
    for spelling, stored in (("normal", "truncated_normal"), ("Uniform", "uniform"),
                             ("UNTRUNCATED_NORMAL", "untruncated_normal")):
        init = keras.initializers.VarianceScaling(2.0, "fan_out", spelling)
        assert init.get_config()["distribution"] == stored
        w = init((400, 300)).numpy()
        np.testing.assert_allclose(w.std(), np.sqrt(2.0 / 300), rtol=0.05)
    with pytest.raises(ValueError, match="distribution"):
        keras.initializers.VarianceScaling(distribution="laplace")
    kernel = keras.initializers.STFT("real", "hann", "density")((8, 1, 5)).numpy()
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 7)
    np.testing.assert_allclose(kernel[:, 0, 0], window / np.sqrt(np.sum(window ** 2)), rtol=1e-6)
