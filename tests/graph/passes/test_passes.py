"""Unit tests per pass on small hand-written functions: each rewrite fires where it should and
never where it must not (stateful and random ops, NaN/Inf and integer semantics); options."""
import io

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph import optimizer_config
from trainlib.graph.passes import constant_fold, cse, optimize, prune, simplify

from .randgraph import run_graph, trace_unoptimized

CASES = []  # the passes define no ops


def _types(graph):
    return [op.type for op in graph.operations]


def _optimized(f, *arrays, passes=(constant_fold, cse, simplify, prune)):
    graph = trace_unoptimized(f, *arrays)
    want = run_graph(graph, *arrays)
    for p in passes:
        graph = p(graph)
        graph.verify()
    for g, w in zip(run_graph(graph, *arrays), want):
        np.testing.assert_array_equal(g, w)
    return graph


X = np.array([1.5, -2.0, np.nan, np.inf], np.float32)


# ---------------------------------------------------------------- constant folding

def test_constant_subtree_becomes_one_const():
    g = _optimized(lambda x: x + tl.exp(tl.constant(2.0)) * tl.constant(3.0), X)
    assert _types(g).count("Const") == 1 and "Exp" not in _types(g) and "Mul" not in _types(g)


def test_static_shape_queries_fold_and_dynamic_ones_do_not():
    def f(x):
        return tl.cast(tl.size(x), tl.float32) + tl.cast(tl.rank(x), tl.float32) + \
            tl.cast(tl.reduce_sum(tl.shape(x)), tl.float32)
    g = _optimized(f, X)
    assert not {"Size", "Rank", "Shape"} & set(_types(g))
    fn = tl.function(f, input_signature=[tl.TensorSpec([None], tl.float32)])
    concrete = fn.get_concrete_function()
    assert "Size" in _types(concrete.optimized_graph) and "Rank" not in _types(concrete.optimized_graph)
    assert float(fn(tl.constant(X))) == 4 + 1 + 4


def test_random_ops_are_never_folded():
    g = trace_unoptimized(lambda x: x + tl.random.uniform([4]), X)
    constant_fold(g)
    cse(g)
    assert "RandomUniform" in _types(g) and "AddV2" in _types(g)


def test_huge_results_are_not_folded():
    g = trace_unoptimized(lambda x: x + tl.reduce_sum(tl.fill([1001, 1000], 1.0) * 2.0), X)
    constant_fold(g)
    assert "Mul" in _types(g)


def test_a_failing_kernel_is_left_to_fail_at_run_time():
    f = tl.function(lambda x: x + tl.floordiv(tl.constant(1), tl.constant(0)))
    with pytest.raises(tl.errors.InvalidArgumentError, match="division by zero"):
        f(tl.constant(1))


# ---------------------------------------------------------------- CSE

def test_duplicates_merge_but_different_attrs_do_not():
    def f(x):
        m = tl.reshape(x, [2, 2])
        return tl.tanh(m) + tl.tanh(m) + tl.reduce_sum(m, 0) + tl.reduce_sum(m, 1)
    g = _optimized(f, X, passes=(cse,))
    assert _types(g).count("Tanh") == 1 and _types(g).count("Sum") == 2


def test_random_draws_stay_separate():
    f = tl.function(lambda: (tl.random.uniform([1000]), tl.random.uniform([1000])))
    g = f.get_concrete_function().optimized_graph
    assert _types(g).count("RandomUniform") == 2
    a, b = f()
    assert not np.array_equal(a.numpy(), b.numpy())


def test_prints_stay_two():
    out = io.StringIO()
    f = tl.function(lambda x: (tl.print(x, output_stream=out), tl.print(x, output_stream=out), x)[2])
    assert _types(f.get_concrete_function(tl.constant(1.0)).optimized_graph).count("PrintV2") == 2
    f(tl.constant(1.0))
    assert out.getvalue().count("1") == 2


