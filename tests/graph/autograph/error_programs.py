"""Programs that break AutoGraph's rules; the tests check each error names the variable and line.

LINES maps a marker to the line it is on, so tests never hard-code numbers.
"""
import inspect

import trainlib as tl


def one_branch_only(x):
    if x > 0:
        y = x + 1  # MARK:one_branch_assign
    return y  # MARK:one_branch_use


def loop_dtype_change(n):
    i = 0
    while i < n:  # MARK:dtype_loop
        i = tl.cast(i, tl.float32) + 1.0
    return i


def loop_shape_change(n):
    x = tl.zeros([1])
    for _ in tl.range(n):  # MARK:shape_loop
        x = tl.concat([x, x], 0)
    return x


def list_in_tensor_loop(n):
    values = []
    for i in tl.range(n):  # MARK:list_loop
        values.append(i)
    return values


def list_in_tensor_if(x):
    values = []
    if x > 0:  # MARK:list_if
        values.append(x)
    return x


def none_in_one_branch(x):
    y = None
    if x > 0:  # MARK:none_if
        y = x
    return y


def dtype_differs_between_branches(x):
    if x > 0:  # MARK:branch_dtype
        y = tl.cast(x, tl.float32)
    else:
        y = x
    return y


def returns_on_some_paths(x):
    if x > 0:
        return x
    tl.print(x)  # MARK:falls_off


def non_bool_condition(x):
    if x:  # MARK:non_bool
        x = x + 1
    return x


def none_before_loop(n):
    last = None
    for i in tl.range(n):  # MARK:none_loop
        last = i
    return last


def used_after_loop_only_bound_inside(n):
    for i in tl.range(n):  # MARK:loop_local
        j = i * 2
    return j  # MARK:loop_local_use


def bad_matmul(x):
    if x[0, 0] > 0:
        y = tl.matmul(x, tl.ones([3, 3]))  # MARK:bad_matmul
    else:
        y = x
    return y


def big_python_range(x):
    for _ in range(1500):  # MARK:big_range
        x = x + 1
    return x


def read_before_bound_in_loop(n):
    for i in tl.range(n):  # MARK:read_before
        if i > 0:
            acc = acc + i  # noqa: F821 -- deliberately unbound on the first iteration
        acc = i
    return n


def _marks():
    lines, first = inspect.getsourcelines(inspect.getmodule(_marks))
    out = {}
    for i, line in enumerate(lines):
        if "# MARK:" in line:
            out[line.split("# MARK:")[1].strip()] = i + 1
    return out


LINES = _marks()
FILE = __file__
