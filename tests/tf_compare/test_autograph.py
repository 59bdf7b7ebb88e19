"""AutoGraph against TensorFlow: control-flow programs (if/elif, while, for over tl.range and
tensors, break, continue, nested loops, and/or/not, conditional expressions, Python loops that
unroll, shape-dependent branches) give the same outputs under tl.function as under tf.function.

Programs TensorFlow's AutoGraph rejects but trainlib converts by design (DESIGN.md: return inside
loops, loop `else`, assert, weak Python numbers entering loops) are not compared here."""
import pytest

tf = pytest.importorskip("tensorflow")
from ..graph.autograph.programs import chained_comparison, del_in_branch, del_in_loop  # noqa: E402
from .compare import check  # noqa: E402

LIB = None
def p_if(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y
def p_elif(x):
    if x > 5:
        return x
    elif x > 0:
        return x * 10
    return x - 1
def p_while(x):
    i = 0
    s = 0.0
    while i < x:
        s += 1.5
        i += 1
    return s
def p_for_range(n):
    s = LIB.constant(0)
    for i in LIB.range(n):
        s += i
    return s
def p_for_tensor(x):
    s = LIB.zeros([])
    for v in x:
        s += v * v
    return s
def p_break(x):
    s = LIB.constant(0)
    for i in LIB.range(10):
        if i > x:
            break
        s += i
    return s
def p_continue(x):
    s = LIB.constant(0)
    for i in LIB.range(10):
        if i % 2 == 0:
            continue
        s += i * x
    return s
def p_return_in_loop(x):
    for i in LIB.range(10):
        if i * i > x:
            return i
    return -1
def p_nested(x):
    s = LIB.constant(0)
    for i in LIB.range(x):
        j = 0
        while j < i:
            s += j
            j += 1
    return s
def p_and_or(x):
    if x > 0 and x < 10 or x == -5:
        return 1
    return 0
def p_not(x):
    if not x > 3:
        return x
    return x * 2
def p_ifexp(x):
    return x if x > 0 else -x
def p_python_loop(x):
    s = x
    for i in range(3):
        s = s * 2 + i
    return s
def p_list_loop(x):
    out = []
    for i in range(3):
        out.append(x + i)
    return LIB.stack(out)
def p_while_tensor_cond(x):
    while x < 100:
        x = x * 2
    return x
def p_if_python_cond(x, flag):
    if flag:
        return x + 1
    return x - 1
def p_collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps
def p_fizz(n):
    count = 0
    for i in LIB.range(1, n + 1):
        if i % 15 == 0:
            count += 15
        elif i % 3 == 0:
            count += 3
        elif i % 5 == 0:
            count += 5
    return count
def p_shape_dep(x):
    if LIB.shape(x)[0] > 2:
        return LIB.reduce_sum(x)
    return LIB.reduce_mean(x)
def p_assert(x):
    assert x > 0
    return x
def p_if_none_else(x):
    y = x
    if x > 0:
        y = y + 1
    return y
def p_while_else(x):
    i = 0
    while i < x:
        i += 1
    else:
        i += 100
    return i
def p_for_else_break(x):
    r = 0
    for i in LIB.range(5):
        if i == x:
            r = 1
            break
    else:
        r = 2
    return r
def p_print(x):
    if x > 0:
        LIB.print("pos", x)
    return x
def p_accumulate_float(x):
    s = 0
    for v in x:
        s += v
    return s
def p_if_only_one_branch_assign(x):
    if x > 0:
        z = x
    return x
def p_if_mismatch_dtype(x):
    if x > 0:
        y = 1
    else:
        y = 1.5
    return y
def p_if_return_dtype_mismatch(x):
    if x > 0:
        return x
    return 0.5


PROGRAMS = [(chained_comparison, [3, 7, -4, 4]), (del_in_branch, [2, -2]), (del_in_loop, [3, 0]),
            (p_if, [3.0, -2.0]), (p_while, [4]), (p_for_range, [5]), (p_for_tensor, [[1.0, 2.0, 3.0]]),
            (p_break, [4]), (p_continue, [3]), (p_nested, [4]), (p_and_or, [5, 12, -5]), (p_not, [2, 5]),
            (p_ifexp, [2.0, -3.0]), (p_python_loop, [1.0]), (p_list_loop, [1.0]), (p_while_tensor_cond, [3.0]),
            (p_collatz, [27, 1]), (p_fizz, [30]), (p_shape_dep, [[1.0, 2.0, 3.0], [1.0, 2.0]]),
            (p_if_none_else, [1.0, -1.0]), (p_if_only_one_branch_assign, [1.0]), (p_if_mismatch_dtype, [1.0]),
            (p_if_return_dtype_mismatch, [1.0, -1.0])]


@pytest.mark.parametrize("program,inputs", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_program(program, inputs):
    for value in inputs:
        def run(lib, value=value):
            program.__globals__["LIB"] = lib
            return lib.function(program)(lib.constant(value))
        check(run)

        def eager(lib, value=value):
            program.__globals__["LIB"] = lib
            return program(lib.constant(value))
        check(eager)


@pytest.mark.parametrize("flag", [True, False])
def test_python_condition_stays_python(flag):
    check(lambda lib: lib.function(p_if_python_cond)(lib.constant(1), flag))


_COUNT = 0


def test_global_in_converted_code():
    def run(lib):
        global _COUNT
        _COUNT = 0

        @lib.function
        def f(x):
            global _COUNT
            _COUNT = _COUNT + 1
            if x > 0:
                _COUNT = _COUNT + x
            for i in lib.range(x):
                _COUNT += i
            return _COUNT
        out = [f(lib.constant(3)), f(lib.constant(4))]  # the second call runs the graph only
        return out, lib.is_tensor(_COUNT)
    check(run)


def test_nonlocal_in_converted_code():
    def run(lib):
        n = lib.constant(0)

        @lib.function
        def inner(x):
            nonlocal n
            while x > 0:
                n = n + x
                x -= 1
            if n > 3:
                n = n * 10
            return n
        return inner(lib.constant(3)), lib.is_tensor(n)
    check(run)


def test_attribute_and_item_loop_variables():
    class Box:
        pass

    def run(lib):
        @lib.function
        def f(n):
            box, d = Box(), {"k": lib.constant(1)}
            box.total = lib.constant(0)
            for i in lib.range(n):
                box.total += i
                d["k"] = d["k"] * 2
            if box.total > 3:
                box.total = -box.total
            return box.total, d["k"]
        return f(lib.constant(4)), f(lib.constant(2))
    check(run)
