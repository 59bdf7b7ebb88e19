"""One test group per converter (run alone on a small function), plus the pipeline, to_code and caching."""
import gast
import pytest

import trainlib as tl
from trainlib.graph.autograph import ConversionError, convert, pipeline, pyct, to_code
from trainlib.graph.autograph.converters import (asserts, break_statements, call_trees,
                                                 conditional_expressions, continue_statements,
                                                 control_flow, directives, lists,
                                                 logical_expressions, return_statements,
                                                 unsupported, variables)


def run(fn, *converters):
    """Source of `fn` after `converters` only (in pipeline order)."""
    node, _, filename, offset = pyct.parse_entity(fn)
    ctx = pyct.Context(pyct.Namer(node), filename, offset, fn.__qualname__)
    for c in converters:
        node = c.transform(node, ctx)
    return gast.unparse(node)


# ---------------------------------------------------------------- unsupported
def test_unsupported_passes_plain_code_and_rejects_try():
    def plain(x):
        with open(x) as f:
            return f
    assert "with open(x)" in run(plain, unsupported)

    def bad(x):
        try:
            return x
        finally:
            pass
    with pytest.raises(ConversionError, match="try/except.*do_not_convert"):
        run(bad, unsupported)


# ---------------------------------------------------------------- directives
def test_directives_move_loop_options_onto_the_loop():
    def f(x, n):
        while n > 0:
            tl.autograph.experimental.set_loop_options(maximum_iterations=3,
                                                       shape_invariants=[(x, tl.TensorShape([None]))])
            n -= 1
        return x
    out = run(f, directives, control_flow)
    assert "set_loop_options" not in out
    assert "'maximum_iterations': 3" in out and "('x', tl.TensorShape([None]))" in out


def test_directives_outside_a_loop_are_rejected():
    def f(x):
        tl.autograph.experimental.set_loop_options(maximum_iterations=3)
        return x
    with pytest.raises(ConversionError, match="directly inside the body"):
        run(f, directives)


# ---------------------------------------------------------------- asserts
def test_asserts_become_assert_stmt_with_lazy_message():
    def f(x):
        assert x > 0, "positive"
        assert x
        return x
    out = run(f, asserts)
    assert "assert " not in out
    assert "ag__.assert_stmt(x > 0, lambda: 'positive')" in out and "ag__.assert_stmt(x, lambda: None)" in out


# ---------------------------------------------------------------- break
def test_break_becomes_flag_loop_test_and_guard():
    def f(n):
        while n > 0:
            if n == 3:
                break
            n -= 1
        else:
            n = 100
        return n
    out = run(f, break_statements)
    assert "break" not in out.replace("break_", "")
    assert "break_ = False" in out and "while not break_ and n > 0" in out and "break_ = True" in out
    assert out.count("if not break_:") == 2  # the guarded rest and the loop's else clause


def test_break_in_for_sets_extra_test_and_inner_loops_keep_their_own_flags():
    def f(xs):
        for x in xs:
            for y in xs:
                if y:
                    break
            if x:
                break
        return xs
    node, _, filename, offset = pyct.parse_entity(f)
    ctx = pyct.Context(pyct.Namer(node), filename, offset, "f")
    node = break_statements.transform(node, ctx)
    loops = [n for n in gast.walk(node) if isinstance(n, gast.For)]
    assert {gast.unparse(n.extra_test) for n in loops} == {"not break_", "not break__1"}


def test_loop_else_without_break_always_runs():
    def f(xs):
        for x in xs:
            pass
        else:
            xs = 1
        return xs
    out = run(f, break_statements)
    assert "else" not in out and "xs = 1" in out


# ---------------------------------------------------------------- continue
def test_continue_becomes_flag_reset_each_iteration():
    def f(n):
        while n > 0:
            n -= 1
            if n % 2:
                continue
            n -= 0
        return n
    out = run(f, continue_statements)
    assert "continue\n" not in out and "continue_ = False\n" in out and "continue_ = True" in out
    assert "if not continue_:" in out


# ---------------------------------------------------------------- return
def test_single_final_return_is_left_alone():
    def f(x):
        x = x + 1
        return x
    assert "do_return" not in run(f, return_statements)


