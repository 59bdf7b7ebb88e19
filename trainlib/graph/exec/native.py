"""Native kernels: a fused elementwise region compiled by numba into one parallel loop.

Owns: turning a `FusedElementwise` program (see `graph/ops/fused.py`) into the source of
one numba function, compiling it once per (program, dtypes, broadcast pattern, serial or
parallel), caching the machine code on disk, and running it. Used when a Function has
`jit_compile=True`, runs on numpy, and the `jit` extra (numba) is installed.

How a region becomes a loop: the inputs are broadcast to the result's shape and the dims
that every operand treats alike are merged, so a region over same-shaped arrays is one flat
loop and a bias-add is (rows, columns) with the bias read at `[0, j]`; inputs broadcast
over every dim are read once before the loop. Each step is its OpDef's `native` template,
a Python expression over scalars (`{0}`, `{1}`... the step's inputs, `{T}` the result's
numpy type), with transcendental functions from `native_math`. The outer loop is a
`prange` (numba's thread pool) from `PARALLEL_MIN` elements (opt-in), else serial.

Regions run natively only when every step has a `native` template and every value is
float32, float64 or bool, and (without a reduction) have at least `NATIVE_MIN` elements;
the others keep the cache-blocked numpy path. The sources are
written to `cache_dir()` (a file per kernel, named by a hash of its source) and imported
from there, so numba's own cache (`cache=True`) keys the machine code by that file: a
second process loads it instead of compiling. `compile_seconds(graph)` and
`sources(graph)` report per graph what was compiled and its source.

Loading numba: importing it and its registries costs a second or more of CPU, most of a
first `jit_compile=True` call even when the disk cache holds every kernel. So the first
region that wants a kernel starts `warm_up` in a background thread (which begins once the
Function call that asked returns, or after half a second) and runs as whole-array
numpy calls meanwhile (the same numbers up to rounding; they release the interpreter lock
that the import needs, where the blocked path's many small calls would hold it); the calls after it find numba ready
and build or load their kernels at once. `warm_up()` (waiting) makes that synchronous:
tests and programs that time `compile_seconds` call it first.

Threads: the parallel loops run on numba's `workqueue` pool (unless NUMBA_THREADING_LAYER
says otherwise), which a forked child may use again, with NUMBA_NUM_THREADS threads
(default: one per core).

Invariants: a kernel is compiled at most once per process per key (a lock, so concurrent
first calls wait for one compile); the parallel form runs on one thread at a time (numba's
default thread pool is not reentrant), a second caller meanwhile runs the serial form.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

from .. import dtypes as _dt
from ..op import REGISTRY
from ..tensor import TensorSpec

__all__ = ["available", "installed", "warm_up", "loading", "call_returned", "run", "cache_dir", "compile_seconds", "sources", "cache_stats"]

# elements from which the outer loop is spread over the cores (numba's thread pool); off
# unless TRAINLIB_NATIVE_PARALLEL_MIN is set: on the 2-core machine measured, the 1M-element
# chain ran 3.5-4x slower on numba's pools (workqueue and OpenMP alike) than on one thread
PARALLEL_MIN = int(os.environ.get("TRAINLIB_NATIVE_PARALLEL_MIN", 1 << 62))
NATIVE_MIN = 2048        # elements from which an elementwise region runs natively
_TYPES = {"float32": "np.float32", "float64": "np.float64", "bool": "np.bool_"}

_numba = None            # the module, False if not installed
_KERNELS = {}            # key -> (dispatcher, source, path)
_COMPILE_SECONDS = {}    # program -> seconds spent compiling its kernels in this process
_SOURCES = {}            # program -> [source, ...]
_UNSUPPORTED = set()     # (program, dtypes): no native form (some step or dtype)
_PLANS = {}              # id(program) -> (program, {input shapes and dtypes: plan or False})
_LOCK = threading.Lock()
_PARALLEL = threading.Lock()
_WARNED = []


def available():
    """True if numba (the `jit` extra) can be imported."""
    global _numba
    if _numba is None:
        try:
            import numba  # noqa: PLC0415 (optional dependency, imported on first use)
            from . import native_math  # noqa: F401, PLC0415 (registers its overloads)
            if "NUMBA_THREADING_LAYER" not in os.environ:
                # GNU OpenMP (numba's first choice) kills a process that forks after using
                # it (data loaders, multiprocessing); numba's own workqueue pool survives a
                # fork, and `run` never enters it from two threads at once
                numba.config.THREADING_LAYER = "workqueue"
            _numba = numba
        except ImportError:
            _numba = False
    return _numba is not False


_FOUND = []                  # [whether numba is installed], asked once
_WARM = threading.Event()    # set once numba and its registries are loaded (or failed to)
_WARMING = []                # [the thread] once a warm-up started


def installed():
    """True if numba is installed, without importing it (a fusion pass asks at trace time)."""
    if _numba is not None:
        return _numba is not False
    if not _FOUND:
        _FOUND.append(importlib.util.find_spec("numba") is not None)
    return _FOUND[0]


_GO = threading.Event()      # set when the call that started the warm-up has returned


def call_returned():
    """Lets a waiting warm-up begin: a Function calls this when a traced call returns, so
    that numba's import does not compete with that first call for the interpreter lock."""
    if _WARMING and not _GO.is_set():
        _GO.set()


