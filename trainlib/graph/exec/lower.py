"""Lowering: a graph's operations as the lines of one Python function, one small function
per kind of op, chosen through the OpDef's lowering facts.

Kinds, in the order they are tried: graph inputs and constants (bound, not run); `If` and
`While` (OpDef `control`) as Python `if` / `while` with their graphs inlined; direct xp
calls (`ufunc` / `direct`), which take `out=` buffers from the memory plan; inline
expressions (`inline`: a Variable read); Identity while only one device is loaded (a new
name for the same value: its kernel only moves values between devices); in-place writes (`in_place`: Variable updates the
memory plan allows, TensorArray writes into a buffer the loop owns); and the kernel call.
Each block starts with a `# file.py:LINE` comment naming the user's line that made it.
With profiling `hooks` (graph/profiler.py; a separate Program, never the default one)
each op's block is wrapped in `t = clock()` ... `record((site, t, clock(), thread()))`.
Names say what values are: a Variable's read is `kernel_value`, `x * 2.0` is `x_times_2`,
a short constant is `c_0_5`, other values take their op's name (`bias_add`, `matmul_1`).
Invariants: ops are emitted in the graph's (topological, program) order; the function
takes `graph.inputs` in order and returns the tuple of `graph.outputs`.
"""
import inspect
import os
import re

from .. import threads as _threads
from ..backend import several_devices
from ..op import get_opdef
from ..passes.memory import MemoryPlan, direct_call, loop_owned, nbytes
from .emit import snake_case

_SIMPLE = (bool, int, float, str, type(None))


def is_literal(value):
    """True for values whose repr is valid Python that rebuilds them (so they are written
    into the source rather than bound)."""
    if isinstance(value, _SIMPLE):
        return not (isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))))
    if isinstance(value, tuple):
        return all(is_literal(v) for v in value)
    return False


_KERNEL_ATTRS = {}


def kernel_attrs(opdef, attrs):
    """The attrs `opdef`'s kernel takes (skipping trainlib's own `_` annotations). A kernel
    with a `**attrs` catch-all takes them all; one named with a leading underscore
    (`**_static`) ignores the rest."""
    found = _KERNEL_ATTRS.get(opdef.name, False)
    if found is False:
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
    return {k: v for k, v in attrs.items()
            if not k.startswith("_") and (found is None or k in found)}


def _tuple(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _assign(targets, values):
    """`a = b` for one name, `a, b = c, d` for several."""
    if len(targets) == 1:
        return f"{targets[0]} = {values[0]}"
    return f"{_tuple(targets)} = {_tuple(values)}"


# comparisons of two scalars written as operators (numpy scalars and 0-d arrays compare as
# the ufunc does, and no comparison overflows)
_SCALAR_COMPARISONS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
                       "equal": "==", "not_equal": "!="}
# float arithmetic of two scalars (Adam's step size, a schedule) written as operators: numpy's
# scalar math rounds each result to the operands' dtype exactly as the ufunc does, at a tenth
# of the call's cost; integers keep the ufunc (scalar math warns where the ufunc wraps)
_SCALAR_ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/"}
_SCALAR_FLOATS = ("float32", "float64")


def _scalar_text(value):
    """A short text for a scalar constant (`2`, `0.5`, `-1`), or None."""
    if getattr(value, "ndim", None) != 0 or getattr(value, "dtype", None) is None or \
            value.dtype.kind not in "biuf":
        return None
    v = value.item()
    if isinstance(v, float) and v == v and abs(v) < 1e6 and v == int(v):
        text = repr(int(v))
    else:
        text = str(value.dtype.type(v))  # float32 values print as float32 (0.1, not 0.10000000149)
    return text if len(text) <= 8 else None


