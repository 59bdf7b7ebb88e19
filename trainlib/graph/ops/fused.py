"""`FusedElementwise`: one op that runs a chain (or tree) of elementwise ops, and
`FusedReduction`: the same ending in a Sum, Mean, Max or Min.

Owns: the fused op the fusion pass (`graph/passes/fuse.py`) builds, its
inference from the sub-program, and its three ways of running:
  * plain: each step's own kernel in order (results bit for bit as unfused);
  * `jit_compile=True` on numpy with numba installed: one compiled parallel loop
    (`graph/exec/native.py`) when every step has a `native` form;
  * otherwise `jit_compile=True` on numpy: cache-blocked, the whole chain over a slice of
    `BLOCK` elements that stays in cache, then the next slice, every step
    writing with `out=` into a few preallocated block buffers (liveness-based
    reuse) and the last one into the output; large arrays are split into one
    range of blocks per CPU core, run by a thread pool (numpy releases the GIL
    inside ufunc loops); falls back to plain for small arrays and for
    broadcasts it cannot slice (the only slicing it does is along the
    flattened array or along axis 0);
  * `jit_compile=True` on CuPy: one `cupy.ElementwiseKernel` per (program,
    dtypes), compiled once and cached; plain for ops without a C form.
Attr `constants` lists the inputs that are one-element constants, with their values
(native kernels write them as literals). The sub-program is attr `program`: a tuple of steps `(op type, input slots,
attrs as sorted (key, value) pairs)`; slot i < len(inputs) is input i, slot
len(inputs) + k is the result of step k; the result is the last step's.
Each step runs as its OpDef says: `into` (the out= form) in blocked loops, `c_expr`
in CuPy kernels; the loops' source is built by the emitter of `graph/exec`.
Invariants: every step is an elementwise, non-stateful op; not differentiable
(fusion runs after autodiff). Blocked and CuPy results equal plain ones within
floating-point tolerance (sigmoid is evaluated by another formula), not bit
for bit.
"""
import math

from .. import dtypes as _dt
from .. import threads as _threads_setting
from ..exec import native as _native
from ..exec.emit import Emitter, snake_case
from ..exec.lower import kernel_attrs
from ..op import REGISTRY, defop
from ..tensor import TensorSpec

__all__ = []

BLOCK = 32768  # elements per slice: a few float32 buffers of this size stay in L2


def _steps(program):
    return [(REGISTRY[name], slots, dict(attrs)) for name, slots, attrs in program]


def _fused_infer(*inputs, program, jit_compile=False, constants=()):
    values = list(inputs)
    for opdef, slots, attrs in _steps(program):
        out = opdef.infer(*[values[s] for s in slots], **attrs)
        if not isinstance(out, TensorSpec):
            raise ValueError(f"FusedElementwise step {opdef.name} must have exactly one output")
        values.append(out)
    if len(values) == len(inputs):
        raise ValueError("FusedElementwise needs a non-empty program")
    return values[-1]


_PLAIN = {}     # id(program) -> (program, resolved steps)
_BLOCKED = {}   # (program, input dtypes) -> _BlockedRunner
_CUPY = {}      # (program, input dtypes) -> ElementwiseKernel or None (no C form)


def _cached(cache, key, make):
    try:
        found = cache.get(key)
    except TypeError:   # an unhashable attr: build every time
        return make()
    if found is None and key not in cache:
        found = cache[key] = make()
    return found


def _plain_steps(program):
    """The program's steps as (kernel, slots, kernel attrs), made once per program object
    (looked up by identity: hashing the nested program tuple on every call costs more than
    the small arrays' own numpy calls)."""
    found = _PLAIN.get(id(program))
    if found is None or found[0] is not program:
        if len(_PLAIN) > 4096:
            _PLAIN.clear()
        found = _PLAIN[id(program)] = (program, [(d.kernel, s, kernel_attrs(d, a))
                                                 for d, s, a in _steps(program)])
    return found[1]


def _run_plain(xp, arrays, program):
    values = list(arrays)
    for kernel, slots, attrs in _plain_steps(program):
        values.append(kernel(xp, *[values[s] for s in slots], **attrs))
    return values[-1]


def _fresh(out, arrays):
    """`out`, copied if it is an input or a view (the last step may hand back what it got):
    the op's result is always a new array (its `fresh_output`)."""
    if getattr(out, "base", None) is not None or any(out is a for a in arrays):
        return out.copy()
    return out


# fresh_output: the memory plan may then update a Variable in place from it (an optimizer's
# fused step reads the slot it writes)
@defop("FusedElementwise", infer=_fused_infer, differentiable=False, elementwise=True,
       fresh_output=True)