def test_returns_become_flag_and_value():
    def f(x):
        while x > 0:
            if x == 2:
                return x
            x -= 1
        return -1
    out = run(f, return_statements)
    assert "do_return = False" in out and "retval_ = ag__.UndefinedReturnValue()" in out
    assert "while not do_return and x > 0" in out
    assert out.strip().endswith("return ag__.return_value(retval_, do_return, 'f')")


def test_code_after_an_if_that_returns_moves_into_its_else():
    def f(x):
        if x > 0:
            return x
        y = -x
        return y
    out = run(f, return_statements)
    assert "else:\n        y = -x" in out and "if not do_return" not in out


def test_nested_defs_get_their_own_return_flags():
    def f(x):
        def g(y):
            if y:
                return 1
            return 2
        if x:
            return g(x)
        return 0
    out = run(f, return_statements)
    assert "do_return_1" in out and "retval__1" in out


# ---------------------------------------------------------------- lists
def test_append_statement_becomes_assignment():
    def f(xs, y):
        xs.append(y)
        xs.obj.append(y)
        return xs
    out = run(f, lists)
    assert "xs = ag__.list_append(xs, y)" in out and "xs.obj.append(y)" in out


_CALLS = []


def test_append_to_global_or_closure_list_is_left_alone():
    seen = []

    def f(x):
        _CALLS.append(x)
        seen.append(x)
        return x
    out = run(f, lists)
    assert "_CALLS.append(x)" in out and "seen.append(x)" in out
    convert(f)(1)
    assert seen == [1] and _CALLS[-1] == 1


# ---------------------------------------------------------------- call trees
def test_calls_become_converted_call_except_frame_dependent_ones():
    def f(x, *a, **k):
        super().g()
        return g(x, 1, *a, key=2, **k) + h()  # noqa: F821
    out = run(f, call_trees)
    assert "ag__.converted_call(g, (x, 1, *a), {'key': 2, **k})" in out
    assert "ag__.converted_call(h, (), None)" in out and "super().g" not in out.replace(
        "ag__.converted_call(super().g", "")


# ---------------------------------------------------------------- control flow
def test_if_becomes_if_stmt_with_state_functions():
    def f(x):
        if x > 0:
            y = 1
            z = 2
        else:
            y = 3
        return y
    out = run(f, control_flow)
    # z is never read after the if (not live): a local of if_body, not state
    assert "ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('y',), ())" in out
    assert "y = ag__.Undefined('y')" in out and "nonlocal y\n" in out and "nonlocal y, z" not in out


def test_while_and_for_become_operator_calls():
    def f(xs, n):
        s = 0
        while n > 0:
            n -= 1
        for x in xs:
            s += x
        return s
    out = run(f, control_flow)
    # the target x is not read after the loop: not state. The last argument: n and s are
    # bound only by arithmetic (on n; on s and the target x), so the runtime knows their dtypes
    assert "ag__.while_stmt(loop_test, loop_body, get_state, set_state, ('n',), None, " \
        "((('n', ('n',), False),), (), lambda: (), ()))" in out
    assert "ag__.for_stmt(xs, None, loop_body_1, get_state_1, set_state_1, ('s',), None, " \
        "((('s', ('s', 'x'), False),), (), lambda: (), ('x',)))" in out
    assert "x = ag__.Undefined('x')" not in out and "s = ag__.Undefined" not in out


def test_a_variable_is_given_its_undefined_start_once():
    def f(c, x):
        if c:
            y = 1
        for _ in x:
            y = 2
        return y
    out = run(f, control_flow)
    assert out.count("y = ag__.Undefined('y')") == 1  # the loop must not reset what the if bound


# ---------------------------------------------------------------- expressions
def test_conditional_expression():
    def f(x):
        return 1 if x > 0 else 2
    assert "ag__.if_exp(x > 0, lambda: 1, lambda: 2, 'x > 0')" in run(f, conditional_expressions)


def test_logical_expressions():
    def f(a, b, c):
        return (a and b and c) or not a
    out = run(f, logical_expressions)
    assert out.strip().endswith(
        "return ag__.or_(lambda: ag__.and_(lambda: a, lambda: ag__.and_(lambda: b, lambda: c)), "
        "lambda: ag__.not_(a))")


