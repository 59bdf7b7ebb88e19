"""`Optimizer.apply(grads, variables)` beside `apply_gradients`, as Keras 3."""
import numpy as np
import pytest

import trainlib as tl


def test_apply_matches_apply_gradients():
    a, b = tl.Variable([1.0, 2.0]), tl.Variable([1.0, 2.0])
    grads = [tl.constant([0.5, -1.0])]
    first, second = tl.optim.Adam(0.1), tl.optim.Adam(0.1)
    for _ in range(3):
        first.apply(grads, [a])
        second.apply_gradients(zip(grads, [b]))
    np.testing.assert_allclose(a.numpy(), b.numpy())
    assert int(first.iterations) == 3


def test_apply_without_variables_uses_the_built_ones_and_skips_none():
    v, w = tl.Variable([1.0]), tl.Variable([5.0])
    opt = tl.optim.SGD(1.0)
    opt.build([v, w])
    opt.apply([tl.constant([1.0]), None])
    np.testing.assert_allclose(v.numpy(), [0.0])
    np.testing.assert_allclose(w.numpy(), [5.0])


def test_apply_inside_a_function_and_its_errors():
    v = tl.Variable([1.0])
    opt = tl.optim.SGD(0.5)

    @tl.function
    def step():
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(v * v)
        opt.apply(tape.gradient(loss, [v]), [v])

    step()
    np.testing.assert_allclose(v.numpy(), [0.0])
    with pytest.raises(ValueError, match="needs a built optimizer"):
        tl.optim.SGD().apply([tl.constant(1.0)])
    with pytest.raises(ValueError, match="2 gradients for 1 variables"):
        opt.apply([tl.constant([1.0]), tl.constant([1.0])], [v])
    assert opt.apply_gradients([(tl.constant([1.0]), v)]) is opt.iterations