class GraphLowering:
    """Lowers graphs into one Emitter (the top level with a memory plan, nested If/While
    graphs without)."""

    def __init__(self, emitter, xp):
        self.em = emitter
        self.xp = xp
        self.in_place_ops = set()  # ids of ops lowered in place (loop-owned TensorArray writes)
        self.row_sums = {}         # id(AddV2) -> the GatherV2Grad it adds into a loop's buffer
        self.folded = set()        # ids of those GatherV2Grads (emitted inside the sum)
        self.plan = None
        self.short = {}            # id(tensor) -> short text of a small constant, for names
        self.slot_names = {}       # slot index -> local name of a persistent buffer
        self.slots_name = None     # local name of the call's set of slots
        self._location = None
        self.hooks = None          # the profiler's hooks (clock, record, site), or None
        self.function_name = None  # the generated function's name (for the hooks' sites)
        self._start_names = {}     # indent -> local name of a timed block's start time

    # -- names
    def value_name(self, op, env, index=0):
        """A name for output `index` of `op` that says what the value is."""
        opdef = op.opdef
        if opdef.variable_access == "read":
            return f"{env[id(op.inputs[0])]}_value"
        if opdef.control == "if":
            return "cond" if index == 0 else f"cond_{index}"
        if opdef.infix is not None and index == 0:
            parts = [self.short.get(id(t)) or env[id(t)] for t in op.inputs]
            name = f"_{opdef.infix}_".join(parts)
            if all(len(p) <= 10 for p in parts) and len(name) <= 24:
                return "c_" + name if name[0].isdigit() else name
        base = self.op_base(op)
        return base if index == 0 else f"{base}_{index}"

    @staticmethod
    def op_base(op):
        """The op's own name when the user gave one, else its type in snake case."""
        name = op.name
        stem = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() else name
        if stem == op.type or re.fullmatch(r"[A-Z][A-Za-z0-9]*", stem):
            return snake_case(stem)  # named after its op type (maybe another, before folding)
        return name

    def kernel(self, opdef):
        return self.em.bind("k_" + snake_case(opdef.name), opdef.kernel, key=("kernel", opdef.name))

    def in_place(self, opdef):
        return self.em.bind("ip_" + snake_case(opdef.name), opdef.in_place,
                            key=("in_place", opdef.name))

    def xp_function(self, name):
        return self.em.bind("xp_" + name, getattr(self.xp, name), key=("xp", name))

    def attr(self, key, value):
        if is_literal(value):
            return repr(value)
        label = getattr(value, "name", None)
        base = label if isinstance(label, str) else key
        return self.em.bind(base, value, key=("attr", id(value)))

    def emit(self, indent, text, op):
        """One line of `op`'s block; the block's first line follows a `# file.py:LINE`
        comment when the user's line changes."""
        location = op.location
        if location and location != self._location:
            path, _, line = location.rpartition(":")
            # printable ASCII only: a location read from a file must not end the comment
            where = re.sub(r"[^\x20-\x7e]", "?", f"{os.path.basename(path)}:{line}")
            self.em.emit(indent, f"# {where}")
        self._location = location or self._location
        self.em.emit(indent, text, op)

    # -- buffers that live across calls
    def take_slots(self, plan, pool):
        """The function's first lines: one set of the plan's slots taken from `pool` (a set
        per concurrent call), those of known shape as locals (`buf_0`...)."""
        self.slot_names = {}
        if not plan.slot_specs:
            return
        self.slots_name = self.em.fresh("buffers")
        take = self.em.bind("take_buffers", pool.take)
        self.em.emit(1, f"{self.slots_name} = {take}()")
        static = [k for k, (shape, _) in enumerate(plan.slot_specs) if None not in shape]
        for k in static:
            self.slot_names[k] = self.em.fresh(f"buf_{k}")
        if static:
            names = [self.slot_names[k] for k in static]
            if len(static) == len(plan.slot_specs):
                self.em.emit(1, f"{_tuple(names)} = {self.slots_name}")
            else:
                self.em.emit(1, _assign(names, [f"{self.slots_name}[{k}]" for k in static]))

    def give_slots(self, plan, pool):
        """The line before the return: the slots go back to `pool` for the next call."""
        if plan.slot_specs:
            self.em.emit(1, f"{self.em.bind('give_buffers', pool.give)}({self.slots_name})")

    # -- graphs
    def graph_body(self, graph, env, indent, plan=None):
        """Emits the ops of `graph`; `env` maps id(tensor) -> variable name (inputs pre-bound)."""
        outer, self.plan = self.plan, plan
        try:
            for op in graph.operations:
                if self.hooks is None or op.type in ("Placeholder", "Const"):
                    self.lower(op, env, indent)
                else:
                    self.lower_timed(op, env, indent)
        finally:
            self.plan = outer

    def clock_call(self):
        """The text of one reading of the profiler's clock (integer nanoseconds)."""
        return f"{self.em.bind('clock', self.hooks.clock, key=('profile', 'clock'))}()"

    def record_call(self, site, start, site_name="site"):
        """The line that records one timed block (`site`) that began at local `start`: one
        (site, start, end, thread) tuple appended to the profile's events."""
        record = self.em.bind("record", self.hooks.record, key=("profile", "record"))
        thread = self.em.bind("thread", self.hooks.thread, key=("profile", "thread"))
        return (f"{record}(({self.em.bind(site_name, site)}, {start}, {self.clock_call()}, "
                f"{thread}()))")

    def lower_timed(self, op, env, indent):
        """`op`'s block between two clock readings, recorded under the op's site; nothing
        when the op emits no line (a folded or skipped op)."""
        start = self._start_names.get(indent)
        if start is None:   # one name per depth: a nested block never overwrites its parent's
            start = self._start_names[indent] = self.em.fresh(f"t_start_{indent}")
        before = len(self.em.lines)
        self.em.emit(indent, f"{start} = {self.clock_call()}")
        self.lower(op, env, indent)
        if len(self.em.lines) == before + 1:
            self.em.lines.pop()
            return
        self.em.emit(indent, self.record_call(self.hooks.site(op, self.function_name), start,
                                              f"site_{self.op_base(op)}"))

    def inline(self, graph, input_names, indent):
        """Emits a branch/body graph with its inputs bound to `input_names`; returns output names.
        Its own memory plan lets its elementwise ops write into buffers made in the same
        pass through it that die there (a loop step's temporaries), never into its inputs
        or outputs."""
        env = {id(t): name for t, name in zip(graph.inputs, input_names)}
        plan = MemoryPlan(graph, nested=True)
        plan.names = {}
        self.graph_body(graph, env, indent, plan)
        return [env[id(t)] for t in graph.outputs]

    def lower(self, op, env, indent):
        opdef = op.opdef
        if op.type == "Placeholder":
            return
        if op.type == "Const":
            return self.lower_const(op, env)
        if opdef.control is not None:
            return _CONTROL[opdef.control](self, op, env, indent)
        if self.plan is not None:
            for concat in self.plan.allocate.get(id(op), ()):   # a joined concatenation's buffer
                out = concat.outputs[0]
                name = self.define(concat, env)
                slot = self.plan.slots.get(id(out))
                if slot is not None:   # kept between calls (it cannot escape)
                    self.emit(indent, f"{name} = {self.slot_names[slot]}", concat)
                else:
                    dtype = self.attr("dtype", out.dtype.np)
                    self.emit(indent, f"{name} = xp.empty({out.shape.num_elements()}, {dtype})",
                              concat)
            if id(op) in self.plan.joined:
                return self.lower_joined_concat(op, env, indent)
            if id(op) in self.plan.skipped:   # a Reshape into a joined buffer: nothing to do
                name = env[id(op.inputs[0])]
                env[id(op.outputs[0])] = self.plan.names[id(op.outputs[0])] = name
                return None
        if id(op) in self.folded:
            return None   # emitted as part of the row sum that consumes it
        if id(op) in self.row_sums:
            return self.lower_row_sum(op, env, indent)
        call = direct_call(op)
        if call is not None:
            return self.lower_direct(op, env, indent, call)
        inline = opdef.inline(op) if callable(opdef.inline) else opdef.inline
        if inline is not None:
            return self.lower_inline(op, env, indent, inline)
        if op.type == "Identity" and not several_devices():
            # the kernel moves a value between devices; with one there is nothing to move
            source = env[id(op.inputs[0])]
            self.emit(indent, f"{self.define(op, env)} = {source}", op)
            return self.free(op, indent)
        if id(op) in self.in_place_ops:
            return self.lower_loop_owned_write(op, env, indent)

        if self.plan is not None and id(op) in self.plan.in_place:
            return self.lower_in_place_write(op, env, indent)
        return self.lower_kernel(op, env, indent)

    def define(self, op, env, index=0):
        """A fresh name for output `index` of `op`, recorded in `env` (and the plan)."""
        name = self.em.fresh(self.value_name(op, env, index))
        env[id(op.outputs[index])] = name
        if self.plan is not None:
            self.plan.names[id(op.outputs[index])] = name
        return name

    def lower_const(self, op, env):
        value = op.attrs["value"]
        text = _scalar_text(value)
        if text is not None:
            # 0.5 -> 0_5, -1 -> neg_1, 1e-07 -> 1e_neg7
            scientific = re.fullmatch(r"(-?[0-9.]+)e([+-][0-9]+)", text)
            if scientific:
                exponent = int(scientific.group(2))
                text = f"{scientific.group(1)}e{'_neg' if exponent < 0 else ''}{abs(exponent)}"
            text = re.sub(r"\W", "_", text.replace("-", "neg_"))
            self.short[id(op.outputs[0])] = text
            base = "c_" + text
        else:
            base = self.op_base(op)
        env[id(op.outputs[0])] = self.em.bind(base, value)

    def lower_direct(self, op, env, indent, call):
        ufunc, templates = call
        args = [env[id(t)] for t in op.inputs]
        operator = self.scalar_operator(op, ufunc, templates)
        if operator is not None:
            # two scalars (a loop's condition, an optimizer's step size): numpy's scalar
            # operator, a tenth of a ufunc call's cost, the same result; a constant as a numpy
            # scalar (a 0-d array would take the ufunc's path again)
            args = [self.em.bind(f"{a}_scalar", t.op.attrs["value"][()], key=("scalar", id(t)))
                    if t.op.type == "Const" and hasattr(t.op.attrs["value"], "shape") else a
                    for a, t in zip(args, op.inputs)]
            self.emit(indent, f"{self.define(op, env)} = {args[0]} {operator} {args[1]}", op)
            return self.free(op, indent)
        if templates is not None:
            args = [template.format(a) for template, a in zip(templates, args)]
        plan = self.plan
        slot = None if plan is None else plan.slots.get(id(op.outputs[0]))
        if plan is not None and id(op) in plan.out_buffer:
            args.append(f"out={plan.names[plan.out_buffer[id(op)]]}")
        elif plan is not None and id(op) in plan.out_view:   # a slice of a joined buffer
            concat, start, stop, shape, _ = plan.out_view[id(op)]
            args.append(f"out={plan.names[id(concat.outputs[0])]}[{start}:{stop}]"
                        f".reshape({shape})")
        elif slot is not None and id(op) not in plan.dynamic_guards:
            args.append(f"out={self.slot_names[slot]}")
        if isinstance(ufunc, str):
            fn = self.xp_function(ufunc)
        else:  # named after the op when it is the op's kernel (`k_sigmoid`), else its own name
            base = snake_case(op.type) if ufunc is op.opdef.kernel else ufunc.__name__.strip("_")
            fn = self.em.bind("k_" + base, ufunc, key=("direct", ufunc))
        if not isinstance(ufunc, str):  # a kernel that takes out=: called as kernels are
            args.insert(0, "xp")
        name = self.define(op, env)
        if slot is not None and id(op) in plan.dynamic_guards:
            # a slot of unknown dims: reused while its shape is the inputs', else made anew
            cell = f"{self.slots_name}[{slot}]"
            same = " == ".join([f"{cell}.shape"] + [f"{env[id(t)]}.shape"
                                                    for t in plan.dynamic_guards[id(op)]])
            args.append(f"out={cell} if {same} else None")
            self.emit(indent, f"{name} = {cell} = {fn}({', '.join(args)})", op)
        elif self.split_elementwise(op, ufunc, args):
            # a large elementwise call: flat slices on trainlib's pool (`threads.run_elementwise`)
            run = self.em.bind("k_run_elementwise", _threads.run_elementwise,
                               key=("run_elementwise",))
            self.emit(indent, f"{name} = {run}({', '.join([fn] + args)})", op)
        else:
            self.emit(indent, f"{name} = {fn}({', '.join(args)})", op)
        self.free(op, indent)

    def scalar_operator(self, op, ufunc, templates):
        """The Python operator `op` (a direct ufunc call on two scalars) is written as, or
        None: comparisons of any dtype, arithmetic of float32/float64 values the memory plan
        gives no buffer (a scalar result cannot be written into)."""
        if templates is not None or len(op.inputs) != 2 or \
                any(t.shape.rank != 0 for t in op.inputs):
            return None
        if ufunc in _SCALAR_COMPARISONS:
            return _SCALAR_COMPARISONS[ufunc]
        plan, out = self.plan, op.outputs[0]
        if ufunc not in _SCALAR_ARITHMETIC or out.dtype.name not in _SCALAR_FLOATS or \
                any(t.dtype is not out.dtype for t in op.inputs):
            return None
        if plan is not None and (id(op) in plan.out_buffer or id(op) in plan.out_view or
                                 id(out) in plan.slots):
            return None
        return _SCALAR_ARITHMETIC[ufunc]
    def split_elementwise(self, op, ufunc, args):
        """Whether a direct call runs as slices on the pool: a numpy ufunc of an elementwise
        op, into a planned buffer (`out=`), over at least `threads.SPLIT_ELEMENTWISE`
        elements."""
        t = op.outputs[0]
        return (isinstance(ufunc, str) and op.opdef.elementwise and self.xp.__name__ == "numpy"
                and isinstance(getattr(self.xp, ufunc, None), self.xp.ufunc)
                and args and args[-1].startswith("out=") and t.shape.is_fully_defined()
                and t.shape.num_elements() >= _threads.SPLIT_ELEMENTWISE)

    def lower_joined_concat(self, op, env, indent):
        """A ConcatV2 whose buffer the plan allocated earlier: most pieces are in it
        already (their producers wrote there); the others are copied in now."""
        name = self.plan.names[id(op.outputs[0])]
        env[id(op.outputs[0])] = name
        for piece, start, stop in self.plan.joined[id(op)]:
            self.emit(indent, f"{name}[{start}:{stop}] = {env[id(piece)]}.reshape(-1)", op)
        if not self.plan.joined[id(op)]:
            self.emit(indent, f"# {name}: joined in place", op)
        self.free(op, indent)

    def lower_inline(self, op, env, indent, template):
        args = [env[id(t)] for t in op.inputs]
        if len(op.outputs) != 1:   # a tuple of expressions (a Split's slices)
            outs = [self.define(op, env, i) for i in range(len(op.outputs))]
            self.emit(indent, f"{_tuple(outs)} = {template.format(*args)}", op)
            return self.free(op, indent)
        name = self.define(op, env)
        if self.plan is not None and id(op) in self.plan.escaping_reads:
            # the caller will hold this array: the kernel marks it as no longer the Variable's own
            call = f"{self.kernel(op.opdef)}(xp, {', '.join(args)})"
            self.emit(indent, f"{name} = {call}", op)
        elif (self.plan is None or self.plan.nested) and op.opdef.variable_access == "read":
            # no plan orders the writes here (a branch, a loop body): a pinned Variable's
            # writes still go into its buffer in place, so its reads take a snapshot
            call = f"{self.kernel(op.opdef)}(xp, {', '.join(args)})"
            kernel = self.kernel(op.opdef) if "{kernel}" in template else None
            self.emit(indent, f"{name} = {template.format(*args, kernel=kernel)} if "
                              f"{args[0]}._pinned is None else {call}", op)
        else:
            kernel = self.kernel(op.opdef) if "{kernel}" in template else None
            self.emit(indent, f"{name} = {template.format(*args, kernel=kernel)}", op)
        self.free(op, indent)

    def lower_loop_owned_write(self, op, env, indent):
        args = [env[id(t)] for t in op.inputs]
        attrs = "".join(f", {k}={v!r}" for k, v in op.attrs.items()
                        if not k.startswith("_") and is_literal(v))
        fn = self.in_place(op.opdef)
        name = self.define(op, env)
        call = f"{fn}(xp, {', '.join(args)}{attrs})"
        row = op.opdef.row_write(op) if op.opdef.row_write is not None else None
        if row is None:
            self.emit(indent, f"{name} = {call}", op)
            return
        # a loop's step writing one row of its own buffer: a plain assignment, the in-place
        # form for anything else (growing, several rows, a shape it must refuse)
        check, assign = row
        self.emit(indent, f"if {check.format(*args)}:", op)
        self.em.emit(indent + 1, assign.format(*args))
        self.em.emit(indent + 1, f"{name} = {args[0]}")
        self.em.emit(indent, "else:")
        self.em.emit(indent + 1, f"{name} = {call}")

    def lower_row_sum(self, op, env, indent):
        """`acc + GatherV2Grad(dy, i, params)` as `acc[i] += dy` into the loop's own `acc`."""
        grad = self.row_sums[id(op)]
        acc = next(t for t in op.inputs if t.op is not grad)
        dy, indices = env[id(grad.inputs[0])], env[id(grad.inputs[1])]
        fn = self.em.bind("ip_tensor_scatter_add", get_opdef("TensorScatterAdd").in_place,
                          key=("in_place", "TensorScatterAdd"))
        name = env[id(op.outputs[0])] = self.em.fresh(f"{env[id(acc)]}_plus_rows")
        self.emit(indent, f"{name} = {fn}(xp, {env[id(acc)]}, {indices}.reshape((-1, 1)), {dy})", op)

    def lower_in_place_write(self, op, env, indent):
        args = [env[id(t)] for t in op.inputs]
        self.emit(indent, f"{self.in_place(op.opdef)}(xp, {', '.join(args)})", op)
        env[id(op.outputs[0])] = "None"  # unused, by the plan's rule
        self.free(op, indent)

    def lower_kernel(self, op, env, indent):
        args = [env[id(t)] for t in op.inputs]
        attrs = kernel_attrs(op.opdef, op.attrs)
        if all(key.isascii() for key in attrs):
            args += [f"{key}={self.attr(key, value)}" for key, value in attrs.items()]
        else:  # Python would fold a non-ASCII keyword by NFKC: pass them as they are
            args.append(f"**{self.em.bind('attrs', attrs)}")
        call = f"{self.kernel(op.opdef)}(xp{''.join(', ' + a for a in args)})"
        outs = [self.define(op, env, i) for i in range(len(op.outputs))]
        if not outs:
            self.emit(indent, call, op)
        elif op.opdef.num_outputs == 1:
            self.emit(indent, f"{outs[0]} = {call}", op)
        else:
            self.emit(indent, f"{_tuple(outs)} = {call}", op)
        self.free(op, indent)

    def free(self, op, indent):
        """`del` intermediates that die at `op` (large or unknown size) so memory returns early."""
        plan = self.plan
        if plan is None:
            return
        names = [plan.names[id(t)] for t in plan.frees.get(id(op), ())
                 if id(t) in plan.names and (nbytes(t) >= 4096 or not t.shape.is_fully_defined())]
        if names:
            self.em.emit(indent, f"del {', '.join(dict.fromkeys(names))}")


