"""`trainlib.keras.random`: Keras 3's seed rules (int seeds repeat, SeedGenerators advance, also
inside `tl.function`), shapes and dtypes, and the distributions' moments on large samples."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import keras
from trainlib.graph.ops import stateless_random as sr

KERAS_RANDOM = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal",
                "randint", "shuffle", "truncated_normal", "uniform"]

N = 20000


def test_every_keras_random_name_is_provided():
    missing = [n for n in KERAS_RANDOM if not hasattr(keras.random, n)]
    assert not missing


DRAWS = {
    "normal": lambda seed: keras.random.normal((N,), mean=1.0, stddev=2.0, seed=seed),
    "uniform": lambda seed: keras.random.uniform((N,), minval=-1.0, maxval=3.0, seed=seed),
    "truncated_normal": lambda seed: keras.random.truncated_normal((N,), seed=seed),
    "randint": lambda seed: keras.random.randint((N,), 2, 7, seed=seed),
    "gamma": lambda seed: keras.random.gamma((N,), 3.0, seed=seed),
    "beta": lambda seed: keras.random.beta((N,), 2.0, 5.0, seed=seed),
    "binomial": lambda seed: keras.random.binomial((N,), 10, 0.3, seed=seed),
    "categorical": lambda seed: keras.random.categorical(np.log([[0.2, 0.8]]), N, seed=seed)[0],
}
# (mean, variance) of each draw above
MOMENTS = {
    "normal": (1.0, 4.0), "uniform": (1.0, 16 / 12), "truncated_normal": (0.0, 0.7737),
    "randint": (4.0, (5 ** 2 - 1) / 12), "gamma": (3.0, 3.0), "beta": (2 / 7, 10 / (49 * 8)),
    "binomial": (3.0, 2.1), "categorical": (0.8, 0.16),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_moments(name):
    x = DRAWS[name](7).numpy().astype(np.float64)
    mean, var = MOMENTS[name]
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N) + 1e-3
    assert abs(x.var() - var) < 0.05 * var + 1e-3


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_int_seed_repeats_and_seed_generator_advances(name):
    np.testing.assert_array_equal(DRAWS[name](3).numpy(), DRAWS[name](3).numpy())
    gen = keras.random.SeedGenerator(5)
    first, second = DRAWS[name](gen).numpy(), DRAWS[name](gen).numpy()
    assert not np.array_equal(first, second)
    again = keras.random.SeedGenerator(5)
    np.testing.assert_array_equal(DRAWS[name](again).numpy(), first)
    assert not np.array_equal(DRAWS[name](None).numpy(), DRAWS[name](None).numpy())


def test_seeded_draws_in_a_function_advance_per_call():
    gen = keras.random.SeedGenerator(11)

    @tl.function
    def draw():
        return keras.random.normal((4,), seed=gen), keras.random.uniform((4,), seed=1)

    (a, fixed_a), (b, fixed_b) = draw(), draw()
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(fixed_a.numpy(), fixed_b.numpy())
    np.testing.assert_array_equal(gen.state.numpy(), [11, 2])
    eager = keras.random.SeedGenerator(11)
    np.testing.assert_array_equal(keras.random.normal((4,), seed=eager).numpy(), a.numpy())


def test_dropout_and_shuffle():
    x = np.ones((100, 50), np.float32)
    y = keras.random.dropout(x, 0.3, seed=2).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.03
    rows = keras.random.dropout(x, 0.5, noise_shape=(100, 1), seed=2).numpy()
    assert ((rows == 0).all(1) | (rows != 0).all(1)).all()
    data = np.arange(20).reshape(10, 2)
    s = keras.random.shuffle(data, seed=4).numpy()
    assert sorted(map(tuple, s)) == sorted(map(tuple, data)) and not np.array_equal(s, data)
    cols = keras.random.shuffle(data.T, axis=1, seed=4).numpy()
    np.testing.assert_array_equal(cols, s.T)


def test_dtypes_and_errors():
    assert keras.random.normal((2,), dtype="float64").dtype == tl.float64
    assert keras.random.randint((2,), 0, 3).dtype == tl.int32
    assert keras.random.binomial((2,), 5, 0.5).dtype == tl.float32
    assert keras.random.categorical(np.zeros((2, 3)), 4, dtype="int64").dtype == tl.int64
    with pytest.raises(ValueError, match="floating"):
        keras.random.uniform((2,), dtype="int32")
    with pytest.raises(ValueError, match="SeedGenerator"):
        keras.random.normal((2,), seed="x")
    with pytest.raises(ValueError, match="integer"):
        keras.random.SeedGenerator(seed=1.5)


def test_seed_generator_config_round_trips():
    gen = keras.random.SeedGenerator(9, name="gen")
    clone = keras.random.SeedGenerator.from_config(gen.get_config())
    np.testing.assert_array_equal(clone.state.numpy(), gen.state.numpy())
    assert clone.name == "gen"


def test_stateless_ops_are_pure_functions_of_the_seed():
    for fn in (lambda s: sr.stateless_uniform([3], s), lambda s: sr.stateless_normal([3], s),
               lambda s: sr.stateless_truncated_normal([3], s),
               lambda s: sr.stateless_uniform([3], s, 0, 9, dtype=tl.int64),
               lambda s: sr.stateless_random_gamma([3], s, [1.0, 2.0, 3.0]),
               lambda s: sr.stateless_random_binomial([3], s, 5, 0.5)):
        a = fn(tl.constant([1, 2], tl.int64)).numpy()
        np.testing.assert_array_equal(a, tl.function(fn)(tl.constant([1, 2], tl.int64)).numpy())
        assert not np.array_equal(a, fn(tl.constant([1, 3], tl.int64)).numpy())
    with pytest.raises(ValueError, match="shape \\[2\\]"):
        sr.stateless_normal([2], [1, 2, 3])


def test_seed_generator_in_a_layer_advances_every_training_step():
    class NoisyDense(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)
            self.gen = keras.random.SeedGenerator(17)

        def call(self, x, training=False):
            h = self.dense(x)
            return keras.random.dropout(h, 0.5, seed=self.gen) if training else h

    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, NoisyDense()(inputs))
    model.compile(optimizer="sgd", loss="mse")
    gen = model.layers[-1].gen
    x = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
    model.fit(x, np.zeros((12, 2), np.float32), batch_size=4, epochs=2, verbose=0)
    np.testing.assert_array_equal(gen.state.numpy(), [17, 6])  # one draw per step, in the graph
    before = gen.state.numpy().copy()
    model.predict(x, verbose=0)  # inference: no draws
    np.testing.assert_array_equal(gen.state.numpy(), before)
