"""Every program of programs.py: eager == converted eagerly == tl.function, one trace per signature."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.autograph import convert

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
