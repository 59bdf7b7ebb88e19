"""AutoGraph's runtime operators: what converted code calls (as `ag__.*`).

Owns: `if_stmt`, `while_stmt`, `for_stmt`, `if_exp`, `and_`, `or_`, `not_`,
`assert_stmt`, `list_append`, `converted_call`, the `Undefined` /
`UndefinedReturnValue` sentinels with `ld` / `return_value`.
Invariant: each operator decides per call. A symbolic tensor (a
`SymbolicTensor`, i.e. a `tl.function` is tracing) builds graph control flow
with `tl.cond` / `tl.while_loop`; anything else (Python values, eager tensors
whose bool() works) runs as plain Python, so converted code computes what the
original computes. Errors name the variable, the user's file:line and a fix.
"""
import inspect
import os
import sys
import sysconfig
import types
import warnings
import weakref

import numpy as np  # only to recognise numpy scalars as Python-side values

from .. import nest
from ..nest import flatten, pack_as
from ..context import state
from ..errors import OpError
from ..op import convert_to_tensor
from ..ops import array, math
from ..ops.control_flow import build_if, build_while, cond as graph_cond, probe
from ..ops.io import Assert
from ..ops.iterator import get_next_as_optional
from ..tensor import SymbolicTensor, TensorShape, is_tensor
from . import pipeline
from .pyct import ConversionError, SourceUnavailableError

UNROLL_WARNING_ITERATIONS = 1000


class AutoGraphError(Exception):
    """Marks errors raised by these operators, so that retries never swallow them."""


class AutoGraphValueError(AutoGraphError, ValueError):
    """A variable does not follow the graph control-flow rules (kind, structure)."""


class AutoGraphTypeError(AutoGraphError, TypeError):
    """A variable or condition has the wrong dtype for graph control flow."""


class AutoGraphUnboundError(AutoGraphError, UnboundLocalError):
    """A variable is read where it may not be bound."""


def _where(depth=2):
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _symbolic(x):
    return isinstance(x, SymbolicTensor)



# ------------------------------------------------------------------ undefined values

class Undefined:
    """The value of a variable that is not bound (yet) at this point of converted code.

    Reading it through `ld` raises an error that says why it is unbound.
    """

    __slots__ = ("symbol_name", "reason")

    def __init__(self, symbol_name, reason=None):
        self.symbol_name = symbol_name
        self.reason = reason

    def error(self, where):
        reason = self.reason or "it is not bound on every path that reaches this point"
        return AutoGraphUnboundError(f"'{self.symbol_name}' is used at {where} but {reason}.")

    def __getattr__(self, attr):
        raise self.error(_where())

    def __bool__(self):
        raise self.error(_where())

    def __repr__(self):
        return f"<undefined {self.symbol_name}>"


class UndefinedReturnValue:
    """The return value before any `return` ran; a function that never returns gives None."""

    __slots__ = ()

    def __repr__(self):
        return "<undefined return value>"


def ld(value):
    """Returns `value`, raising a clear error if it is an Undefined variable."""
    if isinstance(value, Undefined):
        raise value.error(_where())
    return value


def ld_or_undefined(read, name):
    """`read()` (the variable's value), or Undefined(name) if it is not bound yet."""
    try:
        return read()
    except NameError:
        return Undefined(name)


def return_value(value, do_return, function_name="the function"):
    """The value a converted function returns, given its return flag."""
    if isinstance(value, UndefinedReturnValue):
        return None
    if _symbolic(do_return):
        raise AutoGraphValueError(
            f"{function_name} returns a value on some paths but ends without a return on others, and "
            f"which one happens depends on a tensor (at {_where()}). A graph must return the same "
            "structure on every path: add a return at the end of the function (or an else branch).")
    return value


# ------------------------------------------------------------------ value kinds

_SCALARS = (bool, int, float, complex, np.number, np.bool_)


def _kind(v):
    if isinstance(v, Undefined):
        return "undefined"
    if isinstance(v, UndefinedReturnValue):
        return "no return value"
    if is_tensor(v) or hasattr(v, "_array"):  # tensors and Variables
        return "tensor"
    if isinstance(v, _SCALARS):
        return "Python " + type(v).__name__
    if v is None:
        return "None"
    if nest.is_composite(v):  # a composite value (tl.TensorArray): carried by its tensors
        return "structure"
    if isinstance(v, (list, tuple, dict)):
        leaves = flatten(v)
        if leaves and all(_kind(x) == "tensor" or isinstance(x, _SCALARS) for x in leaves):
            return "structure"
        return "Python " + type(v).__name__
    return type(v).__name__


