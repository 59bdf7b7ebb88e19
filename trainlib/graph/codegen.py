"""Lowers a graph to ONE Python function over the backend's kernels, compiled once.

Owns: the generated source (readable, registered with `linecache` so tracebacks
and debuggers show it), the binding of kernels, attrs and constants as closure
variables (no per-op look-ups or checks at run time), `If`/`While` lowered to
Python `if`/`while` with their branch graphs inlined, and the map from a
generated line back to the Operation (and so the user's line) that made it.
Invariants: the generated function takes the graph's input arrays in
`graph.inputs` order and returns a tuple of the `graph.outputs` arrays; ops are
emitted in the graph's (topological, program) order.
"""
import keyword
import linecache
import re
import itertools

from .errors import InvalidArgumentError, OpError

_counter = itertools.count()

_SIMPLE = (bool, int, float, str, type(None))


def _is_literal(value):
    if isinstance(value, _SIMPLE):
        return not (isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))))
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    return False


class Program:
    """A compiled graph: `fn(*input_arrays) -> tuple of output arrays`, plus its source."""

    def __init__(self, fn, source, filename, line_ops):
        self.fn = fn
        self.source = source
        self.filename = filename
        self.line_ops = line_ops

    def op_at(self, lineno):
        return self.line_ops.get(lineno)


def _direct_ufunc(op):
    """The xp function an op lowers to directly (no kernel wrapper; accepts out=), or None."""
    name = op.opdef.ufunc
    if name is not None:
        return name
    if op.type == "MatMul" and all(t.shape.rank is not None and t.shape.rank >= 2 for t in op.inputs):
        if not any(op.attrs.get(k) for k in ("transpose_a", "transpose_b")):
            return "matmul"  # exactly the kernel when nothing is transposed and ranks are checked
        if all(t.shape.rank == 2 for t in op.inputs):
            return "matmul"  # 2-D: the transposes are `.T` views of the arguments (see _direct_args)
    return None


def _direct_args(op, args):
    """The argument expressions of a direct call: MatMul's transposes become `.T` views."""
    if op.type == "MatMul":
        flags = (op.attrs.get("transpose_a"), op.attrs.get("transpose_b"))
        return [f"{a}.T" if flag else a for a, flag in zip(args, flags)]
    return args


