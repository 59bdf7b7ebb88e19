"""LayerNorm (graph/ops/normalization.py) against numpy, its gradients by finite differences
(first and second order), eager == traced, and LayerNormalization's layer on it."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops.normalization import layer_norm
from tests.graph.ops.harness import OpCase, table_tests


def _reference(x, gamma, beta, epsilon=1e-3, norm_dims=1):
    axes = tuple(range(x.ndim - norm_dims, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return ((x - mean) / np.sqrt(var + epsilon) * gamma + beta).astype(x.dtype)


CASES = [
    OpCase("layer_norm_last", ["LayerNorm"], lambda x, g, b: layer_norm(x, g, b),
           _reference, [(3, 4, 5), (5,), (5,)], dtypes=("float16", "float32", "float64"),
           rtol=1e-5, atol=1e-5),
    OpCase("layer_norm_two_dims", ["LayerNorm"], lambda x, g, b: layer_norm(x, g, b, 0.1, 2),
           lambda x, g, b: _reference(x, g, b, 0.1, 2), [(2, 3, 4), (3, 4), (3, 4)],
           rtol=1e-5, atol=1e-5),
    OpCase("layer_norm_rank1", ["LayerNorm"], lambda x, g, b: layer_norm(x, g, b),
           _reference, [(6,), (6,), (6,)], rtol=1e-5, atol=1e-5),
]

test_against_reference, test_gradient, test_traced_equals_eager = table_tests(CASES)


def test_second_order_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    x0, gamma = rng.normal(size=(2, 5)), tl.constant(rng.normal(size=5))
    beta, w = tl.constant(rng.normal(size=5)), rng.normal(size=(2, 5))

    def first(xv):
        x = tl.constant(xv)
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(tl.sin(layer_norm(x, gamma, beta)))
        return tape.gradient(y, x)

    x = tl.constant(x0)
    with tl.GradientTape() as outer:
        outer.watch(x)
        with tl.GradientTape() as inner:
            inner.watch(x)
            y = tl.reduce_sum(tl.sin(layer_norm(x, gamma, beta)))
        z = tl.reduce_sum(inner.gradient(y, x) * w)
    got = outer.gradient(z, x).numpy()
    want = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        plus, minus = x0.copy(), x0.copy()
        plus[idx] += 1e-6
        minus[idx] -= 1e-6
        want[idx] = (np.sum(first(plus).numpy() * w) - np.sum(first(minus).numpy() * w)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, [1, 2], 1])
def test_layer_normalization_layer_equals_its_composition(axis):
    x = np.random.default_rng(4).normal(size=(2, 3, 4)).astype(np.float32)
    layer = tl.keras.layers.LayerNormalization(axis=axis, gamma_initializer="random_normal",
                                               beta_initializer="random_normal")
    got = layer(x).numpy()
    axes = tuple(np.atleast_1d(axis) % 3)
    shape = [x.shape[a] if a in axes else 1 for a in range(3)]
    gamma, beta = layer.gamma.numpy().reshape(shape), layer.beta.numpy().reshape(shape)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3) * gamma + beta,
                               rtol=1e-5, atol=1e-5)


def test_layer_norm_errors_name_the_op():
    with pytest.raises(Exception, match="LayerNorm"):
        layer_norm(tl.ones([2, 3]), tl.ones([4]), tl.zeros([4]))
    with pytest.raises((TypeError, tl.errors.InvalidArgumentError), match="LayerNorm needs floating"):
        layer_norm(tl.constant([[1, 2]]), tl.constant([1, 1]), tl.constant([0, 0]))
