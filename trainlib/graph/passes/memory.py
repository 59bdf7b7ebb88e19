"""Memory planning: which intermediates die where, which dead buffers later ops reuse with out=,
which buffers live across calls, and which Variable writes may update the Variable's array
in place.

Owns: the analysis the executor (`graph/exec/lower.py`) follows when it emits the top level
of a graph. It reads only the ops' lowering facts (OpDef `ufunc`/`direct`, `fresh_output`,
`variable_access`); it never rewrites the graph.
Invariants: a buffer is reused only if a direct (ufunc-like) call made it and every consumer
is such a call too (or a Variable update reading it as its delta), so no view, Variable or
graph output can alias it; elementwise calls may
write into an input that dies at that call; matmul never overlaps its inputs. With
`persistent=True` every such buffer is a *slot* the compiled function keeps between calls
(one set per concurrent call): a value that may escape (a graph output, anything a kernel may
return a view of) never takes a slot, so nothing a call returns is written by a later call.
A slot of fully known shape is allocated once; one with unknown dims is (re)allocated for
the shape the call sees. A Variable
write is done in place only when its result is unused and every value that may alias an
earlier read of that Variable is dead before the write and is no graph output; Variables
pinned into one buffer (`variables.pin_storage`) are one storage, where reads and writes
conflict when their spans overlap. A 1-D ConcatV2 may be "joined": its buffer is allocated
before its first piece's producer, which (a direct call whose result only feeds it) writes
`out=` its slice, and only the other pieces are copied in (a flat optimizer's gradient).
"""


# glibc's malloc maps a block this large (or larger) fresh from the system: a value that big
# made anew on every call page-faults its way in
PRIVATE_MIN_BYTES = 128 * 1024