def _carriable(v):
    """True for values a graph op can carry: tensors, Python numbers, nests of them."""
    k = _kind(v)
    return k in ("tensor", "structure") or isinstance(v, _SCALARS)


def _describe(v):
    k = _kind(v)
    if k == "tensor":
        return f"a {v.dtype.name} tensor of shape {v.shape}"
    if k == "structure":
        return f"a {type(v).__name__} of {len(flatten(v))} tensors"
    if k == "undefined":
        return "not bound"
    return f"{k} ({v!r})" if k.startswith("Python") and isinstance(v, _SCALARS) else k


def _snapshot(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return dict(v)
    return None


def _mutated(v, snap):
    if snap is None:
        return False
    if isinstance(v, list):
        return len(v) != len(snap) or any(a is not b for a, b in zip(v, snap))
    return v.keys() != snap.keys() or any(v[k] is not snap[k] for k in v)


def _check_not_mutated(names, init, snaps, out, what, where):
    for i, name in enumerate(names):
        if snaps[i] is not None and out[i] is init[i] and _mutated(out[i], snaps[i]):
            raise AutoGraphValueError(
                f"The Python {type(init[i]).__name__} '{name}' is changed inside the {what} at {where}. "
                "A Python list cannot grow or change inside graph control flow (the change would "
                "happen once, while tracing). Collect the values in a tensor instead, e.g. "
                f"`{name} = tl.concat([{name}, [value]], axis=0)` with a shape invariant, or stack "
                "them after a Python loop (`for i in range(n)`), which unrolls at trace time.")


def _zeros(spec_shape, dtype):
    return convert_to_tensor(np.zeros(spec_shape.as_list(), dtype=dtype.np))


def _spec_of(v, name, where):
    t = v if is_tensor(v) else convert_to_tensor(v)
    shape = TensorShape(t.shape)
    if not shape.is_fully_defined():
        raise AutoGraphValueError(
            f"'{name}' is returned from inside the tensor-dependent control flow at {where} with "
            f"shape {shape}, which is not fully known, so the paths that do not return cannot "
            "carry a placeholder for it. Return from outside the loop/branch instead, e.g. store "
            "the value in a variable defined before it.")
    return shape, t.dtype


# ------------------------------------------------------------------ if

def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, input_only=()):
    """`if cond: body() else: orelse()`: a graph `If` for a symbolic cond, else plain Python.

    `get_state`/`set_state` read and write the variables the statement binds that
    static analysis found live (named by `symbol_names`); `input_only` names those
    the branches read and rebind but nothing reads after the statement: the If
    does not carry them out.
    """
    if not _symbolic(cond):
        body() if cond else orelse()
        return
    _graph_if(cond, body, orelse, get_state, set_state, tuple(symbol_names), frozenset(input_only),
              _where())


def _check_condition(cond, what, where):
    if cond.dtype.name != "bool" or cond.shape.rank not in (0, None):
        raise AutoGraphTypeError(
            f"The condition of the {what} at {where} is a {cond.dtype.name} tensor of shape "
            f"{cond.shape}; a tensor condition must be a scalar bool. Compare explicitly (`x > 0`) "
            "or reduce it (`tl.reduce_any(...)`).")


def _graph_if(cond, body, orelse, get_state, set_state, names, input_only, where):
    """Traces each branch once; then, knowing what both made of each variable, decides
    which ones the `If` op carries (see _if_carries) and what the others are after it."""
    _check_condition(cond, "`if`", where)
    init = tuple(get_state())
    snaps = [_snapshot(v) for v in init]
    results, carried = {}, []

    def branch(fn, key):
        def run():
            set_state(init)
            fn()
            out = tuple(get_state())
            _check_not_mutated(names, init, snaps, out, "tensor-dependent `if`", where)
            results[key] = out
            return out
        return run

    def join(a, b):
        carried.extend(i for i, name in enumerate(names)
                       if name not in input_only and _if_carries(a[i], b[i], name, where))
        return tuple(_given(a[i], b[i], where) for i in carried), \
            tuple(_given(b[i], a[i], where) for i in carried)

    try:
        outs = build_if(cond, branch(body, "true"), branch(orelse, "false"), join)
    except Exception:
        set_state(init)
        raise
    outs = dict(zip(carried, outs))
    set_state(tuple(outs[i] if i in outs else init[i] if name in input_only else
                    _merge_static(results["true"][i], results["false"][i], name, where)
                    for i, name in enumerate(names)))


