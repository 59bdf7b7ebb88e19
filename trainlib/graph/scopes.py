"""`tl.name_scope` and `tl.control_dependencies`: the scopes that shape the ops a graph gets.

Owns: the two context managers (TensorFlow 2's), `get_current_name_scope`, and the two
reads `Graph.add_op` makes of them: the prefix of a new op's name and the Operations it
must run after. The stacks are per thread (`context.state`), so a thread that traces
never sees another thread's scopes. Each entry remembers the graph it was opened in:
scopes opened outside a tl.function name its Variables (as TensorFlow's eager scopes do)
but not the ops of a graph traced later, and a control dependency only ever joins ops of
one graph. Eagerly, control dependencies do nothing (ops already run in program order).
"""
import re

from .context import state

__all__ = ["name_scope", "control_dependencies", "get_current_name_scope"]

_VALID = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


def _graph():
    return state.graph


class _Block:
    """A `with` block that pushes one entry on a stack of `state` (named by `_stack`) and
    pops it on exit (only if it is still the innermost: a block is closed once)."""

    __slots__ = ("entry",)
    _stack = None

    def _open(self, entry):
        self.entry = entry
        getattr(state, self._stack).append(entry)

    def __exit__(self, *exc):
        stack = getattr(state, self._stack)
        if self.entry is not None and stack and stack[-1] is self.entry:
            stack.pop()
        self.entry = None
        return False


def current_prefix(graph=None):
    """The `"outer/inner/"` prefix of the innermost name scope opened in `graph` ("" if none)."""
    for owner, prefix in reversed(state.name_scopes):
        if owner is graph:
            return prefix
    return ""


def get_current_name_scope():
    """The current name scope as `"outer/inner"` (no trailing slash; "" outside any).

    Example:
        >>> with tl.name_scope("outer"):
        ...     with tl.name_scope("inner"):
        ...         tl.get_current_name_scope()
        'outer/inner'
    """
    return current_prefix(_graph()).rstrip("/")


class name_scope(_Block):  # noqa: N801 -- TensorFlow's spelling
    """Prefixes the names of the ops made in the block (and of `tl.Variable`s) with `name/`.

    Args:
        name: the scope's name; a name ending in "/" is taken as a whole scope, not nested.

    While tracing, a name used twice in one graph becomes `name_1`, as TensorFlow
    uniquifies; `with tl.name_scope("a") as scope:` binds the full prefix (`"a/"`).

    Example:
        >>> @tl.function
        ... def f(x):
        ...     with tl.name_scope("layer1"):
        ...         return tl.matmul(x, x)
        >>> [op.name for op in f.get_concrete_function(tl.TensorSpec([2, 2])).graph.get_operations()][-1]
        'layer1/MatMul'
    """

    __slots__ = ("name",)
    _stack = "name_scopes"

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"tl.name_scope: the name must be a string, got {type(name).__name__} "
                            f"{name!r}")
        if name and not _VALID.match(name.rstrip("/")):
            raise ValueError(f"tl.name_scope: {name!r} is not a valid scope name (letters, digits "
                             "and . _ - / > only)")
        self.name = name
        self.entry = None

    def __enter__(self):
        graph = _graph()
        if not self.name:
            prefix = ""
        elif self.name.endswith("/"):
            prefix = self.name
        else:
            base = current_prefix(graph) + self.name
            if graph is not None:
                base = graph.unique_name(base)
            prefix = base + "/"
        self._open((graph, prefix))
        return prefix


def _as_operation(value):
    op = getattr(value, "op", None)
    if op is not None and hasattr(op, "control_inputs"):
        return op                          # a SymbolicTensor: its producing Operation
    if hasattr(value, "control_inputs"):
        return value                       # an Operation
    return None


class control_dependencies(_Block):  # noqa: N801 -- TensorFlow's spelling
    """Ops made in the block run only after `control_inputs` (Operations or tensors).

    Args:
        control_inputs: Operations or tensors of the graph being traced, or None (the block
            then clears the dependencies of enclosing blocks, as TensorFlow). Eagerly the
            block does nothing: ops already run in program order.

    Example:
        >>> @tl.function
        ... def f(x):
        ...     check = tl.debugging.assert_positive(x)
        ...     with tl.control_dependencies([check]):
        ...         return tl.identity(x)
        >>> float(f(tl.constant(2.0)))
        2.0
    """

    __slots__ = ("inputs",)
    _stack = "control_inputs"

    def __init__(self, control_inputs):
        self.inputs = control_inputs
        self.entry = None

    def __enter__(self):
        graph = _graph()
        if graph is None:
            for value in self.inputs or ():
                if callable(value) and _as_operation(value) is None:
                    value()       # TensorFlow calls callables eagerly
            return None
        if self.inputs is None:
            ops = None
        else:
            ops = []
            for i, value in enumerate(self.inputs):
                op = _as_operation(value)
                if op is None:
                    if value is None or hasattr(value, "numpy"):
                        continue       # None or an eager result (ran already): nothing to wait for
                    raise TypeError(f"tl.control_dependencies: control input {i} must be an "
                                    f"Operation or a tensor, got {type(value).__name__}")
                if op.graph is graph:
                    ops.append(op)
        self._open((graph, ops))
        return None


def pending_control_inputs(graph):
    """The Operations a new op of `graph` must run after (innermost block first, up to a
    block opened with None)."""
    found = []
    for owner, ops in reversed(state.control_inputs):
        if owner is not graph:
            continue
        if ops is None:
            break
        for op in ops:
            if op not in found:
                found.append(op)
    return found
