"""Conv patch sharing: a convolution and its filter gradient on one input build the im2col
patches once, with the same outputs and gradients to the bit; other graphs are untouched."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph import optimizer_config
from trainlib.graph.passes import optimize
from trainlib.graph.passes.conv_patches import share_patches

from .randgraph import run_graph, trace_unoptimized

CASES = []  # ConvPatches and its consumers: differential tests here, no gradients (after autodiff)

CONV = {1: tl.nn.conv1d, 2: tl.nn.conv2d, 3: tl.nn.conv3d}


def _types(graph):
    return [op.type for op in graph.operations]


@st.composite
def geometries(draw):
    rank = draw(st.sampled_from([1, 2, 2, 3]))
    size = 4 if rank == 3 else 7
    spatial = [draw(st.integers(1, size)) for _ in range(rank)]
    window = [draw(st.integers(1, 3)) for _ in range(rank)]
    dilated = draw(st.booleans())
    strides = [1] * rank if dilated else [draw(st.integers(1, 3)) for _ in range(rank)]
    dilations = [draw(st.integers(1, 2)) for _ in range(rank)] if dilated else [1] * rank
    padding = draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    if padding == "EXPLICIT":
        padding = [[0, 0]] + [[draw(st.integers(0, 2)), draw(st.integers(0, 2))]
                              for _ in range(rank)] + [[0, 0]]
        spatial = [max(n, (k - 1) * d + 1 - sum(p))   # the window must fit the padded input
                   for n, k, d, p in zip(spatial, window, dilations, padding[1:-1])]
    elif padding == "VALID":   # the window must fit
        spatial = [max(n, (k - 1) * d + 1) for n, k, d in zip(spatial, window, dilations)]
    groups = draw(st.sampled_from([1, 1, 2]))
    cg = draw(st.integers(1, 3)) if groups == 1 else 2   # grouped, never depthwise
    co = groups * draw(st.integers(1, 3))
    batch = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 16))
    return rank, [batch] + spatial + [groups * cg], window + [cg, co], strides, padding, \
        dilations, seed


def _step(rank, strides, padding, dilations):
    conv = CONV[rank]

    def f(x, w, c):
        with tl.GradientTape() as tape:
            tape.watch([x, w])
            y = conv(x, w, strides if rank > 1 else strides[0], padding,
                     dilations=dilations if rank > 1 else dilations[0])
            loss = tl.reduce_sum(y * c)
        dx, dw = tape.gradient(loss, [x, w])
        return y, dx, dw
    return f


@pytest.fixture(autouse=True)
def sharing_on():
    """The pass is opt-in (OFF_BY_DEFAULT): these tests turn it on."""
    optimizer_config.set_experimental_options({"conv_patch_sharing": True})
    yield
    optimizer_config.reset_experimental_options()


def test_sharing_is_off_by_default():
    optimizer_config.reset_experimental_options()
    assert not optimizer_config.enabled("conv_patch_sharing")


@settings(max_examples=40, deadline=None)
@given(geometries())
def test_shared_patches_give_the_same_outputs_and_gradients(geometry):
    rank, x_shape, f_shape, strides, padding, dilations, seed = geometry
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(f_shape).astype(np.float32)
    f = _step(rank, strides, padding, dilations)
    y_shape = tl.function(f)(x, w, np.zeros(1, np.float32))[0].shape
    c = rng.standard_normal(y_shape).astype(np.float32)
    graph = trace_unoptimized(f, x, w, c)
    want = run_graph(graph, x, w, c)
    types = _types(graph)
    share_patches(graph)
    graph.verify()
    got = run_graph(graph, x, w, c)
    for g, e in zip(got, want):
        np.testing.assert_array_equal(g, e)
    if 0 in y_shape[1:-1]:
        assert _types(graph) == types
    else:
        assert _types(graph).count("ConvPatches") == 1
        assert "ConvFromPatches" in _types(graph) and "ConvFilterFromPatches" in _types(graph)
        assert not {"Conv2D", "Conv3D", "Conv2DBackpropFilter", "Conv3DBackpropFilterV2"} & \
            set(_types(graph))


def _unchanged(f, *arrays):
    graph = trace_unoptimized(f, *arrays)
    ops = list(graph.operations)
    inputs = [list(op.inputs) for op in ops]
    share_patches(graph)
    assert graph.operations == ops and [list(op.inputs) for op in ops] == inputs


def test_graphs_without_pairs_are_untouched():
    x = np.ones((2, 6, 6, 4), np.float32)
    w = np.ones((3, 3, 4, 5), np.float32)
    # forward only; two inputs; a different window on one input
    _unchanged(lambda x, w: tl.nn.conv2d(x, w, 1, "SAME"), x, w)
    _unchanged(lambda x, w: tl.nn.conv2d(x, w, 1, "SAME") + tl.nn.conv2d(x * 2, w, 1, "SAME"), x, w)

    def different_geometry(x, w):
        with tl.GradientTape() as tape:
            tape.watch(w)
            y = tl.nn.conv2d(x, w, 1, "SAME")
        return tape.gradient(tl.reduce_sum(tl.nn.conv2d(x, w, 2, "SAME")) + tl.reduce_sum(y), w)
    graph = trace_unoptimized(different_geometry, x, w)
    share_patches(graph)
    assert "ConvPatches" not in _types(graph)

    def depthwise(x, w):
        with tl.GradientTape() as tape:
            tape.watch(w)
            loss = tl.reduce_sum(tl.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"))
        return tape.gradient(loss, w)
    _unchanged(depthwise, x, np.ones((3, 3, 4, 2), np.float32))


def test_two_convolutions_of_one_input_share_and_the_option_turns_it_off():
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype(np.float32)
    w1 = np.ones((3, 3, 3, 4), np.float32)
    w2 = np.full((3, 3, 3, 2), 0.5, np.float32)

    def f(x, a, b):
        return tl.nn.conv2d(x, a, 1, "VALID"), tl.nn.conv2d(x, b, 1, "VALID")
    graph = trace_unoptimized(f, x, w1, w2)
    want = run_graph(graph, x, w1, w2)
    optimize(graph)
    assert _types(graph).count("ConvPatches") == 1 and _types(graph).count("ConvFromPatches") == 2
    for g, e in zip(run_graph(graph, x, w1, w2), want):
        np.testing.assert_array_equal(g, e)
    graph = trace_unoptimized(f, x, w1, w2)
    optimize(graph, options={"conv_patch_sharing": False})
    assert "ConvPatches" not in _types(graph)


def test_a_conv_layer_train_step_shares_its_patches():
    layer = tl.layers.Conv2D(4, 3, padding="same")
    x = tl.constant(np.random.default_rng(1).standard_normal((2, 5, 5, 3)).astype(np.float32))
    layer(x)

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(layer(x) ** 2)
        return tape.gradient(loss, layer.trainable_weights)
    types = _types(step.get_concrete_function(x).optimized_graph)
    assert types.count("ConvPatches") == 1 and "ConvFilterFromPatches" in types
    try:
        optimizer_config.set_experimental_options({"conv_patch_sharing": False})
        unshared = tl.function(step.python_function)(x)
    finally:
        optimizer_config.set_experimental_options({"conv_patch_sharing": True})
    for a, b in zip(step(x), unshared):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
