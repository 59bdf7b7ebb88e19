"""Compiled graphs: `compile_graph` -> Program, and the binding every compiled function shares.

Owns: compiling a graph once into a Python function over the backend's kernels (lowered by
`lower.py`, with the memory plan of `graph/passes/memory.py`), translating an exception
raised inside it into a `tl.errors.*` naming the op and the user's line, and
`CompiledFunction`, the calling side that traced ConcreteFunctions and loaded saved-model
functions both are: the graph, its Program, the captured values fed after the arguments,
and the call from argument arrays to output tensors.
Also owns `PROFILING`: while graph/profiler.py runs a profile, every live CompiledFunction
runs a separately compiled Program with timing hooks around each op (the default Program
has none, so profiling off costs nothing).
Invariants: the generated function takes the graph's input arrays in `graph.inputs` order
and returns a tuple of the `graph.outputs` arrays.
"""
import re
import weakref

from ..errors import InvalidArgumentError, OpError, ResourceExhaustedError
from ..passes.memory import MemoryPlan
from ..tensor import Tensor
from . import native
from .emit import Emitter, Namespace
from .lower import GraphLowering
from ..properties import read_only


class Program:
    """A compiled graph: `fn(*input_arrays) -> tuple of output arrays`, plus its source.

    Attributes:
        fn: the generated function.
        source: its Python source (the `def` line first).
        filename: the name it is registered under in linecache.
        line_ops: {line in that file: the Operation it runs}.
        memory: the memory plan's figures (peak, reused and unplanned peak bytes, the
            bytes and number of the slots kept between calls), or None.
        buffers: the BufferPool of those slots, or None without a memory plan.
    """

    buffers = None
    hooks = None   # the profiler's hooks it was compiled with (graph/profiler.py), or None

    def __init__(self, fn, source, filename, line_ops, memory=None):
        self.fn, self.source, self.filename = fn, source, filename
        self.line_ops, self.memory = line_ops, memory

    def op_at(self, lineno):
        return self.line_ops.get(lineno)

    def translate(self, error):
        """A tl.errors.* for an exception raised inside this program, naming the op and the
        user's line; None when no line of the program raised it."""
        tb = error.__traceback__
        op = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.filename:
                op = self.op_at(tb.tb_lineno)
            tb = tb.tb_next
        if op is None:
            return None
        where = f" (defined at {op.location})" if op.location else ""
        message = error.message if isinstance(error, OpError) else f"{type(error).__name__}: {error}"
        cls = type(error) if isinstance(error, OpError) else InvalidArgumentError
        if isinstance(error, MemoryError):
            cls = ResourceExhaustedError
        message = re.sub(r" \(at [^()]*\)$", "", message)
        return cls(f"{op.type} (operation '{op.name}'): {message}{where}", op=op.type,
                   location=op.location)


class BufferPool:
    """The persistent slots of one compiled graph: sets of buffers, one per concurrent call.

    `take()` hands out a free set (a list: the slots of known shape allocated, those of
    unknown dims empty until a call makes them) or a new one; `give(set)` returns it after
    the call. A call that raises keeps its set, so a later call never sees half-written
    buffers of a failed one. Two threads never hold one set: list pop and append are atomic.
    """

    def __init__(self, specs, xp):
        self.specs = list(specs)
        self.xp = xp
        self.free = []
        self.give = self.free.append
        self._empty = {}

    def take(self):
        """A set of slots for one call."""
        try:
            return self.free.pop()
        except IndexError:
            return self.new()

    def new(self):
        """A fresh set of slots."""
        xp, out = self.xp, []
        for shape, dtype in self.specs:
            if None in shape:
                # a placeholder no shape check matches: the first call makes the buffer
                empty = self._empty.get(dtype)
                if empty is None:
                    empty = self._empty[dtype] = xp.empty((0,) * (len(shape) + 1), dtype)
                out.append(empty)
            else:
                out.append(xp.empty(shape, dtype))
        return out

    def __len__(self):
        return len(self.free)


