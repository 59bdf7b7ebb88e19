"""AutoGraph's errors: each names the variable, the user's file:line and says how to fix it."""
import traceback
import warnings

import pytest

import trainlib as tl
from trainlib.graph.autograph import ConversionError, convert, to_code
from trainlib.graph.autograph.pyct import SourceUnavailableError, parse_entity

from . import error_programs as P


def where(mark):
    return f"{P.FILE}:{P.LINES[mark]}"


def test_variable_bound_in_one_branch_names_variable_branch_and_lines():
    f = tl.function(P.one_branch_only)
    with pytest.raises(UnboundLocalError) as e:
        f(tl.constant(1))
    message = str(e.value)
    assert "'y'" in message and where("one_branch_use") in message
    assert "only in the if branch" in message and f"{P.FILE}:{P.LINES['one_branch_assign'] - 1}" in message
    assert "both branches" in message


def test_loop_variable_dtype_change_names_variable_and_loop_line():
    with pytest.raises(TypeError) as e:
        tl.function(P.loop_dtype_change)(tl.constant(3))
    message = str(e.value)
    assert "'i'" in message and "int32" in message and "float32" in message
    assert where("dtype_loop") in message


def test_loop_variable_shape_change_names_variable_and_suggests_invariants():
    with pytest.raises(ValueError) as e:
        tl.function(P.loop_shape_change)(tl.constant(3))
    # a ValueError, as TensorFlow's, that names the variable: the dataset loop relaxes shapes
    # on it, never on the message's text
    assert type(e.value) is ValueError and e.value.loop_variable_changed_shape == "'x'"
    message = str(e.value)
    assert "'x'" in message and "shape_invariants" in message and where("shape_loop") in message


@pytest.mark.parametrize("fn,mark", [(P.list_in_tensor_loop, "list_loop"), (P.list_in_tensor_if, "list_if")])
def test_python_list_changed_in_tensor_control_flow(fn, mark):
    with pytest.raises(ValueError) as e:
        tl.function(fn)(tl.constant(3))
    message = str(e.value)
    assert "'values'" in message and where(mark) in message and "tl.concat" in message


def test_python_list_append_in_python_loop_still_works():
    def collect(x):
        out = []
        for i in range(3):
            out.append(x * i)
        return tl.stack(out)
    assert tl.function(collect)(tl.constant(2)).numpy().tolist() == [0, 2, 4]


def test_none_in_one_branch_names_variable():
    with pytest.raises(ValueError) as e:
        tl.function(P.none_in_one_branch)(tl.constant(1))
    message = str(e.value)
    assert "'y'" in message and "None" in message and where("none_if") in message


def test_dtype_mismatch_between_branches_names_variable():
    with pytest.raises(TypeError) as e:
        tl.function(P.dtype_differs_between_branches)(tl.constant(1))
    message = str(e.value)
    assert "'y'" in message and "float32" in message and "int32" in message and where("branch_dtype") in message


def test_return_on_some_paths_only():
    with pytest.raises(ValueError) as e:
        tl.function(P.returns_on_some_paths)(tl.constant(1))
    assert "returns_on_some_paths" in str(e.value) and "add a return" in str(e.value)


def test_non_bool_tensor_condition():
    with pytest.raises(TypeError) as e:
        tl.function(P.non_bool_condition)(tl.constant(1))
    assert "scalar bool" in str(e.value) and where("non_bool") in str(e.value)


def test_none_before_tensor_loop_names_variable():
    with pytest.raises(ValueError) as e:
        tl.function(P.none_before_loop)(tl.constant(3))
    message = str(e.value)
    assert "'last'" in message and "None" in message and where("none_loop") in message


def test_variable_bound_only_inside_tensor_loop_used_after():
    with pytest.raises(UnboundLocalError) as e:
        tl.function(P.used_after_loop_only_bound_inside)(tl.constant(3))
    message = str(e.value)
    assert "'j'" in message and where("loop_local_use") in message and where("loop_local") in message
    assert "before the loop" in message


def test_variable_read_before_bound_in_tensor_loop_body():
    with pytest.raises(UnboundLocalError) as e:
        tl.function(P.read_before_bound_in_loop)(tl.constant(3))
    assert "'acc'" in str(e.value) and "before the loop" in str(e.value)


def test_op_errors_inside_converted_code_name_the_users_line():
    with pytest.raises(tl.errors.InvalidArgumentError) as e:
        tl.function(P.bad_matmul)(tl.ones([2, 2]))
    assert where("bad_matmul") in str(e.value)


def test_tracebacks_show_the_users_file_and_lines():
    try:
        tl.function(P.bad_matmul)(tl.ones([2, 2]))
    except tl.errors.InvalidArgumentError as e:
        frames = [(f.filename, f.lineno, f.line) for f in traceback.extract_tb(e.__traceback__)]
    assert (P.FILE, P.LINES["bad_matmul"]) in [(f, n) for f, n, _ in frames]
    line = next(text for f, n, text in frames if f == P.FILE and n == P.LINES["bad_matmul"])
    assert "tl.matmul(x, tl.ones([3, 3]))" in line


def test_large_python_range_warns_once_with_its_line():
    f = tl.function(P.big_python_range)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(tl.constant(0))
        tl.function(P.big_python_range)(tl.constant(0))
    unroll = [w for w in caught if "unrolled" in str(w.message)]
    assert len(unroll) == 1 and where("big_range") in str(unroll[0].message)
    assert "tl.range" in str(unroll[0].message)


def _with_try(x):
    try:
        x = x + 1
    except ValueError:
        pass
    return x


def _with_yield(x):
    yield x


def _with_global(x):
    global _G
    _G = x
    return x


def _with_nonlocal(x):
    y = 1

    def inner():
        nonlocal y
        y = 2
    inner()
    return x


@pytest.mark.parametrize("fn,construct", [(_with_try, "try/except"), (_with_yield, "yield"),
                                          (_with_global, "global"), (_with_nonlocal, "nonlocal")])
def test_unsupported_constructs_fail_at_conversion_with_the_line(fn, construct):
    with pytest.raises(ConversionError) as e:
        convert(fn)
    assert construct in str(e.value) and __file__ in str(e.value)
    with pytest.raises(ConversionError):
        to_code(fn)
    with pytest.raises(ConversionError):
        tl.function(fn)(tl.constant(1))


def test_unconvertible_callee_runs_as_python_with_a_warning():
    def caller(x):
        return _with_try(x) * 2
    with pytest.warns(UserWarning, match="could not convert _with_try"):
        assert int(tl.function(caller)(tl.constant(1))) == 4


def test_function_without_source_runs_as_python_with_a_warning():
    namespace = {}
    exec("def no_source(x):\n    return x * 2\n", namespace)  # noqa: S102 -- a def with no file
    fn = namespace["no_source"]
    with pytest.raises(SourceUnavailableError):   # a ConversionError of its own kind...
        parse_entity(fn)
    with pytest.warns(UserWarning, match="could not convert no_source"):
        assert convert(fn) is fn                  # ...that convert answers by running fn as it is
    assert int(tl.function(fn)(tl.constant(2))) == 4


def test_do_not_convert_keeps_python_semantics_in_graphs():
    @tl.autograph.experimental.do_not_convert if hasattr(tl, "autograph") else (lambda f: f)
    def python_if(x):
        if x > 0:
            return x
        return -x

    from trainlib.graph.autograph import do_not_convert
    do_not_convert(python_if)
    with pytest.raises(TypeError, match="Python bool"):
        tl.function(python_if)(tl.constant(1))
    assert int(python_if(tl.constant(-2))) == 2
