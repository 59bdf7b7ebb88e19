"""Max pooling before a ReLU: a ReLU followed by max pooling (and their gradients) runs as max
pooling followed by a ReLU, with the same values and gradients (ties, NaN and inf included);
graphs where the ReLU's output has other readers are untouched."""
import numpy as np
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph.passes.pool_relu import pool_before_relu

from .randgraph import run_graph, trace_unoptimized


def _types(graph):
    return [op.type for op in graph.operations]


def _pool(rank, k, s, padding):
    if rank == 2:
        return lambda r: tl.nn.max_pool2d(r, k, s, padding)
    return lambda r: tl.nn.max_pool3d(r, k, s, padding)


@st.composite
def problems(draw):
    rank = draw(st.sampled_from([2, 2, 3]))
    k, s = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    spatial = [draw(st.integers(k if padding == "VALID" else 1, 6)) for _ in range(rank)]
    shape = [draw(st.integers(1, 2))] + spatial + [draw(st.integers(1, 3))]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    if draw(st.booleans()):   # ties, and windows whose maximum is 0 or negative
        z = rng.integers(-2, 2, shape).astype(dtype)
    else:
        z = rng.standard_normal(shape).astype(dtype)
    if draw(st.booleans()):
        z.flat[int(rng.integers(z.size))] = draw(st.sampled_from([np.inf, -np.inf, np.nan]))
    return rank, k, s, padding, z


@settings(max_examples=60, deadline=None)
@given(problems())
def test_pooling_first_gives_the_same_values_and_gradients(problem):
    rank, k, s, padding, z = problem
    pool = _pool(rank, k, s, padding)
    w = np.random.default_rng(1).standard_normal(pool(tl.nn.relu(z)).shape).astype(z.dtype)

    def f(z, w):
        with tl.GradientTape() as tape:
            tape.watch(z)
            y = pool(tl.nn.relu(z))
            loss = tl.reduce_sum(y * w)
        return y, tape.gradient(loss, z)

    graph = trace_unoptimized(f, z, w)
    with np.errstate(all="ignore"):
        want = run_graph(graph, z, w)
        pool_before_relu(graph)
        graph.verify()
        got = run_graph(graph, z, w)
    types = _types(graph)
    assert types.index("Relu") > min(i for i, t in enumerate(types) if t.startswith("MaxPool"))
    for g, w_ in zip(got, want):
        assert g.dtype == w_.dtype and g.shape == w_.shape
        np.testing.assert_array_equal(g, w_)


def test_forward_only_graph_pools_first():
    z = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)
    graph = trace_unoptimized(lambda z: tl.nn.max_pool2d(tl.nn.relu(z), 2, 2, "VALID"), z)
    want = run_graph(graph, z)
    pool_before_relu(graph)
    graph.verify()
    assert _types(graph).index("MaxPool") < _types(graph).index("Relu")
    np.testing.assert_array_equal(run_graph(graph, z), want)


def test_relu_read_elsewhere_is_untouched():
    z = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)

    def f(z):
        r = tl.nn.relu(z)
        return tl.nn.max_pool2d(r, 2, 2, "VALID"), r * 2.0

    for fn in (f, lambda z: tl.nn.relu(z)):
        graph = trace_unoptimized(fn, z)
        ops = list(graph.operations)
        pool_before_relu(graph)
        assert graph.operations == ops


def test_cnn_step_pools_before_its_relus():
    """The pipeline rewrites a Conv2D(relu) + MaxPooling2D model's train step."""
    model = tl.Sequential([tl.layers.Input((8, 8, 1)), tl.layers.Conv2D(4, 3, activation="relu"),
                           tl.layers.MaxPooling2D(2), tl.layers.Flatten(), tl.layers.Dense(2)])
    x = np.random.default_rng(0).standard_normal((3, 8, 8, 1)).astype(np.float32)

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(model(x) ** 2)
        return tape.gradient(loss, model.trainable_variables)

    concrete = step.get_concrete_function(tl.constant(x))
    concrete(tl.constant(x))
    graph = concrete.optimized_graph
    types = _types(graph)
    assert types.index("MaxPool") < types.index("Relu")
    assert types.count("ReluGrad") == 1
