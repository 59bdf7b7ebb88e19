"""OpDef, the op registry, and `apply`: the single entry every op call goes through.

Owns: the definition of an op (kernel on `xp`, shape/dtype inference,
gradient rule, stateful flag), the registry by type name, argument conversion
with TensorFlow's weak-type rules (copying arrays; `owned_tensor` is the one
zero-copy entry, for arrays trainlib made), the one fork between running a
kernel now (eager) and adding an Operation to the graph being traced (decided
by the calling thread's state), and helpers for inference rules (broadcast
shapes, axes, the result-size check against the device's memory).
Invariants: every op is registered once; public op functions convert their
arguments and call `apply`; active tapes see every op, eager or traced, through the
same `record` call (they record the differentiable ones and note where the others
consume a tracked value).
"""
from . import backend as _backend
from . import dtypes as _dt
from .context import state
from .errors import (InvalidArgumentError, NotFoundError, OpError, ResourceExhaustedError, op_error,
                     user_location)
from .tensor import SymbolicTensor, Tensor, TensorShape, TensorSpec, _TensorBase, to_array
from .properties import read_only

REGISTRY = {}


class OpDef:
    """Everything about one op type, defined once: what it computes and how it is lowered.

    Attributes:
        name: CamelCase type name, as TensorFlow (`"MatMul"`).
        kernel: `kernel(xp, *arrays, **attrs)` returning an array, a tuple of
            arrays (several outputs) or None (no outputs). Written against `xp`.
        infer: `infer(*specs, **attrs)` returning a TensorSpec (or a tuple of them);
            dims may be None. Raises ValueError/TypeError with a plain message.
        grad: `grad(op, *output_grads)` returning one gradient (or None) per
            input, written in trainlib ops; `op` has `.inputs`, `.outputs`,
            `.attrs`. Broadcasting is undone by the autodiff driver, not here.
        stateful: True for ops with side effects or fresh randomness; never
            merged, folded or pruned while reachable from a side effect.
        differentiable: False for ops whose outputs carry no gradient
            (comparisons, argmax, shape queries).
        elementwise: True for ops whose output element i depends only on input
            element i (with broadcasting): candidates for fusion.
        num_outputs: 1, a fixed count (0 for pure side effects such as print),
            or None (depends on the attrs).

    Lowering facts (read by `graph/exec` and the fused op; None/False when they do not apply):
        ufunc: the name of the xp ufunc the kernel is exactly (`"add"`): called directly,
            with `out=` buffers from the memory plan.
        direct: `direct(op)` -> `(ufunc name, argument templates)` or None, for an op that
            is a plain xp call only for some attrs/shapes (MatMul: `"{}.T"` for transposes;
            Pow by 2: `xp.square` of the first input). Instead of a name, a kernel
            `f(xp, *arrays, out=None)` that writes into `out` when given one (and returns
            it), as a ufunc does: Sigmoid and Softplus; it is never given an `out` that
            overlaps its inputs.
        fresh_output: the kernel always returns a newly made array (never a view or an
            input), so its result cannot alias a Variable's array.
        inline: a Python expression over the inputs `{0}, {1}...` the op is emitted as
            (`{kernel}` names the op's kernel), or `inline(op)` returning one, or None
            where the op takes its kernel call (GatherV2 of one row: `params[i]`).
        in_place: `in_place(xp, *arrays, **attrs)` updating input 0 where it lies, for
            writes whose old value nobody reads (Variable updates, loop-owned buffers).
        row_write: `row_write(op)` -> `(condition, statement)` templates over the inputs, or
            None: a loop-owned in-place write emitted as the plain statement while the
            condition holds (TensorArrayWrite of one row in range: `buf[i] = v`), else as the
            `in_place` call.
        variable_access: `"read"`, `"assign"` (stores its input as the new value) or
            `"update"` (stores a newly computed value) for the Variable ops.
        subgraphs: the attr names holding branch/body graphs (If, While).
        control: `"if"` or `"while"`: lowered to Python control flow over `subgraphs`.
        into: the op's form inside a fused cache-blocked loop: a ufunc name, or
            `into(xp, *arrays, out, tmp, **attrs)` writing into `out` (`tmp`: scratch of
            out's dtype); defaults to `ufunc`.
        c_expr: a C expression over `{0}, {1}...` and `{T}` (the result's C type) for a
            fused CuPy kernel.
        native: a Python expression over scalars `{0}, {1}...` and `{T}` (the result's
            numpy type, `np.float32`) for a fused numba kernel (`graph/exec/native.py`;
            `nm.` names `native_math`), or `native(**attrs)` returning one (None: no form).
        infix: a word naming a binary op in generated code (`"times"`: `x_times_2`).
        host: the kernel runs on the host's numpy whatever the device (string ops, as
            TensorFlow places them on the CPU); its inputs and outputs are host arrays.
    """

    __slots__ = ("name", "kernel", "infer", "grad", "stateful", "differentiable", "elementwise",
                 "num_outputs", "ufunc", "direct", "fresh_output", "inline", "in_place",
                 "variable_access", "subgraphs", "control", "into", "c_expr", "native", "infix",
                 "host", "row_write")

    def __init__(self, name, kernel, infer, grad=None, stateful=False, differentiable=True,
                 elementwise=False, num_outputs=1, *, ufunc=None, direct=None, fresh_output=False,
                 inline=None, in_place=None, variable_access=None, subgraphs=(), control=None,
                 into=None, c_expr=None, native=None, infix=None, host=False, row_write=None):
        self.name = name
        self.kernel = kernel
        self.infer = infer
        self.grad = grad
        self.stateful = stateful
        self.differentiable = differentiable
        self.elementwise = elementwise
        self.num_outputs = num_outputs
        self.ufunc = ufunc
        self.direct = direct
        self.fresh_output = fresh_output
        self.inline = inline
        self.in_place = in_place
        self.variable_access = variable_access
        self.subgraphs = tuple(subgraphs)
        self.control = control
        self.into = into if into is not None else ufunc
        self.c_expr = c_expr
        self.native = native
        self.infix = infix
        self.host = host
        self.row_write = row_write

    def __repr__(self):
        return f"OpDef({self.name})"