def _if_carries(a, b, name, where):
    """Whether the If op carries a variable that is `a` after the if branch and `b` after
    the else branch; raises a clear error for values no graph can join."""
    if isinstance(a, UndefinedReturnValue) or isinstance(b, UndefinedReturnValue):
        return _carriable(b if isinstance(a, UndefinedReturnValue) else a)  # zeros on the other side
    if not (_carriable(a) and _carriable(b)):
        if _carriable(a) or _carriable(b):
            if isinstance(a, Undefined) or isinstance(b, Undefined):
                return False  # bound in one branch only: undefined after (see _merge_static)
            raise AutoGraphValueError(
                f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else branch "
                f"of the tensor-dependent `if` at {where}. After an `if` on a tensor a variable must "
                "be a tensor in both branches (or the same Python value): give it a tensor value in "
                "both branches, or before the if.")
        return False
    if isinstance(a, _SCALARS) and type(a) is type(b) and a == b:
        return False  # the same Python value on both sides stays a Python value
    if nest.structure_of(a) != nest.structure_of(b) or len(flatten(a)) != len(flatten(b)):
        raise AutoGraphValueError(
            f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else "
            f"branch of the tensor-dependent `if` at {where}; both branches must give it the "
            "same structure.")
    for x, y in zip(flatten(a), flatten(b)):
        if _has_dtype(x) and _has_dtype(y) and x.dtype is not y.dtype:
            raise AutoGraphTypeError(
                f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else "
                f"branch of the tensor-dependent `if` at {where}; a variable must keep one "
                f"dtype across branches. Cast one of them (tl.cast(..., tl.{x.dtype.name})).")
    return True


def _has_dtype(x):
    """Tensors and Variables (not an Undefined, whose attributes raise)."""
    return not isinstance(x, Undefined) and (is_tensor(x) or hasattr(x, "_array"))


def _given(v, other, where):
    """What a branch gives the If for a carried variable: its value, or zeros shaped like
    the other branch's value where it has no return value yet."""
    if isinstance(v, UndefinedReturnValue):
        return _zeros(*_spec_of(other, "the return value", where))
    return v


def _merge_static(a, b, name, where):
    """The value after a tensor `if` of a variable the If op does not carry."""
    if isinstance(a, Undefined) and isinstance(b, Undefined):
        return a
    if isinstance(a, Undefined) or isinstance(b, Undefined):
        bound = "if" if isinstance(b, Undefined) else "else"
        return Undefined(name, f"it is bound only in the {bound} branch of the tensor-dependent `if` "
                               f"at {where}; bind it in both branches (or before the if) to use it after")
    if isinstance(a, UndefinedReturnValue) or isinstance(b, UndefinedReturnValue):
        return b if isinstance(a, UndefinedReturnValue) else a  # None on the other side: both return None
    if a is b or (isinstance(a, _SCALARS) and type(a) is type(b) and a == b):
        return a
    raise AutoGraphValueError(
        f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else branch of the "
        f"tensor-dependent `if` at {where}. A Python value can only be used after an `if` on a "
        "tensor if both branches leave it the same; make it a tensor in both branches.")


def if_exp(cond, if_true, if_false, expr_text=""):
    """`if_true() if cond else if_false()`; a graph `If` for a symbolic cond."""
    if not _symbolic(cond):
        return if_true() if cond else if_false()
    _check_condition(cond, f"conditional expression `... if {expr_text} else ...`", _where())
    return graph_cond(cond, if_true, if_false)


# ------------------------------------------------------------------ logical expressions

def and_(a, b):
    """`a() and b()`: logical_and for tensors, Python's short-circuit otherwise."""
    left = a()
    if _symbolic(left):
        return math.logical_and(left, b())
    if not left:
        return left
    return b()


def or_(a, b):
    """`a() or b()`: logical_or for tensors, Python's short-circuit otherwise."""
    left = a()
    if _symbolic(left):
        return math.logical_or(left, b())
    if left:
        return left
    return b()


def not_(a):
    """`not a`: logical_not for a symbolic tensor, Python's `not` otherwise."""
    if _symbolic(a):
        return math.logical_not(a)
    return not a


