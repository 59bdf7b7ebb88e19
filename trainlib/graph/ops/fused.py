"""`FusedElementwise`: one op that runs a chain (or tree) of elementwise ops.

Owns: the fused op the fusion pass (`graph/passes/fuse.py`) builds, its
inference from the sub-program, and its three ways of running:
  * plain: each step's own kernel in order (results bit for bit as unfused);
  * `jit_compile=True` on numpy: cache-blocked, the whole chain over a slice of
    `BLOCK` elements that stays in cache, then the next slice, every step
    writing with `out=` into a few preallocated block buffers (liveness-based
    reuse) and the last one into the output; large arrays are split into one
    range of blocks per CPU core, run by a thread pool (numpy releases the GIL
    inside ufunc loops); falls back to plain for small arrays and for
    broadcasts it cannot slice (the only slicing it does is along the
    flattened array or along axis 0);
  * `jit_compile=True` on CuPy: one `cupy.ElementwiseKernel` per (program,
    dtypes), compiled once and cached; plain for ops without a C form.
The sub-program is attr `program`: a tuple of steps `(op type, input slots,
attrs as sorted (key, value) pairs)`; slot i < len(inputs) is input i, slot
len(inputs) + k is the result of step k; the result is the last step's.
Invariants: every step is an elementwise, non-stateful op; not differentiable
(fusion runs after autodiff). Blocked and CuPy results equal plain ones within
floating-point tolerance (sigmoid is evaluated by another formula), not bit
for bit.
"""
from .. import dtypes as _dt
from ..op import REGISTRY, defop
from ..tensor import TensorSpec

__all__ = []

BLOCK = 32768  # elements per slice: a few float32 buffers of this size stay in L2


def _steps(program):
    return [(REGISTRY[name], slots, dict(attrs)) for name, slots, attrs in program]


_TAKES = {}  # op type -> attr names its kernel takes, None for all


