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

from ..autodiff import flatten, pack_as
from ..context import state
from ..errors import OpError
from ..tensor import SymbolicTensor, TensorShape, is_tensor

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


def _ops():
    from ..ops import array, math  # noqa: PLC0415 -- ops import nothing from here; resolve at call time
    return math, array


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
    if hasattr(type(v), "_tl_flatten"):  # a composite value (tl.TensorArray): carried by its tensors
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


def _structure(v):
    if isinstance(v, dict):
        return {k: _structure(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_structure(x) for x in v])
    return "leaf"


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
    from ..op import convert_to_tensor  # noqa: PLC0415
    return convert_to_tensor(np.zeros(spec_shape.as_list(), dtype=dtype.np))


def _spec_of(v, name, where):
    from ..op import convert_to_tensor  # noqa: PLC0415
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

def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, one_sided=()):
    """`if cond: body() else: orelse()`: a graph `If` for a symbolic cond, else plain Python.

    `get_state`/`set_state` read and write the variables the statement binds
    (named by `symbol_names`); `one_sided` names those only one branch binds.
    """
    if not _symbolic(cond):
        body() if cond else orelse()
        return
    _graph_if(cond, body, orelse, get_state, set_state, tuple(symbol_names), set(one_sided), _where())


def _check_condition(cond, what, where):
    if cond.dtype.name != "bool" or cond.shape.rank not in (0, None):
        raise AutoGraphTypeError(
            f"The condition of the {what} at {where} is a {cond.dtype.name} tensor of shape "
            f"{cond.shape}; a tensor condition must be a scalar bool. Compare explicitly (`x > 0`) "
            "or reduce it (`tl.reduce_any(...)`).")


def _graph_if(cond, body, orelse, get_state, set_state, names, one_sided, where):
    from ..ops.control_flow import cond as graph_cond  # noqa: PLC0415 -- control flow sits above ops
    _check_condition(cond, "`if`", where)
    init = tuple(get_state())
    snaps = [_snapshot(v) for v in init]
    excluded = {i for i, n in enumerate(names) if n in one_sided}
    hints = {}
    for _ in range(4):  # each retry learns something (an excluded slot or a hint); few ever needed
        results = {}

        def branch(fn, key):
            def run():
                set_state(init)
                fn()
                out = tuple(get_state())
                _check_not_mutated(names, init, snaps, out, "tensor-dependent `if`", where)
                results[key] = out
                given = tuple(_branch_output(i, v, excluded, hints) for i, v in enumerate(out))
                results[key + " outputs"] = given
                return given
            return run

        try:
            outs = graph_cond(cond, branch(body, "true"), branch(orelse, "false"))
        except AutoGraphError:
            set_state(init)
            raise
        except (ValueError, TypeError):
            set_state(init)
            if len(results) < 4 or not _learn_if(results, names, excluded, hints, where):
                raise
            continue
        set_state(_merge_if(results, outs, names, excluded, where))
        return
    raise AutoGraphValueError(f"cannot build the tensor-dependent `if` at {where}")  # pragma: no cover


_NOT_CARRIED = ()  # what a branch gives cond for a variable the If op does not carry


def _branch_output(i, v, excluded, hints):
    if i in excluded:
        return _NOT_CARRIED
    if isinstance(v, UndefinedReturnValue):
        return _zeros(*hints[i]) if i in hints else _NOT_CARRIED
    return v if _carriable(v) else _NOT_CARRIED