def test_variables_wraps_reads_of_possibly_undefined_names_only():
    def f(x):
        if x:
            y = 1
        return y + x
    out = run(f, control_flow, variables)
    assert "return ag__.ld(y) + x" in out and "return (y,)" in out  # get_state reads raw values


# ---------------------------------------------------------------- pipeline, to_code, caching
def test_pipeline_order_is_documented_and_complete():
    names = [m.__name__.rsplit(".", 1)[1] for m in pipeline.CONVERTERS]
    assert names[0] == "unsupported" and names[-1] == "variables"
    assert names.index("break_statements") < names.index("return_statements") < names.index("control_flow")
    assert names.index("call_trees") < names.index("control_flow")


def simple_relu(x):
    if tl.greater(x, 0):
        return x
    else:
        return 0


def test_to_code_returns_compilable_readable_source():
    code = to_code(simple_relu)
    assert code.startswith("def simple_relu(x):") and "ag__.if_stmt" in code
    compile(code, "<autograph>", "exec")
    assert to_code(tl.function(simple_relu).python_function) == code
    lam = lambda x: x if x > 0 else -x  # noqa: E731
    compile(to_code(lam), "<autograph>", "exec")


def test_convert_is_cached_and_keeps_identity_of_the_function():
    a, b = convert(simple_relu), convert(simple_relu)
    assert a is b and a.__name__ == "simple_relu" and a.__wrapped__ is simple_relu
    assert convert(a) is a  # converted code is never converted again
    assert convert(len) is len and convert(tl.add) is tl.add  # builtins and library code run as they are


def test_closures_are_live_and_per_function():
    def make(k):
        def f(x):
            if x > 0:
                return x + k
            return x
        return f
    f1, f2 = make(1), make(10)
    assert convert(f1)(5) == 6 and convert(f2)(5) == 15


def test_methods_are_converted_and_bound():
    class A:
        k = 2

        def f(self, x):
            return x * self.k if x > 0 else x
    m = convert(A().f)
    assert m(3) == 6 and m(-3) == -3 and m.__self__.k == 2


def test_generated_code_carries_the_users_file():
    code = convert(simple_relu).__code__
    assert code.co_filename == __file__ and code.co_firstlineno == simple_relu.__code__.co_firstlineno


def test_lambdas_sharing_a_line_are_told_apart_by_their_code():
    fs = [lambda a: a * 2 if a > 0 else a, lambda a: -a if a > 0 else a]  # noqa: E731
    assert convert(fs[0])(3) == 6 and convert(fs[1])(3) == -3
    assert "a * 2" in to_code(fs[0]) and "-a" in to_code(fs[1])


_TOTAL = 0


def test_global_statements_rebind_the_module_variable():
    global _TOTAL
    _TOTAL = 0

    def bump(x):
        global _TOTAL
        _TOTAL = _TOTAL + 1
        if x > 0:
            _TOTAL = _TOTAL + x
        return _TOTAL
    assert int(bump(tl.constant(3))) == 4 and int(_TOTAL) == 4   # eagerly: plain Python
    _TOTAL = 0
    out = tl.function(bump)(tl.constant(3))
    assert int(out) == 4
    # as TensorFlow: after the trace the global holds the graph value the function made
    assert isinstance(_TOTAL, tl.graph.tensor.SymbolicTensor)
    assert "global _TOTAL" in to_code(bump) and "nonlocal _TOTAL" not in to_code(bump)


def test_nonlocal_statements_rebind_the_enclosing_variable():
    n = tl.constant(0)

    @tl.function
    def add_down(x):
        nonlocal n
        while x > 0:
            n = n + x
            x -= 1
        return n
    assert int(add_down(tl.constant(3))) == 6
    assert tl.is_tensor(n) and not isinstance(n, tl.Tensor)  # the loop's graph value


def test_del_becomes_undefined_and_reads_fail_clearly():
    def f(x):
        y = x
        if x > 0:
            del y
        return y
    assert "y = ag__.Undefined('y')" in to_code(f)
    with pytest.raises(UnboundLocalError, match="'y'"):
        tl.function(f)(tl.constant(1))
