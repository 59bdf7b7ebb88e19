"""tl.random: reproducibility under set_seed, fresh draws otherwise (also in graphs),
dtypes, ranges, moments of large draws, truncation, shape arguments and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl

# random ops are not differentiable: listed for registry coverage only, no gradient case
CASES = []
RANDOM_OPS = ["RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
              "Multinomial", "RandomShuffle"]


def program():
    return [tl.random.uniform([3]).numpy(), tl.random.normal([2, 2], seed=7).numpy(),
            tl.random.uniform([4], 0, 10, dtype=tl.int64).numpy(),
            tl.random.truncated_normal([3]).numpy()]


def test_set_seed_makes_a_program_reproducible():
    tl.random.set_seed(42)
    first = program()
    tl.random.set_seed(42)
    second = program()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    tl.random.set_seed(43)
    assert not np.array_equal(program()[0], first[0])


def test_draws_differ_without_reseeding():
    tl.random.set_seed(0)
    a, b = tl.random.uniform([8]).numpy(), tl.random.uniform([8]).numpy()
    assert not np.array_equal(a, b)
    c, d = tl.random.normal([8], seed=3).numpy(), tl.random.normal([8], seed=3).numpy()
    assert not np.array_equal(c, d)  # one op seed is one stream, as TensorFlow's eager ops


def test_op_seed_is_reproducible_without_global_seed():
    tl.random.set_seed(None)
    a = tl.random.uniform([5], seed=11).numpy()
    tl.random.set_seed(None)
    np.testing.assert_array_equal(a, tl.random.uniform([5], seed=11).numpy())


def test_graph_calls_draw_fresh_values_and_replay_after_set_seed():
    f = tl.function(lambda: tl.random.normal([16]))
    tl.random.set_seed(9)
    a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b)
    tl.random.set_seed(9)
    np.testing.assert_array_equal(f().numpy(), a)


@pytest.mark.parametrize("dtype", [tl.float16, tl.float32, tl.float64])
def test_uniform_float_range_and_moments(dtype):
    x = tl.random.uniform([20000], minval=-2.0, maxval=3.0, dtype=dtype)
    assert x.dtype is dtype and x.shape == (20000,)
    v = x.numpy().astype(np.float64)
    assert v.min() >= -2.0 and v.max() <= 3.0
    assert abs(v.mean() - 0.5) < 0.05 and abs(v.var() - 25 / 12) < 0.1


@given(st.integers(-50, 50), st.integers(1, 60), st.sampled_from([tl.int32, tl.int64]))
def test_uniform_int_range(low, width, dtype):
    x = tl.random.uniform([200], minval=low, maxval=low + width, dtype=dtype)
    assert x.dtype is dtype
    v = x.numpy()
    assert v.min() >= low and v.max() < low + width


def test_uniform_int_needs_maxval():
    with pytest.raises(ValueError, match="maxval"):
        tl.random.uniform([2], dtype=tl.int32)
    with pytest.raises(ValueError, match="minval < maxval"):
        tl.random.uniform([2], 5, 5, dtype=tl.int32)


def test_normal_moments_and_parameters():
    x = tl.random.normal([40000], mean=3.0, stddev=2.0, dtype=tl.float64).numpy()
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    assert tl.random.normal([2]).dtype is tl.float32


def test_truncated_normal_bounds_and_spread():
    x = tl.random.truncated_normal([40000], mean=1.0, stddev=0.5).numpy()
    assert x.min() >= 0.0 and x.max() <= 2.0
    # std of N(0,1) truncated to [-2, 2] is 0.8796
    assert abs(x.std() - 0.5 * 0.8796) < 0.01 and abs(x.mean() - 1.0) < 0.02


@pytest.mark.parametrize("shape", [[2, 3], (2, 3), tl.TensorShape([2, 3]), tl.constant([2, 3]),
                                   np.array([2, 3])])
def test_shape_argument_forms(shape):
    assert tl.random.uniform(shape).shape == (2, 3)
    assert tl.random.normal(shape).shape == (2, 3)


def test_shape_tensor_inside_graph():
    @tl.function
    def f(x):
        return tl.random.uniform(tl.shape(x))

    assert f(tl.zeros([4, 2])).shape == (4, 2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="floating-point"):
        tl.random.normal([2], dtype=tl.int32)
    with pytest.raises(ValueError, match="shape"):
        tl.random.uniform([2, -3])
    with pytest.raises(ValueError, match="1-D integer"):
        tl.random.uniform(tl.constant([2.0]))


def test_random_ops_are_stateful_and_not_differentiable():
    from trainlib.graph.op import get_opdef
    for name in RANDOM_OPS:
        opdef = get_opdef(name)
        assert opdef.stateful and not opdef.differentiable


def test_categorical_follows_the_probabilities():
    tl.random.set_seed(0)
    logits = tl.math.log(tl.constant([[0.7, 0.2, 0.1], [0.0001, 0.0001, 0.9998]]))
    s = tl.random.categorical(logits, 4000).numpy()
    assert s.shape == (2, 4000) and s.dtype == np.int64
    np.testing.assert_allclose(np.bincount(s[0], minlength=3) / 4000, [0.7, 0.2, 0.1], atol=0.03)
    assert (s[1] == 2).mean() > 0.99


def test_shuffle_permutes_the_first_axis():
    tl.random.set_seed(3)
    x = np.arange(20).reshape(10, 2)
    y = tl.random.shuffle(x).numpy()
    assert sorted(y[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(y[:, 1] - y[:, 0], 1)
    assert not np.array_equal(y, x)


def test_random_gamma_op_moments_seed_and_run_time_shapes():
    from trainlib.graph.ops.random import gamma_draws
    draws = gamma_draws([40000], tl.constant([0.3, 2.0, 5.0]), seed=4).numpy()
    assert draws.shape == (40000, 3) and (draws > 0).all()
    np.testing.assert_allclose(draws.mean(0), [0.3, 2.0, 5.0], rtol=0.05)   # mean alpha
    np.testing.assert_allclose(draws.var(0), [0.3, 2.0, 5.0], rtol=0.1)     # variance alpha
    scaled = gamma_draws([40000], 2.0, beta=4.0, seed=5).numpy()
    np.testing.assert_allclose(scaled.mean(), 0.5, rtol=0.05)
    tl.random.set_seed(3)
    first = gamma_draws([4], 1.5, seed=7).numpy()
    tl.random.set_seed(3)
    np.testing.assert_array_equal(gamma_draws([4], 1.5, seed=7).numpy(), first)
    traced = tl.function(lambda n: gamma_draws(tl.stack([n]), tl.constant([1.0, 2.0]), seed=1))
    assert traced(tl.constant(6)).shape == (6, 2) and traced(tl.constant(2)).shape == (2, 2)
