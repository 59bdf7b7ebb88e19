"""Memory planning: which intermediates die where, which dead buffers later ops reuse with out=,
which buffers live across calls, and which Variable writes may update the Variable's array
in place.

Owns: the analysis the executor (`graph/exec/lower.py`) follows when it emits the top level
of a graph. It reads only the ops' lowering facts (OpDef `ufunc`/`direct`, `fresh_output`,
`variable_access`); it never rewrites the graph.
Invariants: a buffer is reused only if a direct (ufunc-like) call made it and every consumer
is such a call too, so no view, Variable or graph output can alias it; elementwise calls may
write into an input that dies at that call; matmul never overlaps its inputs. With
`persistent=True` every such buffer is a *slot* the compiled function keeps between calls
(one set per concurrent call): a value that may escape (a graph output, anything a kernel may
return a view of) never takes a slot, so nothing a call returns is written by a later call.
A slot of fully known shape is allocated once; one with unknown dims is (re)allocated for
the shape the call sees. A Variable
write is done in place only when its result is unused and every value that may alias an
earlier read of that Variable is dead before the write and is no graph output.
"""


def direct_call(op):
    """`(xp function name, argument templates or None)` when `op` lowers to a plain xp call
    that accepts out= (its OpDef's `ufunc`, or what its `direct` rule says), else None."""
    opdef = op.opdef
    if opdef.ufunc is not None:
        return opdef.ufunc, None
    if opdef.direct is not None:
        return opdef.direct(op)
    return None


def nbytes(t):
    """The size of tensor `t`'s buffer when its shape is known, else 0."""
    if t is None or not t.shape.is_fully_defined() or t.dtype.np is None:
        return 0
    return t.shape.num_elements() * t.dtype.np.itemsize


def np_prod(shape):
    """The product of a shape's dims (1 for a scalar)."""
    n = 1
    for d in shape:
        n *= d
    return n


