"""Common subexpression elimination: identical operations are computed once.

Owns: merging operations with the same type, the same inputs (by identity,
after earlier merges), equal attrs (arrays compared by dtype, shape and
bytes) and the same control inputs. Invariants: stateful ops (random draws,
variable reads and writes, print, asserts) and placeholders are never
merged; the first of equal operations is kept, so topological order holds;
If/While graphs are processed on their own (their ops never merge with the
enclosing graph's).
"""
from ..tensor import TensorShape
from .rewrite import each_subgraph, resolve


def _freeze(value):
    """A hashable stand-in for an attr value that is equal exactly when the values are."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "tobytes"):
        host = value.get() if hasattr(value, "get") and not hasattr(value, "__array_interface__") \
            else value
        return ("array", str(host.dtype), tuple(host.shape), host.tobytes())
    if isinstance(value, TensorShape):
        return ("shape", None if value.rank is None else tuple(value.as_list()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__name__, value)  # 1, 1.0 and True stay apart


def _key(op):
    return (op.type, tuple(id(t) for t in op.inputs),
            tuple(sorted((k, _freeze(v)) for k, v in op.attrs.items())),
            tuple(id(c) for c in op.control_inputs))


def cse(graph):
    """Merges duplicate operations of `graph` (and of its If/While graphs) in place; returns it."""
    seen = {}
    alias = {}
    replaced = {}   # id(dropped op) -> kept op, for control inputs
    kept = []
    for op in graph.operations:
        op.inputs = [resolve(alias, t) for t in op.inputs]
        op.control_inputs = [replaced.get(id(c), c) for c in op.control_inputs]
        if op.stateful or op.type == "Placeholder" or not op.outputs:
            kept.append(op)
            continue
        key = _key(op)
        try:
            first = seen.setdefault(key, op)
        except TypeError:
            kept.append(op)
            continue
        if first is op:
            kept.append(op)
            continue
        for mine, theirs in zip(op.outputs, first.outputs):
            alias[id(mine)] = theirs
        replaced[id(op)] = first
    graph.operations = kept
    graph.outputs = [resolve(alias, t) for t in graph.outputs]
    each_subgraph(graph, cse)
    return graph
