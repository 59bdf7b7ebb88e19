"""Read forwarding: a Variable read with no write to that Variable since an earlier read
reuses the earlier read's value.

Owns: the one rewrite CSE may not do, since reads are stateful. Training steps
read each slot and the step counter many times (once per use in an update
rule); forwarding them lets CSE merge everything computed from them (Adam's
bias correction, once per step instead of once per variable).
Invariants: a read is forwarded only across operations that cannot write the
Variable: any op other than a read that takes its handle, or the handle of a Variable
pinned into the same buffer (a write, an If or While whose graphs might write it, a
custom gradient), ends the forwarding.
The dropped reads leave the stateful chain; control inputs naming them are
redirected to the kept read, which comes earlier.
"""
from .memory import storage_key
from .rewrite import each_subgraph, resolve


def forward_reads(graph):
    """Forwards redundant `ReadVariableOp`s in `graph` (and its If/While graphs); returns it."""
    last_read = {}      # id(handle tensor) -> the read op whose value is current
    sharing = {}        # storage key -> ids of the handles read from that storage
    alias, replaced, kept = {}, {}, []
    for op in graph.operations:
        op.inputs = [resolve(alias, t) for t in op.inputs]
        op.control_inputs = list(dict.fromkeys(replaced.get(id(c), c) for c in op.control_inputs))
        if op.opdef.variable_access == "read":
            handle = op.inputs[0]
            first = last_read.get(id(handle))
            if first is not None:
                alias[id(op.outputs[0])] = first.outputs[0]
                replaced[id(op)] = first
                continue
            last_read[id(handle)] = op
            sharing.setdefault(storage_key(handle), set()).add(id(handle))
        else:
            for t in op.inputs:
                if t.dtype.name == "resource":
                    # a write through one Variable of a pinned buffer (a flat optimizer's
                    # group) changes the others too
                    for h in sharing.pop(storage_key(t), {id(t)}):
                        last_read.pop(h, None)
                    last_read.pop(id(t), None)
        kept.append(op)
    graph.operations = kept
    graph.outputs = [resolve(alias, t) for t in graph.outputs]
    if hasattr(graph, "last_stateful") and id(graph.last_stateful) in replaced:
        graph.last_stateful = replaced[id(graph.last_stateful)]
    each_subgraph(graph, forward_reads)
    return graph