def storage_key(handle):
    """What a Variable write through `handle` may change: the storage group of the handle's
    Variable (Variables pinned into one buffer, `variables.pin_storage`, are one storage),
    else the handle itself."""
    variable = handle.op.attrs.get("_variable") if handle.op.type == "Placeholder" else None
    group = getattr(variable, "_pinned", None)
    return id(group) if group is not None else id(handle)


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

    nested = False   # a branch or loop body's plan (`nested=True`): see __init__

    def __init__(self, graph, persistent=False, nested=False):
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
            for i, t in enumerate(op.inputs):
                # an AssignAdd/AssignSub only reads its delta (the Variable takes a new array
                # or is written in place), as a direct call reads its inputs
                ok = direct[id(op)] is not None or (
                    op.opdef.variable_access == "update" and i == 1 and t is not op.inputs[0])
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
        self._plan_joined_concats(ops, direct)
        for op in ops:   # a joined buffer is fresh and nothing else aliases it: reusable too
            t = op.outputs[0] if id(op) in self.joined else None
            if t is not None and id(t) not in outputs and consumers_direct.get(id(t), False):
                self.reusable.add(id(t))
        # outputs that live in a joined concatenation's buffer: the written pieces and the
        # Reshapes (left out) between them and the concatenation
        inside = {id(op.outputs[0]) for op in ops
                  if id(op) in self.out_view or id(op) in self.skipped}
        free = {}                # (shape, dtype) -> [tensor ids]
        taken = set()            # dying inputs an elementwise op writes its result into
        live, peak, peak_unplanned, reused = 0, 0, 0, 0
        sizes = {}
        for i, op in enumerate(ops):
            t = op.outputs[0] if op.outputs else None
            key = (t.shape.as_tuple(), t.dtype) if t is not None and t.shape.is_fully_defined() else None
            size = nbytes(t)
            for concat in self.allocate.get(id(op), ()):   # a joined buffer, made here
                out = concat.outputs[0]
                live += nbytes(out)
                if persistent and id(out) in self.reusable:   # it cannot escape: a slot
                    self.slots[id(out)] = len(self.slot_specs)
                    self.slot_specs.append((out.shape.as_tuple(), out.dtype.np))
            into_input = None
            if t is not None and (id(t) in inside or id(op) in self.joined or
                                  op.opdef.variable_access is not None):
                size = 0   # written into (or is) a buffer counted when it was allocated, or
                #            a Variable's own array (what a read or write gives back)
            elif key is not None and t.shape.rank and (not persistent or id(t) in self.reusable) \
                    and (into_input := _dying_input(op, i, key, direct[id(op)], self.last_use,
                                                    self.reusable)) is not None:
                # elementwise: the result goes into an input of its shape that dies here (a
                # persistent plan's buffers are slots: only for values that cannot escape)
                self.out_buffer[id(op)] = id(into_input)
                taken.add(id(into_input))
                reused += size
                if persistent:
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
                sizes[id(out)] = 0 if id(out) in inside or op.opdef.variable_access is not None \
                    else nbytes(out)
            peak = max(peak, live)
            peak_unplanned += size
            dying = [x for x in op.inputs if self.last_use.get(id(x)) == i and id(x) in sizes]
            seen = set()
            for x in dying:
                if id(x) in seen:
                    continue
                seen.add(id(x))
                if id(x) in taken:   # its buffer lives on as the result (a `del` frees nothing)
                    taken.discard(id(x))
                    continue
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
        if persistent:
            self._private_slots(ops, direct, outputs)
        if nested:
            # a branch or loop body: its Variable reads may alias values from outside it, so
            # its writes are not planned here (they take their kernels)
            self.nested = True
            self.in_place, self.escaping_reads = set(), set()
        else:
            self._plan_variable_writes(ops, direct, outputs)

    def _private_slots(self, ops, direct, outputs):
        """Slots for large values (`PRIVATE_MIN_BYTES` and more) that no reuse planned and
        whose arrays, or views of them, never outlive the call: a direct call's result read
        through views (a reshape feeding a matmul, a loop reading its rows) and the buffers
        a While writes in place. Each is its own slot (nothing else is written into it), so
        only escaping matters: no graph output, Variable or stateful op may reach it
        through ops that may return views. Without a slot each would be memory the
        allocator maps fresh from the system, page by page, on every call."""
        consumers = {}
        for op in ops:
            for t in op.inputs:
                consumers.setdefault(id(t), []).append(op)

        def escapes(t):
            seen, stack = {id(t)}, [t]
            while stack:
                x = stack.pop()
                if id(x) in outputs:
                    return True
                for c in consumers.get(id(x), ()):
                    if direct[id(c)] is not None:   # a new array (or one the plan gave it)
                        continue
                    if c.stateful or c.opdef.variable_access is not None or \
                            _stateful_inside(c):
                        return True
                    if c.opdef.fresh_output:
                        continue
                    for out in c.outputs:   # may be (or hold) a view of it
                        if id(out) not in seen:
                            seen.add(id(out))
                            stack.append(out)
            return False

        for op in ops:
            if op.opdef.control == "while":
                owned, sums = loop_owned(op)
                candidates = [op.outputs[i] for i in (*owned, *sums)]
            elif direct[id(op)] is not None and len(op.outputs) == 1 and \
                    id(op) not in self.out_buffer and id(op) not in self.out_view:
                candidates = op.outputs
            else:
                continue
            for t in candidates:
                if id(t) in self.slots or nbytes(t) < PRIVATE_MIN_BYTES or escapes(t):
                    continue
                self.slots[id(t)] = len(self.slot_specs)
                self.slot_specs.append((t.shape.as_tuple(), t.dtype.np))

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

    def _plan_joined_concats(self, ops, direct):
        """Concatenations into 1-D buffers (a flat optimizer's gradient) whose pieces their
        producers write straight into the buffer: the buffer is allocated before the first
        producer, each direct-call producer gets `out=` a slice of it (through the Reshape to
        1-D that feeds the concatenation, when that is the piece's only use), and only the
        other pieces are copied in at the concatenation. Fills `allocate` (id(op) -> the
        ConcatV2 ops whose buffer is allocated before it), `out_view` (id(op) ->
        (concat op, start, stop, shape, the piece tensor)), `joined` (id(concat op) ->
        [(piece tensor, start, stop)] to copy) and `skipped` (the Reshapes in between, which
        the executor leaves out)."""
        self.allocate, self.out_view, self.joined, self.skipped = {}, {}, {}, set()
        uses = {}
        for op in ops:
            for t in op.inputs:
                uses.setdefault(id(t), []).append(op)
        position = {id(op): i for i, op in enumerate(ops)}
        for concat in ops:
            out = concat.outputs[0] if concat.outputs else None
            if concat.type != "ConcatV2" or out.shape.rank != 1 or \
                    not out.shape.is_fully_defined() or concat.attrs.get("axis") not in (0, -1):
                continue
            start, written, copied = 0, [], []
            for piece in concat.inputs:
                if not piece.shape.is_fully_defined() or piece.dtype is not out.dtype:
                    break
                stop = start + piece.shape.num_elements()
                producer, source = piece.op, piece
                if producer.type == "Reshape" and uses.get(id(piece)) == [concat]:
                    source = producer.inputs[0]
                    producer = source.op
                    only = uses.get(id(source)) == [piece.op]
                else:
                    only = True
                if only and uses.get(id(piece)) == [concat] and id(producer) in position and \
                        direct[id(producer)] is not None and len(producer.outputs) == 1 and \
                        source.shape.is_fully_defined() and source.shape.rank and \
                        source.dtype is out.dtype and id(producer) not in self.out_view:
                    written.append((producer, (concat, start, stop, source.shape.as_tuple(),
                                               source)))
                else:
                    copied.append((piece, start, stop))
                start = stop
            else:
                if written and start == out.shape.num_elements():
                    first = min(written, key=lambda w: position[id(w[0])])[0]
                    self.allocate.setdefault(id(first), []).append(concat)
                    for producer, view in written:
                        self.out_view[id(producer)] = view
                    self.joined[id(concat)] = copied
                    # the Reshapes between a written piece and the concatenation: no-ops
                    self.skipped.update(id(piece.op) for piece in concat.inputs
                                        if piece.op.type == "Reshape" and
                                        id(piece.op.inputs[0].op) in self.out_view and
                                        self.out_view[id(piece.op.inputs[0].op)][0] is concat)

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
        # Variables pinned into one shared buffer (an optimizer's flat parameters) are one
        # storage: a write to any of them waits for the reads of all
        by_storage = {}
        for op in ops:
            if op.opdef.variable_access is not None:
                by_storage.setdefault(storage_key(op.inputs[0]), []).append(op)
        for handle_ops in by_storage.values():
            handles = {id(op.inputs[0]): op.inputs[0] for op in handle_ops}.values()
            if any(c.opdef.variable_access is None
                   for handle in handles for c in consumers.get(id(handle), ())):
                # read inside If/While or a custom gradient: leave it alone; but a pinned
                # Variable's writes there go into its buffer in place, so the reads here
                # hand out snapshots
                if storage_key(handle_ops[0].inputs[0]) != id(handle_ops[0].inputs[0]):
                    self.escaping_reads.update(id(op) for op in handle_ops
                                               if op.opdef.variable_access == "read")
                continue
            # values that may alias the array: (span, aliases) per earlier read/write; two
            # Variables of one storage overlap where their spans in its buffer do
            pinned = storage_key(handle_ops[0].inputs[0]) != id(handle_ops[0].inputs[0])
            earlier = []
            for op in handle_ops:
                out = op.outputs[0]
                reads = op.opdef.variable_access == "read"
                used = id(out) in outputs or consumers.get(id(out))
                span = _span(op.inputs[0])
                live = [earlier_op for other, group, earlier_op in earlier
                        if _overlap(span, other) and any(
                            self.last_use.get(id(a), -1) >= position[id(op)] or id(a) in outputs
                            for a in group)]
                if not reads and not used and not live:
                    self.in_place.add(id(op))
                elif not reads and pinned:
                    # a pinned Variable's kernel writes into its buffer in place too: the
                    # reads still used after this write must hand out snapshots
                    self.escaping_reads.update(id(e) for e in live
                                               if e.opdef.variable_access == "read")
                if used or reads:
                    group = list(aliases(out))
                    earlier.append((span, group, op))
                    if reads and any(
                            id(a) in outputs or any(c.opdef.variable_access == "assign" and
                                                    c.inputs[1] is a
                                                    for c in consumers.get(id(a), ()))
                            for a in group):
                        # returned, or stored into a Variable: held beyond this call
                        self.escaping_reads.add(id(op))



