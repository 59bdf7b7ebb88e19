"""Non-strict execution: drop every operation that neither the outputs nor a side effect needs.

Keeps: the graph's inputs (placeholders), everything the outputs depend on,
and every stateful operation with what it depends on (data and control
inputs). Branch and loop graphs of `If`/`While` are pruned too.
Invariant: the kept operations stay in their original (topological) order.
"""
from .rewrite import subgraphs


def prune(graph):
    """Removes unneeded operations from `graph` in place; returns it."""
    needed = set()
    stack = [t.op for t in graph.outputs]
    stack += [op for op in graph.operations if op.stateful and op.opdef.variable_access != "read"]
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        stack.extend(t.op for t in op.inputs)
        # a read only orders itself; its data edges keep it when it is used
        stack.extend(c for c in op.control_inputs if c.opdef.variable_access != "read")
    input_ops = {id(t.op) for t in graph.inputs}
    graph.operations = [op for op in graph.operations if id(op) in needed or id(op) in input_ops]
    for op in graph.operations:
        op.control_inputs = [c for c in op.control_inputs if id(c) in needed]
        for sub in subgraphs(op):
            prune(sub)
    return graph