def _learn_if(results, names, excluded, hints, where):
    """After cond failed: explains it (raising a clear error) or learns how to retry."""
    learned = False
    for i, name in enumerate(names):
        if i in excluded:
            continue
        a, b = results["true"][i], results["false"][i]
        ka, kb = _kind(a), _kind(b)
        if "undefined" in (ka, kb) and ka != kb:
            excluded.add(i)
            learned = True
        elif "no return value" in (ka, kb) and ka != kb:
            other = b if ka == "no return value" else a
            if _carriable(other) and i not in hints:
                hints[i] = _spec_of(other, "the return value", where)
                learned = True
        elif _carriable(a) and _carriable(b):
            la, lb = flatten(a), flatten(b)
            if _structure(a) != _structure(b):
                raise AutoGraphValueError(
                    f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else "
                    f"branch of the tensor-dependent `if` at {where}; both branches must give it the "
                    "same structure.")
            for x, y in zip(la, lb):
                if is_tensor(x) and is_tensor(y) and x.dtype is not y.dtype:
                    raise AutoGraphTypeError(
                        f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else "
                        f"branch of the tensor-dependent `if` at {where}; a variable must keep one "
                        f"dtype across branches. Cast one of them (tl.cast(..., tl.{x.dtype.name})).")
        elif _carriable(a) or _carriable(b):
            raise AutoGraphValueError(
                f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else branch "
                f"of the tensor-dependent `if` at {where}. After an `if` on a tensor a variable must "
                "be a tensor in both branches (or the same Python value): give it a tensor value in "
                "both branches, or before the if.")
    return learned


def _merge_if(results, outs, names, excluded, where):
    merged = []
    for i, name in enumerate(names):
        a, b = results["true"][i], results["false"][i]
        out = outs[i]
        if results["true outputs"][i] is _NOT_CARRIED or results["false outputs"][i] is _NOT_CARRIED:
            merged.append(_merge_static(a, b, name, where))
        elif isinstance(a, _SCALARS) and type(a) is type(b) and a == b:
            merged.append(a)  # the same Python value on both sides stays a Python value
        else:
            merged.append(out)
    return merged


def _merge_static(a, b, name, where):
    if isinstance(a, Undefined) and isinstance(b, Undefined):
        return a
    if isinstance(a, Undefined) or isinstance(b, Undefined):
        bound = "if" if isinstance(b, Undefined) else "else"
        return Undefined(name, f"it is bound only in the {bound} branch of the tensor-dependent `if` "
                               f"at {where}; bind it in both branches (or before the if) to use it after")
    if isinstance(a, UndefinedReturnValue) or isinstance(b, UndefinedReturnValue):
        return b if isinstance(a, UndefinedReturnValue) else a  # None on the other side: both return None
    if a is b:
        return a
    raise AutoGraphValueError(
        f"'{name}' is {_describe(a)} in the if branch but {_describe(b)} in the else branch of the "
        f"tensor-dependent `if` at {where}. A Python value can only be used after an `if` on a "
        "tensor if both branches leave it the same; make it a tensor in both branches.")


def if_exp(cond, if_true, if_false, expr_text=""):
    """`if_true() if cond else if_false()`; a graph `If` for a symbolic cond."""
    if not _symbolic(cond):
        return if_true() if cond else if_false()
    from ..ops.control_flow import cond as graph_cond  # noqa: PLC0415
    _check_condition(cond, f"conditional expression `... if {expr_text} else ...`", _where())
    return graph_cond(cond, if_true, if_false)


# ------------------------------------------------------------------ logical expressions

def and_(a, b):
    """`a() and b()`: logical_and for tensors, Python's short-circuit otherwise."""
    left = a()
    if _symbolic(left):
        return _ops()[0].logical_and(left, b())
    if not left:
        return left
    return b()


def or_(a, b):
    """`a() or b()`: logical_or for tensors, Python's short-circuit otherwise."""
    left = a()
    if _symbolic(left):
        return _ops()[0].logical_or(left, b())
    if left:
        return left
    return b()


def not_(a):
    """`not a`: logical_not for a symbolic tensor, Python's `not` otherwise."""
    if _symbolic(a):
        return _ops()[0].logical_not(a)
    return not a


# ------------------------------------------------------------------ loops

def while_stmt(test, body, get_state, set_state, symbol_names, opts=None):
    """`while test(): body()`: plain Python while the test is a Python/eager value; as soon
    as it is a symbolic tensor, the rest of the loop becomes a graph `While`."""
    while True:
        t = test()
        if _symbolic(t):
            _graph_loop(test, body, get_state, set_state, tuple(symbol_names), opts or {}, _where())
            return
        if not t:
            return
        body()


_warned_unrolls = set()