def _ufunc_kernel(name):
    """A kernel that is exactly the array module's ufunc `name` (`xp.add`, `xp.exp`...)."""
    found = {}  # array module -> its ufunc, looked up once

    def kernel(xp, *arrays, out=None):
        fn = found.get(xp)
        if fn is None:
            fn = found[xp] = getattr(xp, name)
        return fn(*arrays) if out is None else fn(*arrays, out=out)
    kernel.__name__ = f"{name}_kernel"
    return kernel


def defop(name, *, infer, grad=None, stateful=False, differentiable=True, elementwise=False,
          num_outputs=1, **lowering):
    """Decorator registering the decorated kernel as op `name` (see OpDef for the
    lowering facts `**lowering` may set)."""

    def register(kernel):
        if name in REGISTRY:
            raise ValueError(f"op {name!r} is already defined")
        REGISTRY[name] = OpDef(name, kernel, infer, grad, stateful, differentiable, elementwise,
                               num_outputs, **lowering)
        return kernel

    return register


def defufunc(name, ufunc, *, infer, **fields):
    """Registers op `name` whose kernel is exactly the array module's ufunc `ufunc`
    (`defufunc("AddV2", "add", ...)`); compiled graphs call that ufunc directly."""
    return defop(name, infer=infer, ufunc=ufunc, **fields)(_ufunc_kernel(ufunc))


def set_gradient(name, grad):
    """Attaches a gradient rule to op `name` (for rules defined after their op)."""
    REGISTRY[name].grad = grad