def _fused(xp, *arrays, program, jit_compile=False, constants=()):
    if jit_compile:
        name = getattr(xp, "__name__", "")
        if name == "cupy":
            kernel = _cached(_CUPY, (program, tuple(a.dtype.str for a in arrays)),
                             lambda: _cupy_kernel(xp, program, arrays))
            if kernel is not None:
                return kernel(*arrays)
        else:
            if name != "numpy":
                pass   # another host array module: its own kernels, blocked
            elif _native.installed():
                out = _native.run(program, arrays, constants)
                if out is not None:
                    return out
            else:
                _native.warn_unavailable()
            # smaller regions, and any while numba loads in the background: the plain steps
            # (whole-array calls, which leave that thread the interpreter between them)
            if max([a.size for a in arrays]) >= 2 * BLOCK and not _native.loading():
                runner = _cached(_BLOCKED, (program, tuple(a.dtype.str for a in arrays)),
                                 lambda: _BlockedRunner(xp, program, arrays))
                out = runner(arrays)
                if out is not None:
                    return out
    return _fresh(_run_plain(xp, arrays, program), arrays)


def _reduction_infer(*inputs, program, reduce, jit_compile=False, constants=()):
    kind, axis, keepdims = reduce
    return REGISTRY[kind].infer(_fused_infer(*inputs, program=program), axis=axis,
                                keepdims=keepdims)


@defop("FusedReduction", infer=_reduction_infer, differentiable=False)
def _fused_reduction(xp, *arrays, program, reduce, jit_compile=False, constants=()):
    """A fused elementwise program whose result a Sum/Mean/Max/Min reduces (attr `reduce`:
    (op type, axis, keepdims)): one native loop that accumulates as it goes when numba
    runs it, else the program's result, then the reduction's own kernel."""
    if jit_compile and getattr(xp, "__name__", "") == "numpy" and _native.installed():
        out = _native.run(program, arrays, constants, reduce)
        if out is not None:
            return out
    kind, axis, keepdims = reduce
    value = _fused(xp, *arrays, program=program, jit_compile=jit_compile, constants=constants)
    return REGISTRY[kind].kernel(xp, value, axis=axis, keepdims=keepdims)


# ------------------------------------------------------------------ cache-blocked numpy

