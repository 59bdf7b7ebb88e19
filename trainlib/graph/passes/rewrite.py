"""Helpers the passes share: walking nested graphs, rewiring uses, turning ops into others.

Owns: the few graph edits every pass needs, so that each pass says only what
it rewrites. Invariants: an edit keeps the graph's topological order; an
Operation rewritten in place keeps its output tensors (so consumers, graph
outputs and control inputs that name it stay valid).
"""
from ..op import REGISTRY

def subgraphs(op):
    """The branch/body graphs an op holds (`If`, `While`: its OpDef's `subgraphs` attrs)."""
    return [op.attrs[k] for k in op.opdef.subgraphs if op.attrs.get(k) is not None]


def each_subgraph(graph, run):
    """Applies `run(subgraph)` to every If/While graph nested in `graph` (recursively)."""
    for op in graph.operations:
        for sub in subgraphs(op):
            run(sub)


def use_counts(graph):
    """id(tensor) -> how many times ops and graph outputs of `graph` read it."""
    counts = {}
    for op in graph.operations:
        for t in op.inputs:
            counts[id(t)] = counts.get(id(t), 0) + 1
    for t in graph.outputs:
        counts[id(t)] = counts.get(id(t), 0) + 1
    return counts


def resolve(alias, t):
    """The tensor `t` stands for after the rewrites recorded in `alias` (id -> tensor)."""
    while id(t) in alias:
        t = alias[id(t)]
    return t


def rewire(graph, alias):
    """Points every input and graph output of `graph` at what `alias` maps it to."""
    if not alias:
        return
    for op in graph.operations:
        op.inputs = [resolve(alias, t) for t in op.inputs]
    graph.outputs = [resolve(alias, t) for t in graph.outputs]


def become(op, type_name, inputs, attrs):
    """Rewrites `op` in place into op `type_name` with `inputs` and `attrs` (outputs kept)."""
    op.opdef = REGISTRY[type_name]
    op.inputs = list(inputs)
    op.attrs = attrs


def const_value(t):
    """The array of `t` if a Const op produces it, else None."""
    return t.op.attrs["value"] if t.op.type == "Const" else None