def compile_graph(graph, xp, name="graph_fn", plan_memory=True, persistent=True, hooks=None):
    """Compiles `graph` to a Program whose `fn(*arrays)` returns the output arrays.

    The memory plan (on by default) frees intermediates after their last use and reuses
    dead buffers through out= (the Program's `memory` reports the figures); with
    `persistent` (the default) those buffers are kept between calls in a `BufferPool`
    (the Program's `buffers`), so a steady call allocates only what it returns.
    `hooks` (the profiler's: `clock()`, `thread()`, `record((site, start, end, thread))`,
    `site(op, function)`, `function_site(function)`) times each op's block and the call."""
    names = Namespace(("xp",))
    em = Emitter(names)
    em.consts["xp"] = xp
    fname = names.fresh(name or "graph_fn")
    params = [names.fresh(t.op.name) for t in graph.inputs]
    env = {id(t): p for t, p in zip(graph.inputs, params)}
    plan = MemoryPlan(graph, persistent=persistent) if plan_memory else None
    lowering = GraphLowering(em, xp)
    lowering.hooks, lowering.function_name = hooks, fname
    call_start = None
    if hooks is not None:
        call_start = names.fresh("t_call")
        em.emit(1, f"{call_start} = {lowering.clock_call()}")
    pool = None
    if plan is not None:
        plan.names = {}
        pool = BufferPool(plan.slot_specs, xp)
        lowering.take_slots(plan, pool)
    lowering.graph_body(graph, env, 1, plan)
    outs = [env[id(t)] for t in graph.outputs]
    if plan is not None:
        lowering.give_slots(plan, pool)
    if hooks is not None:
        em.emit(1, lowering.record_call(hooks.function_site(fname), call_start))
    em.emit(1, f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    label = f"graph-{fname}" if hooks is None else f"graph-profiled-{fname}"
    fn, source, filename, line_ops = em.compile(fname, params, label=label)
    memory = None if plan is None else {
        "peak_bytes": plan.peak_bytes, "reused_bytes": plan.reused_bytes,
        "unplanned_peak_bytes": plan.total_intermediate_bytes,
        "persistent_bytes": plan.persistent_bytes, "slots": len(plan.slot_specs)}
    program = Program(fn, source, filename, line_ops, memory)
    program.buffers = pool
    return program


def translate_error(program, error):
    """`program.translate(error)` (kept for callers that hold a program and an error)."""
    return program.translate(error)


class _Profiling:
    """The profiler's switch (graph/profiler.py sets it): its `hooks` while a profile runs,
    else None, and the CompiledFunctions alive, whose Programs it swaps."""

    def __init__(self):
        self.hooks = None
        self.live = weakref.WeakSet()

    def switch(self, hooks):
        """Every live CompiledFunction runs its profiled Program (`hooks`) or its own (None)."""
        self.hooks = hooks
        for function in list(self.live):
            function._use_hooks(hooks)


PROFILING = _Profiling()


class CompiledFunction:
    """The calling side shared by traced and loaded functions: a graph compiled once, fed the
    argument arrays and then the captured values; outputs as tensors of the graph's dtypes.

    Subclasses set `graph` (what `inputs`/`outputs` show) and call `_compile`.
    """

    graph = None
    _program = None

    def _compile(self, graph, name, capture_feeds, xp):
        """Compiles `graph` (`self.graph` or an optimized copy) to run on `xp`, fed
        `capture_feeds` after the arguments."""
        self._program = self._plain_program = compile_graph(graph, xp, name)
        self._compiled_graph = graph
        self._fn = self._program.fn
        self._capture_feeds = list(capture_feeds)
        self._out_dtypes = [t.dtype for t in graph.outputs]
        self._compile_args = (name, xp)
        self._profiled_program = None
        PROFILING.live.add(self)
        if PROFILING.hooks is not None:
            self._use_hooks(PROFILING.hooks)

    def _use_hooks(self, hooks):
        """Runs the Program with the profiler's `hooks` (compiled once, on first use), or
        the plain one for None."""
        program = self._plain_program
        if hooks is not None:
            profiled = self._profiled_program
            if profiled is None or profiled.hooks is not hooks:
                name, xp = self._compile_args
                profiled = compile_graph(self._compiled_graph, xp, name, hooks=hooks)
                profiled.hooks = hooks
                self._profiled_program = profiled
            program = profiled
        self._program, self._fn = program, program.fn

    @property
    def inputs(self):
        """The graph's placeholders: the arguments, then the captured values."""
        return list(self.graph.inputs)

    @property
    def outputs(self):
        """The graph's output tensors."""
        return list(self.graph.outputs)

    python_source = read_only("_program.source", "The generated Python code that runs this graph "
                                                 "(also shown in tracebacks).")

    @property
    def compile_seconds(self):
        """Seconds this process spent compiling the native kernels of this graph's fused
        regions (`jit_compile=True` with the `jit` extra), or loading them from the disk
        cache; they compile on the first call that meets a new shape, never per call."""
        return native.compile_seconds(self._compiled_graph)

    @property
    def native_source(self):
        """The numba source of the native kernels this graph's fused regions compiled so far
        (each is also a file in `native.cache_dir()`, which tracebacks show)."""
        return "\n\n".join(native.sources(self._compiled_graph))

    def _run(self, arrays):
        """The output arrays for the argument `arrays`; errors name the op and user's line.
        (A hot caller may inline this: `self._fn(*arrays, *self._capture_feeds)`, and on an
        exception `self._reraise(e)`.)"""
        try:
            return self._fn(*arrays, *self._capture_feeds)
        except Exception as e:
            self._reraise(e)

    def _reraise(self, error):
        """Raises `error` (raised inside the program) translated, or as it is."""
        translated = self._program.translate(error)
        if translated is None:
            raise error
        raise translated from error

    def _run_tensors(self, arrays):
        """`_run`, the outputs as tensors."""
        return [Tensor(a, d) for a, d in zip(self._run(arrays), self._out_dtypes)]
