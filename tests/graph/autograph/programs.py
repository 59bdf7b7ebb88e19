"""Small programs for the AutoGraph tests: every construct AutoGraph converts.

Each entry of PROGRAMS is (function, list of argument tuples). The tests run
each function eagerly, converted-eagerly and as a tl.function on every
argument tuple and compare. The argument tuples cover both branches,
zero-trip loops and early exits.
"""
import trainlib as tl
from trainlib.graph.autograph import do_not_convert, set_loop_options

c = tl.constant


# ---------------------------------------------------------------- if
def relu(x):
    if x > 0:
        return x
    return 0


def if_no_else(x):
    y = x
    if x > 0:
        y = x * 2
    return y


def if_elif_else(x):
    if x > 10:
        y = x - 10
    elif x > 0:
        y = x + 100
    else:
        y = -x
    return y


def nested_if(x, y):
    if x > 0:
        if y > 0:
            z = x + y
        else:
            z = x - y
    else:
        z = tl.constant(0)
    return z


def if_many_vars(x):
    a = x
    b = x * 2
    if x > 1:
        a = a + 1
        b = b - 1
    else:
        a = a - 1
    return a * 10 + b


def if_python_condition(x, flag):
    if flag:
        x = x + 1
    return x


def if_temporary_in_branch(x):
    if x > 0:
        t = x * 3
        y = t + 1
    else:
        y = x
    return y


def returns_in_elif_chain(x):
    if x > 5:
        return x * 2
    elif x > 0:
        return x + 1
    elif x > -5:
        return x - 1
    return tl.constant(0)


def if_on_bool_param(x, b):
    if b:
        return x + 1
    return x - 1


# ---------------------------------------------------------------- while
def count_down(n):
    s = 0
    while n > 0:
        s += n
        n -= 1
    return s


def while_break(n):
    i = 0
    while i < 100:
        if i >= n:
            break
        i += 1
    return i


def while_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s


def while_return(n):
    i = 0
    while i < n:
        if i * i > 10:
            return i
        i += 1
    return -1


def while_else(n):
    i = 0
    found = 0
    while i < n:
        if i == 4:
            found = 1
            break
        i += 1
    else:
        found = -1
    return found * 100 + i


def while_python_flag_and_tensor(n):
    done = False
    i = 0
    while not done and i < n:
        i += 2
    return i


def python_while_tensor_body(x):
    k = 0
    while k < 3:  # a Python condition: unrolled while tracing
        x = x * 2
        k += 1
    return x


def while_max_iterations(n):
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=5)
        i += 1
    return i


# ---------------------------------------------------------------- for over tl.range
def sum_range(n):
    s = 0
    for i in tl.range(n):
        s += i
    return s


def range_break(n):
    s = 0
    for i in tl.range(n):
        if i > 5:
            break
        s += i
    return s


def range_continue(n):
    s = 0
    for i in tl.range(n):
        if i % 2 == 0:
            continue
        s += i
    return s


def range_return(n):
    for i in tl.range(n):
        if i * 3 > 10:
            return i
    return -1


def range_start_stop_step(n):
    s = 0
    for i in tl.range(2, n, 3):
        s += i
    return s


def nested_ranges(n):
    s = 0
    for i in tl.range(n):
        for j in tl.range(i):
            s += j
    return s


def inner_break_only(n):
    s = 0
    for i in tl.range(n):
        for j in tl.range(10):
            if j > i:
                break
            s += 1
    return s


def growing_with_invariant(n):
    x = tl.zeros([0])
    for i in tl.range(n):
        set_loop_options(shape_invariants=[(x, tl.TensorShape([None]))])
        x = tl.concat([x, tl.reshape(tl.cast(i, tl.float32), [1])], 0)
    return tl.reduce_sum(x)