def test_variable_reads_are_not_merged():
    v = tl.Variable(1.0)

    @tl.function
    def f():
        a = v.read_value()
        v.assign_add(1.0)
        return a + v.read_value()
    assert float(f()) == 3.0
    assert _types(f.get_concrete_function().optimized_graph).count("ReadVariableOp") == 2


# ---------------------------------------------------------------- simplification

@pytest.mark.parametrize("expr", [lambda x: x * 1, lambda x: 1 * x, lambda x: x + 0, lambda x: 0 + x,
                                  lambda x: x - 0, lambda x: x / 1, lambda x: -(-x),
                                  lambda x: tl.identity(tl.identity(x))])
def test_neutral_operations_vanish(expr):
    g = _optimized(lambda x: tl.exp(expr(x)), X)
    assert _types(g) == ["Placeholder", "Exp"]


def test_transpose_and_reshape_chains():
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = _optimized(lambda x: tl.exp(tl.transpose(tl.transpose(x, [1, 0, 2]), [1, 0, 2])), m)
    assert _types(g) == ["Placeholder", "Exp"]
    g = _optimized(lambda x: tl.exp(tl.transpose(tl.transpose(x, [1, 2, 0]), [1, 0, 2])), m)
    assert _types(g).count("Transpose") == 1
    g = _optimized(lambda x: tl.exp(tl.reshape(tl.reshape(x, [6, 4]), [4, 6])), m)
    assert _types(g).count("Reshape") == 1


def test_cast_to_same_dtype_vanishes_but_round_trips_stay():
    from trainlib.graph.op import apply  # noqa: PLC0415
    g = _optimized(lambda x: tl.exp(apply("Cast", x, DstT=tl.float32)), X)
    assert "Cast" not in _types(g)
    g = _optimized(lambda x: tl.exp(tl.cast(tl.cast(x, tl.int32), tl.float32)), X[:2])
    assert _types(g).count("Cast") == 2


def test_what_must_not_be_simplified():
    ops = _types(_optimized(lambda x: (x * 0, x - x, x + tl.zeros([3, 4])), X))
    assert "Mul" in ops and "Sub" in ops and "AddV2" in ops  # NaN*0, inf-inf, broadcasting
    r = tl.function(lambda x: (x * 0, x - x))(tl.constant(X))
    assert np.isnan(r[0].numpy()[2:]).all() and np.isnan(r[1].numpy()[2:]).all()
    g = _optimized(lambda x: x * tl.ones([2, 4]), X)   # 1 would broadcast x to (2, 4)
    assert "Mul" in _types(g)


def test_selects_on_constant_conditions_take_their_branch():
    y = np.array([4.0, 5.0, 6.0, 7.0], np.float32)
    g = _optimized(lambda x, y: tl.exp(tl.where(tl.constant([True] * 4), x, y)), X, y)
    assert _types(g) == ["Placeholder", "Placeholder", "Exp"]
    g = _optimized(lambda x, y: tl.exp(tl.where(tl.constant(False), x, y)), X, y)
    assert _types(g) == ["Placeholder", "Placeholder", "Exp"]
    # a mixed condition, or a branch the select would broadcast, stays a select
    g = _optimized(lambda x, y: tl.where(tl.constant([True, False, True, True]), x, y), X, y)
    assert "SelectV2" in _types(g)
    g = _optimized(lambda x, y: tl.where(tl.constant(True), x[0], y), X, y)
    assert "SelectV2" in _types(g)


def test_graph_output_identity_of_an_input_stays():
    f = tl.function(lambda x: x * 1)
    assert np.array_equal(f(tl.constant(X)).numpy(), X, equal_nan=True)
    assert _types(f.get_concrete_function(tl.constant(X)).optimized_graph) == ["Placeholder", "Identity"]


