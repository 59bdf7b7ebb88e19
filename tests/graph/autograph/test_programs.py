"""Every program of programs.py: eager == converted eagerly == tl.function, one trace per signature."""
import collections

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.autograph import convert
from trainlib.graph.ops import control_flow
from tests.graph.ops.harness import numeric_gradient

from . import programs
from .programs import PROGRAMS


def _value(x):
    if x is None:
        return None
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _signature(args):
    return tuple((tuple(a.shape), a.dtype.name) if tl.is_tensor(a) else ("py", a) for a in args)


@pytest.mark.parametrize("fn,cases", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_program_eager_converted_and_graph_agree(fn, cases):
    converted = convert(fn)
    graph = tl.function(fn)
    for args in cases:
        expected = _value(fn(*args))
        got_converted = _value(converted(*args))
        got_graph = _value(graph(*args))
        np.testing.assert_allclose(got_converted, expected, err_msg=f"converted, args={args}")
        np.testing.assert_allclose(got_graph, expected, err_msg=f"tl.function, args={args}")
    assert graph.experimental_get_tracing_count() == len({_signature(a) for a in cases})


# loops whose Python number gets its dtype from something static analysis cannot type
# (a call; the target of an inner loop): one probe trace of the body finds it
_PROBED = {"nested_ranges": 1, "weak_python_number_through_a_call": 1}


@pytest.mark.parametrize("fn,cases", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_each_branch_and_loop_body_is_traced_once(fn, cases, monkeypatch):
    """Static analysis decides what each if/while/for carries: no retries. Every traced
    branch pair and loop body became an op (a probe, where listed, is a separate graph)."""
    counts = collections.Counter()
    new_graph, apply = control_flow._new_graph, control_flow.apply

    def counting_new_graph(name):
        counts[name] += 1
        return new_graph(name)

    def counting_apply(op_type, *args, **attrs):
        counts[op_type] += 1
        return apply(op_type, *args, **attrs)

    monkeypatch.setattr(control_flow, "_new_graph", counting_new_graph)
    monkeypatch.setattr(control_flow, "apply", counting_apply)
    for args in cases:
        counts.clear()
        tl.function(fn).get_concrete_function(*args)
        assert counts["then"] == counts["else"] == counts["If"], args
        assert counts["while_body"] == counts["while_cond"] == counts["While"], args
        assert counts["while_probe"] == _PROBED.get(fn.__name__, 0), args


TRACED = collections.Counter()


def _traced(where):
    TRACED[where] += 1


def _return_from_loop_with_one_sided_branch(xs):
    s = 0.0
    for x in xs:
        _traced("loop body")
        if x > 2.0:
            _traced("if branch")
            big = x * 10.0  # bound in this branch only
            return big + s
        else:
            _traced("else branch")
        s += x
    return s


def test_a_loop_returning_from_a_one_sided_branch_traces_body_and_branches_once():
    TRACED.clear()
    f = tl.function(_return_from_loop_with_one_sided_branch)
    assert float(f(tl.constant([1.0, 3.0, 4.0]))) == 31.0
    assert float(f(tl.constant([1.0, 0.5, 0.25]))) == 1.75  # the same signature: no new trace
    assert TRACED == {"loop body": 1, "if branch": 1, "else branch": 1}


def test_there_are_at_least_40_programs():
    assert len(PROGRAMS) >= 40


def test_no_return_value_program_returns_none_in_both_modes():
    assert programs.no_return_value(tl.constant(1)) is None
    assert tl.function(programs.no_return_value)(tl.constant(1)) is None


def test_tensor_if_builds_one_graph_with_an_if_op():
    f = tl.function(programs.relu)
    ops = [op.type for op in f.get_concrete_function(tl.constant(1)).graph.get_operations()]
    assert "If" in ops


def test_tensor_loops_build_while_ops():
    for fn, arg in [(programs.count_down, tl.constant(3)), (programs.sum_range, tl.constant(3)),
                    (programs.sum_elements, tl.constant([1.0, 2.0]))]:
        ops = [op.type for op in tl.function(fn).get_concrete_function(arg).graph.get_operations()]
        assert "While" in ops, fn.__name__


def test_python_loops_unroll_without_graph_loops():
    f = tl.function(programs.python_range_tensor_body)
    ops = [op.type for op in f.get_concrete_function(tl.constant(1)).graph.get_operations()]
    assert "While" not in ops and "If" not in ops


def test_flags_stay_python_when_every_path_returns():
    # `if b: return ...` then `return ...`: the rest becomes the else branch, so both
    # branches return and one If suffices (the return flag never needs a graph op)
    f = tl.function(programs.if_on_bool_param)
    ops = [op.type for op in f.get_concrete_function(tl.constant(1), tl.constant(True)).graph.get_operations()]
    assert ops.count("If") == 1


def test_assert_on_tensor_fails_in_graph():
    f = tl.function(programs.assert_tensor)
    with pytest.raises(tl.errors.InvalidArgumentError, match="x must be positive"):
        f(tl.constant(-1))
    with pytest.raises(AssertionError, match="x must be positive"):
        programs.assert_tensor(tl.constant(-1))


def test_maximum_iterations_bounds_the_graph_loop():
    f = tl.function(programs.while_max_iterations)
    assert int(f(tl.constant(50))) == 5 and int(f(tl.constant(3))) == 3
    assert programs.while_max_iterations(tl.constant(50)) == 50  # Python loops ignore loop options


def _grow_until_big(x, n):
    for _ in tl.range(n):
        x = x * 1.1 + tl.sin(x)
        if tl.reduce_sum(x) > 5.0:
            return x * 2.0  # carried out of the loop only (a write-only loop variable)
    return x


@pytest.mark.parametrize("n", [3, 30])
def test_gradient_through_a_loop_that_returns_from_inside(n):
    @tl.function
    def grad(x, n):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(_grow_until_big(x, n))
        return tape.gradient(y, x)

    x0 = np.array([0.3, 0.7])
    want = numeric_gradient(lambda a: float(tl.reduce_sum(_grow_until_big(tl.constant(a[0]), n))),
                            [x0.copy()], 0)
    np.testing.assert_allclose(grad(tl.constant(x0), tl.constant(n)).numpy(), want, rtol=1e-6)