# ------------------------------------------------------------------ loops

def while_stmt(test, body, get_state, set_state, symbol_names, opts=None, kinds=None):
    """`while test(): body()`: plain Python while the test is a Python/eager value; as soon
    as it is a symbolic tensor, the rest of the loop becomes a graph `While`.

    `symbol_names` are the loop's live state variables; `kinds` says how the dtypes
    its Python numbers take follow from other values (static analysis; see _static_dtypes).
    """
    while True:
        t = test()
        if _symbolic(t):
            _graph_loop(test, body, get_state, set_state, tuple(symbol_names), opts or {}, kinds,
                        None, _where())
            return
        if not t:
            return
        body()


_warned_unrolls = set()


def for_stmt(iterable, extra_test, body, get_state, set_state, symbol_names, opts=None,
             kinds=None):
    """`for x in iterable: body(x)`, stopping when `extra_test()` (break/return flags) is false.

    A symbolic tensor iterates its first axis in a graph `While`; anything
    else (Python iterables, eager tensors) is a Python loop, unrolled into the
    graph while tracing.
    """
    where = _where()
    if _symbolic(iterable):
        _graph_for(iterable, extra_test, body, get_state, set_state, tuple(symbol_names), opts or {},
                   kinds, where)
        return
    if state.graph is not None and hasattr(iterable, "_tl_graph_iteration"):  # a Dataset, an iterator
        _iterator_for(iterable, extra_test, body, get_state, set_state, tuple(symbol_names),
                      opts or {}, kinds, where)
        return
    if state.graph is not None and isinstance(iterable, range) and \
            len(iterable) > UNROLL_WARNING_ITERATIONS and where not in _warned_unrolls:
        _warned_unrolls.add(where)
        warnings.warn(
            f"The Python loop `for ... in {iterable!r}` at {where} is unrolled while tracing: "
            f"{len(iterable)} copies of its body go into the graph, which is slow to build and run. "
            "Use tl.range(...) to make it a graph loop.", stacklevel=2)
    for item in iterable:
        if extra_test is not None:
            t = extra_test()
            if _symbolic(t):
                # a tensor break/return flag: each remaining iteration runs only where it holds
                _graph_if(t, lambda item=item: body(item), lambda: None, get_state, set_state,
                          tuple(symbol_names), frozenset(), where)
                continue
            if not t:
                break
        body(item)


def _graph_for(iterable, extra_test, body, get_state, set_state, names, opts, kinds, where):
    if iterable.shape.rank == 0:
        raise AutoGraphTypeError(f"The `for` loop at {where} iterates over a scalar tensor; "
                                 "iterate over a tensor with at least one dimension, or tl.range(n).")
    n = iterable.shape[0] if iterable.shape.rank is not None and iterable.shape[0] is not None \
        else array.shape(iterable)[0]
    counter = [convert_to_tensor(0)]

    def get_all():
        return (counter[0],) + tuple(get_state())

    def set_all(values):
        counter[0] = values[0]
        set_state(tuple(values[1:]))

    def test():
        t = math.less(counter[0], n)
        if extra_test is None:
            return t
        return math.logical_and(t, extra_test())

    def step():
        i = counter[0]
        body(array.gather(iterable, i))
        counter[0] = math.add(i, 1)

    _graph_loop(test, step, get_all, set_all, ("<loop counter>",) + names, opts, kinds, iterable.dtype,
                where)