def for_stmt(iterable, extra_test, body, get_state, set_state, symbol_names, opts=None):
    """`for x in iterable: body(x)`, stopping when `extra_test()` (break/return flags) is false.

    A symbolic tensor iterates its first axis in a graph `While`; anything
    else (Python iterables, eager tensors) is a Python loop, unrolled into the
    graph while tracing.
    """
    where = _where()
    if _symbolic(iterable):
        _graph_for(iterable, extra_test, body, get_state, set_state, tuple(symbol_names), opts or {}, where)
        return
    if state.graph is not None and hasattr(iterable, "_tl_graph_iteration"):  # a Dataset, an iterator
        _iterator_for(iterable, extra_test, body, get_state, set_state, tuple(symbol_names),
                      opts or {}, where)
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
                          tuple(symbol_names), set(), where)
                continue
            if not t:
                break
        body(item)


def _graph_for(iterable, extra_test, body, get_state, set_state, names, opts, where):
    from ..op import convert_to_tensor  # noqa: PLC0415
    math, array = _ops()
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

    _graph_loop(test, step, get_all, set_all, ("<loop counter>",) + names, opts, where)


def _iterator_for(iterable, extra_test, body, get_state, set_state, names, opts, where):
    """`for x in dataset` in a graph: a `While` that reads elements until the data ends (as
    TensorFlow's loop over a dataset); the element is a loop variable, fetched at the end of
    each iteration with `IteratorGetNextAsOptional`."""
    from ..ops.iterator import get_next_as_optional  # noqa: PLC0415
    math, _ = _ops()
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
        _graph_loop(test, step, get_all, set_all, all_names, opts, where)
    except ValueError as e:
        if opts.get("shape_invariants") or "keeps its shape" not in str(e):
            raise
        # elements of unknown shape change the shapes of what they flow into: as tf.data's
        # loops, relax the user's tensor variables (to unknown shapes) and build it again
        relaxed = tuple((name, TensorShape(None)) for name, v in zip(names, get_state())
                        if is_tensor(v) and name[0] != "<")
        current[0], current[1] = has_value, leaves
        _graph_loop(test, step, get_all, set_all, all_names,
                    dict(opts, shape_invariants=relaxed), where)


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


