"""Convolution + bias as one op: the bias is added to each batch slice of the output right
after its matmul, in the convolution's kernel, instead of in a pass of its own.

Owns: finding `BiasAdd(Conv2D(x, f), b)` (and Conv3D) where nothing else reads the
convolution's output, and rewriting the BiasAdd in place into `FusedConv2D(x, f, b)`
(`FusedConv3D`; defined with the convolution kernels in `graph/ops/nn.py`, TensorFlow's
_FusedConv2D with BiasAdd), dropping the convolution.

Invariants:
- It runs after autodiff (the pass pipeline only sees finished graphs): the fused ops have
  no gradient, and the convolution's gradient ops (which read x and f, never its output)
  are untouched.
- The results are bit for bit those of the two kernels: the same matmul, then the same
  additions.
- The BiasAdd keeps its name and output tensor; the convolution (read by nothing else, not
  a graph output, with no control inputs and named by none) is removed. A bias that is not
  1-D of the output's channel count, or of another dtype, is left alone. If/While graphs
  are processed on their own.
"""
from .rewrite import become, each_subgraph, use_counts

FUSED = {"Conv2D": "FusedConv2D", "Conv3D": "FusedConv3D"}


def fuse_conv_bias(graph):
    """Rewrites each BiasAdd of a convolution's output in `graph` (and in its If/While
    graphs) into one fused op; returns the graph."""
    named = {id(c) for op in graph.operations for c in op.control_inputs}
    counts = use_counts(graph)
    outputs = {id(t) for t in graph.outputs}
    removed = set()
    for op in graph.operations:
        if op.type != "BiasAdd" or op.control_inputs or id(op) in named:
            continue
        value, bias = op.inputs
        conv = value.op
        if conv.type not in FUSED or conv.control_inputs or id(conv) in named or \
                counts.get(id(value)) != 1 or id(value) in outputs or id(conv) in removed:
            continue
        channels = value.shape[-1] if value.shape.rank else None
        if bias.shape.rank != 1 or channels is None or bias.shape[0] != channels or \
                bias.dtype is not value.dtype:
            continue
        become(op, FUSED[conv.type], [conv.inputs[0], conv.inputs[1], bias], dict(conv.attrs))
        removed.add(id(conv))
    if removed:
        graph.operations = [op for op in graph.operations if id(op) not in removed]
    each_subgraph(graph, fuse_conv_bias)
    return graph