def _dying_input(op, i, key, call, last_use, reusable):
    """An input of `op` (the `i`-th op, lowered as `call`, its `direct_call`) whose last use
    is `op`, whose buffer may be reused and whose (shape, dtype) is `key`, the result's:
    where an elementwise op may write its result. Only a plain ufunc (no argument
    templates) qualifies: a kernel taking out= may read its input after its first write."""
    if call is None or not op.opdef.elementwise or call[1] is not None or \
            not isinstance(call[0], str):
        return None
    for x in op.inputs:
        if last_use.get(id(x)) == i and id(x) in reusable and x.shape.is_fully_defined() and \
                (x.shape.as_tuple(), x.dtype) == key and sum(y is x for y in op.inputs) == 1:
            return x
    return None


def _span(handle):
    """(start, stop) of the handle's Variable in its storage's buffer; None: all of it."""
    variable = handle.op.attrs.get("_variable") if handle.op.type == "Placeholder" else None
    return getattr(variable, "_pinned_span", None)


def _overlap(a, b):
    return a is None or b is None or (a[0] < b[1] and b[0] < a[1])


# -- the buffers a While writes in place (read by the executor's While lowering too)

def _consumers(body):
    """id(tensor) -> the ops of `body` that read it."""
    consumers = {}
    for o in body.operations:
        for t in o.inputs:
            consumers.setdefault(id(t), []).append(o)
    return consumers


