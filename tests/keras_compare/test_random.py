"""Keras 3 vs trainlib: `keras.random` draws have the same shapes, dtypes, seed behaviour and
distributions (values differ: another generator). Large samples, moments within 5 sigma."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

N = 20000
CALLS = {
    "normal": lambda r, seed: r.normal((N,), mean=1.0, stddev=2.0, seed=seed),
    "normal_f64": lambda r, seed: r.normal((N, 2), dtype="float64", seed=seed),
    "uniform": lambda r, seed: r.uniform((N,), minval=-1.0, maxval=3.0, seed=seed),
    "truncated_normal": lambda r, seed: r.truncated_normal((N,), stddev=0.5, seed=seed),
    "randint": lambda r, seed: r.randint((N,), 2, 7, seed=seed),
    "randint_int64": lambda r, seed: r.randint((N,), 0, 3, dtype="int64", seed=seed),
    "gamma": lambda r, seed: r.gamma((N,), 0.7, seed=seed),
    "beta": lambda r, seed: r.beta((N,), 2.0, 5.0, seed=seed),
    "binomial": lambda r, seed: r.binomial((N,), 10, 0.3, seed=seed),
    "categorical": lambda r, seed: r.categorical(np.log([[0.2, 0.8], [0.6, 0.4]]), N, seed=seed),
    "dropout": lambda r, seed: r.dropout(np.ones((N,), np.float32), 0.25, seed=seed),
    "shuffle": lambda r, seed: r.shuffle(np.arange(N, dtype=np.float32), seed=seed),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_distribution_as_keras(name):
    want = np.asarray(keras.ops.convert_to_numpy(CALLS[name](keras.random, 3)))
    got = CALLS[name](tl.keras.random, 3).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    a, b = want.astype(np.float64), got.astype(np.float64)
    sigma = a.std() / np.sqrt(a.size) + 1e-9
    assert abs(a.mean() - b.mean()) < 7 * sigma + 1e-3, (a.mean(), b.mean())
    assert abs(a.std() - b.std()) < 0.05 * a.std() + 1e-3, (a.std(), b.std())
    if name in ("shuffle",):
        np.testing.assert_array_equal(np.sort(b), np.sort(a))


@pytest.mark.parametrize("name", ["normal", "uniform", "randint", "gamma", "categorical"])
def test_seed_rules_as_keras(name):
    for r in (keras.random, tl.keras.random):
        same = [np.asarray(keras.ops.convert_to_numpy(CALLS[name](r, 5))) for _ in range(2)]
        np.testing.assert_array_equal(same[0], same[1])
        gen = r.SeedGenerator(5)
        first, second = (np.asarray(keras.ops.convert_to_numpy(CALLS[name](r, gen)))
                         for _ in range(2))
        assert not np.array_equal(first, second)
        assert np.asarray(keras.ops.convert_to_numpy(gen.state)).tolist() == [5, 2]
