"""Arithmetic simplification: algebraic identities that leave every value unchanged.

Owns: x*1, 1*x, x+0, 0+x, x-0, x/1 -> x (only when the constant does not
broadcast x to a bigger shape and the dtype is x's); a select whose constant
condition is all true (all false) -> its first (second) branch, when that has
the output's shape; -(-x) -> x; transpose of
transpose (perms composed, an identity perm dropped); reshape of reshape (the
outer one reads the original); a reshape to the input's own fully-defined
shape; a cast to the same dtype; Identity (and StopGradient, which after
autodiff is an identity) chains: an Identity that is not a graph output is
bypassed, and so is a CustomGradient (its rule served autodiff, which is done).
Invariants: nothing that changes NaN/Inf or integer results (never
x*0 -> 0, never x-x -> 0); only x+0 may turn a -0.0 into +0.0, as TensorFlow's
optimizer does. A rewritten op becomes an Identity of what it equals (in
place, so graph outputs keep their tensor); bypassed identities are removed;
other ops left without uses are removed by the dead code pass.
"""
from .rewrite import become, const_value, each_subgraph, resolve

_PASS_THROUGH = ("Identity", "StopGradient")


def _all_equal(value, number):
    return value.size > 0 and bool((value == number).all())


def _fits(c, x):
    """True if a constant of c's shape broadcast against x leaves x's shape and dtype."""
    if c.dtype is not x.dtype or x.shape.rank is None or c.shape.rank is None:
        return False
    if c.shape.rank > x.shape.rank:
        return False
    for dc, dx in zip(reversed(list(c.shape)), reversed(list(x.shape))):
        if dc != 1 and dc != dx:
            return False
    return True


def _neutral_operand(op):
    """x if `op` is x*1, 1*x, x+0, 0+x, x-0 or x/1 (see `_fits`), else None."""
    a, b = op.inputs
    candidates = {"Mul": ((a, b, 1), (b, a, 1)), "AddV2": ((a, b, 0), (b, a, 0)),
                  "Sub": ((a, b, 0),), "RealDiv": ((a, b, 1),)}[op.type]
    for x, c, number in candidates:
        value = const_value(c)
        if value is not None and _all_equal(value, number) and _fits(c, x) and \
                op.outputs[0].dtype is x.dtype:
            return x
    return None


def _chosen_operand(op):
    """The branch a SelectV2 with a constant condition, all true or all false, always picks
    (when neither the condition nor the other branch broadcasts it bigger), else None."""
    value = const_value(op.inputs[0])
    if value is None or value.size == 0:
        return None
    x = op.inputs[1] if bool(value.all()) else op.inputs[2] if not value.any() else None
    out = op.outputs[0]
    if x is None or not x.shape.is_fully_defined() or not out.shape.is_fully_defined() or \
            x.shape.as_list() != out.shape.as_list() or x.dtype is not out.dtype:
        return None
    return x


def _perm(op):
    perm = op.attrs.get("perm")
    rank = op.inputs[0].shape.rank
    if perm is None:
        return None if rank is None else tuple(range(rank - 1, -1, -1))
    return tuple(int(p) for p in perm)


def _rewrite(op):
    """Rewrites `op` in place if an identity applies."""
    t = op.type
    if t in ("Mul", "AddV2", "Sub", "RealDiv"):
        x = _neutral_operand(op)
        if x is not None:
            become(op, "Identity", [x], {})
    elif t == "SelectV2":
        x = _chosen_operand(op)
        if x is not None:
            become(op, "Identity", [x], {})
    elif t == "Neg":
        inner = op.inputs[0].op
        if inner.type == "Neg":
            become(op, "Identity", [inner.inputs[0]], {})
    elif t == "Cast":
        if op.inputs[0].dtype is op.attrs["DstT"]:
            become(op, "Identity", [op.inputs[0]], {})
    elif t == "Transpose":
        perm = _perm(op)
        inner = op.inputs[0].op
        if perm is not None and inner.type == "Transpose" and _perm(inner) is not None:
            first = _perm(inner)
            become(op, "Transpose", [inner.inputs[0]], {"perm": tuple(first[p] for p in perm)})
            perm = op.attrs["perm"]
        if perm is not None and perm == tuple(range(len(perm))):
            become(op, "Identity", [op.inputs[0]], {})
    elif t == "Reshape":
        inner = op.inputs[0].op
        if inner.type == "Reshape":
            op.inputs[0] = inner.inputs[0]
        x, out = op.inputs[0], op.outputs[0]
        if x.shape.is_fully_defined() and out.shape.is_fully_defined() and \
                x.shape.as_list() == out.shape.as_list():
            become(op, "Identity", [x], {})


def simplify(graph):
    """Applies the identities to `graph` (and its If/While graphs) in place; returns it."""
    outputs = {id(t) for t in graph.outputs}
    alias = {}
    kept = []
    for op in graph.operations:
        op.inputs = [resolve(alias, t) for t in op.inputs]
        if not op.stateful:
            _rewrite(op)
        if op.type in _PASS_THROUGH and id(op.outputs[0]) not in outputs and not op.control_inputs:
            alias[id(op.outputs[0])] = op.inputs[0]
            continue
        if op.type == "CustomGradient" and not op.control_inputs and \
                not any(id(t) in outputs for t in op.outputs):
            for i, t in enumerate(op.outputs):  # an identity once autodiff is done
                alias[id(t)] = op.inputs[i]
            continue
        kept.append(op)
    dropped = {id(op) for op in graph.operations} - {id(op) for op in kept}
    graph.operations = kept
    for op in kept:  # an op can wait on a dropped identity only through its control inputs
        op.control_inputs = [c for c in op.control_inputs if id(c) not in dropped]
    each_subgraph(graph, simplify)
    return graph
