"""GradientTape.batch_jacobian against per-example numpy Jacobians (finite differences),
eagerly and traced with an unknown batch; tl.UnconnectedGradients as gradient's argument."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl

from .ops.harness import numeric_gradient

W = np.random.default_rng(0).uniform(-1, 1, (3, 2))


def _fn(lib_x):
    return tl.tanh(tl.matmul(lib_x * lib_x, tl.constant(W)))


def _reference(x):
    """Per example b: d fn(x)[b, i] / d x[b, j], by central differences."""
    out = np.zeros((x.shape[0], 2, x.shape[1]))
    for b in range(x.shape[0]):
        for i in range(2):
            def f(arrays, b=b, i=i):
                return float(np.tanh((arrays[0] ** 2) @ W)[b, i])
            out[b, i] = numeric_gradient(f, [x.copy()], 0)[b]
    return out


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_batch_jacobian_equals_per_example_jacobians(batch, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, (batch, 3))
    xt = tl.constant(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = _fn(xt)
    got = tape.batch_jacobian(y, xt)
    assert tuple(got.shape) == (batch, 2, 3)
    np.testing.assert_allclose(got.numpy(), _reference(x), rtol=1e-5, atol=1e-7)


def test_batch_jacobian_traced_with_unknown_batch_and_more_dims():
    @tl.function(input_signature=[tl.TensorSpec([None, 2, 2], tl.float64)])
    def jac(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(x * x, axis=2)       # [batch, 2]
        return tape.batch_jacobian(y, x)

    x = np.arange(12, dtype=np.float64).reshape(3, 2, 2)
    got = jac(tl.constant(x)).numpy()
    want = np.zeros((3, 2, 2, 2))
    for b in range(3):
        for i in range(2):
            want[b, i, i] = 2 * x[b, i]
    assert got.shape == (3, 2, 2, 2)
    np.testing.assert_array_equal(got, want)


def test_unconnected_and_errors():
    x, z = tl.constant([[1.0, 2.0]]), tl.constant([[3.0]])
    with tl.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2
    np.testing.assert_array_equal(tape.batch_jacobian(y, z).numpy(), np.zeros((1, 2, 1)))
    zero = tape.batch_jacobian(y, z, unconnected_gradients=tl.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zero.numpy(), np.zeros((1, 2, 1)))
    assert tape.gradient(y, z, unconnected_gradients=tl.UnconnectedGradients.NONE) is None
    np.testing.assert_array_equal(
        tape.gradient(y, z, unconnected_gradients=tl.UnconnectedGradients.ZERO).numpy(), [[0.0]])
    with pytest.raises(ValueError, match="batch dimension"):
        tape.batch_jacobian(tl.reduce_sum(y), x)
    with pytest.raises(ValueError, match="UnconnectedGradients"):
        tape.gradient(y, z, unconnected_gradients="zeros")
    assert tl.UnconnectedGradients.ZERO == "zero" and tl.UnconnectedGradients("none").name == "NONE"
