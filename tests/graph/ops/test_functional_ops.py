"""map_fn / vectorized_map / scan / foldl / foldr: values against numpy loops, eagerly and
in a tl.function (a While loop, also with an unknown length), and gradients against finite
differences."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl

from .harness import OpCase, check_gradient, make_inputs

CASES = [
    OpCase("map_fn", ["While"], lambda x: tl.map_fn(lambda r: tl.sin(r) * r[0], x),
           lambda x: np.stack([np.sin(r) * r[0] for r in x]), [(3, 2)]),
    OpCase("map_fn_signature", ["While"],
           lambda x: tl.map_fn(lambda r: tl.reduce_sum(r * r), x, fn_output_signature=x.dtype),
           lambda x: (x * x).sum(1), [(4, 3)]),
    OpCase("vectorized_map", ["While"], lambda x: tl.vectorized_map(lambda r: tl.exp(r) / 2, x),
           lambda x: np.exp(x) / 2, [(2, 3)]),
    OpCase("scan", ["While"], lambda x: tl.scan(lambda a, r: a * r + 1, x),
           lambda x: np.stack(list(_scan(lambda a, r: a * r + 1, x))), [(4, 2)]),
    OpCase("scan_reverse_init", ["While"],
           lambda x: tl.scan(lambda a, r: a + tl.reduce_sum(r), x, initializer=tl.zeros((),
                             x.dtype), reverse=True),
           lambda x: np.cumsum(x.sum(1)[::-1])[::-1].astype(x.dtype), [(3, 2)]),
    OpCase("foldl", ["While"], lambda x: tl.foldl(lambda a, r: a * r, x),
           lambda x: np.prod(x, axis=0), [(3, 2)]),
    OpCase("foldr", ["While"],
           lambda x: tl.foldr(lambda a, r: a * 2 + r, x, initializer=tl.zeros((2,), x.dtype)),
           lambda x: _foldr(x), [(3, 2)]),
]


def _scan(fn, x):
    a = x[0]
    yield a
    for r in x[1:]:
        a = fn(a, r)
        yield a


def _foldr(x):
    a = np.zeros(x.shape[1:], x.dtype)
    for r in x[::-1]:
        a = a * 2 + r
    return a


@pytest.mark.parametrize("case", CASES, ids=str)
def test_eager_and_traced_equal_numpy(case):
    (x,) = make_inputs(case, "float32", np.random.default_rng(1))
    want = case.ref(x)
    eager = case.fn(tl.constant(x))
    traced = tl.function(case.fn)(tl.constant(x))
    unknown = tl.function(case.fn, input_signature=[tl.TensorSpec([None, None], tl.float32)])(
        tl.constant(x))
    for got in (eager, traced, unknown):
        assert got.dtype is tl.float32 and tuple(got.shape) == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(2)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_gradient_equals_eager(case):
    (x,) = make_inputs(case, "float64", np.random.default_rng(3))

    def run(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(case.fn(x) ** 2)
        return tape.gradient(y, x)

    np.testing.assert_allclose(tl.function(run)(tl.constant(x)).numpy(),
                               run(tl.constant(x)).numpy(), rtol=1e-10)


def test_structures_and_dtypes():
    ints, floats = tl.constant([1, 2, 3]), tl.constant([0.5, 1.5, 2.5])
    a, b = tl.map_fn(lambda t: (t[0] * 2, t[1] + 1), (ints, floats))
    np.testing.assert_array_equal(a.numpy(), [2, 4, 6])
    np.testing.assert_array_equal(b.numpy(), [1.5, 2.5, 3.5])
    out = tl.map_fn(lambda d: {"s": tl.cast(d["i"], tl.float32) + d["f"]}, {"i": ints, "f": floats},
                    fn_output_signature={"s": tl.TensorSpec([], tl.float32)})
    np.testing.assert_array_equal(out["s"].numpy(), [1.5, 3.5, 5.5])
    sizes = tl.vectorized_map(lambda r: tl.cast(tl.reduce_sum(r), tl.int64), tl.ones((2, 3)))
    assert sizes.dtype is tl.int64 and list(sizes.numpy()) == [3, 3]


def test_errors():
    with pytest.raises(ValueError, match="different first dimensions"):
        tl.map_fn(lambda t: t, (tl.ones((2,)), tl.ones((3,))))
    with pytest.raises(ValueError, match="scalar"):
        tl.map_fn(lambda t: t, tl.constant(1.0))
    with pytest.raises(TypeError, match="int32 where the output signature declares float32"):
        tl.map_fn(lambda t: tl.cast(t, tl.int32), tl.ones((2,)))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_scan_is_cumsum_any_length(n, seed):
    x = np.random.default_rng(seed).integers(-5, 5, size=(n, 2)).astype(np.int32)
    np.testing.assert_array_equal(tl.scan(lambda a, r: a + r, tl.constant(x)).numpy(),
                                  np.cumsum(x, axis=0))
    np.testing.assert_array_equal(tl.foldr(lambda a, r: a + r, tl.constant(x)).numpy(),
                                  x.sum(0))