def _kernel_attrs(opdef, attrs):
    """The attrs `opdef`'s kernel takes (as codegen passes them: a kernel may ignore some)."""
    takes = _TAKES.get(opdef.name, False)
    if takes is False:
        import inspect  # noqa: PLC0415 -- once per op type
        params = inspect.signature(opdef.kernel).parameters.values()
        var_kw = [p for p in params if p.kind is p.VAR_KEYWORD]
        takes = _TAKES[opdef.name] = None if var_kw and not var_kw[0].name.startswith("_") else \
            {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return attrs if takes is None else {k: v for k, v in attrs.items() if k in takes}


def _fused_infer(*inputs, program, jit_compile=False):
    values = list(inputs)
    for opdef, slots, attrs in _steps(program):
        out = opdef.infer(*[values[s] for s in slots], **attrs)
        if not isinstance(out, TensorSpec):
            raise ValueError(f"FusedElementwise step {opdef.name} must have exactly one output")
        values.append(out)
    if len(values) == len(inputs):
        raise ValueError("FusedElementwise needs a non-empty program")
    return values[-1]


_PLAIN = {}     # program -> resolved steps
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


def _run_plain(xp, arrays, program):
    steps = _cached(_PLAIN, program, lambda: [(d.kernel, s, _kernel_attrs(d, a))
                                               for d, s, a in _steps(program)])
    values = list(arrays)
    for kernel, slots, attrs in steps:
        values.append(kernel(xp, *[values[s] for s in slots], **attrs))
    return values[-1]


@defop("FusedElementwise", infer=_fused_infer, differentiable=False, elementwise=True)
def _fused(xp, *arrays, program, jit_compile=False):
    if jit_compile:
        if getattr(xp, "__name__", "") == "cupy":
            kernel = _cached(_CUPY, (program, tuple(a.dtype.str for a in arrays)),
                             lambda: _cupy_kernel(xp, program, arrays))
            if kernel is not None:
                return kernel(*arrays)
        else:
            runner = _cached(_BLOCKED, (program, tuple(a.dtype.str for a in arrays)),
                             lambda: _BlockedRunner(xp, program, arrays))
            out = runner(arrays)
            if out is not None:
                return out
    return _run_plain(xp, arrays, program)


# ------------------------------------------------------------------ cache-blocked numpy

def _sigmoid_into(xp, x, out, tmp):
    if out.dtype == xp.float32:
        # 1 / (1 + exp(-x)): relatively accurate everywhere; exp(-x) = inf gives the limit 0
        # (the runner ignores that overflow); 4 passes, one exp
        xp.negative(x, out=out)
        xp.exp(out, out=out)
        xp.add(out, 1, out=out)
        xp.reciprocal(out, out=out)
        return
    # exp(min(x, 0)) / (1 + exp(-|x|)): never overflows; max(e, x >= 0) is exp(min(x, 0)), NaN kept
    xp.absolute(x, out=tmp)
    xp.negative(tmp, out=tmp)
    xp.exp(tmp, out=tmp)
    xp.greater_equal(x, 0, out=out)
    xp.maximum(tmp, out, out=out)
    xp.add(tmp, 1, out=tmp)
    xp.true_divide(out, tmp, out=out)


def _tanh_into(xp, x, out, tmp):
    if out.dtype != xp.float32:
        xp.tanh(x, out=out)
        return
    # float32: 2 / (1 + exp(-2x)) - 1, one exp instead of tanh (which numpy evaluates about
    # twice as slowly); exp(-2x) = inf gives the limit -1; absolute error below 2e-7 (the
    # relative error is larger only for |x| < 1e-3); NaN kept
    xp.multiply(x, -2, out=out)
    xp.exp(out, out=out)
    xp.add(out, 1, out=out)
    xp.true_divide(2, out, out=out)
    xp.subtract(out, 1, out=out)


def _pow_into(xp, a, b, out, tmp):
    if b.size == 1 and b.ndim <= out.ndim and float(b.reshape(())) == 2:
        xp.multiply(a, a, out=out)  # what numpy's x ** 2 does: exact, and 5x faster than power
    else:
        xp.power(a, b, out=out)


def _squared_difference_into(xp, a, b, out, tmp):
    xp.subtract(a, b, out=out)
    xp.square(out, out=out)


def _relu_into(xp, x, out, tmp):
    xp.maximum(x, 0, out=out)


def _cast_into(xp, x, out, tmp, DstT):  # noqa: N803 -- TensorFlow's attr name
    xp.copyto(out, x, casting="unsafe")  # the C casts `astype` does


# op type -> ufunc name (writes with out=), or a helper (xp, *ins, out, tmp, **attrs)
_INTO = {
    "AddV2": "add", "Sub": "subtract", "Mul": "multiply", "RealDiv": "true_divide",
    "Maximum": "maximum", "Minimum": "minimum", "Pow": _pow_into,
    "Neg": "negative", "Abs": "absolute", "Square": "square", "Exp": "exp", "Log": "log",
    "Log1p": "log1p", "Sqrt": "sqrt", "Sin": "sin", "Cos": "cos", "Tanh": _tanh_into,
    "Reciprocal": "reciprocal", "Sign": "sign", "Floor": "floor", "Ceil": "ceil",
    "Equal": "equal", "NotEqual": "not_equal", "Less": "less", "LessEqual": "less_equal",
    "Greater": "greater", "GreaterEqual": "greater_equal", "LogicalAnd": "logical_and",
    "LogicalOr": "logical_or", "LogicalNot": "logical_not", "IsNan": "isnan",
    "IsFinite": "isfinite", "IsInf": "isinf",
    "Sigmoid": _sigmoid_into, "SquaredDifference": _squared_difference_into, "Relu": _relu_into,
    "Cast": _cast_into,
}


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
        consts = {"xp": xp}
        lines = []
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
            into = _INTO.get(opdef.name)
            if isinstance(into, str):
                consts[f"u{k}"] = getattr(xp, into)
                lines.append(f"u{k}({', '.join(args)}, out={target})")
            elif into is not None:
                if dtype not in temps:
                    temps[dtype] = len(self.registers)
                    self.registers.append(dtype)
                consts[f"h{k}"] = into
                consts[f"a{k}"] = attrs
                lines.append(f"h{k}(xp, {', '.join(args)}, {target}, r{temps[dtype]}, **a{k})")
            else:
                consts[f"k{k}"] = opdef.kernel
                consts[f"a{k}"] = _kernel_attrs(opdef, attrs)
                lines.append(f"{target}[...] = k{k}(xp, {', '.join(args)}, **a{k})")
        source = ["def run(sliced, whole, bufs, out, n, rows, row, inner):",
                  "    for s in range(0, n, rows):",
                  "        e = min(s + rows, n)",
                  "        m = e - s"]
        for i in range(n_in):
            source.append(f"        i{i} = whole[{i}] if sliced[{i}] is None else sliced[{i}][s:e]")
        for r in range(len(self.registers)):
            source.append(f"        r{r} = bufs[{r}][:m * row].reshape((m,) + inner)")
        source.append("        o = out[s:e]")
        source += ["        " + line for line in lines]
        namespace = dict(consts)
        exec(compile("\n".join(source) + "\n", "<trainlib-fused>", "exec"), namespace)  # noqa: S102
        self.run = namespace["run"]

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
        row = _prod(inner)
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
        with xp.errstate(over="ignore"):  # exp overflowing to inf is the intended limit (see _INTO)
            self.run(part, whole, bufs, view[lo:hi], hi - lo, rows, row, inner)


THREADS = None  # worker threads for blocked runs (None: one per CPU core)
_POOL = []


def _pool():
    import os  # noqa: PLC0415
    if _POOL and _POOL[1] != os.getpid():  # a forked child: the parent's threads are not here
        _POOL.clear()
    if not _POOL:
        import concurrent.futures  # noqa: PLC0415
        _POOL.extend((concurrent.futures.ThreadPoolExecutor(max_workers=_threads(),
                                                            thread_name_prefix="trainlib-fused"),
                      os.getpid()))
    return _POOL[0]


def _threads():
    import os  # noqa: PLC0415
    return THREADS or os.cpu_count() or 1


def _chunks(n, rows, per_row):
    """[lo, hi) ranges of axis 0, one per thread, whole blocks each; one range for small work
    (a thread hand-off costs tens of microseconds: worth it from a few blocks per thread)."""
    threads = _threads()
    blocks = -(-n // rows)
    if threads < 2 or blocks < 4 * threads:
        return [(0, n)]
    per = -(-blocks // threads) * rows
    return [(lo, min(lo + per, n)) for lo in range(0, n, per)]


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# ------------------------------------------------------------------ CuPy ElementwiseKernel

_C_TYPES = {"float32": "float", "float64": "double", "int8": "signed char", "int16": "short",
            "int32": "int", "int64": "long long", "uint8": "unsigned char", "bool": "bool"}

# op type -> C expression over {0}, {1}, {2} (inputs) and {T} (the result's C type)
_C_EXPR = {
    "AddV2": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})", "RealDiv": "({0} / {1})",
    "Neg": "(-{0})", "Abs": "({0} < 0 ? -{0} : {0})", "Square": "({0} * {0})",
    "Exp": "exp({0})", "Log": "log({0})", "Log1p": "log1p({0})", "Sqrt": "sqrt({0})",
    "Rsqrt": "(({T})1 / sqrt({0}))", "Reciprocal": "(({T})1 / {0})", "Sin": "sin({0})",
    "Cos": "cos({0})", "Tanh": "tanh({0})", "Floor": "floor({0})", "Ceil": "ceil({0})",
    "Sigmoid": "(({T})1 / (({T})1 + exp(-{0})))",
    "Relu": "({0} < 0 ? ({T})0 : {0})",
    "Maximum": "(({0} >= {1} || {0} != {0}) ? {0} : {1})",
    "Minimum": "(({0} <= {1} || {0} != {0}) ? {0} : {1})",
    "SquaredDifference": "(({0} - {1}) * ({0} - {1}))",
    "Sign": "({0} > 0 ? ({T})1 : ({0} < 0 ? ({T})-1 : {0}))",
    "Equal": "({0} == {1})", "NotEqual": "({0} != {1})", "Less": "({0} < {1})",
    "LessEqual": "({0} <= {1})", "Greater": "({0} > {1})", "GreaterEqual": "({0} >= {1})",
    "LogicalAnd": "({0} && {1})", "LogicalOr": "({0} || {1})", "LogicalNot": "(!{0})",
    "IsNan": "({0} != {0})", "SelectV2": "({0} ? {1} : {2})",
    "Cast": "(({T}){0})",
}


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
        template = _C_EXPR.get(opdef.name)
        if ctype is None or template is None or \
                any(_C_TYPES.get(values[s].dtype.name) is None for s in slots):
            return None
        if opdef.name == "Cast" and out.dtype is _dt.bool:
            template = "({0} != 0)"
        expr = template.format(*[names[s] for s in slots], T=ctype)
        names.append(f"t{k}")
        body.append(f"{ctype} t{k} = ({ctype}){expr};")
    params = ", ".join(f"{a.dtype.name} x{i}" for i, a in enumerate(arrays))
    body.append(f"y = t{len(names) - n_in - 1};")
    return cp.ElementwiseKernel(params, f"{values[-1].dtype.name} y", "\n".join(body),
                                f"trainlib_fused_{abs(hash(program)) % 10 ** 8}")
