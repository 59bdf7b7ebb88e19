"""One softmax for a sparse cross-entropy and its gradient.

Owns: finding a `SparseSoftmaxCrossEntropyWithLogits` and a
`SparseSoftmaxCrossEntropyWithLogitsGrad` that read the same labels and logits (what
autodiff makes of a sparse categorical cross-entropy loss), and putting one
`SparseSoftmaxCrossEntropyWithLogitsAndGrad` op (TensorFlow's op, both results of one
softmax; defined in `graph/ops/nn.py`) in their place.

Invariants:
- It runs after autodiff (the pass pipeline only sees finished graphs); the new op needs no
  gradient and has none.
- The new op's results are bit for bit the two kernels' results.
- The pair's outputs are rewired to the new op's two outputs; the new op is inserted where
  the first of the pair stood (both inputs are made before either op), and the pair is
  removed. An op of the pair with control inputs or that a control input names is left
  alone. If/While graphs are processed on their own.
"""
from ..ir import Operation
from ..op import REGISTRY, infer_outputs
from .rewrite import each_subgraph, rewire

FORWARD = "SparseSoftmaxCrossEntropyWithLogits"
GRADIENT = "SparseSoftmaxCrossEntropyWithLogitsGrad"
FUSED = "SparseSoftmaxCrossEntropyWithLogitsAndGrad"


def share_softmax(graph):
    """Rewrites each forward/gradient pair of `graph` (and of its If/While graphs) into one
    op; returns the graph."""
    named = {id(c) for op in graph.operations for c in op.control_inputs}
    pairs = {}   # (id(labels), id(logits)) -> {type: op}
    for op in graph.operations:
        if op.type in (FORWARD, GRADIENT) and not op.control_inputs and id(op) not in named:
            pairs.setdefault((id(op.inputs[0]), id(op.inputs[1])), {}).setdefault(op.type, op)
    alias, replaced = {}, {}
    opdef = REGISTRY[FUSED]
    position = {id(op): i for i, op in enumerate(graph.operations)} if pairs else {}
    for pair in pairs.values():
        if len(pair) < 2:
            continue
        forward, gradient = pair[FORWARD], pair[GRADIENT]
        first = min(forward, gradient, key=lambda op: position[id(op)])
        inputs = list(forward.inputs)
        fused = Operation(graph, graph.unique_name(FUSED), opdef, inputs, {},
                          infer_outputs(opdef, inputs, {}), first.location, first.origin)
        alias[id(forward.outputs[0])] = fused.outputs[0]
        alias[id(gradient.outputs[0])] = fused.outputs[1]
        replaced[id(first)] = fused
        replaced[id(gradient if first is forward else forward)] = None
    if replaced:
        graph.operations = [replaced.get(id(op), op) for op in graph.operations
                            if replaced.get(id(op), op) is not None]
        rewire(graph, alias)
    each_subgraph(graph, share_softmax)
    return graph
