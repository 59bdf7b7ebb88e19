"""Shared im2col patches: convolutions and filter gradients that read one input build its
patches once.

Owns: finding the Conv2D/Conv3D ops and the Conv2DBackpropFilter/Conv3DBackpropFilterV2 ops
(1-D convolutions are 2-D ones over a height of 1) that read the same input tensor with the
same window geometry (filter spatial shape, strides, padding, explicit paddings, dilations),
and rewriting each such group of two or more into one `ConvPatches` op (the im2col matrix)
feeding `ConvFromPatches` (in a convolution's place) and `ConvFilterFromPatches` (in a filter
gradient's place); the ops are defined with the convolution kernels in `graph/ops/nn.py`.

Invariants:
- It runs after autodiff (the pass pipeline only sees finished graphs), so the new ops need no
  gradients and have none.
- The new ops make the same xp calls as the kernels they replace, so every result is
  bit-for-bit the same.
- Only ops with a static filter shape and static input dims other than the batch, at least one
  output position, and that are not depthwise (one input channel per group: those kernels
  take an einsum over a window view, with no patches) take part; a group of one is left
  alone, so a graph without such pairs comes back unchanged.
- Each member is rewritten in place (it keeps its name, output tensor and control inputs);
  the ConvPatches op is inserted right before the group's first member, after the input's
  producer, so topological order holds. If/While graphs are processed on their own.
- Cost: the patches (window size times the input) stay alive from the forward convolution
  to the filter gradient instead of being made twice.
"""
from ..ir import Operation
from ..op import REGISTRY, infer_outputs
from .rewrite import become, each_subgraph

CONVS = ("Conv2D", "Conv3D")
FILTER_GRADIENTS = ("Conv2DBackpropFilter", "Conv3DBackpropFilterV2")


def _static(shape):
    return None if shape.rank is None else shape.as_list()


def _key(op):
    """(input tensor id, geometry) for a convolution or filter gradient that can read shared
    patches, else None."""
    x, f = op.inputs[0], op.inputs[1]
    xs, fs = _static(x.shape), _static(f.shape)
    if xs is None or fs is None or None in fs or None in xs[1:]:
        return None
    rank = len(fs) - 2
    if fs[-2] == 0 or xs[-1] % fs[-2]:
        return None
    if fs[-2] == 1 and xs[-1] > 1:   # depthwise: no patches
        return None
    out = _static((op.outputs[0] if op.type in CONVS else op.inputs[2]).shape)
    if out is None or None in out[1:-1] or 0 in out[1:-1]:
        return None
    a = op.attrs
    explicit = a["explicit_paddings"]
    return (id(x), tuple(fs[:rank]), tuple(a["strides"]), a["padding"],
            None if explicit is None else tuple(explicit), tuple(a["dilations"]))


def share_patches(graph):
    """Rewrites groups of convolutions / filter gradients of `graph` (and of its If/While
    graphs) that share an input and geometry to share one ConvPatches op; returns the graph."""
    groups = {}
    for op in graph.operations:
        if op.type in CONVS or op.type in FILTER_GRADIENTS:
            key = _key(op)
            if key is not None:
                groups.setdefault(key, []).append(op)
    before = {}   # id(first member) -> ConvPatches op
    for (_, window, strides, padding, explicit, dilations), members in groups.items():
        if len(members) < 2:
            continue
        first = members[0]
        x = first.inputs[0]
        attrs = {"window": window, "strides": strides, "padding": padding,
                 "explicit_paddings": explicit, "dilations": dilations}
        opdef = REGISTRY["ConvPatches"]
        patches = Operation(graph, graph.unique_name("ConvPatches"), opdef, [x], attrs,
                            infer_outputs(opdef, [x], attrs), first.location, first.origin)
        cols = patches.outputs[0]
        for op in members:
            if op.type in CONVS:
                outs = tuple(op.outputs[0].shape.as_list()[1:-1])
                become(op, "ConvFromPatches", [cols, op.inputs[1]], {"outs": outs})
            else:
                filter_shape = tuple(op.inputs[1].shape.as_list())
                become(op, "ConvFilterFromPatches", [cols, op.inputs[2]],
                       {"filter_shape": filter_shape})
        before[id(first)] = patches
    if before:
        ops = []
        for op in graph.operations:
            if id(op) in before:
                ops.append(before[id(op)])
            ops.append(op)
        graph.operations = ops
    each_subgraph(graph, share_patches)
    return graph
