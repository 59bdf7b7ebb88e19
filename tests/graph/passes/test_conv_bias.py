"""Convolution + bias fusion: a BiasAdd of a convolution's output runs inside the convolution's
kernel, with the same values and gradients to the bit; convolutions whose output is read
elsewhere are untouched."""
import numpy as np
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph.passes.conv_bias import fuse_conv_bias

from .randgraph import run_graph, trace_unoptimized


def _types(graph):
    return [op.type for op in graph.operations]


@st.composite
def problems(draw):
    rank = draw(st.sampled_from([2, 2, 3]))
    k, stride = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    dilation = draw(st.integers(1, 2)) if stride == 1 else 1
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    low = (k - 1) * dilation + 1 if padding == "VALID" else 1
    spatial = [draw(st.integers(low, low + 4)) for _ in range(rank)]
    channels = draw(st.integers(1, 3))
    depthwise = channels > 1 and draw(st.booleans())
    out = channels * draw(st.integers(1, 2)) if depthwise else draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    x = rng.standard_normal([draw(st.integers(1, 5))] + spatial + [channels]).astype(dtype)
    f = rng.standard_normal([k] * rank + [1 if depthwise else channels, out]).astype(dtype)
    b = rng.standard_normal(out).astype(dtype)
    return rank, (stride,) * rank, padding, (dilation,) * rank, x, f, b


@settings(max_examples=50, deadline=None)
@given(problems())
def test_fused_gives_the_same_values_and_gradients(problem):
    rank, strides, padding, dilations, x, f, b = problem
    conv = tl.nn.conv2d if rank == 2 else tl.nn.conv3d

    def forward(x, f, b):
        return tl.nn.bias_add(conv(x, f, strides, padding, dilations=dilations), b)

    def train(x, f, b):
        with tl.GradientTape() as tape:
            tape.watch([x, f, b])
            y = forward(x, f, b)
            loss = tl.reduce_sum(y * y)
        return [y] + tape.gradient(loss, [x, f, b])

    for fn in (forward, train):
        graph = trace_unoptimized(fn, x, f, b)
        want = run_graph(graph, x, f, b)
        fuse_conv_bias(graph)
        graph.verify()
        types = _types(graph)
        assert f"FusedConv{rank}D" in types and f"Conv{rank}D" not in types
        assert "BiasAdd" not in types
        got = run_graph(graph, x, f, b)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_a_convolution_read_elsewhere_is_untouched():
    x = np.random.default_rng(0).standard_normal((2, 5, 5, 3)).astype(np.float32)
    f = np.ones((3, 3, 3, 4), np.float32)
    b = np.ones(4, np.float32)

    def both(x, f, b):
        y = tl.nn.conv2d(x, f, 1, "SAME")
        return tl.nn.bias_add(y, b), y

    graph = trace_unoptimized(both, x, f, b)
    ops = list(graph.operations)
    fuse_conv_bias(graph)
    assert graph.operations == ops


def test_conv_layer_step_uses_the_fused_op():
    """A Conv2D layer's train step (its bias added by BiasAdd) runs FusedConv2D, with the
    gradients of the eager, unfused ops."""
    layer = tl.layers.Conv2D(4, 3, activation="relu")
    x = tl.constant(np.random.default_rng(0).standard_normal((3, 8, 8, 2)).astype(np.float32))
    layer(x)

    def gradients(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(layer(x) ** 2)
        return tape.gradient(loss, layer.trainable_variables)

    concrete = tl.function(gradients).get_concrete_function(x)
    fused = concrete(x)
    assert "FusedConv2D" in _types(concrete.optimized_graph)
    for g, w in zip(fused, gradients(x)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