def _carried_only_to(body, consumers, out, i):
    """True if `out` is only carried to the next iteration, as loop variable `i` (directly or
    through one Identity): then nothing else can alias it."""
    after = consumers.get(id(out), [])
    if not after:
        carried = out
    elif len(after) == 1 and after[0].type == "Identity" and \
            not consumers.get(id(after[0].outputs[0])):
        carried = after[0].outputs[0]
    else:
        return False
    return [j for j, t in enumerate(body.outputs) if t is carried or t is out] == [i]


def loop_owned_writes(body, n_vars, consumers):
    """{loop variable index: its in-place write} for buffers the loop may write in place:
    the body's only use of the variable is one write by an op with an `in_place` form
    (besides reads of its shape, which an in-place write keeps), whose result is only
    carried to the next iteration, so no other value can alias it."""
    owned = {}
    for i, p in enumerate(body.inputs[:n_vars]):
        users = [o for o in consumers.get(id(p), []) if o.type != "Shape"]  # shape reads stay valid
        if len(users) != 1:
            continue
        write = users[0]
        if write.opdef.in_place is None or write.opdef.variable_access is not None or \
                write.inputs[0] is not p or any(t is p for t in write.inputs[1:]):
            continue
        if _carried_only_to(body, consumers, write.outputs[0], i):
            owned[i] = write
    return owned


def loop_owned_sums(body, n_vars, consumers, owned):
    """{loop variable index: (its AddV2, the GatherV2Grad added)} for a While gradient's sum
    of a captured tensor's row gradients, `acc = acc + GatherV2Grad(dy, i, params)` along
    axis 0, where the sum is all the body does with `acc` and carries it on in its own
    place: lowered as `acc[i] += dy` into a buffer the loop owns (TensorScatterAdd's
    in-place form), instead of a dense gradient and a full-size add per iteration."""
    sums = {}
    for i, p in enumerate(body.inputs[:n_vars]):
        users = consumers.get(id(p), [])
        if i in owned or len(users) != 1 or users[0].type != "AddV2":
            continue
        add = users[0]
        grad = add.inputs[1] if add.inputs[0] is p else add.inputs[0]
        if grad is p or grad.op.type != "GatherV2Grad" or grad.op.attrs.get("axis", 0) != 0 or \
                grad.op.attrs.get("batch_dims", 0) != 0 or len(consumers.get(id(grad), [])) != 1 \
                or any(t is grad for t in body.outputs) or grad.dtype is not p.dtype or \
                not p.shape.is_fully_defined() or p.shape != grad.shape or \
                add.outputs[0].shape != p.shape or grad.op.inputs[1].shape.rank not in (0, 1):
            continue
        if _carried_only_to(body, consumers, add.outputs[0], i):
            sums[i] = (add, grad.op)
    return sums


def loop_owned(op):
    """({loop variable index: its in-place write}, {index: (AddV2, GatherV2Grad)}) for the
    While `op`: the buffers its body writes in place (`loop_owned_writes`,
    `loop_owned_sums`), each the loop's own copy of the value that enters."""
    body = op.attrs[op.opdef.subgraphs[1]]
    consumers = _consumers(body)
    owned = loop_owned_writes(body, len(op.outputs), consumers)
    return owned, loop_owned_sums(body, len(op.outputs), consumers, owned)


def _stateful_inside(op):
    """True when a branch or body graph of `op` (at any depth) holds a stateful op."""
    for key in op.opdef.subgraphs:
        for inner in op.attrs[key].operations:
            if inner.stateful or _stateful_inside(inner):
                return True
    return False