# ---------------------------------------------------------------- for over a tensor
def sum_elements(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def first_big(xs):
    for x in xs:
        if x > 2.0:
            return x * 10.0
    return -1.0


def tensor_break(xs):
    s = 0.0
    for x in xs:
        if x < 0.0:
            break
        s += x
    return s


def tensor_continue(xs):
    s = 0.0
    for x in xs:
        if x < 0.0:
            continue
        s += x
    return s


def row_sums(m):
    acc = tl.zeros([3])
    for row in m:
        acc = acc + row
    return acc


def for_else_tensor(xs):
    found = 0.0
    for x in xs:
        if x > 100.0:
            found = 1.0
            break
    else:
        found = -1.0
    return found


def while_in_for(xs):
    total = 0.0
    for x in xs:
        y = x
        while y > 1.0:
            y = y / 2.0
            total += 1.0
    return total


# ---------------------------------------------------------------- for over Python iterables
def python_range_tensor_body(x):
    for _ in range(4):
        x = x + 1
    return x


def python_list_of_tensors(x):
    s = x * 0
    for t in [x, x * 2, x * 3]:
        s = s + t
    return s


def python_range_tensor_break(x):
    s = 0
    for i in range(6):
        if x < i:
            break
        s += i
    return s


def python_range_tensor_return(x):
    for i in range(5):
        if x == i:
            return i * 10
    return -1


def python_enumerate_dict(x):
    d = {"a": 1, "b": 2}
    for k in d:
        if x > d[k]:
            x = x - d[k]
    return x


# ---------------------------------------------------------------- logical and conditional expressions
def and_tensors(x, y):
    if x > 0 and y > 0:
        return x + y
    return x - y


def or_tensors(x, y):
    if x > 0 or y > 0:
        return x * y
    return x + y


def not_tensor(x):
    if not x > 0:
        return -x
    return x


def conditional_expression(x):
    return x * 2 if x > 0 else x - 1


def conditional_expression_python(x, flag):
    return x + 1 if flag else x - 1


def and_python_short_circuit(x, flag):
    y = flag and x > 0
    if y:
        return x
    return x + 100


# ---------------------------------------------------------------- functions
def _helper_abs(v):
    if v < 0:
        return -v
    return v


def calls_helper(x):
    return _helper_abs(x) + 1


def nested_def(x):
    def inner(v):
        if v > 1:
            return v * 2
        return v
    return inner(x) + inner(x - 1)


def lambda_call(x):
    f = lambda v: v * 2 if v > 0 else -v  # noqa: E731
    return f(x)


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        if x > 0:
            return x * self.k
        return x


def method_call(x):
    return Scaler(3).apply(x)


@do_not_convert
def _python_only(x):
    return x + 1


def calls_do_not_convert(x):
    return _python_only(x) * 2


def recursive_python(n, x):
    if n == 0:  # a Python int: plain recursion while tracing
        return x
    return recursive_python(n - 1, x + 1)


def closure_value(x):
    k = 5

    def add_k(v):
        if v > 0:
            return v + k
        return v
    return add_k(x)


def assert_tensor(x):
    assert x > 0, "x must be positive"
    return x * 2


def tuple_state(n):
    a, b = 0, 1
    for _ in tl.range(n):
        a, b = b, a + b
    return a


def weak_python_number_in_loop(xs):
    s = 0  # a Python int meets float32 tensors: it follows their dtype, as everywhere in trainlib
    for x in xs:
        s += x
    return s


def weak_python_number_in_if(x):
    y = 0
    if x > 1.0:
        y = x * 2.0
    return y


def weak_python_number_through_a_call(xs):
    s = 0  # bound by a call in the loop: one probe trace learns the dtype it takes
    for x in xs:
        s = s + tl.sin(x)
    return s


def temporary_reuses_a_python_name(xs):
    t = [2.0, 3.0]  # a Python list before the loop; in the body a temporary (not live after)
    s = tl.reduce_sum(tl.constant(t)) * 0.0
    for x in xs:
        t = x * 2.0
        s += t
    return s


def lambdas_see_the_last_binding(x):
    fs = []
    for i in range(3):  # the lambdas share k and see its last value, as in Python
        k = i * 2
        fs.append(lambda: k)
    return x + fs[0]() + fs[1]()


def no_return_value(x):
    y = x
    if x > 0:
        y = x + 1
    tl.print(y, output_stream=_Sink())


class _Sink:
    def write(self, text):
        pass


# ---------------------------------------------------------------- chained comparisons, del, :=
def chained_comparison(x):
    if 0 < x < 5:
        y = x * 2
    else:
        y = x
    return y, -3 < x <= 4 != x


def del_in_branch(x):
    y = x + 1
    if x > 0:
        y = y * 2
        del y
    return x


def del_in_loop(x):
    y = x
    while x > 0:
        x -= 1
        del y
        y = x * 3
    return y


def walrus_while_test(x):
    i = c(0)
    while (left := x - i) > 0:
        i += 1
    return i, left


def walrus_while_else(x):
    i = c(0)
    total = c(0)
    while (step := x - i) > 0:
        total += step
        i += 1
        if total > 100:
            break
    else:
        total = -total
    return total, step


class _Box:
    def __init__(self, value):
        self.value = value
        self.items = {"a": value}


def attribute_and_item_in_tensor_loop(x):
    box = _Box(c(0))
    for i in tl.range(x):
        box.value += i
        box.items["a"] = box.items["a"] * 2 + i
    if box.value > 2:
        box.value = box.value * 10
    else:
        box.items["a"] = -box.items["a"]
    return box.value, box.items["a"]


PROGRAMS = [
    (attribute_and_item_in_tensor_loop, [(c(4),), (c(2),), (c(0),)]),
    (chained_comparison, [(c(3),), (c(7),), (c(-4),), (c(4),)]),
    (del_in_branch, [(c(2),), (c(-2),)]),
    (del_in_loop, [(c(3),), (c(0),)]),
    (walrus_while_test, [(c(3),), (c(0),)]),
    (walrus_while_else, [(c(3),), (c(20),), (c(0),)]),
    (relu, [(c(1),), (c(-1),), (c(0),)]),
    (if_no_else, [(c(3.0),), (c(-3.0),)]),
    (if_elif_else, [(c(15),), (c(5),), (c(-5),)]),
    (nested_if, [(c(1), c(2)), (c(1), c(-2)), (c(-1), c(2))]),
    (if_many_vars, [(c(5),), (c(0),)]),
    (if_python_condition, [(c(1), True), (c(1), False)]),
    (if_temporary_in_branch, [(c(2),), (c(-2),)]),
    (returns_in_elif_chain, [(c(7),), (c(3),), (c(-3),), (c(-7),)]),
    (if_on_bool_param, [(c(1), c(True)), (c(1), c(False))]),
    (count_down, [(c(0),), (c(5),)]),
    (while_break, [(c(0),), (c(7),)]),
    (while_continue, [(c(0),), (c(10),)]),
    (while_return, [(c(0),), (c(3),), (c(20),)]),
    (while_else, [(c(0),), (c(3),), (c(9),)]),
    (while_python_flag_and_tensor, [(c(0),), (c(7),)]),
    (python_while_tensor_body, [(c(1.5),), (c(-2.0),)]),
    (sum_range, [(c(0),), (c(6),)]),
    (range_break, [(c(0),), (c(3),), (c(20),)]),
    (range_continue, [(c(0),), (c(9),)]),
    (range_return, [(c(0),), (c(3),), (c(9),)]),
    (range_start_stop_step, [(c(2),), (c(11),)]),
    (nested_ranges, [(c(0),), (c(5),)]),
    (inner_break_only, [(c(0),), (c(4),)]),
    (growing_with_invariant, [(c(0),), (c(4),)]),
    (sum_elements, [(c([1.0, 2.0, 3.0]),), (c([-1.0, 0.5, 4.0]),)]),
    (first_big, [(c([1.0, 3.0, 4.0]),), (c([1.0, 0.5, 0.0]),)]),
    (tensor_break, [(c([1.0, 2.0, -1.0, 5.0]),), (c([1.0, 2.0, 3.0, 5.0]),)]),
    (tensor_continue, [(c([1.0, -2.0, 3.0]),), (c([-1.0, -2.0, -3.0]),)]),
    (row_sums, [(c([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),), (c([[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]),)]),
    (for_else_tensor, [(c([1.0, 200.0]),), (c([1.0, 2.0]),)]),
    (while_in_for, [(c([1.0, 8.0, 3.0]),), (c([0.5, 0.5, 0.5]),)]),
    (python_range_tensor_body, [(c(1),), (c(-4),)]),
    (python_list_of_tensors, [(c(1.0),), (c(2.5),)]),
    (python_range_tensor_break, [(c(2),), (c(10),), (c(-1),)]),
    (python_range_tensor_return, [(c(3),), (c(9),), (c(0),)]),
    (python_enumerate_dict, [(c(5),), (c(0),), (c(2),)]),
    (and_tensors, [(c(1), c(2)), (c(1), c(-2)), (c(-1), c(2))]),
    (or_tensors, [(c(1), c(-2)), (c(-1), c(-2)), (c(-1), c(2))]),
    (not_tensor, [(c(3),), (c(-3),)]),
    (conditional_expression, [(c(3),), (c(-3),)]),
    (conditional_expression_python, [(c(3), True), (c(3), False)]),
    (and_python_short_circuit, [(c(3), True), (c(-3), True), (c(3), False)]),
    (calls_helper, [(c(3),), (c(-3),)]),
    (nested_def, [(c(3),), (c(0),)]),
    (lambda_call, [(c(3),), (c(-3),)]),
    (method_call, [(c(3),), (c(-3),)]),
    (calls_do_not_convert, [(c(3),), (c(-3),)]),
    (recursive_python, [(3, c(1)), (0, c(1))]),
    (closure_value, [(c(3),), (c(-3),)]),
    (assert_tensor, [(c(3),), (c(1),)]),
    (tuple_state, [(c(0),), (c(1),), (c(10),)]),
    (weak_python_number_in_loop, [(c([1.0, 2.5]),), (c([-1.0, 0.0]),)]),
    (weak_python_number_in_if, [(c(3.0),), (c(0.5),)]),
    (weak_python_number_through_a_call, [(c([1.0, 2.5]),), (c([0.0]),)]),
    (temporary_reuses_a_python_name, [(c([1.0, 2.5]),), (c([-1.0]),)]),
    (lambdas_see_the_last_binding, [(c(1),)]),
]
