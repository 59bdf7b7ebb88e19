"""Every pass on random traced graphs: optimized == unoptimized == eager, IR valid, pass did its job.

Bit for bit for the passes that evaluate the same kernels in the same order
(folding, CSE, simplification, DCE, plain fusion); within tolerance for
jit_compile fusion, which evaluates tanh and sigmoid by other formulas.
"""
import numpy as np
import pytest
from hypothesis import given, settings

from trainlib.graph.passes import constant_fold, cse, fuse, prune, simplify
from trainlib.graph.passes.cse import _key
from trainlib.graph.passes.fuse import _candidate, _same_shape
from trainlib.graph.ops import fused
from trainlib.graph.passes.rewrite import use_counts
from trainlib.graph.passes.simplify import _neutral_operand

from .randgraph import make_function, programs, run_eagerly, run_graph, trace_unoptimized

CASES = []  # no op of its own is defined here; FusedElementwise is covered in test_fuse.py


def _setup(program):
    f = make_function(program)
    inputs = program[3]
    graph = trace_unoptimized(f, *inputs)
    graph.verify()
    want = run_graph(graph, *inputs)
    eager = run_eagerly(f, *inputs)
    for w, e in zip(want, eager):
        np.testing.assert_array_equal(w, e)
    return graph, inputs, want


def _check_exact(graph, inputs, want):
    graph.verify()
    got = run_graph(graph, *inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@given(programs())
def test_constant_folding(program):
    graph, inputs, want = _setup(program)
    before = len(graph.operations)
    constant_fold(graph)
    _check_exact(graph, inputs, want)
    assert len(graph.operations) <= before
    for op in graph.operations:
        if op.type in ("Const", "Placeholder") or op.opdef.stateful:
            continue
        assert not all(t.op.type == "Const" for t in op.inputs), f"{op.name} left unfolded"
        if op.type in ("Shape", "Size"):
            assert not op.inputs[0].shape.is_fully_defined()


@given(programs())
def test_common_subexpression_elimination(program):
    graph, inputs, want = _setup(program)
    before = len(graph.operations)
    cse(graph)
    _check_exact(graph, inputs, want)
    assert len(graph.operations) <= before
    keys = [_key(op) for op in graph.operations
            if not op.opdef.stateful and op.type != "Placeholder" and op.outputs]
    assert len(keys) == len(set(keys)), "duplicate operations left"


def _patterns(graph):
    outputs = {id(t) for t in graph.outputs}
    found = []
    for op in graph.operations:
        t = op.type
        if t in ("Mul", "AddV2", "Sub", "RealDiv") and _neutral_operand(op) is not None:
            found.append(op)
        elif t == "Neg" and op.inputs[0].op.type == "Neg":
            found.append(op)
        elif t == "Transpose" and op.inputs[0].op.type == "Transpose":
            found.append(op)
        elif t == "Reshape" and op.inputs[0].op.type == "Reshape":
            found.append(op)
        elif t == "Cast" and op.inputs[0].dtype is op.attrs["DstT"]:
            found.append(op)
        elif t == "Identity" and id(op.outputs[0]) not in outputs:
            found.append(op)
    return found


@given(programs())
def test_arithmetic_simplification(program):
    graph, inputs, want = _setup(program)
    had = len(_patterns(graph))
    before = len(graph.operations)
    simplify(graph)
    _check_exact(graph, inputs, want)
    assert not _patterns(graph)
    prune(graph)
    _check_exact(graph, inputs, want)
    assert len(graph.operations) <= before - (had > 0)


@given(programs())
def test_dead_code_elimination(program):
    graph, inputs, want = _setup(program)
    constant_fold(graph)
    cse(graph)
    simplify(graph)
    before = len(graph.operations)
    prune(graph)
    _check_exact(graph, inputs, want)
    assert len(graph.operations) <= before
    counts = use_counts(graph)
    for op in graph.operations:
        if op.type != "Placeholder" and not op.opdef.stateful:
            assert any(counts.get(id(t)) for t in op.outputs), f"{op.name} is dead"


def _fusable_pairs(graph):
    counts = use_counts(graph)
    pairs = []
    for op in graph.operations:
        if not _candidate(op):
            continue
        for t in op.inputs:
            if _candidate(t.op) and counts[id(t)] == 1 and \
                    _same_shape(t.shape, op.outputs[0].shape):
                pairs.append((t.op, op))
    return pairs


@pytest.mark.parametrize("jit", [False, True])
@settings(max_examples=15)
@given(program=programs())
def test_fusion(program, jit):
    graph, inputs, want = _setup(program)
    prune(graph)
    had = bool(_fusable_pairs(graph))
    before = len(graph.operations)
    fuse(graph, jit_compile=jit)
    graph.verify()
    assert not _fusable_pairs(graph)
    if had:
        assert len(graph.operations) < before
    block = fused.BLOCK
    fused.BLOCK = 2  # so that these small arrays run the cache-blocked loop, several slices each
    try:
        got = run_graph(graph, *inputs)
    finally:
        fused.BLOCK = block
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if jit and g.dtype.kind == "f":
            # compiled regions (blocked float32 sigmoid/tanh forms, native kernels' math and
            # sums) agree within tolerances, not bit for bit
            scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(w), w, 0)), initial=0)))
            rtol = 1e-4 if g.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 0.1 * scale, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


@settings(max_examples=10)
@given(programs())
def test_whole_pipeline_matches_eager(program):
    from trainlib.graph.passes import optimize  # noqa: PLC0415
    graph, inputs, want = _setup(program)
    report = []
    optimize(graph, report=report)
    _check_exact(graph, inputs, want)
    order = ["prune", "constant_folding", "common_subexpression_elimination",
             "arithmetic_optimization", "dead_code_elimination"]
    assert [r[0] for r in report if r[0] in order] == order
    assert all(after <= before for _, before, after in report)
