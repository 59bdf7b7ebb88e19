"""Constant folding: ops whose inputs are all constants become constants at trace time.

Owns: evaluating non-stateful single-output ops on Const inputs with their own
kernels (so the folded value is bit for bit what the op would compute at run
time), and shape arithmetic on static shapes (`Shape`, `Size`, `ZerosLike`,
`OnesLike` of fully-defined shapes, `Rank` of known rank). Invariants: stateful ops (random, variables,
print, asserts) are never folded; results over `MAX_ELEMENTS` are not folded
(they would bloat the graph); an op whose kernel raises is left alone, so the
error still happens at run time with the op's name and line. A folded op is
rewritten in place into a Const (its output tensor is kept).
"""
from .. import dtypes as _dt
from ..context import state
from .rewrite import become, const_value, each_subgraph

MAX_ELEMENTS = 1_000_000
_NEVER = frozenset(("Const", "Placeholder"))  # and ops with subgraphs (If, While)
_STATIC_SHAPE_OPS = frozenset(("Shape", "Size", "Rank", "ZerosLike", "OnesLike"))


def _static_value(op, xp):
    """The value of a shape query on a static shape, or None."""
    shape = op.inputs[0].shape if op.inputs else None
    if shape is None:
        return None
    if op.type == "Rank" and shape.rank is not None:
        return xp.asarray(shape.rank, dtype=_dt.int32.np)
    if op.type in ("ZerosLike", "OnesLike") and shape.is_fully_defined():
        # the value is fixed by the static shape, whatever the input's values
        fill = xp.zeros if op.type == "ZerosLike" else xp.ones
        return fill(tuple(int(d) for d in shape), dtype=op.inputs[0].dtype.np)
    if op.type in ("Shape", "Size") and shape.is_fully_defined():
        out_type = op.attrs.get("out_type", _dt.int32)
        dims = [int(d) for d in shape]
        if op.type == "Shape":
            return xp.asarray(dims, dtype=out_type.np).reshape((len(dims),))
        n = 1
        for d in dims:
            n *= d
        return xp.asarray(n, dtype=out_type.np)
    return None


def _evaluate(op, xp):
    values = [const_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    attrs = {k: v for k, v in op.attrs.items() if not k.startswith("_")}
    try:
        out = op.opdef.kernel(xp, *values, **attrs)
    except Exception:  # noqa: BLE001 -- the error must surface at run time, where it belongs
        return None
    return out


def constant_fold(graph):
    """Folds constant subexpressions of `graph` (and its If/While graphs) in place; returns it."""
    xp = state.xp
    for op in graph.operations:
        if op.type in _NEVER or op.opdef.subgraphs or op.stateful or len(op.outputs) != 1 or \
                op.opdef.num_outputs != 1:
            continue
        value = _static_value(op, xp) if op.type in _STATIC_SHAPE_OPS else None
        if value is None:
            value = _evaluate(op, xp)
        if value is None or not hasattr(value, "dtype") or value.size > MAX_ELEMENTS:
            continue
        out = op.outputs[0]
        if value.dtype != out.dtype.np or not out.shape.is_compatible_with(value.shape):
            continue
        # a copy: the constant must not share memory with another op's constant
        become(op, "Const", [], {"value": xp.array(value, copy=True), "dtype": out.dtype})
        op.control_inputs = []
    each_subgraph(graph, constant_fold)
    return graph
