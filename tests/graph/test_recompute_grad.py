"""`tl.recompute_grad`: the backward pass recomputes a function's intermediates from its inputs
(after an `OptimizationBarrier`) instead of keeping them; same gradients, lower planned peak."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.op import apply
from trainlib.graph.passes.memory import MemoryPlan

RNG = np.random.default_rng(0)
WEIGHTS = [tl.Variable(RNG.standard_normal((64, 64)).astype(np.float32) / 8) for _ in range(8)]
X = tl.constant(RNG.standard_normal((128, 64)).astype(np.float32))


def _block(h, weights, scale=1.0):
    for w in weights:
        h = tl.tanh(tl.matmul(h, w) * scale)
    return h


def _step(remat):
    def segment(h, i):
        part = WEIGHTS[i:i + 4]
        if remat:
            return tl.recompute_grad(lambda h, scale: _block(h, part, scale))(h, scale=0.5)
        return _block(h, part, 0.5)

    def step(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            h = segment(segment(x, 0), 4)
            loss = tl.reduce_sum(h * h)
        return tape.gradient(loss, [x] + WEIGHTS)
    return step


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
def test_gradients_are_those_of_the_plain_function(graph):
    plain, remat = _step(False), _step(True)
    if graph:
        plain, remat = tl.function(plain), tl.function(remat)
    for a, b in zip(plain(X), remat(X)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_planned_peak_drops_and_the_recomputed_ops_stay_separate():
    plain, remat = tl.function(_step(False)), tl.function(_step(True))
    graphs = [f.get_concrete_function(X).optimized_graph for f in (plain, remat)]
    peaks = [MemoryPlan(g).peak_bytes for g in graphs]
    assert peaks[1] <= 0.8 * peaks[0], peaks
    # 8 forward and 16 backward matmuls; recomputing adds the 8 forward ones again, which
    # common subexpression elimination must not merge back into the forward pass
    counts = [[op.type for op in g.get_operations()].count("MatMul") for g in graphs]
    assert counts == [24, 32]
    assert [op.type for op in graphs[1].get_operations()].count("OptimizationBarrier") == 2


def test_nested_results_several_inputs_and_variables_read_inside():
    w = tl.Variable(np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3))
    a = tl.constant([[1.0, 2.0]])
    b = tl.constant([[0.5, -0.5, 2.0]])

    def f(a, b):
        h = tl.matmul(a, w)
        return {"sum": tl.sin(h) + b, "prod": tl.exp(h * b)}

    results = []
    for fn in (f, tl.recompute_grad(f)):
        with tl.GradientTape() as tape:
            tape.watch([a, b])
            out = fn(a, b)
            loss = tl.reduce_sum(out["sum"] * 2.0) + tl.reduce_sum(out["prod"])
        results.append(tape.gradient(loss, [a, b, w]))
    for x, y in zip(*results):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)


def test_the_barrier_is_an_identity_whose_gradient_passes_through():
    x, dep = tl.constant([1.0, 2.0]), tl.constant(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        (y,) = _barrier(x, dep)
        loss = tl.reduce_sum(y * y)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [2.0, 4.0])


def _barrier(*args, num_passed=1):
    out = apply("OptimizationBarrier", *args, num_passed=num_passed)
    return out if isinstance(out, tuple) else (out,)