def _lower_if(lo, op, env, indent):
    pred, *ins = [env[id(t)] for t in op.inputs]
    outs = [lo.define(op, env, i) for i in range(len(op.outputs))]
    then_key, else_key = op.opdef.subgraphs
    lo.emit(indent, f"if {pred}:", op)
    for key in (then_key, else_key):
        results = lo.inline(op.attrs[key], ins, indent + 1)
        if outs:
            lo.emit(indent + 1, _assign(outs, results), op)
        else:
            lo.em.emit(indent + 1, "pass")
        if key == then_key:
            lo.emit(indent, "else:", op)


def _lower_while(lo, op, env, indent):
    n_vars = len(op.outputs)
    cond_key, body_key = op.opdef.subgraphs
    ins = [env[id(t)] for t in op.inputs]
    loop_vars = [lo.em.fresh(_loop_var_name(op.attrs[body_key].inputs[i], ins[i], i))
                 for i in range(n_vars)]
    captures = ins[n_vars:]
    owned, sums = loop_owned(op)
    slots = lo.plan.slots if lo.plan is not None else {}
    for i, (var, init) in enumerate(zip(loop_vars, ins[:n_vars])):
        # a buffer the loop writes in place starts as the loop's own copy (the value that
        # enters may be a constant or the caller's): in its slot when the plan gave it one
        slot = slots.get(id(op.outputs[i])) if i in owned or i in sums else None
        if slot is not None:
            lo.emit(indent, f"{var} = {lo.slot_names[slot]}", op)
            lo.em.emit(indent, f"{var}[...] = {init}")
        else:
            lo.emit(indent, f"{var} = {init}.copy()" if i in owned or i in sums else
                    f"{var} = {init}", op)
    lo.in_place_ops.update(id(w) for w in owned.values())
    for add, grad in sums.values():
        lo.row_sums[id(add)] = grad
        lo.folded.add(id(grad))
    limit = op.attrs.get("maximum_iterations")
    counter = None
    if limit is not None:
        counter = lo.em.fresh(f"{lo.op_base(op)}_iterations")
        lo.emit(indent, f"{counter} = 0", op)
    lo.emit(indent, "while True:", op)
    if counter is not None:
        lo.emit(indent + 1, f"if {counter} >= {int(limit)}:", op)
        lo.em.emit(indent + 2, "break")
        lo.em.emit(indent + 1, f"{counter} += 1")
    (cond,) = lo.inline(op.attrs[cond_key], loop_vars + captures, indent + 1)
    lo.emit(indent + 1, f"if not {cond}:", op)
    lo.em.emit(indent + 2, "break")
    results = lo.inline(op.attrs[body_key], loop_vars + captures, indent + 1)
    if loop_vars:
        lo.emit(indent + 1, _assign(loop_vars, results), op)
    for t, var in zip(op.outputs, loop_vars):  # after the loop, its outputs are the variables
        env[id(t)] = var
        if lo.plan is not None:
            lo.plan.names[id(t)] = var


def _loop_var_name(placeholder, init, i):
    """The body's name for loop variable `i` when it has one of its own, else the name of
    the value entering the loop (`x` -> `x_loop`), else `loop_var_i`."""
    name = placeholder.op.name
    if not name.startswith("loop_var_"):
        return name
    return f"{init}_loop" if not init.startswith("c_") else f"loop_var_{i}"


_CONTROL = {"if": _lower_if, "while": _lower_while}