class MemoryPlan:
    """The plan for one graph (its top level).

    Attributes:
        last_use: id(tensor) -> index (in `ops`) of the last op that reads it.
        out_buffer: id(op) -> id(tensor) whose dead buffer the op writes into.
        frees: id(op) -> tensors that die after it (and are not reused).
        in_place: ids of the Variable writes lowered in place.
        escaping_reads: ids of the Variable reads the caller will hold (returned or stored).
        peak_bytes, reused_bytes, total_intermediate_bytes: the figures, planned and not.
        slots: id(tensor) -> index of the persistent slot its buffer is (persistent plans).
        slot_specs: per slot, (shape tuple, numpy dtype); the shape has None for unknown dims.
        dynamic_guards: id(op) -> its inputs whose shape the output takes, for the ops that
            write a slot of unknown dims (it is reused when its shape equals theirs).
        persistent_bytes: the bytes of the slots of known shape.
    """

    def __init__(self, graph, persistent=False):
        ops = [op for op in graph.operations if op.type not in ("Placeholder", "Const")]
        self.last_use = {}
        for i, op in enumerate(ops):
            for t in op.inputs:
                self.last_use[id(t)] = i
        for t in graph.outputs:
            self.last_use[id(t)] = len(ops)
        direct = {id(op): direct_call(op) for op in ops}
        consumers_direct = {}
        for op in ops:
            for t in op.inputs:
                ok = direct[id(op)] is not None
                consumers_direct[id(t)] = consumers_direct.get(id(t), True) and ok
        outputs = {id(t) for t in graph.outputs}
        self.reusable = set()
        for op in ops:
            if direct[id(op)] is None:
                continue
            t = op.outputs[0]
            if id(t) in outputs or not t.shape.is_fully_defined() or t.shape.rank == 0:
                continue
            if consumers_direct.get(id(t), False):
                self.reusable.add(id(t))
        self.ops = ops
        self.out_buffer = {}
        self.frees = {}
        self.slots, self.slot_specs, self.dynamic_guards = {}, [], {}
        if persistent:
            self._dynamic_slots(ops, direct, consumers_direct, outputs)
        free = {}                # (shape, dtype) -> [tensor ids]
        live, peak, peak_unplanned, reused = 0, 0, 0, 0
        sizes = {}
        for i, op in enumerate(ops):
            t = op.outputs[0] if op.outputs else None
            key = (t.shape.as_tuple(), t.dtype) if t is not None and t.shape.is_fully_defined() else None
            size = nbytes(t)
            into_input = None
            if persistent and key is not None and id(t) in self.reusable and \
                    op.opdef.elementwise and direct[id(op)][1] is None and \
                    isinstance(direct[id(op)][0], str):
                # an elementwise ufunc may write over an input of its shape that dies here
                # (a kernel taking out= may read its input after its first write: never)
                into_input = next((x for x in op.inputs if id(x) in self.reusable and
                                   self.last_use.get(id(x)) == i and
                                   (x.shape.as_tuple(), x.dtype) == key), None)
            if into_input is not None:
                self.out_buffer[id(op)] = id(into_input)
                reused += size
                self.slots[id(t)] = self.slots[id(into_input)]
            elif direct[id(op)] is not None and key in free and free[key] and t is not None \
                    and t.shape.rank and (not persistent or id(t) in self.reusable):
                # (a persistent plan's free buffers are slots: only values that cannot escape
                # may be written into them)
                self.out_buffer[id(op)] = free[key].pop()
                reused += size
                if persistent:
                    self.slots[id(t)] = self.slots[self.out_buffer[id(op)]]
            else:
                live += size
                if persistent and t is not None and id(t) in self.reusable:
                    self.slots[id(t)] = len(self.slot_specs)
                    self.slot_specs.append((t.shape.as_tuple(), t.dtype.np))
            for out in op.outputs:
                sizes[id(out)] = nbytes(out)
            peak = max(peak, live)
            peak_unplanned += size
            dying = [x for x in op.inputs if self.last_use.get(id(x)) == i and id(x) in sizes]
            seen = set() if into_input is None else {id(into_input)}  # that one lives on in t
            for x in dying:
                if id(x) in seen:
                    continue
                seen.add(id(x))
                if id(x) in self.reusable:
                    k = (x.shape.as_tuple(), x.dtype)
                    free.setdefault(k, []).append(id(x))
                else:
                    live -= sizes[id(x)]
                    self.frees.setdefault(id(op), []).append(x)
        self.peak_bytes = peak
        self.reused_bytes = reused
        self.persistent_bytes = sum(
            int(np_prod(shape)) * dtype.itemsize for shape, dtype in self.slot_specs
            if None not in shape)
        self.total_intermediate_bytes = peak_unplanned
        self._plan_variable_writes(ops, direct, outputs)

    def _dynamic_slots(self, ops, direct, consumers_direct, outputs):
        """Slots for elementwise direct results of unknown dims that cannot escape: their
        shape is that of each input of their rank (the others are scalars), so a slot is
        reused while those inputs keep the shape it was made for."""
        for op in ops:
            if direct[id(op)] is None or not op.opdef.elementwise or len(op.outputs) != 1:
                continue
            t = op.outputs[0]
            rank = t.shape.rank
            if id(t) in outputs or not rank or t.shape.is_fully_defined() or \
                    not consumers_direct.get(id(t), False) or t.dtype.np is None:
                continue
            if any(x.shape.rank != rank and x.shape.as_tuple() != () for x in op.inputs):
                continue
            self.dynamic_guards[id(op)] = [x for x in op.inputs if x.shape.rank == rank]
            self.slots[id(t)] = len(self.slot_specs)
            self.slot_specs.append((t.shape.as_tuple(), t.dtype.np))

    def _plan_variable_writes(self, ops, direct, outputs):
        """Which Variable writes may update the array in place, and which reads escape.

        A read whose aliases reach a graph output or are stored into a Variable
        "escapes": the caller will hold that array, so it is marked not owned.
        """
        position = {id(op): i for i, op in enumerate(ops)}
        consumers = {}
        for op in ops:
            for t in op.inputs:
                consumers.setdefault(id(t), []).append(op)

        def aliases(t):
            seen, stack = {id(t): t}, [t]
            while stack:
                for c in consumers.get(id(stack.pop()), ()):
                    if direct[id(c)] is None and not c.opdef.fresh_output:  # maybe a view
                        for out in c.outputs:
                            if id(out) not in seen:
                                seen[id(out)] = out
                                stack.append(out)
            return seen.values()

        self.in_place, self.escaping_reads = set(), set()
        by_handle = {}
        for op in ops:
            if op.opdef.variable_access is not None:
                by_handle.setdefault(id(op.inputs[0]), []).append(op)
        for handle_ops in by_handle.values():
            handle = handle_ops[0].inputs[0]
            if any(c.opdef.variable_access is None for c in consumers.get(id(handle), ())):
                continue  # read inside If/While or a custom gradient: leave it alone
            earlier = []  # values that may alias the array, one group per earlier read/write
            for op in handle_ops:
                out = op.outputs[0]
                reads = op.opdef.variable_access == "read"
                used = id(out) in outputs or consumers.get(id(out))
                if not reads and not used and all(
                        self.last_use.get(id(a), -1) < position[id(op)] and id(a) not in outputs
                        for group in earlier for a in group):
                    self.in_place.add(id(op))
                if used or reads:
                    group = list(aliases(out))
                    earlier.append(group)
                    if reads and any(
                            id(a) in outputs or any(c.opdef.variable_access == "assign" and
                                                    c.inputs[1] is a
                                                    for c in consumers.get(id(a), ()))
                            for a in group):
                        # returned, or stored into a Variable: held beyond this call
                        self.escaping_reads.add(id(op))