class _BlockedRunner:
    """The generated slice loop of one program for one set of input dtypes."""

    def __init__(self, xp, program, arrays):
        self.xp = xp
        n_in = len(arrays)
        specs = [TensorSpec(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]
        steps = _steps(program)
        dtypes = []
        values = list(specs)
        for opdef, slots, attrs in steps:
            values.append(opdef.infer(*[values[s] for s in slots], **attrs))
            dtypes.append(values[-1].dtype.np)
        self.out_dtype = dtypes[-1]
        last_use = {}
        for k, (_, slots, _) in enumerate(steps):
            for s in slots:
                last_use[s] = k
        # registers: block buffers; a value's register is free again after its last use
        self.registers = []   # dtype per register
        free = []
        where = {}            # slot -> register index
        em = Emitter()
        em.names.used.update(("xp", "sliced", "whole", "bufs", "out", "n", "rows", "row", "inner",
                              "s", "e", "m", "o"))
        em.names.used.update(f"i{i}" for i in range(n_in))
        em.names.used.update(f"r{r}" for r in range(2 * len(steps) + 1))  # registers, at most
        em.consts["xp"] = xp
        body = []
        temps = {}            # dtype -> scratch register for multi-call helpers
        for k, (opdef, slots, attrs) in enumerate(steps):
            args = [f"i{s}" if s < n_in else f"r{where[s]}" for s in slots]
            for s in set(slots):
                if s >= n_in and last_use[s] == k:
                    free.append(where[s])
            last = k == len(steps) - 1
            dtype = dtypes[k]
            if last:
                target = "o"
            else:
                reg = next((r for r in free if self.registers[r] == dtype), None)
                if reg is None:
                    reg = len(self.registers)
                    self.registers.append(dtype)
                else:
                    free.remove(reg)
                where[n_in + k] = reg
                target = f"r{reg}"
            into = opdef.into
            name = opdef.name
            if isinstance(into, str):
                fn = em.bind(f"xp_{into}", getattr(xp, into), key=("xp", into))
                body.append(f"{fn}({', '.join(args)}, out={target})")
            elif into is not None:
                if dtype not in temps:
                    temps[dtype] = len(self.registers)
                    self.registers.append(dtype)
                fn = em.bind(f"{snake_case(name)}_into", into, key=("into", name))
                extra = f", **{em.bind(f'{snake_case(name)}_attrs', attrs)}" if attrs else ""
                body.append(f"{fn}(xp, {', '.join(args)}, {target}, r{temps[dtype]}{extra})")
            else:
                fn = em.bind(f"k_{snake_case(name)}", opdef.kernel, key=("kernel", name))
                taken = kernel_attrs(opdef, attrs)
                extra = f", **{em.bind(f'{snake_case(name)}_attrs', taken)}" if taken else ""
                body.append(f"{target}[...] = {fn}(xp, {', '.join(args)}{extra})")
        em.emit(1, "for s in range(0, n, rows):")
        em.emit(2, "e = min(s + rows, n)")
        em.emit(2, "m = e - s")
        for i in range(n_in):
            em.emit(2, f"i{i} = whole[{i}] if sliced[{i}] is None else sliced[{i}][s:e]")
        for r in range(len(self.registers)):
            em.emit(2, f"r{r} = bufs[{r}][:m * row].reshape((m,) + inner)")
        em.emit(2, "o = out[s:e]")
        for line in body:
            em.emit(2, line)
        self.run, self.source, self.filename, _ = em.compile(
            "run", ["sliced", "whole", "bufs", "out", "n", "rows", "row", "inner"], label="fused")

    def __call__(self, arrays):
        xp = self.xp
        shape = xp.broadcast_shapes(*[a.shape for a in arrays])
        size = 1
        for d in shape:
            size *= d
        if size < 2 * BLOCK:
            return None
        out = xp.empty(shape, self.out_dtype)
        if all(a.shape == shape or a.size == 1 for a in arrays):
            # flat: every input is full size or a scalar
            view = out.reshape(-1)
            sliced = [a.reshape(-1) if a.shape == shape else None for a in arrays]
            whole = [None if a.shape == shape else a.reshape(()) for a in arrays]
            rows, inner = BLOCK, ()
        else:
            # rows of axis 0; inputs of one row broadcast to every slice
            if len(shape) < 2 or shape[0] < 2:
                return None
            view = out
            inner = tuple(shape[1:])
            n_inner = size // shape[0]
            padded = [a.reshape((1,) * (len(shape) - a.ndim) + a.shape) for a in arrays]
            sliced = [a if a.shape[0] == shape[0] else None for a in padded]
            whole = [None if a.shape[0] == shape[0] else a for a in padded]
            rows = max(1, BLOCK // n_inner)
        row = math.prod(inner)
        n = view.shape[0]
        chunks = _chunks(n, rows, size // max(n, 1))
        if len(chunks) == 1:
            self._run_chunk(sliced, whole, view, 0, n, rows, row, inner)
            return out
        # numpy releases the GIL inside ufunc loops: slices of the array run on every core
        futures = [_pool().submit(self._run_chunk, sliced, whole, view, lo, hi, rows, row, inner)
                   for lo, hi in chunks]
        for f in futures:
            f.result()
        return out

    def _run_chunk(self, sliced, whole, view, lo, hi, rows, row, inner):
        xp = self.xp
        bufs = [xp.empty(rows * row, d) for d in self.registers]  # each thread its own
        part = [None if a is None else a[lo:hi] for a in sliced]
        with xp.errstate(over="ignore"):  # exp overflowing to inf is the intended limit (see the
            # `into` forms of Sigmoid and Tanh)
            self.run(part, whole, bufs, view[lo:hi], hi - lo, rows, row, inner)


THREADS = None  # worker threads for blocked runs (None: tl.config.threading's intra-op
#                 setting, else one per core this process may use)


def _pool():
    return _threads_setting.pool(_threads())


def _threads():
    return THREADS or _threads_setting.pool_threads()


def _chunks(n, rows, per_row):
    """[lo, hi) ranges of axis 0, one per thread, whole blocks each; one range for small work
    (a thread hand-off costs tens of microseconds: worth it from a few blocks per thread)."""
    threads = _threads()
    blocks = -(-n // rows)
    if threads < 2 or blocks < 4 * threads:
        return [(0, n)]
    per = -(-blocks // threads) * rows
    return [(lo, min(lo + per, n)) for lo in range(0, n, per)]


# ------------------------------------------------------------------ CuPy ElementwiseKernel

_C_TYPES = {"float32": "float", "float64": "double", "int8": "signed char", "int16": "short",
            "int32": "int", "int64": "long long", "uint8": "unsigned char", "bool": "bool"}


def _cupy_kernel(cp, program, arrays):
    """One ElementwiseKernel for the whole program, or None if a step has no C form."""
    n_in = len(arrays)
    values = [TensorSpec(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]
    names = [f"x{i}" for i in range(n_in)]
    body = []
    for k, (opdef, slots, attrs) in enumerate(_steps(program)):
        out = opdef.infer(*[values[s] for s in slots], **attrs)
        values.append(out)
        ctype = _C_TYPES.get(out.dtype.name)
        template = opdef.c_expr
        if ctype is None or template is None or \
                any(_C_TYPES.get(values[s].dtype.name) is None for s in slots):
            return None
        expr = template.format(*[names[s] for s in slots], T=ctype)
        names.append(f"t{k}")
        body.append(f"{ctype} t{k} = ({ctype}){expr};")
    params = ", ".join(f"{a.dtype.name} x{i}" for i, a in enumerate(arrays))
    body.append(f"y = t{len(names) - n_in - 1};")
    return cp.ElementwiseKernel(params, f"{values[-1].dtype.name} y", "\n".join(body),
                                f"trainlib_fused_{abs(hash(program)) % 10 ** 8}")
