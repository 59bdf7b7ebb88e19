"""Elementwise fusion: maximal trees of elementwise ops become one `FusedElementwise` op.

Owns: finding the clusters and building the fused op (its sub-program, see
`graph/ops/fused.py`). A cluster grows from a root (walking the graph
backwards) over producers that are elementwise, not stateful, single-output,
of the root's static output shape (None dims must sit where the root's are),
without control edges, and whose every use is inside the cluster (so no
intermediate is needed outside and none is computed twice). One-element float
and bool constant inputs are also listed in attr `constants` (a compiled kernel writes
them as literals). Invariants: the fused op takes the root's place and output tensor, so topological order,
consumers and graph outputs hold; members are removed; clusters of one op
are left as they are, except before a reduction: with `jit_compile`, a Sum, Mean, Max or
Min whose input is a cluster's root used only there ends the cluster, and the two become one
`FusedReduction` (a loss term, a mean of squares); If/While graphs are fused on their own.
"""
from ..context import state
from ..exec import native
from ..op import REGISTRY
from ..ops import fused
from .rewrite import each_subgraph, use_counts


def _candidate(op):
    return (op.opdef.elementwise and not op.stateful and len(op.outputs) == 1
            and op.opdef.num_outputs == 1 and not op.control_inputs
            and op.type != "FusedElementwise")


def _same_shape(a, b):
    return a.rank is not None and b.rank is not None and a.as_list() == b.as_list()


REDUCTIONS = ("Sum", "Mean", "Max", "Min")


def worth_fusing():
    """The fewest elements a cluster needs to be fused on the current device: on numpy,
    smaller ones run faster as the compiled graph's direct ufunc calls (into planned
    buffers) than through a fused op (native kernels from `native.NATIVE_MIN` elements,
    blocked numpy loops from 2 * `fused.BLOCK`); on a GPU every cluster (one kernel launch)."""
    if getattr(state.xp, "__name__", "") != "numpy":
        return 0
    return native.NATIVE_MIN if native.installed() else 2 * fused.BLOCK


def _elements(shape):
    """The static element count of `shape`, or None when a dim is unknown."""
    if shape.rank is None or not shape.is_fully_defined():
        return None
    count = 1
    for n in shape.as_list():
        count *= n
    return count


def fuse(graph, jit_compile=True, min_elements=0):
    """Fuses elementwise clusters of `graph` (and of its If/While graphs) in place; returns it.

    Args:
        graph: the graph (after autodiff and the other passes).
        jit_compile: run fused ops cache-blocked (numpy) or as one CuPy kernel;
            False runs each step's kernel in turn (only dispatch is saved).
        min_elements: clusters whose static size is known and smaller stay unfused
            (`worth_fusing()` is the pipeline's choice).
    """
    uses = use_counts(graph)
    waited_on = {id(c) for op in graph.operations for c in op.control_inputs}
    position = {id(op): i for i, op in enumerate(graph.operations)}
    taken = set()
    replaced = {}   # id(root) -> fused op
    for root in reversed(graph.operations):
        if id(root) in taken or id(root) in waited_on:
            continue
        if root.type in REDUCTIONS and jit_compile:
            # a reduction whose input is an elementwise cluster used only here ends it
            t = root.inputs[0]
            head = t.op
            if id(head) in taken or not _candidate(head) or id(head) in waited_on or \
                    uses.get(id(t), 0) != 1 or not t.shape.is_fully_defined() or \
                    root.control_inputs or len(root.inputs) != 1 or \
                    _elements(t.shape) < min_elements:
                continue
            members = _grow(head, uses, taken, waited_on)
            taken.update(members)
            taken.add(id(root))
            ordered = sorted(members.values(), key=lambda o: position[id(o)])
            replaced[id(root)] = _fused_op(graph, ordered + [root], jit_compile, reduce=True)
            continue
        if not _candidate(root):
            continue
        size = _elements(root.outputs[0].shape)
        if size is not None and size < min_elements:
            continue
        members = _grow(root, uses, taken, waited_on)
        if len(members) < 2:
            continue
        taken.update(members)
        replaced[id(root)] = _fused_op(graph, sorted(members.values(), key=lambda o: position[id(o)]),
                                       jit_compile)
    if replaced:
        graph.operations = [replaced.get(id(op), op) for op in graph.operations
                            if id(op) not in taken or id(op) in replaced]
    each_subgraph(graph, lambda sub: fuse(sub, jit_compile, min_elements))
    return graph


def _grow(root, uses, taken, waited_on):
    """The cluster of `root`: {id: op} over producers that qualify (see the module doc)."""
    shape = root.outputs[0].shape
    members = {id(root): root}
    internal_uses = {}
    stack = [root]
    while stack:
        op = stack.pop()
        for t in op.inputs:
            producer = t.op
            internal_uses[id(t)] = internal_uses.get(id(t), 0) + 1
            if id(producer) in members or id(producer) in taken or not _candidate(producer) \
                    or id(producer) in waited_on or not _same_shape(t.shape, shape):
                continue
            if internal_uses[id(t)] == uses.get(id(t), 0):
                members[id(producer)] = producer
                stack.append(producer)
    return members


def _fused_op(graph, members, jit_compile, reduce=False):
    """Turns the root (last member) into the FusedElementwise op of the cluster; with
    `reduce`, the last member is a reduction of the others' result: a FusedReduction."""
    reduction = members.pop() if reduce else None
    produced = {id(op.outputs[0]): i for i, op in enumerate(members)}
    inputs, slot_of = [], {}
    for op in members:
        for t in op.inputs:
            if id(t) not in produced and id(t) not in slot_of:
                slot_of[id(t)] = len(inputs)
                inputs.append(t)
    n = len(inputs)
    program = []
    for op in members:
        slots = tuple(n + produced[id(t)] if id(t) in produced else slot_of[id(t)] for t in op.inputs)
        attrs = tuple(sorted((k, v) for k, v in op.attrs.items() if not k.startswith("_")))
        program.append((op.type, slots, attrs))
    root = reduction or members[-1]
    kind = "FusedReduction" if reduction else "FusedElementwise"
    attrs = {"program": tuple(program), "jit_compile": bool(jit_compile)}
    if reduction is not None:
        axis = reduction.attrs.get("axis")
        attrs["reduce"] = (reduction.type, None if axis is None else tuple(axis),
                           bool(reduction.attrs.get("keepdims", False)))
    root.opdef = REGISTRY[kind]
    root.inputs = inputs
    root.attrs = attrs
    constants = _scalar_constants(inputs)
    if constants:
        root.attrs["constants"] = constants
    root.name = graph.unique_name(kind)
    return root


def _scalar_constants(inputs):
    """((input slot, value), ...) for inputs that are one-element float or bool constants:
    compiled kernels write them as literals (`x ** 2` as `x * x`)."""
    found = []
    for i, t in enumerate(inputs):
        if t.op.type != "Const":
            continue
        value = t.op.attrs["value"]
        if getattr(value, "size", 0) == 1 and value.dtype.kind in "fb":
            found.append((i, value.reshape(()).item()))
    return tuple(found)