def test_branch_and_loop_graphs_are_optimized():
    @tl.function
    def f(x):
        y = tl.cond(x[0] > 0, lambda: x * 1 + tl.exp(tl.constant(0.0)), lambda: -(-x))
        return tl.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 1 + 1.0), (0, y))[1]
    graph = f.get_concrete_function(tl.constant(X)).optimized_graph
    subs = [op.attrs[k] for op in graph.operations if op.type in ("If", "While")
            for k in ("then_branch", "else_branch", "cond", "body") if k in op.attrs]
    assert len(subs) == 4
    for sub in subs:
        sub.verify()
        assert not {"Neg", "Exp"} & set(_types(sub))
        assert _types(sub).count("Mul") == 0
    np.testing.assert_array_equal(f(tl.constant(X)).numpy(), X + 1 + 3)


# ---------------------------------------------------------------- options and report

def test_options_turn_passes_off_and_the_report_counts_ops():
    def f(x):
        return x * 1 + tl.exp(tl.constant(1.0))
    try:
        tl_options = {"constant_folding": False, "arithmetic_optimization": False}
        optimizer_config.set_experimental_options(tl_options)
        assert optimizer_config.get_experimental_options() == tl_options
        concrete = tl.function(f).get_concrete_function(tl.constant(X))
        assert "Exp" in _types(concrete.optimized_graph) and "Mul" in _types(concrete.optimized_graph)
        names = [r[0] for r in concrete.pass_report]
        assert "constant_folding" not in names and "prune" in names
    finally:
        optimizer_config.reset_experimental_options()
    concrete = tl.function(f).get_concrete_function(tl.constant(X))
    assert "Exp" not in _types(concrete.optimized_graph) and "Mul" not in _types(concrete.optimized_graph)
    report = dict((r[0], r[1:]) for r in concrete.pass_report)
    assert report["dead_code_elimination"][1] < report["dead_code_elimination"][0]
    assert concrete.pass_report[-1][2] < concrete.pass_report[0][1]


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="unknown optimizer option"):
        optimizer_config.set_experimental_options({"constant_fold": False})
    with pytest.raises(TypeError, match="bool"):
        optimizer_config.set_experimental_options({"fusion": 1})


def test_optimize_options_argument_overrides():
    big = tl.zeros([70_000])   # fused on numpy with or without the jit extra (worth_fusing)
    graph = trace_unoptimized(lambda x: tl.exp(x * 1), big)
    report = []
    optimize(graph, options={"arithmetic_optimization": False, "jit_compile": True}, report=report)
    names = [r[0] for r in report]
    assert "arithmetic_optimization" not in names
    assert [n for n in names if n in ("prune", "constant_folding", "common_subexpression_elimination",
                                      "dead_code_elimination", "fusion")] == \
        ["prune", "constant_folding", "common_subexpression_elimination", "dead_code_elimination",
         "fusion"]
    assert _types(graph) == ["Placeholder", "Const", "FusedElementwise"]


def test_ones_and_zeros_like_of_static_shapes_fold():
    @tl.function
    def f(x):
        return tl.ones_like(x) * 2.0 + tl.zeros_like(x) + x

    cf = f.get_concrete_function(tl.constant([1.0, 2.0]))
    types = [op.type for op in cf.optimized_graph.get_operations()]
    assert "OnesLike" not in types and "ZerosLike" not in types
    assert f(tl.constant([1.0, 2.0])).numpy().tolist() == [3.0, 4.0]
    dynamic = f.get_concrete_function(tl.TensorSpec([None]))
    assert "OnesLike" in [op.type for op in dynamic.optimized_graph.get_operations()]
    assert dynamic(tl.constant([5.0])).numpy().tolist() == [7.0]


def test_small_static_clusters_stay_unfused_on_numpy():
    from trainlib.graph.passes.fuse import worth_fusing
    small = trace_unoptimized(lambda x: tl.exp(x * 2.0), tl.zeros([16]))
    optimize(small, options={"jit_compile": True})
    assert "FusedElementwise" not in _types(small) and worth_fusing() > 16
    unknown = tl.function(lambda x: tl.exp(x * 2.0), jit_compile=True).get_concrete_function(
        tl.TensorSpec([None], tl.float32))
    assert "FusedElementwise" in [op.type for op in unknown.optimized_graph.operations]
