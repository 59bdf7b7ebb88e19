"""`keras.ops` over many shapes (hypothesis): elementwise ops with broadcasting, scalars and empty
dims, and reductions over every axis choice, against numpy."""
import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from trainlib.keras import ops

UNARY = ["abs", "negative", "square", "exp", "sin", "tanh", "arctan", "floor", "sign", "expm1"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "arctan2", "hypot", "logaddexp",
          "greater", "less_equal", "not_equal"]
REDUCE = ["sum", "mean", "max", "min", "prod", "var", "std", "cumsum", "argmax", "argmin", "all",
          "any", "count_nonzero", "median"]

_floats = st.floats(-3, 3, width=32)


@given(name=st.sampled_from(UNARY), x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3,
                                                                            min_side=0, max_side=4),
                                                 elements=_floats))
def test_unary_any_shape(name, x):
    np.testing.assert_allclose(ops.convert_to_numpy(getattr(ops, name)(x)), getattr(np, name)(x),
                               rtol=2e-6, atol=1e-6)


@given(name=st.sampled_from(BINARY),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
       seed=st.integers(0, 2 ** 16))
def test_binary_broadcasting(name, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(-2, 2, s).astype(np.float32) for s in shapes.input_shapes)
    got = ops.convert_to_numpy(getattr(ops, name)(a, b))
    want = getattr(np, name)(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@given(name=st.sampled_from(REDUCE), data=st.data())
def test_reductions_over_any_axis(name, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(hnp.arrays(np.float32, shape, elements=_floats))
    rank = len(shape)
    single = name in ("cumsum", "argmax", "argmin")
    axis = data.draw(st.one_of(st.none(), st.integers(-rank, rank - 1)) if single else
                     st.one_of(st.none(), st.integers(-rank, rank - 1),
                               st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                                        unique=True).map(tuple)))
    if name == "median" and isinstance(axis, tuple):
        axis = axis[0]
    got = ops.convert_to_numpy(getattr(ops, name)(x, axis=axis))
    want = np.asarray(getattr(np, name)(x, axis=axis))
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-4)