def _weak(v):
    """A Python number (not a bool): it takes the dtype of the tensors it meets."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _static_dtypes(names, init, kinds, element_dtype):
    """{name: dtype or None (Python int/float: the default)} for the loop's variables whose
    dtype static analysis can tell from the values entering the loop; absent: unknown.

    `kinds` = (recipes, outer names, outer values, target names) from the converter: a
    recipe `(name, deps, uses_float)` says the body binds `name` only with arithmetic
    on `deps` and number literals, so (weak typing) it takes the dtype of the tensors
    among them, else stays a Python number.
    """
    if not kinds:
        return {}
    recipes, outer_names, outer_values, targets = kinds
    recipes = {name: (deps, uses_float) for name, deps, uses_float in recipes}
    entering, bound = dict(zip(names, init)), set(names)  # the loop's state: bound by it
    try:
        entering.update((n, v) for n, v in zip(outer_names, outer_values()) if n not in entering)
    except NameError:
        pass  # an outer name not bound yet: what depends on it stays unknown

    def of_value(v):
        if _has_dtype(v):
            return ("dtype", v.dtype)
        return ("py", float if isinstance(v, (float, np.floating)) else int) if _weak(v) else None

    def resolve(name, visiting):
        if name in targets:
            return ("dtype", element_dtype) if element_dtype is not None else None
        value = entering.get(name)
        if _has_dtype(value) or name in visiting:
            return of_value(value)  # a tensor loop variable keeps its dtype
        if name not in recipes:  # bound in the loop some other way (a call...), or unknown
            return None if name in bound or name not in entering else of_value(value)
        deps, uses_float = recipes[name]
        parts = [of_value(value)] if name in entering else []
        parts += [("py", float)] if uses_float else []
        return _combine(parts + [resolve(d, visiting | {name}) for d in deps if d != name])

    out = {}
    for name in names:
        kind = resolve(name, frozenset())
        if kind is not None:
            out[name] = kind[1] if kind[0] == "dtype" else None
    return out


def _combine(parts):
    """The kind of an arithmetic result: the tensors' dtype, else int or float; None: unknown."""
    if any(p is None for p in parts):
        return None
    dtypes = {d for k, d in parts if k == "dtype"}
    if len(dtypes) > 1:
        return None
    if dtypes:
        return ("dtype", dtypes.pop())
    return ("py", float if any(d is float for _, d in parts) else int)


def _graph_loop(test, body, get_state, set_state, names, opts, kinds, element_dtype, where):
    """Traces the loop once as a graph `While`.

    The loop variables are the live state variables that hold tensors or Python numbers.
    A variable without a value yet (the value returned from inside the loop) is carried
    out only: the trace finds its spec (build_while's write_only). A Python number takes
    the dtype the body gives it: static analysis knows it for arithmetic
    (`s += x` takes x's dtype); otherwise one probe trace of the body, with the numbers
    as they are, finds it first.
    """
    init = tuple(get_state())
    snaps = [_snapshot(v) for v in init]
    slots = [i for i, v in enumerate(init) if _carriable(v)]
    returns = [i for i, v in enumerate(init) if isinstance(v, UndefinedReturnValue)]
    weak = [i for i in slots if _weak(init[i])]
    static = _static_dtypes(names, init, kinds, element_dtype)
    dtypes = {i: static[names[i]] for i in weak if names[i] in static}
    unknown = [i for i in weak if names[i] not in static]
    if unknown:
        dtypes.update(_probe_dtypes(test, body, get_state, set_state, init, slots, unknown))
    loop_vars = tuple(convert_to_tensor(init[i], dtype=dtypes.get(i)) if i in weak else
                      pack_as(init[i], [x if x is None else convert_to_tensor(x)  # None: a
                                        for x in flatten(init[i])])  # composite's missing leaf
                      for i in slots)
    returned = {}

    def restore(values):
        full = [Undefined(n, f"it is bound later in the body of the tensor-dependent loop at "
                             f"{where}; in a graph loop a variable read before it is bound in the "
                             "body must be bound before the loop")
                if isinstance(v, Undefined) else v for n, v in zip(names, init)]
        for i, v in zip(slots, values):
            full[i] = v
        set_state(tuple(full))

    def cond_fn(*values):
        restore(values)
        t = test()
        if _symbolic(t):
            _check_condition(t, "loop", where)
        return t

    def body_fn(*values):
        restore(values)
        body()
        out = tuple(get_state())
        _check_not_mutated(names, init, snaps, out, "tensor-dependent loop", where)
        for i, name in enumerate(names):
            if i in slots:
                if not _carriable(out[i]):
                    raise AutoGraphValueError(
                        f"'{name}' enters the tensor-dependent loop at {where} as "
                        f"{_describe(init[i])} but the body makes it {_describe(out[i])}; a loop "
                        "variable must stay a tensor of one dtype.")
            elif i in returns:
                if not isinstance(out[i], UndefinedReturnValue) and out[i] is not None:
                    returned[i] = out[i]
            elif not isinstance(init[i], Undefined) and out[i] is not init[i]:
                raise AutoGraphValueError(
                    f"'{name}' is {_describe(init[i])} before the tensor-dependent loop at {where} "
                    f"but the body makes it {_describe(out[i])}. A loop variable must be a tensor "
                    "(or Python number) before the loop: initialize it with a tensor of the dtype "
                    "and shape the loop gives it.")
        return tuple(out[i] for i in slots)

    def write_only():
        for i, v in returned.items():
            _spec_of(v, "the return value", where)  # a clear error if its shape is not known
        return [returned[i] for i in sorted(returned)]

    leaf_names = [f"'{names[i]}'" for i, v in zip(slots, loop_vars) for _ in flatten(v)]
    try:
        results, late = build_while(cond_fn, body_fn, loop_vars,
                                    shape_invariants=_loop_invariants(opts, names, slots, loop_vars),
                                    maximum_iterations=opts.get("maximum_iterations"),
                                    leaf_names=leaf_names, where=where, write_only=write_only)
    except Exception:
        set_state(init)
        raise
    final = list(init)
    results = results if isinstance(results, (list, tuple)) else (results,)
    for i, v in zip(slots, results):
        final[i] = v
    for i, v in zip(sorted(returned), late):
        final[i] = v
    for i, (name, v) in enumerate(zip(names, init)):
        if isinstance(v, Undefined):
            final[i] = Undefined(name, f"it is bound only inside the tensor-dependent loop at "
                                       f"{where}; bind it before the loop to use it after")
    set_state(tuple(final))


