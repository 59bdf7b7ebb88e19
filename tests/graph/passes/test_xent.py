"""Softmax sharing: a sparse cross-entropy and its gradient on the same logits run as one op,
with the same losses and gradients to the bit; other graphs are untouched."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph import optimizer_config
from trainlib.graph.ops import nn as nn_ops
from trainlib.graph.passes import optimize
from trainlib.graph.passes.xent import FUSED, share_softmax

from .randgraph import run_graph, trace_unoptimized


def _types(graph):
    return [op.type for op in graph.operations]


def _loss_and_grad(labels, logits, weights):
    with tl.GradientTape() as tape:
        tape.watch(logits)
        losses = tl.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        loss = tl.reduce_sum(losses * weights)
    return losses, tape.gradient(loss, logits)


@st.composite
def problems(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=2))
    classes = draw(st.integers(1, 6))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal(shape + [classes]) * draw(st.sampled_from([1, 30]))).astype(dtype)
    if logits.size and draw(st.booleans()):   # inf and NaN flow through as in the two kernels
        logits.flat[int(rng.integers(logits.size))] = draw(st.sampled_from([np.inf, -np.inf, np.nan]))
    labels = rng.integers(0, classes, shape).astype(draw(st.sampled_from([np.int32, np.int64])))
    weights = rng.standard_normal(shape).astype(dtype)
    return labels, logits, weights


@settings(max_examples=40, deadline=None)
@given(problems())
def test_one_softmax_gives_the_same_losses_and_gradients(problem):
    graph = trace_unoptimized(_loss_and_grad, *problem)
    with np.errstate(all="ignore"):
        want = run_graph(graph, *problem)
        share_softmax(graph)
        graph.verify()
        got = run_graph(graph, *problem)
    assert _types(graph).count(FUSED) == 1
    assert not {"SparseSoftmaxCrossEntropyWithLogits",
                "SparseSoftmaxCrossEntropyWithLogitsGrad"} & set(_types(graph))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_the_fused_kernel_checks_labels_as_the_forward_kernel():
    logits = np.zeros((3, 4), np.float32)
    for bad in (-1, 4, 2 ** 31 - 1):
        labels = np.array([0, bad, 1], np.int32)
        with pytest.raises(tl.errors.InvalidArgumentError, match=f"label value of {bad} "):
            nn_ops._sparse_ce_and_grad(np, labels, logits)
    int64 = np.array([0, -(2 ** 40)], np.int64)
    with pytest.raises(tl.errors.InvalidArgumentError, match="outside the valid range"):
        nn_ops._sparse_ce_and_grad(np, int64, logits[:2])


def _unchanged(f, *arrays):
    graph = trace_unoptimized(f, *arrays)
    ops = list(graph.operations)
    share_softmax(graph)
    assert graph.operations == ops


def test_graphs_without_pairs_are_untouched():
    labels = np.array([1, 0], np.int32)
    logits = np.ones((2, 3), np.float32)
    _unchanged(lambda y, x: tl.nn.sparse_softmax_cross_entropy_with_logits(y, x), labels, logits)

    def other_logits(y, x):   # a pair on x * 2, a lone forward op on x
        with tl.GradientTape() as tape:
            tape.watch(x)
            loss = tl.reduce_sum(tl.nn.sparse_softmax_cross_entropy_with_logits(y, x * 2))
        return tl.nn.sparse_softmax_cross_entropy_with_logits(y, x), tape.gradient(loss, x)
    graph = trace_unoptimized(other_logits, labels, logits)
    want = run_graph(graph, labels, logits)
    share_softmax(graph)
    assert _types(graph).count(FUSED) == 1
    assert _types(graph).count("SparseSoftmaxCrossEntropyWithLogits") == 1
    for g, w in zip(run_graph(graph, labels, logits), want):
        np.testing.assert_array_equal(g, w)


def test_a_keras_loss_train_step_runs_one_softmax_and_the_option_turns_it_off():
    model = tl.Sequential([tl.layers.Input((5,)), tl.layers.Dense(4)])
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = tl.constant(np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32))
    y = tl.constant(np.array([0, 3, 1, 2, 2, 0], np.int32))

    def step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        return loss, tape.gradient(loss, model.trainable_variables)
    shared = tl.function(step)
    types = _types(shared.get_concrete_function(x, y).optimized_graph)
    assert types.count(FUSED) == 1 and "SparseSoftmaxCrossEntropyWithLogits" not in types
    try:
        optimizer_config.set_experimental_options({"softmax_sharing": False})
        unshared = tl.function(step)
        assert FUSED not in _types(unshared.get_concrete_function(x, y).optimized_graph)
    finally:
        optimizer_config.reset_experimental_options()
    got, want = shared(x, y), unshared(x, y)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    for a, b in zip(got[1], want[1]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_pass_reports_in_the_pipeline():
    labels, logits = np.array([1, 0], np.int32), np.ones((2, 3), np.float32)
    graph = trace_unoptimized(_loss_and_grad, labels, logits, np.ones(2, np.float32))
    report = []
    optimize(graph, report=report)
    assert "softmax_sharing" in [r[0] for r in report]
    assert FUSED in _types(graph)