def _load_numba(delay=0.0):
    _GO.wait(delay)   # at most `delay` s: a region run outside a Function still gets numba
    try:
        import numba  # noqa: F401, PLC0415
        from numba.core.registry import cpu_target  # noqa: PLC0415
        from . import native_math  # noqa: F401, PLC0415
        cpu_target.target_context.refresh()   # the registries a first kernel would load
    except Exception:  # noqa: BLE001 -- an import beside another thread's imports can fail:
        pass           # `available()` imports again on the caller's thread and decides
    finally:
        _WARM.set()


def warm_up(wait=True):
    """Imports numba and loads its registries, in a background thread when `wait` is False
    (started once per process); returns True when that is done (numba usable or not)."""
    if _WARM.is_set():
        return True
    with _LOCK:
        start = not _WARMING
        if start:
            _WARMING.append(None if wait else threading.Thread(
                target=_load_numba, args=(0.5,), name="trainlib-numba", daemon=True))
    if start and wait:
        _load_numba()
    elif start:
        _WARMING[0].start()
    if wait:
        _WARM.wait()
    return _WARM.is_set()


def loading():
    """True while the background warm-up (see `warm_up`) runs."""
    return bool(_WARMING) and not _WARM.is_set()


def warn_unavailable():
    """Says once per process that the `jit` extra would compile `jit_compile=True` regions."""
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn("jit_compile=True runs fused regions as blocked numpy calls: install the "
                      "'jit' extra (pip install 'trainlib[jit]', numba) to compile them to native "
                      "code", RuntimeWarning, stacklevel=3)


