"""AutoGraph: Python control flow on tensors becomes graph control flow.

Owns: `convert(fn)` (used by `tl.function(autograph=True)`), `to_code(fn)`,
`do_not_convert` and `set_loop_options`. The work is split in four:
`pyct` (source tools), `static_analysis` (liveness and definedness of each
function's variables: what each if/while/for carries), `converters/` (one
gast transformer per Python feature, run in the order of
`pipeline.CONVERTERS`) and `operators` (the `ag__.*` functions converted code
calls, which decide per call between plain Python and graph ops, tracing
each branch and loop body once).
Invariant: converted code computes what the original computes for Python
values and eager tensors; only symbolic tensors change what runs.

Supported: if/elif/else (with or without else); while; for over tl.range,
over a tensor's first axis (graph loops, also with an unknown length) and
over Python iterables (unrolled while tracing; a Python range over 1000
iterations warns once with its line); break, continue and loop `else` in
every loop kind; return anywhere, also inside tensor loops and branches;
nested loops and branches; `and`/`or`/`not` and `x if c else y` on tensors;
assert (a graph Assert op on a symbolic test); nested defs, lambdas, methods,
closures, recursion on Python values; calls converted recursively (not
trainlib, builtins, stdlib or site-packages code, nor `do_not_convert`);
`set_loop_options(maximum_iterations=, shape_invariants=[(var, shape)])`;
Python numbers entering graph loops/branches follow the tensors' dtype.
Errors name the variable, the user's file:line and the fix: a variable bound
in one branch only (when it is used after), dtype/shape/kind changes of loop
variables, Python lists changed in tensor loops/branches, non-bool
conditions, functions that return on some tensor paths only.
Rejected at conversion time: try/except, yield, global, nonlocal, async.
Left out: tensor-dependent loops or branches that append to Python lists
(raise; use tensors), `del` of state variables, chained comparisons on
tensors (`a < b < c`), comprehensions over symbolic tensors (they stay
Python), `print` stays Python's (trace time; use tl.print), zero-argument
`super()` inside a converted branch/loop body, and a function whose every
path returns only through a `while True` loop (needs a final return).
"""
import types

from . import pipeline
from .operators import AutoGraphError, Undefined, UndefinedReturnValue, convert  # noqa: F401
from .pyct import ConversionError

__all__ = ["convert", "to_code", "do_not_convert", "set_loop_options", "ConversionError",
           "AutoGraphError"]


def to_code(entity, recursive=True, experimental_optional_features=None):
    """Returns the source code AutoGraph generates for `entity` (a function, method or lambda).

    Args:
        entity: the Python function to convert.
        recursive, experimental_optional_features: accepted for TensorFlow
            compatibility; functions it calls are converted when called.

    Returns:
        A string of Python source that compiles; it calls the runtime
        operators as `ag__.*`.

    Raises:
        ConversionError: for code AutoGraph cannot convert (try/except, yield...).

    Example:
        >>> print(tl.autograph.to_code(lambda x: x if x > 0 else -x))
        lambda_ = lambda x: ag__.if_exp(...)
    """
    fn = entity.__func__ if isinstance(entity, types.MethodType) else entity
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"to_code needs a Python function, got {type(entity).__name__}")
    return pipeline.converted_source(getattr(fn, "__wrapped__", fn) if getattr(fn, "ag_source", None)
                                     else fn)


def do_not_convert(func=None):
    """Marks `func` to run as plain Python: AutoGraph neither converts it nor what it calls.

    Usable as `@do_not_convert` or `do_not_convert(fn)`.

    Example:
        >>> @tl.autograph.experimental.do_not_convert
        ... def python_only(x):
        ...     return x
    """
    if func is None:
        return do_not_convert
    target = getattr(func, "__func__", func)
    try:
        target.ag_do_not_convert = True
    except AttributeError:
        pass  # builtins and callables without a __dict__ are never converted anyway
    return func


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """Sets options of the loop it is called in (converted code only; elsewhere it does nothing).

    Args:
        maximum_iterations: stop the graph loop after this many iterations.
        shape_invariants: a list of `(variable, shape)` pairs; the variable's
            shape may change within `shape` (None dims) across iterations.
        parallel_iterations, swap_memory: accepted for TensorFlow compatibility.

    Example:
        >>> for i in tl.range(3):
        ...     tl.autograph.experimental.set_loop_options(shape_invariants=[(x, tl.TensorShape([None]))])
        ...     x = tl.concat([x, [i]], 0)
    """
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants
