"""Max pooling before a ReLU: the ReLU and its gradient run on the pooled, smaller tensor.

Owns: finding `r = Relu(z)` read only by one `y = MaxPool(r)` (or MaxPool3D) and, in a
training graph, by that pooling's gradient `g = MaxPoolGrad(r, y, dy)` and one
`ReluGrad(g, r)` (what autodiff makes of a conv layer's ReLU followed by max pooling), and
rewriting them as `y' = MaxPool(z)`, `y = Relu(y')`, `ReluGrad(dy, y)` and
`MaxPoolGrad(z, y', ReluGrad(dy, y))`. With 2x2 pooling the ReLU and its gradient touch a
quarter of the elements, and the full-size ReLU output is never made.

Why it is exact: max and ReLU commute (ReLU is monotonic, and both propagate NaN); where a
window's maximum is positive the positions equal to it are the same in z and in relu(z), so
the gradient goes to the same first maximum; where it is not positive (or NaN) both forms
give that window's gradient 0 (the ReLU gradient of a non-positive output). Overlapping
windows add the same contributions in the same order (others add zeros), so the results
are the same values, up to the sign of a zero.

Invariants:
- It runs after autodiff (the pass pipeline only sees finished graphs); it makes only ops
  that exist in the graph's vocabulary (Relu, ReluGrad, MaxPool, MaxPoolGrad).
- The tensors y and the input gradient keep their producers' identities (rewritten in
  place with `become`), so graph outputs and later consumers stay valid; r and g disappear
  (nothing else reads them). Ops with control inputs, or that a control input names, are
  left alone, as are r or g when they are graph outputs. If/While graphs are processed on
  their own.
"""
from ..ir import Operation
from ..op import REGISTRY, infer_outputs
from .rewrite import become, each_subgraph, use_counts

POOLS = {"MaxPool": "MaxPoolGrad", "MaxPool3D": "MaxPool3DGrad"}


def _match(relu, readers, counts, outputs, named):
    """(pool, pool gradient or None, relu gradient or None) where `relu` can move behind its
    pooling, else None."""
    r = relu.outputs[0]
    users = readers.get(id(r), [])
    if id(r) in outputs or any(u.control_inputs or id(u) in named for u in users):
        return None
    pools = [u for u in users if u.type in POOLS and u.inputs[0] is r]
    if len(pools) != 1:
        return None
    pool = pools[0]
    if len(users) == 1:
        return pool, None, None
    grads = [u for u in users if u.type == POOLS[pool.type] and u.inputs[0] is r and
             u.inputs[1] is pool.outputs[0] and u.attrs == pool.attrs]
    if len(users) != 3 or len(grads) != 1:
        return None
    grad = grads[0]
    g = grad.outputs[0]
    back = [u for u in users if u.type == "ReluGrad" and u.inputs[1] is r and u.inputs[0] is g]
    if len(back) != 1 or counts.get(id(g)) != 1 or id(g) in outputs:
        return None
    return pool, grad, back[0]


def pool_before_relu(graph):
    """Rewrites each ReLU + max pooling (and their gradients) of `graph` and of its If/While
    graphs as max pooling + ReLU; returns the graph."""
    named = {id(c) for op in graph.operations for c in op.control_inputs}
    readers, counts = {}, use_counts(graph)   # id(tensor) -> the ops reading it, per slot
    for op in graph.operations:
        for t in op.inputs:
            readers.setdefault(id(t), []).append(op)
    outputs = {id(t) for t in graph.outputs}
    before, removed = {}, set()   # id(op) -> op to insert before it; ids of ops dropped
    for relu in graph.operations:
        if relu.type != "Relu" or relu.control_inputs or id(relu) in named:
            continue
        found = _match(relu, readers, counts, outputs, named)
        if found is None:
            continue
        pool, grad, back = found
        z, attrs = relu.inputs[0], dict(pool.attrs)
        # each op keeps the name of the kind it is now (readable generated code)
        pooled = _new(graph, pool.type, [z], attrs, relu, pool.name)
        become(pool, "Relu", [pooled.outputs[0]], {})
        pool.name = relu.name
        before[id(relu)] = pooled
        removed.add(id(relu))
        if grad is not None:
            masked = _new(graph, "ReluGrad", [grad.inputs[2], pool.outputs[0]], {}, grad,
                          back.name)
            become(back, grad.type, [z, pooled.outputs[0], masked.outputs[0]], attrs)
            back.name = grad.name
            before[id(grad)] = masked
            removed.add(id(grad))
    if before:
        ops = []
        for op in graph.operations:
            if id(op) in before:
                ops.append(before[id(op)])
            if id(op) not in removed:
                ops.append(op)
        graph.operations = ops
    each_subgraph(graph, pool_before_relu)
    return graph


def _new(graph, type_name, inputs, attrs, where, name):
    """A new op `name` of `type_name` (not yet in `graph.operations`) at the source location
    of `where`."""
    opdef = REGISTRY[type_name]
    return Operation(graph, name, opdef, inputs, attrs, infer_outputs(opdef, inputs, attrs),
                     where.location)