class MemoryPlan:
    """Which intermediates die where, and which dead buffers later ops reuse with out=.

    A value's buffer may be reused only if it was freshly made by a direct
    (ufunc-like) call and every consumer is such a call too, so no view,
    Variable or graph output can alias it. Elementwise ops may write into an
    input that dies at that op; matmul never overlaps its inputs.
    """

    def __init__(self, graph):
        ops = [op for op in graph.operations if op.type not in ("Placeholder", "Const")]
        self.last_use = {}
        for i, op in enumerate(ops):
            for t in op.inputs:
                self.last_use[id(t)] = i
        for t in graph.outputs:
            self.last_use[id(t)] = len(ops)
        direct = {id(op): _direct_ufunc(op) for op in ops}
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
        self.out_buffer = {}     # id(op) -> id(tensor) whose buffer it writes into
        self.frees = {}          # id(op) -> tensors that die after it (not reused)
        free = {}                # (shape, dtype) -> [tensor ids]
        live, peak, peak_unplanned, reused = 0, 0, 0, 0
        sizes = {}
        for i, op in enumerate(ops):
            t = op.outputs[0] if op.outputs else None
            key = (t.shape.as_tuple(), t.dtype) if t is not None and t.shape.is_fully_defined() else None
            size = _nbytes(t)
            if direct[id(op)] is not None and key in free and free[key] and t is not None \
                    and t.shape.rank:
                self.out_buffer[id(op)] = free[key].pop()
                reused += size
            else:
                live += size
            for out in op.outputs:
                sizes[id(out)] = _nbytes(out)
            peak = max(peak, live)
            peak_unplanned += size
            dying = [x for x in op.inputs if self.last_use.get(id(x)) == i and id(x) in sizes]
            seen = set()
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
        self.total_intermediate_bytes = peak_unplanned
        self._plan_variable_writes(graph, ops, direct, outputs)

    def _plan_variable_writes(self, graph, ops, direct, outputs):
        """Which Variable writes may update the array in place, and which reads escape.

        A write is done in place when its own result is unused and every value
        that may alias an earlier read of that Variable (the read, and what
        non-direct ops made from it: possibly views) is dead before the write
        and is no graph output. A read whose aliases reach a graph output
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
                    if direct[id(c)] is None and c.type not in _FRESH_OUTPUT_OPS:  # maybe a view
                        for out in c.outputs:
                            if id(out) not in seen:
                                seen[id(out)] = out
                                stack.append(out)
            return seen.values()

        self.in_place, self.escaping_reads = set(), set()
        by_handle = {}
        for op in ops:
            if op.type in _VARIABLE_OPS:
                by_handle.setdefault(id(op.inputs[0]), []).append(op)
        for handle_ops in by_handle.values():
            handle = handle_ops[0].inputs[0]
            if any(c.type not in _VARIABLE_OPS for c in consumers.get(id(handle), ())):
                continue  # read inside If/While or a custom gradient: leave it alone
            earlier = []  # (values that may alias the array, read op)
            for op in handle_ops:
                out = op.outputs[0]
                used = id(out) in outputs or consumers.get(id(out))
                if op.type != "ReadVariableOp" and not used and all(
                        self.last_use.get(id(a), -1) < position[id(op)] and id(a) not in outputs
                        for group, _ in earlier for a in group):
                    self.in_place.add(id(op))
                if used or op.type == "ReadVariableOp":
                    group = list(aliases(out))
                    earlier.append((group, op))
                    if op.type == "ReadVariableOp" and any(
                            id(a) in outputs or any(c.type == "AssignVariableOp" and c.inputs[1] is a
                                                    for c in consumers.get(id(a), ()))
                            for a in group):
                        # returned, or stored into a Variable: held beyond this call
                        self.escaping_reads.add(id(op))


# ops whose kernels always return newly made arrays (never a view or an input itself);
# values they produce cannot alias a Variable's array
_FRESH_OUTPUT_OPS = frozenset((
    "Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "ArgMax", "ArgMin", "MatMul", "BiasAdd",
    "Relu", "ReluGrad", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Conv2D",
    "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "AvgPool", "MaxPoolGrad",
    "AvgPoolGrad", "SparseSoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogitsGrad", "SoftmaxCrossEntropyWithLogits",
    "SigmoidCrossEntropyWithLogits", "Pow", "RealDiv", "SumToShapeOf", "Square", "Sqrt"))

_VARIABLE_OPS = ("ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")


def _nbytes(t):
    if t is None or not t.shape.is_fully_defined() or t.dtype.np is None:
        return 0
    return t.shape.num_elements() * t.dtype.np.itemsize


_KERNEL_ATTRS = {}


def _kernel_attrs(opdef):
    """The attr names a kernel takes, or None for all (a `**attrs` it reads). A kernel whose
    catch-all is named with a leading underscore (`**_static`) ignores the rest."""
    found = _KERNEL_ATTRS.get(opdef.name, False)
    if found is False:
        import inspect  # noqa: PLC0415
        try:
            params = inspect.signature(opdef.kernel).parameters.values()
        except (TypeError, ValueError):
            params = ()
        var_kw = [p for p in params if p.kind is p.VAR_KEYWORD]
        if var_kw and not var_kw[0].name.startswith("_"):
            found = None
        else:
            found = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        _KERNEL_ATTRS[opdef.name] = found
    return found


class _Emitter:
    def __init__(self, xp):
        self.xp = xp
        self.lines = []
        self.line_ops = {}
        self.consts = {}      # closure name -> value
        self.used = set(("xp",))
        self.in_place_ops = set()  # ids of ops lowered in place (loop-owned TensorArray writes)
        self.kernel_names = {}

    def fresh(self, base):
        base = re.sub(r"\W", "_", base).lower().strip("_") or "t"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "t_" + base
        name, n = base, 1
        while name in self.used:
            name = f"{base}_{n}"
            n += 1
        self.used.add(name)
        return name

    def bind(self, base, value):
        name = self.fresh(base)
        self.consts[name] = value
        return name

    def kernel(self, opdef):
        name = self.kernel_names.get(opdef.name)
        if name is None:
            name = self.kernel_names[opdef.name] = self.bind("k_" + opdef.name, opdef.kernel)
        return name

    def emit(self, indent, text, op=None):
        self.lines.append("    " * indent + text)
        if op is not None:
            self.line_ops[len(self.lines) + 1] = op  # +1: the def line comes first

    def direct(self, name):
        key = "xp_" + name
        if key not in self.consts:
            self.consts[key] = getattr(self.xp, name)
            self.used.add(key)
        return key

    # -- graphs
    def graph_body(self, graph, env, indent, plan=None):
        """Emits the ops of `graph`; `env` maps id(tensor) -> variable name (inputs pre-bound).

        With a MemoryPlan (top level only), dead buffers are reused through out= and other
        intermediates are deleted after their last use."""
        for op in graph.operations:
            if op.type == "Placeholder":
                continue
            if op.type == "Const":
                env[id(op.outputs[0])] = self.bind(op.name, op.attrs["value"])
                continue
            lower = _SPECIAL.get(op.type)
            if lower is not None:
                lower(self, op, env, indent)
                continue
            args = [env[id(t)] for t in op.inputs]
            ufunc = _direct_ufunc(op)
            if ufunc is not None:
                args = _direct_args(op, args)
                if plan is not None and id(op) in plan.out_buffer:
                    args.append(f"out={plan.names[plan.out_buffer[id(op)]]}")
                name = self.fresh(op.name)
                env[id(op.outputs[0])] = name
                self.emit(indent, f"{name} = {self.direct(ufunc)}({', '.join(args)})", op)
                if plan is not None:
                    plan.names[id(op.outputs[0])] = name
                    self._free(plan, op, indent)
                continue
            inline = getattr(op.opdef.kernel, "inline", None)
            if inline is not None:
                name = self.fresh(op.name)
                env[id(op.outputs[0])] = name
                self.emit(indent, f"{name} = {inline.format(*args)}", op)
                if plan is not None:
                    if id(op) in plan.escaping_reads:  # the caller will hold this array
                        self.emit(indent, f"{args[0]}._owned = False")
                    plan.names[id(op.outputs[0])] = name
                    self._free(plan, op, indent)
                continue
            if id(op) in self.in_place_ops:  # a loop-owned TensorArray buffer (_lower_while)
                lowering = self.bind("ip_" + op.type, op.opdef.kernel.in_place)
                name = self.fresh(op.name)
                env[id(op.outputs[0])] = name
                attrs = "".join(f", {k}={v!r}" for k, v in op.attrs.items()
                                if not k.startswith("_") and _is_literal(v))
                self.emit(indent, f"{name} = {lowering}(xp, {', '.join(args)}{attrs})", op)
                continue
            if plan is not None and id(op) in plan.in_place:
                lowering = self.bind("ip_" + op.type, op.opdef.kernel.in_place)
                self.emit(indent, f"{lowering}(xp, {', '.join(args)})", op)
                env[id(op.outputs[0])] = "None"  # unused, by the plan's rule
                self._free(plan, op, indent)
                continue
            wanted = _kernel_attrs(op.opdef)
            for key, value in op.attrs.items():
                if key.startswith("_") or (wanted is not None and key not in wanted):
                    continue
                text = repr(value) if _is_literal(value) else self.bind(f"{op.name}_{key}", value)
                args.append(f"{key}={text}")
            call = f"{self.kernel(op.opdef)}(xp{''.join(', ' + a for a in args)})"
            outs = [self.fresh(op.name if i == 0 else f"{op.name}_{i}") for i in range(len(op.outputs))]
            for t, name in zip(op.outputs, outs):
                env[id(t)] = name
            n = op.opdef.num_outputs
            if not outs:
                self.emit(indent, call, op)
            elif n == 1:
                self.emit(indent, f"{outs[0]} = {call}", op)
            else:
                self.emit(indent, f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}", op)
            if plan is not None:
                for t, name in zip(op.outputs, outs):
                    plan.names[id(t)] = name
                self._free(plan, op, indent)

    def _free(self, plan, op, indent):
        """`del` intermediates that die at `op` (large or unknown size) so memory returns early."""
        names = [plan.names[id(t)] for t in plan.frees.get(id(op), ())
                 if id(t) in plan.names and (_nbytes(t) >= 4096 or not t.shape.is_fully_defined())]
        if names:
            self.emit(indent, f"del {', '.join(dict.fromkeys(names))}")

    def inline(self, graph, input_names, indent):
        """Emits a branch/body graph with its inputs bound to `input_names`; returns output names."""
        env = {id(t): name for t, name in zip(graph.inputs, input_names)}
        self.graph_body(graph, env, indent)
        return [env[id(t)] for t in graph.outputs]


def _lower_if(em, op, env, indent):
    pred, *ins = [env[id(t)] for t in op.inputs]
    outs = [em.fresh(f"{op.name}_{i}") for i in range(len(op.outputs))]
    for t, name in zip(op.outputs, outs):
        env[id(t)] = name
    em.emit(indent, f"if {pred}:", op)
    for branch in (op.attrs["then_branch"], op.attrs["else_branch"]):
        results = em.inline(branch, ins, indent + 1)
        if outs:
            em.emit(indent + 1, f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = "
                                f"{', '.join(results)}{',' if len(results) == 1 else ''}", op)
        else:
            em.emit(indent + 1, "pass")
        if branch is op.attrs["then_branch"]:
            em.emit(indent, "else:", op)


def _loop_owned_writes(body, n_vars):
    """{loop variable index: the TensorArrayWrite op} for TensorArray buffers the loop may write
    in place: the body's only use of the variable is one write (besides reads of its shape,
    which an in-place write keeps), whose result is only carried to the next iteration
    (directly or through one Identity), so no other value can alias it."""
    consumers = {}
    for o in body.operations:
        for t in o.inputs:
            consumers.setdefault(id(t), []).append(o)
    owned = {}
    for i, p in enumerate(body.inputs[:n_vars]):
        users = [o for o in consumers.get(id(p), []) if o.type != "Shape"]
        if len(users) != 1:
            continue
        write = users[0]
        if write.type != "TensorArrayWrite" or write.inputs[0] is not p or \
                any(t is p for t in write.inputs[1:]):
            continue
        out = write.outputs[0]
        after = consumers.get(id(out), [])
        if not after:
            carried = out
        elif len(after) == 1 and after[0].type == "Identity" and \
                not consumers.get(id(after[0].outputs[0])):
            carried = after[0].outputs[0]
        else:
            continue
        places = [j for j, t in enumerate(body.outputs) if t is carried or t is out]
        if places == [i]:
            owned[i] = write
    return owned


def _lower_while(em, op, env, indent):
    n_vars = len(op.outputs)
    ins = [env[id(t)] for t in op.inputs]
    loop_vars = [em.fresh(f"{op.name}_v{i}") for i in range(n_vars)]
    captures = ins[n_vars:]
    owned = _loop_owned_writes(op.attrs["body"], n_vars)
    for i, (var, init) in enumerate(zip(loop_vars, ins[:n_vars])):
        # a buffer the loop writes in place starts as the loop's own copy (the value that
        # enters may be a constant or the caller's)
        em.emit(indent, f"{var} = {init}.copy()" if i in owned else f"{var} = {init}", op)
    em.in_place_ops.update(id(w) for w in owned.values())
    limit = op.attrs.get("maximum_iterations")
    counter = None
    if limit is not None:
        counter = em.fresh(f"{op.name}_iterations")
        em.emit(indent, f"{counter} = 0", op)
    em.emit(indent, "while True:", op)
    if counter is not None:
        em.emit(indent + 1, f"if {counter} >= {int(limit)}:", op)
        em.emit(indent + 2, "break")
        em.emit(indent + 1, f"{counter} += 1")
    (cond,) = em.inline(op.attrs["cond"], loop_vars + captures, indent + 1)
    em.emit(indent + 1, f"if not {cond}:", op)
    em.emit(indent + 2, "break")
    results = em.inline(op.attrs["body"], loop_vars + captures, indent + 1)
    if loop_vars:
        em.emit(indent + 1, f"{', '.join(loop_vars)}{',' if n_vars == 1 else ''} = "
                            f"{', '.join(results)}{',' if n_vars == 1 else ''}", op)
    for t, var in zip(op.outputs, loop_vars):
        env[id(t)] = var


_SPECIAL = {"If": _lower_if, "While": _lower_while}


def compile_graph(graph, xp, name="graph_fn", plan_memory=True):
    """Compiles `graph` to a Program whose `fn(*arrays)` returns the output arrays.

    `plan_memory` frees intermediates after their last use and reuses dead
    buffers through out= (the Program's `memory` reports the figures)."""
    em = _Emitter(xp)
    fname = re.sub(r"\W", "_", name) or "graph_fn"
    if not fname[0].isalpha():
        fname = "f_" + fname
    em.used.add(fname)  # no op output may shadow the function's own name
    params = [em.fresh(t.op.name) for t in graph.inputs]
    env = {id(t): p for t, p in zip(graph.inputs, params)}
    plan = MemoryPlan(graph) if plan_memory else None
    if plan is not None:
        plan.names = {}
    em.graph_body(graph, env, 1, plan)
    outs = [env[id(t)] for t in graph.outputs]
    em.emit(1, f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    body = f"def {fname}({', '.join(params)}):\n" + "\n".join(em.lines) + "\n"
    closure = sorted(em.consts)
    source = (f"def make({', '.join(['xp'] + closure)}):\n"
              + "".join("    " + line + "\n" for line in body.splitlines())
              + f"    return {fname}\n")
    filename = f"<trainlib-graph-{next(_counter)}-{fname}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 -- our own generated code
    fn = namespace["make"](xp, *[em.consts[c] for c in closure])
    # line numbers: `make` adds one line before the function's def line
    line_ops = {line + 1: op for line, op in em.line_ops.items()}
    program = Program(fn, body, filename, line_ops)
    program.memory = None if plan is None else {
        "peak_bytes": plan.peak_bytes, "reused_bytes": plan.reused_bytes,
        "unplanned_peak_bytes": plan.total_intermediate_bytes}
    return program


def translate_error(program, error):
    """A tl.errors.* for an exception raised inside `program`, naming the op and the user's line."""
    tb = error.__traceback__
    op = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == program.filename:
            op = program.op_at(tb.tb_lineno)
        tb = tb.tb_next
    if op is None:
        return None
    where = f" (defined at {op.location})" if op.location else ""
    message = error.message if isinstance(error, OpError) else f"{type(error).__name__}: {error}"
    cls = type(error) if isinstance(error, OpError) else InvalidArgumentError
    if isinstance(error, MemoryError):
        from .errors import ResourceExhaustedError  # noqa: PLC0415
        cls = ResourceExhaustedError
    message = re.sub(r" \(at [^()]*\)$", "", message)
    return cls(f"{op.type} (operation '{op.name}'): {message}{where}", op=op.type, location=op.location)