def get_opdef(name):
    """The OpDef of type `name` (NotFoundError if none)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise NotFoundError(f"No op named {name!r} is registered", op=name) from None


class EagerOp:
    """What a tape records of one eager op call; has the same fields as a graph Operation."""

    __slots__ = ("opdef", "inputs", "outputs", "attrs")

    def __init__(self, opdef, inputs, outputs, attrs):
        self.opdef = opdef
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs

    type = read_only("opdef.name", "The op's type: its OpDef's name, such as MatMul.")


def apply(name, *inputs, **attrs):
    """Runs op `name` on tensors `inputs` now, or adds it to the graph being traced.

    Args:
        name: the op type (`"MatMul"`).
        *inputs: Tensors or SymbolicTensors (already converted).
        **attrs: the op's static attributes (Python values).

    Returns:
        One tensor, a tuple of tensors (several outputs), or None (no outputs).
    """
    opdef = REGISTRY[name]
    # this thread's state as one dict, read once: each attribute read of a thread-local looks
    # the thread up again, and this is the per-op hot path
    here = state.__dict__
    graph = here["graph"]
    if graph is None:
        outputs = _run_eagerly(opdef, inputs, attrs, here["xp"])
        if here["tapes"]:   # non-differentiable ops too: a tape notes where paths leave it
            _record(opdef, inputs, outputs, attrs)
        return outputs
    op = graph.add_op(opdef, inputs, attrs)
    outputs = op.outputs
    if here["tapes"]:
        for tape in here["tapes"]:
            tape._record(op)
    n = len(outputs)
    if opdef.num_outputs == 1:
        return outputs[0]
    return tuple(outputs) if n else None


def _record(opdef, inputs, outputs, attrs):
    outputs = () if outputs is None else outputs if isinstance(outputs, tuple) else (outputs,)
    op = EagerOp(opdef, inputs, outputs, attrs)
    for tape in state.tapes:
        tape._record(op)


# graph/profiler.py rebinds this name while a profile runs (`apply` reads it on each call)
def _run_eagerly(opdef, inputs, attrs, xp):
    try:
        values = [t._value for t in inputs]
    except AttributeError:
        raise _bad_eager_input(opdef, inputs) from None
    if len(_backend._modules) > 1:
        if opdef.host:
            xp = _backend._modules[_backend.CPU]
        elif opdef.name != "Identity":  # Identity is the copy op
            _check_one_device(opdef, values)
    try:
        out = opdef.kernel(xp, *values, **attrs)
    except OpError as e:
        if e.location is None:
            raise op_error(type(e), opdef.name, e.message) from None
        raise
    except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError, FloatingPointError,
            MemoryError) as e:
        raise explain_failure(opdef, inputs, attrs, e) from None
    if opdef.num_outputs == 1:
        return Tensor(out)
    if out is None:
        return None
    return tuple(Tensor(o) for o in out)


def _check_one_device(opdef, values):
    i = _backend.first_input_elsewhere(values, state.device)
    if i is not None:
        here, there = state.device, _backend.device_of(values[i])
        raise op_error(InvalidArgumentError, opdef.name,
                       f"{opdef.name} runs on {here} (the current device) but input {i} is on "
                       f"{there}; one op cannot mix devices. Copy it with .{here}() (or "
                       f"tl.identity(x) inside tl.device('{here}')), or run the op under "
                       f"tl.device('{there}').")


def _bad_eager_input(opdef, inputs):
    for i, t in enumerate(inputs):
        if isinstance(t, SymbolicTensor):
            return op_error(InvalidArgumentError, opdef.name,
                            f"input {i} is the symbolic tensor {t.name} from a graph that is not being "
                            "traced now; a graph's tensors cannot leak out of its tl.function. Return "
                            "it from the function instead.")
        if not isinstance(t, Tensor):
            return op_error(TypeError, opdef.name,
                            f"input {i} must be a tensor, got {type(t).__name__}")
    return op_error(TypeError, opdef.name, "bad inputs")


def explain_failure(opdef, inputs, attrs, error):
    """An InvalidArgumentError for a kernel that failed: the inference rule's
    message when it finds the problem, else the kernel's own, with op and line."""
    if isinstance(error, MemoryError):
        return op_error(ResourceExhaustedError, opdef.name, f"out of memory: {error}")
    try:
        opdef.infer(*[TensorSpec(t.shape, t.dtype) for t in inputs], **attrs)
    except OpError as e:
        return op_error(type(e), opdef.name, e.message)
    except (ValueError, TypeError) as e:
        return op_error(InvalidArgumentError, opdef.name, str(e))
    except Exception:  # the inference rule itself could not judge these inputs
        pass
    return op_error(InvalidArgumentError, opdef.name, str(error))


def infer_outputs(opdef, inputs, attrs):
    """Output specs from the inference rule, errors naming the op and the user's line.

    Attrs whose names start with `_` are trainlib's own annotations (such as
    the Variable behind a captured handle); rules never see them."""
    if any(key[0] == "_" for key in attrs):
        attrs = {k: v for k, v in attrs.items() if k[0] != "_"}
    try:
        out = opdef.infer(*inputs, **attrs)
    except OpError as e:
        raise op_error(type(e), opdef.name, e.message) from None
    except (ValueError, TypeError, IndexError) as e:
        raise op_error(InvalidArgumentError, opdef.name, str(e)) from None
    if out is None:
        return ()
    if isinstance(out, TensorSpec):
        return (out,)
    return tuple(out)