def _graph_loop(test, body, get_state, set_state, names, opts, where):
    from ..op import convert_to_tensor  # noqa: PLC0415
    from ..ops.control_flow import while_loop  # noqa: PLC0415
    init = tuple(get_state())
    snaps = [_snapshot(v) for v in init]
    carried = [i for i, v in enumerate(init) if _carriable(v)]
    # Python numbers are weakly typed: `s = 0` then `s += float_tensor` makes s float32.
    # If the loop fails, one probe trace with them left as Python numbers finds their dtypes.
    weak = [i for i in carried if isinstance(init[i], (int, float)) and not isinstance(init[i], bool)]
    weak_dtypes, probe, first_error = {}, False, None
    hints = {}
    for _ in range(5):
        slots = carried + sorted(hints)
        loop_vars = tuple(_zeros(*hints[i]) if i in hints else
                          convert_to_tensor(init[i], dtype=weak_dtypes[i]) if i in weak_dtypes else
                          pack_as(init[i], [x if x is None else convert_to_tensor(x)  # None: a
                                            for x in flatten(init[i])])  # composite's missing leaf
                          for i in slots)
        discovered = {}

        def restore(values):
            full = [Undefined(n, f"it is bound later in the body of the tensor-dependent loop at "
                                 f"{where}; in a graph loop a variable read before it is bound in the "
                                 "body must be bound before the loop")
                    if isinstance(v, Undefined) else v for n, v in zip(names, init)]
            for i, v in zip(slots, values):
                full[i] = init[i] if probe and i in weak else v
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
            if probe:
                raise _Probed({i: out[i].dtype for i in weak if is_tensor(out[i])})
            _check_not_mutated(names, init, snaps, out, "tensor-dependent loop", where)
            for i, name in enumerate(names):
                if i in slots:
                    if not _carriable(out[i]):
                        raise AutoGraphValueError(
                            f"'{name}' enters the tensor-dependent loop at {where} as "
                            f"{_describe(init[i])} but the body makes it {_describe(out[i])}; a loop "
                            "variable must stay a tensor of one dtype.")
                elif isinstance(init[i], UndefinedReturnValue):
                    if not isinstance(out[i], UndefinedReturnValue) and out[i] is not None:
                        discovered[i] = _spec_of(out[i], "the return value", where)
                elif not isinstance(init[i], Undefined) and out[i] is not init[i]:
                    raise AutoGraphValueError(
                        f"'{name}' is {_describe(init[i])} before the tensor-dependent loop at {where} "
                        f"but the body makes it {_describe(out[i])}. A loop variable must be a tensor "
                        "(or Python number) before the loop: initialize it with a tensor of the dtype "
                        "and shape the loop gives it.")
            return tuple(out[i] for i in slots)

        try:
            results = while_loop(cond_fn, body_fn, loop_vars,
                                 shape_invariants=_loop_invariants(opts, names, slots, loop_vars),
                                 maximum_iterations=opts.get("maximum_iterations"))
        except _Probed as found:
            set_state(init)
            probe = False
            if not found.dtypes or found.dtypes == weak_dtypes:
                raise first_error from None
            weak_dtypes.update(found.dtypes)
            continue
        except AutoGraphError:
            set_state(init)
            raise
        except (OpError, ValueError, TypeError) as e:
            set_state(init)
            if discovered and not set(discovered) <= set(hints):
                hints.update(discovered)
                continue
            error = _name_loop_variable(e, names, slots, loop_vars, where)
            if weak and not weak_dtypes and not probe:
                probe, first_error = True, error
                continue
            # after a probe, the first error is the one that explains the user's code
            raise (first_error if weak_dtypes else error) from None
        if discovered and not set(discovered) <= set(hints):
            hints.update(discovered)  # a return inside the loop: carry its value and trace again
            continue
        final = list(init)
        results = results if isinstance(results, (list, tuple)) else (results,)
        for i, v in zip(slots, results):
            final[i] = v
        for i, (name, v) in enumerate(zip(names, init)):
            if isinstance(v, Undefined):
                final[i] = Undefined(name, f"it is bound only inside the tensor-dependent loop at "
                                           f"{where}; bind it before the loop to use it after")
        set_state(tuple(final))
        return
    raise AutoGraphValueError(f"cannot build the tensor-dependent loop at {where}")  # pragma: no cover


class _Probed(Exception):
    """Ends a probe trace of a loop body, carrying the dtypes its Python numbers took."""

    def __init__(self, dtypes):
        super().__init__("probe")
        self.dtypes = dtypes


def _name_loop_variable(error, names, slots, loop_vars, where):
    """The while_loop error with `#k` (a leaf index) replaced by the variable's name and line."""
    message = str(error)
    leaf_names = []
    for i, v in zip(slots, loop_vars):
        leaf_names.extend([names[i]] * len(flatten(v)))
    for k in reversed(range(len(leaf_names))):
        message = message.replace(f"#{k}", f"'{leaf_names[k]}'")
    message += f" (in the loop at {where})"
    try:
        return type(error)(message)
    except TypeError:  # an error class with a different constructor: keep its type's meaning
        return AutoGraphValueError(message)


# ------------------------------------------------------------------ statements

def assert_stmt(test, message):
    """`assert test, message()`: a graph Assert op for a symbolic test, Python's assert otherwise."""
    if _symbolic(test):
        from ..ops.io import Assert  # noqa: PLC0415
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
    if target.__code__ in _pipeline().GENERATED_CODES or getattr(target, "ag_do_not_convert", False) \
            or getattr(target, "ag_source", None) is not None or _is_library(target):
        return None
    return target


def _pipeline():
    from . import pipeline  # noqa: PLC0415 -- the pipeline imports the converters, not this module
    return pipeline


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
        converted = _pipeline().convert_entity(target, sys.modules[__name__])
    except Exception as e:
        from .pyct import ConversionError  # noqa: PLC0415
        # source that cannot be read or located (a lambda among others in an expression) runs
        # as it is, with a warning, as TensorFlow's AutoGraph does
        unlocated = any(text in str(e) for text in ("cannot read the source", "cannot parse the source",
                                                     "cannot tell which lambda"))
        if not fallback and isinstance(e, ConversionError) and not unlocated:
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