def cache_dir():
    """Where kernel sources and numba's machine code are kept: `$TRAINLIB_CACHE_DIR/native`
    (default `~/.cache/trainlib/native`), in a folder per numba and generator version."""
    root = os.environ.get("TRAINLIB_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "trainlib")
    return os.path.join(root, "native", _version_tag())


_TAG = []


def _version_tag():
    if not _TAG:
        h = hashlib.sha1()
        here = os.path.dirname(__file__)
        for name in ("native.py", "native_math.py"):
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
        h.update(_numba.__version__.encode() if _numba else b"")
        _TAG.append(h.hexdigest()[:12])
    return _TAG[0]


# ------------------------------------------------------------------ running

def run(program, arrays, constants=(), reduce=None):
    """The region's result computed by its native kernel, or None (no native form: the
    caller runs it another way). `constants`: ((input slot, value), ...) for inputs that
    never change (written into the kernel as literals); `reduce`: (Sum/Mean/Max/Min, axis,
    keepdims) for a region that ends in that reduction (its result is the reduction's)."""
    plans = _PLANS.get(id(program))
    if plans is None or plans[0] is not program or plans[2] is not constants or \
            plans[3] is not reduce:
        plans = _PLANS[id(program)] = (program, {}, constants, reduce)
    signature = tuple([(a.shape, a.dtype) for a in arrays])
    plan = plans[1].get(signature)
    if plan is None:
        if not warm_up(wait=False):
            return None    # numba still loading: the caller's numpy path this time
        if len(plans[1]) >= 256:   # shapes that keep changing: plans are cheap to remake
            plans[1].clear()
        plan = plans[1][signature] = _plan(program, arrays, constants, reduce)
    if plan is False:
        return None
    kernel, serial, shapes, out_shape, out_dtype, view_shape, extra = plan
    out = np.empty(out_shape, out_dtype)
    # reshaped only where the loop's shape differs (a reshape costs more than the check)
    operands = [a if a.shape == s and a.flags.c_contiguous else
                np.ascontiguousarray(a).reshape(s) for a, s in zip(arrays, shapes)]
    view = out if view_shape == out_shape else out.reshape(view_shape)
    if serial is None:
        kernel(*operands, view, *extra)
    elif _PARALLEL.acquire(blocking=False):
        try:
            kernel(*operands, view, *extra)
        finally:
            _PARALLEL.release()
    else:   # another thread runs a parallel kernel now: the serial form
        serial()(*operands, view, *extra)
    return out


def _plan(program, arrays, constants, reduce):
    """How `run` calls the kernel for these input shapes and dtypes, or False (no native
    form): (kernel, None or a maker of the serial form for a parallel kernel, the operands'
    shapes, the result's shape and dtype, the loop's shape, extra arguments)."""
    dtypes = tuple(a.dtype.str for a in arrays)
    if (program, dtypes) in _UNSUPPORTED or not available():
        return False
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    if not shape or 0 in shape or (reduce is None and int(np.prod(shape)) < NATIVE_MIN):
        return False   # small regions: numpy's own calls cost less than entering a kernel
    values = [TensorSpec(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]
    for name, slots, attrs in program:
        values.append(REGISTRY[name].infer(*[values[s] for s in slots], **dict(attrs)))
    if tuple(values[-1].shape.as_list()) != tuple(shape):
        return False   # the result is smaller than the inputs' broadcast: not a region
    kinds = tuple(v.dtype.name for v in values)
    result = values[-1]
    reduced = ()
    if reduce is not None:
        kind, axis, keepdims = reduce
        result = REGISTRY[kind].infer(result, axis=axis, keepdims=keepdims)
        rank = len(shape)
        reduced = tuple(range(rank)) if axis is None else tuple(sorted({a % rank for a in axis}))
    dims, operands = _coalesce(shape, arrays, reduced)
    n_kept = len(dims)
    if reduce is not None:
        flags = [r for _, _, r in dims]
        n_kept = flags.count(False)
        if any(flags[:n_kept]) or not any(flags):
            return False   # reduced dims not all innermost: the reduction's own kernel
    size = int(np.prod(shape))
    kind = None if reduce is None else reduce[0]
    parallel = size >= PARALLEL_MIN and (n_kept > 0 or kind in ("Sum", "Mean"))
    key = (program, dtypes, dims, parallel, constants, kind)
    found = _KERNELS.get(key) or _build(key, kinds)
    if found is None:
        return False
    serial_key = key[:3] + (False,) + key[4:]
    serial = (lambda: (_KERNELS.get(serial_key) or _build(serial_key, kinds))[0]) \
        if parallel else None
    view_shape = tuple(n for n, _, _ in dims[:n_kept]) or (1,)
    extra = () if reduce is None else (np.array([n for n, _, _ in dims], np.int64),)
    return (found[0], serial, [o.shape for o in operands], tuple(result.shape.as_list()),
            result.dtype.np, view_shape, extra)


def _coalesce(shape, arrays, reduced=()):
    """(dims, operands): dims are (size, pattern, reduced) after merging neighbours that
    every operand treats alike and that are both reduced or both kept (pattern: one bool
    per operand, True where it spans the dim); operands are the inputs reshaped to those
    dims (1 where broadcast), C-contiguous."""
    rank = len(shape)
    padded = [(1,) * (rank - a.ndim) + a.shape for a in arrays]
    dims = []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        pattern = tuple(p[d] == n for p in padded)
        flag = d in reduced
        if dims and dims[-1][1] == pattern and dims[-1][2] == flag:
            dims[-1] = (dims[-1][0] * n, pattern, flag)
        else:
            dims.append((n, pattern, flag))
    if not dims:
        dims = [(1, tuple(True for _ in arrays), bool(reduced))]
    operands = []
    for i, a in enumerate(arrays):
        shape_i = [n if pattern[i] else 1 for n, pattern, _ in dims]
        operands.append(np.ascontiguousarray(a).reshape(shape_i))
    return tuple(dims), operands


def _build(key, kinds):
    """Compiles (or loads) the kernel of `key`; `kinds`: the dtype names of the inputs and of
    every step's result. None when some step or dtype has no native form."""
    with _LOCK:
        found = _KERNELS.get(key)
        if found is not None:
            return found
        program, dtypes, dims, parallel, constants, reduce = key
        source = kernel_source(program, kinds, dims, parallel, dict(constants), reduce)
        if source is None:
            _UNSUPPORTED.add((program, dtypes))
            return None
        start = time.perf_counter()
        dispatcher, path = _load(source)
        operands = [np.zeros([n if p[i] else 1 for n, p, _ in dims], np.dtype(d))
                    for i, d in enumerate(dtypes)]
        if reduce is None:
            args = (np.zeros([n for n, _, _ in dims], np.dtype(kinds[-1])),)
        else:
            kept = [n for n, _, r in dims if not r] or [1]
            args = (np.zeros(kept, np.dtype(kinds[-1])),
                    np.array([n for n, _, _ in dims], np.int64))
        with np.errstate(all="ignore"):
            dispatcher(*operands, *args)    # compiles (or loads from the disk cache) now
        _COMPILE_SECONDS[program] = _COMPILE_SECONDS.get(program, 0.0) + time.perf_counter() - start
        _SOURCES.setdefault(program, []).append(source)
        found = _KERNELS[key] = (dispatcher, source, path)
        return found


def _load(source):
    """Writes `source` to the cache folder (once) and imports it; (its kernel, its path)."""
    name = "k_" + hashlib.sha1(source.encode()).hexdigest()[:20]
    folder = cache_dir()
    path = os.path.join(folder, name + ".py")
    try:
        # written whole, then renamed: readers never see a part; a file that is not exactly
        # `source` (damaged, edited) is written again, never imported
        if not _holds(path, source):
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".py", dir=folder)
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
    except OSError:   # an unwritable cache: compile in memory, every process anew
        return _in_memory(source, name), f"<trainlib-native-{name}>"
    module_name = f"trainlib_native_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _numba.NumbaWarning)   # a read-only cache: no caching
        spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module.kernel, path


def _holds(path, source):
    """True when the cache file `path` is a regular file holding exactly `source`."""
    if not os.path.isfile(path):   # absent, or a FIFO or folder put there: replaced
        return False
    try:
        with open(path, "rb") as f:
            return f.read(len(source.encode()) + 1) == source.encode()
    except OSError:
        return False


def _in_memory(source, name):
    import linecache  # noqa: PLC0415
    filename = f"<trainlib-native-{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source.replace("cache=True", "cache=False"), filename, "exec"), namespace)
    return namespace["kernel"]


# ------------------------------------------------------------------ source

def kernel_source(program, kinds, dims, parallel, constants=None, reduce=None):
    """The numba source of one region, or None when a step or a dtype has no native form.

    Args:
        program: the FusedElementwise program (steps of (op type, slots, attrs)).
        kinds: the dtype names of the inputs, then of each step's result.
        dims: (size, pattern, reduced) per loop dim, as `_coalesce` makes them (reduced
            dims innermost).
        parallel: spread the outer loop over the cores.
        constants: {input slot: value} for inputs written as literals.
        reduce: None, or "Sum", "Mean", "Max", "Min": the result is that reduction over the
            reduced dims (accumulated in float64 for sums of float32), and the kernel takes
            the loop sizes `n` after the output.
    """
    constants = constants or {}
    if any(k not in _TYPES for k in kinds):
        return None
    n_in = len(kinds) - len(program)
    rank = len(dims)
    n_kept = sum(1 for d in dims if not d[2]) if reduce else rank
    index = [f"d{k}" for k in range(rank)]
    bound = (lambda k: f"n[{k}]") if reduce else (lambda k: f"o.shape[{k}]")
    lines = []
    for k in range(rank):
        if k == n_kept:   # the accumulator, per output element
            lines.append(" " * 4 * k + "acc = " + _ACC_INIT[reduce].format(T=_TYPES[kinds[-1]]))
        loop = "prange" if k == 0 and parallel else "range"
        lines.append(" " * 4 * k + f"for d{k} in {loop}({bound(k)}):")
    inner = " " * 4 * rank
    hoisted = []
    names = []
    for i in range(n_in):
        spans = [d[1][i] for d in dims]
        at = ", ".join(ix if s else "0" for ix, s in zip(index, spans))
        if i in constants and not any(spans):
            hoisted.append(f"x{i} = {_literal(constants[i], kinds[i])}")
        elif any(spans):
            lines.append(f"{inner}x{i} = i{i}[{at}]")
        else:
            hoisted.append(f"x{i} = i{i}[{at}]")
        names.append(f"x{i}")
    used_ops = []
    for k, (name, slots, attrs) in enumerate(program):
        opdef = REGISTRY[name]
        template = opdef.native
        attrs = dict(attrs)
        if callable(template):
            template = template(**attrs)
        if template is None:
            return None
        expr = template.format(*[names[s] for s in slots], T=_TYPES[kinds[n_in + k]])
        lines.append(f"{inner}t{k} = {expr}")
        names.append(f"t{k}")
        used_ops.append(name)
    last = names[-1]
    if reduce is None:
        lines.append(f"{inner}o[{', '.join(index)}] = {last}")
    else:
        if kinds[-1] == "bool":
            return None
        lines.append(inner + _ACC_STEP[reduce].format(t=last))
        count = " * ".join(f"n[{k}]" for k in range(n_kept, rank))
        final = f"acc / ({count})" if reduce == "Mean" else "acc"
        at = ", ".join(index[:n_kept]) or "0"
        lines.append(" " * 4 * n_kept + f"o[{at}] = {final}")
        used_ops.append(reduce)
    params = ", ".join([f"i{i}" for i in range(n_in)] + ["o"] + (["n"] if reduce else []))
    shape_text = " x ".join(
        f"{n}{'' if all(p) else '(' + ''.join('1' if s else '0' for s in p) + ')'}"
        f"{' reduced' if r and reduce else ''}" for n, p, r in dims)
    head = [
        f'"""trainlib native kernel: {" -> ".join(used_ops)}',
        f"over {shape_text} ({'parallel' if parallel else 'serial'}); inputs "
        f"{', '.join(kinds[:n_in])}.",
        "Generated by trainlib/graph/exec/native.py; safe to delete (it is made again)."
        '"""',
        "import math",
        "",
        "import numpy as np",
        "from numba import njit, prange",
        "",
        "from trainlib.graph.exec import native_math as nm",
        "",
        "",
        f"@njit(parallel={parallel}, fastmath={{'contract'}}, error_model='numpy', nogil=True, "
        "cache=True)",
        f"def kernel({params}):",
    ]
    body = hoisted + lines
    return "\n".join(head + ["    " + line for line in body]) + "\n"


# the accumulator of a reduction: sums in float64 (float32 data: more exact than numpy's
# pairwise float32 sums); max/min keep NaN once seen, as numpy's
_ACC_INIT = {"Sum": "np.float64(0.0)", "Mean": "np.float64(0.0)",
             "Max": "{T}(-np.inf)", "Min": "{T}(np.inf)"}
_ACC_STEP = {"Sum": "acc += {t}", "Mean": "acc += {t}",
             "Max": "acc = {t} if ({t} > acc or {t} != {t}) else acc",
             "Min": "acc = {t} if ({t} < acc or {t} != {t}) else acc"}


def _literal(value, dtype):
    if dtype == "bool":
        return repr(bool(value))
    value = float(value)
    text = repr(value) if value == value and abs(value) != float("inf") else \
        {"nan": "np.nan", "inf": "np.inf", "-inf": "-np.inf"}[repr(value)]
    return f"{_TYPES[dtype]}({text})"


# ------------------------------------------------------------------ reports

def _fused_programs(graph):
    from ..passes.rewrite import each_subgraph  # noqa: PLC0415 (passes sit above exec)
    found = [op.attrs["program"] for op in graph.operations
             if op.type in ("FusedElementwise", "FusedReduction")]
    each_subgraph(graph, lambda sub: found.extend(_fused_programs(sub)) or sub)
    return found


def compile_seconds(graph):
    """Seconds this process spent compiling (or loading from the disk cache) the native
    kernels of `graph`'s fused regions (0.0 before they first ran)."""
    return sum(_COMPILE_SECONDS.get(p, 0.0) for p in set(_fused_programs(graph)))


def sources(graph):
    """The sources of the native kernels `graph`'s fused regions have compiled so far."""
    out = []
    for p in dict.fromkeys(_fused_programs(graph)):
        out.extend(_SOURCES.get(p, ()))
    return out


def cache_stats():
    """{"kernels": compiled in this process, "disk_hits": loaded from numba's disk cache,
    "disk_misses": compiled from source} over every native kernel so far."""
    hits = misses = 0
    for dispatcher, *_ in list(_KERNELS.values()):
        stats = getattr(dispatcher, "stats", None)
        if stats is not None:
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return {"kernels": len(_KERNELS), "disk_hits": hits, "disk_misses": misses}