# ---------------------------------------------------------------- conversion

_CONVERSIONS = []  # (class, fn(value, dtype) -> tensor) for Variables and friends


def register_tensor_conversion(cls, fn):
    """Lets objects of `cls` (e.g. Variables) be used wherever a tensor is expected."""
    _CONVERSIONS.append((cls, fn))


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None):
    """A tensor from a tensor, Variable, numpy array or Python value.

    Args:
        value: what to convert.
        dtype: the required dtype (a tensor of another dtype raises
            InvalidArgumentError; Python values are converted to it).
        dtype_hint: the dtype Python values take when `dtype` is None.

    Returns:
        A Tensor, or a SymbolicTensor while a graph is being traced.

    Example:
        >>> tl.convert_to_tensor([1, 2]).dtype
        tl.int32
    """
    if isinstance(value, _TensorBase):
        if dtype is not None and value.dtype is not _dt.as_dtype(dtype):
            raise InvalidArgumentError(
                f"Tensor conversion requested dtype {_dt.as_dtype(dtype).name} for a tensor of "
                f"dtype {value.dtype.name}" + _at(), op="Cast")
        return value
    for cls, fn in _CONVERSIONS:
        if isinstance(value, cls):
            return fn(value, dtype)
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        return _pack(value, dtype)   # TensorFlow packs tensors in lists (gradients flow through)
    if dtype is None and dtype_hint is not None and _dt.infer_python_dtype(value) is not None \
            and not hasattr(value, "dtype"):
        try:  # a hint, not a requirement: values it cannot hold convert by their own kind
            array = to_array(state.xp, value, dtype_hint)
        except (TypeError, ValueError):
            array = to_array(state.xp, value)
    else:
        array = to_array(state.xp, value, dtype)
    if state.graph is None:
        return Tensor(array)
    return apply("Const", value=array, dtype=_dt.from_numpy(array.dtype))


def _holds_tensor(value):
    for v in value:
        if isinstance(v, _TensorBase) or any(isinstance(v, cls) for cls, _ in _CONVERSIONS):
            return True
        if isinstance(v, (list, tuple)) and _holds_tensor(v):
            return True
    return False


def _first_dtype(value):
    for v in value:
        if isinstance(v, (list, tuple)):
            found = _first_dtype(v)
            if found is not None:
                return found
        elif not _is_weak(v):
            return convert_to_tensor(v).dtype
    return None


def _pack(value, dtype):
    """A list holding tensors as one tensor: a `Pack` of its elements along a new first axis,
    the Python values among them converted to the tensors' dtype."""
    target = _dt.as_dtype(dtype) if dtype is not None else _first_dtype(value)
    parts = [_pack(v, target) if isinstance(v, (list, tuple)) and _holds_tensor(v)
             else convert_to_tensor(v, target) for v in value]
    for i, p in enumerate(parts):
        if p.dtype is not parts[0].dtype:
            raise op_error(InvalidArgumentError, "Pack",
                           f"cannot pack a list of {parts[0].dtype.name} and {p.dtype.name} "
                           f"(element {i}); use tl.cast on one of them")
    return apply("Pack", *parts, axis=0)


def owned_tensor(array):
    """A tensor over `array` itself, without the copy `convert_to_tensor` makes: only for an
    array made inside trainlib that nothing else holds or writes (a batch the input pipeline
    gathered). Anything else (another device's array, a value while tracing) is converted."""
    here = state.__dict__
    if here["graph"] is None and type(array) is here["xp"].ndarray:
        return Tensor(array)
    return convert_to_tensor(array)


def _at():
    loc = user_location()
    return f" (at {loc})" if loc else ""


def _is_weak(value):
    """Python values and numpy arrays/scalars: beside a tensor they take its dtype, as
    TensorFlow converts them (`tf.constant([1.]) * np.float64(2)` is float32)."""
    return not isinstance(value, _TensorBase) and \
        not any(isinstance(value, cls) for cls, _ in _CONVERSIONS)