def _probe_dtypes(test, body, get_state, set_state, init, slots, unknown):
    """{slot: dtype} for the Python numbers in `unknown`, from one trace of the body in a
    scratch graph with them left as they are (the other loop variables as placeholders).

    A dtype is kept only if the loop test still traces on what the body made: otherwise
    (or if the probe fails) the numbers keep their default dtypes, and the real trace
    reports what is wrong with the user's words (a loop variable changing dtype...).
    """

    def run(*values):
        entering = list(init)
        for i, v in zip(slots, values):
            entering[i] = v
        set_state(tuple(entering))
        body()
        out = tuple(get_state())
        found = {i: out[i].dtype for i in unknown if _has_dtype(out[i])}
        set_state(tuple(convert_to_tensor(v, dtype=found.get(i)) if i in unknown else v
                        for i, v in enumerate(out)))
        t = test()
        return found if not _symbolic(t) or (t.dtype.name == "bool" and t.shape.rank in (0, None)) else {}

    try:
        return probe(run, [init[i] for i in slots])
    except (OpError, ValueError, TypeError):
        return {}
    finally:
        set_state(init)


def _iterator_for(iterable, extra_test, body, get_state, set_state, names, opts, kinds, where):
    """`for x in dataset` in a graph: a `While` that reads elements until the data ends (as
    TensorFlow's loop over a dataset); the element is a loop variable, fetched at the end of
    each iteration with `IteratorGetNextAsOptional`."""
    handle, specs, pack = iterable._tl_graph_iteration()
    has_value, leaves = get_next_as_optional(handle, specs)
    current = [has_value, leaves]
    n = len(leaves)

    def get_all():
        return (current[0], *current[1]) + tuple(get_state())

    def set_all(values):
        current[0], current[1] = values[0], list(values[1:1 + n])
        set_state(tuple(values[1 + n:]))

    def test():
        if extra_test is None:
            return current[0]
        return math.logical_and(current[0], extra_test())

    def step():
        body(pack(current[1]))
        current[0], current[1] = get_next_as_optional(handle, specs)

    all_names = ("<has element>",) + ("<element>",) * n + names
    try:
        _graph_loop(test, step, get_all, set_all, all_names, opts, kinds, None, where)
    except ValueError as e:  # the error says which loop variable changed shape, if that was it
        if opts.get("shape_invariants") or not hasattr(e, "loop_variable_changed_shape"):
            raise
        # elements of unknown shape change the shapes of what they flow into: as tf.data's
        # loops, relax the user's tensor variables (to unknown shapes) and build it again
        relaxed = tuple((name, TensorShape(None)) for name, v in zip(names, get_state())
                        if is_tensor(v) and name[0] != "<")
        current[0], current[1] = has_value, leaves
        _graph_loop(test, step, get_all, set_all, all_names,
                    dict(opts, shape_invariants=relaxed), kinds, None, where)


def _loop_invariants(opts, names, slots, loop_vars):
    pairs = dict(opts.get("shape_invariants") or ())
    unknown = set(pairs) - set(names)
    if unknown:
        raise AutoGraphValueError(f"shape_invariants names {sorted(unknown)}, which the loop does not "
                                  f"change; loop variables are {[n for n in names if n[0] != '<']}")
    if not pairs:
        return None
    out = []
    for i, v in zip(slots, loop_vars):
        leaves = flatten(v)
        inv = pairs.get(names[i])
        if inv is not None and len(leaves) != 1:
            raise AutoGraphValueError(f"a shape invariant for '{names[i]}' needs it to be one tensor")
        out.extend([inv] * len(leaves))
    return out