def convert_same_dtype(op_name, values, dtype=None):
    """Converts `values` for one op with TensorFlow's rules: tensors must agree
    on a dtype (else InvalidArgumentError naming both and the op); Python
    scalars and lists take that dtype; if no value is a tensor, the first
    converts by its own kind and the rest follow it.
    """
    if dtype is None and len(values) == 2:  # the common case, kept cheap for eager dispatch
        a, b = values
        if isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.dtype is b.dtype:
            return values
    target = None if dtype is None else _dt.as_dtype(dtype)
    first_index = None
    for i, v in enumerate(values):
        if _is_weak(v):
            continue
        t = convert_to_tensor(v) if not isinstance(v, _TensorBase) else v
        if target is None:
            target, first_index = t.dtype, i
        elif t.dtype is not target:
            where = f"argument {first_index}" if first_index is not None else "the requested dtype"
            raise op_error(InvalidArgumentError, op_name,
                           f"cannot compute {op_name} of {target.name} and {t.dtype.name}: argument "
                           f"{i} is {t.dtype.name} but {where} is {target.name}. trainlib never "
                           f"promotes silently; use tl.cast(x, tl.{target.name}) on one of them.")
    out = []
    for v in values:
        if isinstance(v, _TensorBase):
            out.append(v)
        elif target is None:
            t = convert_to_tensor(v)
            target = t.dtype
            out.append(t)
        else:
            try:
                out.append(convert_to_tensor(v, target))
            except TypeError as e:
                raise op_error(TypeError, op_name, str(e)) from None
    return out


# ---------------------------------------------------------------- inference helpers

def spec(shape, dtype):
    """A TensorSpec, for inference rules."""
    return TensorSpec(shape, dtype)


def broadcast_shapes(*shapes):
    """Numpy broadcasting of static shapes (None dims allowed); ValueError if incompatible."""
    shapes = [s if isinstance(s, TensorShape) else TensorShape(s) for s in shapes]
    if any(s.rank is None for s in shapes):
        return TensorShape(None)
    rank = max(s.rank for s in shapes)
    result = []
    for axis in range(-rank, 0):
        dim = 1
        for s in shapes:
            d = s[axis] if -axis <= s.rank else 1
            if d == 1:
                continue
            if dim == 1:
                dim = d
            elif d is None:
                dim = dim if dim is not None else None
            elif dim is None:
                dim = d
            elif d != dim:
                raise ValueError("Incompatible shapes for broadcasting: "
                                 + " vs ".join(str(s) for s in shapes))
        result.append(dim)
    return TensorShape(result)


def check_result_size(shape, dtype):
    """Raises ResourceExhaustedError if a result of `shape` (dims may be None: not known yet, it
    passes) and `dtype` (a DType or numpy dtype) would not fit in the device's memory. Ops whose
    output size comes from their arguments (a broadcast, a tile, a fill) call it in inference
    and kernel, so they fail at once rather than make a view that a later op works through for
    minutes."""
    n = 1
    for d in shape:
        if d is None:
            return
        n *= int(d)
    np_dtype = _backend.numpy.dtype(getattr(dtype, "np", dtype))
    size = n * np_dtype.itemsize
    if size > 1 << 30:  # a result under 1 GiB needs no look at the limit
        limit = _backend.memory_limit(state.xp)
        if size > limit:
            raise ResourceExhaustedError(
                f"the result, of shape {list(shape)} and dtype {np_dtype.name}, would take "
                f"{size / 2**30:.4g} GiB ({size} bytes), more than the {limit / 2**30:.4g} GiB of "
                "memory of this device; make it smaller (a broadcast that a reduction follows can "
                "often be reduced first)")


def same_dtype(op_name, *specs):
    """The common dtype of `specs` (TypeError naming both if they differ)."""
    d = specs[0].dtype
    for s in specs[1:]:
        if s.dtype is not d:
            raise TypeError(f"{op_name} needs equal dtypes, got {d.name} and {s.dtype.name}")
    return d


def normalize_axis(axis, rank, op_name="op"):
    """A non-negative axis (ValueError naming the range if out of it)."""
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1) and not (rank == 0 and axis in (0, -1)):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank} "
                         f"(expected [{-rank}, {rank}))")
    return axis % rank if rank else 0