# ------------------------------------------------------------------ statements

def assert_stmt(test, message):
    """`assert test, message()`: a graph Assert op for a symbolic test, Python's assert otherwise."""
    if _symbolic(test):
        msg = message()
        where = _where()
        if is_tensor(msg):
            Assert(test, data=(msg,), message=f"assertion at {where}")
        else:
            text = f"{msg} " if msg is not None else ""
            Assert(test, message=f"{text}(assertion at {where})")
        return
    if not test:
        msg = message()
        raise AssertionError(msg) if msg is not None else AssertionError()


def list_append(target, item):
    """`target.append(item)`, returning target (Python lists append in place, as always)."""
    if is_tensor(target):
        raise AutoGraphTypeError(
            f"Cannot append to a tensor (at {_where()}); tensors are immutable. Build a new one, e.g. "
            "`x = tl.concat([x, [item]], axis=0)`.")
    target.append(item)
    return target


# ------------------------------------------------------------------ calls

_LIBRARY_DIRS = tuple(os.path.realpath(p) for p in {
    sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} if p)
_TRAINLIB_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_warned_fallbacks = weakref.WeakSet()  # code objects warned about (weakly: users' code may go)


_EXAMPLES_DIR = os.path.join(_TRAINLIB_DIR, "examples") + os.sep


def _is_library(fn):
    module = getattr(fn, "__module__", None) or ""
    filename = os.path.realpath(fn.__code__.co_filename)
    if module.startswith("trainlib.examples") or filename.startswith(_EXAMPLES_DIR):
        return False  # the shipped example scripts are user code, even when installed
    if module == "trainlib" or module.startswith("trainlib.") or module == "builtins":
        return True
    if filename.startswith(_TRAINLIB_DIR + os.sep):
        return True
    return filename.startswith(_LIBRARY_DIRS) or "site-packages" in filename


def _plain_function(fn):
    """The Python function to convert behind `fn`, or None to call `fn` as it is."""
    if isinstance(fn, types.FunctionType):
        target = fn
    elif isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        target = fn.__func__
    else:
        return None
    if target.__code__ in pipeline.GENERATED_CODES or getattr(target, "ag_do_not_convert", False) \
            or getattr(target, "ag_source", None) is not None or _is_library(target):
        return None
    return target



def convert(fn, fallback=False):
    """The converted version of `fn` (a function, method or lambda); `fn` itself if it needs none.

    Args:
        fn: the callable.
        fallback: on a ConversionError, warn and return `fn` (used for calls
            made from converted code) instead of raising.
    """
    target = _plain_function(fn)
    if target is None:
        return fn
    if fallback and (inspect.isgeneratorfunction(target) or inspect.iscoroutinefunction(target)):
        return fn  # called from converted code: a generator runs as Python (the caller iterates it)
    try:
        converted = pipeline.convert_entity(target, sys.modules[__name__])
    except Exception as e:
        # source that cannot be read or located (a lambda among others in an expression) runs
        # as it is, with a warning, as TensorFlow's AutoGraph does
        if not fallback and isinstance(e, ConversionError) and not isinstance(e, SourceUnavailableError):
            raise
        if target.__code__ not in _warned_fallbacks:
            _warned_fallbacks.add(target.__code__)
            warnings.warn(f"AutoGraph could not convert {target.__qualname__} and runs it as it is "
                          f"(Python control flow on tensors inside it will fail): {e}", stacklevel=3)
        return fn
    if isinstance(fn, types.MethodType):
        return types.MethodType(converted, fn.__self__)
    return converted


def converted_call(fn, args, kwargs):
    """Calls `fn(*args, **kwargs)`, converting `fn` first if it is user code."""
    if kwargs is None:
        kwargs = {}
    if not isinstance(fn, (types.FunctionType, types.MethodType)) and not isinstance(fn, type):
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType) and _plain_function(call) is not None:
            return convert(types.MethodType(call, fn), fallback=True)(*args, **kwargs)
        return fn(*args, **kwargs)
    return convert(fn, fallback=True)(*args, **kwargs)
