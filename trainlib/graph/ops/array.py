"""Array ops: creation (constants, zeros, eye, range...), shapes, reshaping, indexing, gathering.

Owns: the OpDefs and public functions for building and rearranging arrays,
and `getitem` (what `tensor[key]` runs).
Invariants: `Const` holds an array of the active array module and is the only
way a Python value enters a graph; `Placeholder` is fed, never computed.
A shape-like argument (shape, multiples, paddings, begin/size, size_splits)
given as a Python list, tuple, TensorShape or eager tensor becomes a static
attr, so inference knows the output shape; given as a symbolic tensor it
becomes the op's LAST input(s) and the kernel reads it at run time. Kernels
raise InvalidArgumentError for value-dependent errors (out-of-range indices)
before numpy could raise its own. The module defines `range` and `slice`, so
the builtins are reached as `_py.range` / `_py.slice` here.
"""
import builtins as _py
import math as _pymath

import numpy as np

from .. import dtypes as _dt
from ..backend import transfer
from ..context import state
from ..errors import InvalidArgumentError, op_error
from ..op import (apply, check_result_size, convert_same_dtype, convert_to_tensor, defop,
                  normalize_axis, spec, broadcast_shapes)
from ..tensor import SymbolicTensor, Tensor, TensorShape, is_tensor, to_array
from .common import stable_descending

__all__ = [
    "constant", "convert_to_tensor", "zeros", "ones", "zeros_like", "ones_like", "fill", "eye",
    "range", "linspace", "reshape", "transpose", "concat", "stack", "unstack", "split", "gather",
    "gather_nd", "expand_dims", "squeeze", "broadcast_to", "tile", "pad", "one_hot", "shape",
    "size", "rank", "identity", "stop_gradient", "reverse", "slice", "boolean_mask", "getitem",
]

_INDEX_DTYPES = (_dt.int32, _dt.int64)


# ------------------------------------------------------------------ helpers

def _sum(x, axis=None):
    """The sum of `x` over `axis` (all by default) for gradient rules: math.py's Sum op, applied
    by name because math.py sits above this module."""
    return apply("Sum", x, axis=None if axis is None else tuple(axis), keepdims=False)


def _ints(array):
    """A static tuple of Python ints (nested for 2-D) from a kernel's shape-like input."""
    values = array.tolist()
    if isinstance(values, list) and values and isinstance(values[0], list):
        return tuple(tuple(int(v) for v in row) for row in values)
    return tuple(int(v) for v in values) if isinstance(values, list) else int(values)


def _static_or_tensor(value, name, op_name):
    """(static tuple, None) for a shape-like argument known now, or (None, int tensor)
    when it is only known at run time (a symbolic tensor, or a list holding one)."""
    if isinstance(value, SymbolicTensor):
        return None, _index_tensor(value, name, op_name)
    if isinstance(value, (list, tuple)) and _holds_symbolic(value):
        return None, _pack_index(value, name, op_name)
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"{op_name}: {name} must be fully defined, got {value}")
        return tuple(value), None
    if isinstance(value, Tensor):
        value = value.numpy()
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: {name} must hold integers, got {value!r}")
    if array.ndim == 0:  # tl.zeros(3) means shape [3], as TensorFlow
        array = array.reshape(1)
    return _ints(array.astype(np.int64)), None


def _shape_hint(value):
    """For a flat list mixing ints and symbolic scalars: the ints, None where symbolic
    (lets inference keep the dims known while tracing); else None."""
    if not isinstance(value, (list, tuple)) or any(isinstance(v, (list, tuple)) for v in value):
        return None
    return tuple(None if isinstance(v, SymbolicTensor) else int(v) for v in value)


def _holds_symbolic(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_symbolic(v) for v in value)
    return isinstance(value, SymbolicTensor)


def _pack_index(value, name, op_name):
    """A (nested) list mixing ints and symbolic scalars, stacked into one int tensor."""
    if isinstance(value, (list, tuple)):
        parts = [_pack_index(v, name, op_name) if _holds_symbolic(v) else v for v in value]
        return stack(convert_same_dtype(op_name, parts))
    return _scalar_index(value, name, op_name)


def _scalar_index(value, name, op_name):
    t = _index_tensor(value, name, op_name)
    return t if t.shape.rank == 0 else reshape(t, [])


def _index_tensor(value, name, op_name):
    t = convert_to_tensor(value)
    if t.dtype not in _INDEX_DTYPES:
        raise TypeError(f"{op_name}: {name} must be an int32 or int64 tensor, got {t.dtype.name}")
    return t


def _check_index_spec(t, name, rank=1):
    if t.dtype not in _INDEX_DTYPES:
        raise TypeError(f"{name} must be int32 or int64, got {t.dtype.name}")
    if t.shape.rank is not None and t.shape.rank != rank:
        raise ValueError(f"{name} must have rank {rank}, got shape {t.shape}")


def _shape_from_spec(t, name="shape"):
    """The static shape a 1-D shape tensor describes: its length is the rank."""
    _check_index_spec(t, name)
    n = t.shape[0] if t.shape.rank else None
    return TensorShape(None) if n is None else TensorShape([None] * n)


def _shape_arg(x):
    """x's shape as a static list when known, else as a run-time shape tensor (for rules)."""
    return x.shape.as_list() if x.shape.is_fully_defined() else shape(x)


def _first_only(op, g):
    return (g,) + (None,) * (len(op.inputs) - 1)


def _unravel(flat, dims):
    out = []
    for d in reversed(dims):
        out.append(flat % d if d else 0)
        flat = flat // d if d else 0
    return ",".join(str(i) for i in reversed(out))


def _axis_index(ndim, axis, index):
    return (_py.slice(None),) * (axis % ndim) + (index,)


# ------------------------------------------------------------------ Const, Placeholder, Identity

def _const_infer(value, dtype):
    return spec(value.shape, dtype)


@defop("Const", infer=_const_infer, differentiable=False)
def _const(xp, value, dtype):
    return value


def _placeholder_kernel(xp, shape, dtype):
    raise RuntimeError("a Placeholder is fed by the Function call, never run")


def _placeholder_infer(shape, dtype):
    return spec(shape, dtype)


defop("Placeholder", infer=_placeholder_infer, differentiable=False)(_placeholder_kernel)


@defop("Identity", infer=lambda x: spec(x.shape, x.dtype), grad=lambda op, dy: (dy,))
def _identity(xp, x):
    return transfer(xp, x)  # under tl.device, Identity is the copy between devices


@defop("StopGradient", infer=lambda x: spec(x.shape, x.dtype), differentiable=False)
def _stop_gradient(xp, x):
    return x


def constant(value, dtype=None, shape=None, name=None):
    """A tensor holding `value` (a Python value, numpy array or tensor).

    Args:
        value: a scalar, nested list or array.
        dtype: the element type; by default float32 for Python floats, int32
            for Python ints, the array's own dtype for numpy arrays.
        shape: if given, `value` is reshaped (or a scalar broadcast) to it.

    Returns:
        A Tensor (a `Const` operation while tracing).

    Example:
        >>> tl.constant([1.0, 0.0])
        <tl.Tensor: shape=(2,), dtype=float32, numpy=array([1., 0.], dtype=float32)>
    """
    if is_tensor(value):
        if dtype is not None and value.dtype is not _dt.as_dtype(dtype):  # as TensorFlow: no cast
            raise TypeError(f"Expected tensor {value!r} with dtype {_dt.as_dtype(dtype)!r}, but got "
                            f"dtype {value.dtype!r}; use tl.cast to change a tensor's dtype")
        return value
    array = to_array(state.xp, value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if array.size == 1:
            array = state.xp.broadcast_to(array.reshape(()), shape).copy()
        elif array.size != _pymath.prod(shape):
            raise TypeError(f"Eager execution of tl.constant with unsupported shape: value has "
                            f"{array.size} elements, shape is {list(shape)} with {_pymath.prod(shape)} "
                            "elements.")
        else:
            array = array.reshape(shape)
    if state.graph is None:
        return Tensor(array)
    return apply("Const", value=array, dtype=_dt.from_numpy(array.dtype))


def identity(input, name=None):  # noqa: A002 -- TensorFlow's argument name
    """Returns a tensor with the same value (a new graph node while tracing).

    Args:
        input: a tensor or Python value.

    Example:
        >>> tl.identity([1, 2])
        <tl.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    return apply("Identity", convert_to_tensor(input))


def stop_gradient(input, name=None):  # noqa: A002
    """The same value, but gradients do not flow back through it.

    Args:
        input: a tensor or Python value.

    Example:
        >>> x = tl.constant(2.0)
        >>> with tl.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * tl.stop_gradient(x)
        >>> float(tape.gradient(y, x))
        2.0
    """
    return apply("StopGradient", convert_to_tensor(input))


# ------------------------------------------------------------------ zeros, ones, fill, eye

@defop("ZerosLike", infer=lambda x: spec(x.shape, x.dtype), differentiable=False, elementwise=True)
def _zeros_like(xp, x):
    return xp.zeros_like(x)


@defop("OnesLike", infer=lambda x: spec(x.shape, x.dtype), differentiable=False, elementwise=True)
def _ones_like(xp, x):
    return xp.ones_like(x)


def _cast_to(x, dtype):
    return x if dtype is None or _dt.as_dtype(dtype) is x.dtype else \
        apply("Cast", x, DstT=_dt.as_dtype(dtype))


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of zeros with the shape (and by default the dtype) of `input`.

    Args:
        input: a tensor or Python value.
        dtype: the result dtype (default: that of `input`).

    Example:
        >>> tl.zeros_like([[1, 2]])
        <tl.Tensor: shape=(1, 2), dtype=int32, numpy=array([[0, 0]], dtype=int32)>
    """
    x = convert_to_tensor(input)
    return _cast_to(apply("ZerosLike", x), dtype)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of ones with the shape (and by default the dtype) of `input`.

    Args:
        input: a tensor or Python value.
        dtype: the result dtype (default: that of `input`).

    Example:
        >>> tl.ones_like(tl.zeros([2])).numpy()
        array([1., 1.], dtype=float32)
    """
    x = convert_to_tensor(input)
    return _cast_to(apply("OnesLike", x), dtype)


def _fill_infer(value, dims=None, shape=None):
    if value.shape.rank is not None and value.shape.rank != 0:
        raise ValueError(f"value must be a scalar, got shape {value.shape}")
    if dims is not None:
        return spec(_shape_from_spec(dims, "dims") if shape is None else shape, value.dtype)
    if any(d < 0 for d in shape):
        raise ValueError(f"dims must be non-negative, got {list(shape)}")
    check_result_size(shape, value.dtype)
    return spec(shape, value.dtype)


def _fill_grad(op, dy):
    return _first_only(op, _sum(dy))


@defop("Fill", infer=_fill_infer, grad=_fill_grad)
def _fill(xp, value, dims=None, shape=None):
    shape = _ints(dims) if dims is not None else shape
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(f"dims must be non-negative, got {list(shape)}")
    check_result_size(shape, value.dtype)
    return xp.broadcast_to(value, shape).copy()


def fill(dims, value, name=None):
    """A tensor of shape `dims` with every element equal to the scalar `value`.

    Args:
        dims: the shape: a list, tuple, TensorShape or 1-D int tensor.
        value: a scalar; its dtype is the result's (Python float: float32).

    Returns:
        A tensor of shape `dims`.

    Raises:
        InvalidArgumentError: for a non-scalar value or negative dims.

    Example:
        >>> tl.fill([2, 3], 9)
        <tl.Tensor: shape=(2, 3), dtype=int32, numpy=
        array([[9, 9, 9],
               [9, 9, 9]], dtype=int32)>
    """
    static, dynamic = _static_or_tensor(dims, "dims", "Fill")
    value = convert_to_tensor(value)
    if dynamic is None:
        return apply("Fill", value, shape=static)
    return apply("Fill", value, dynamic, shape=_shape_hint(dims))


def zeros(shape, dtype=_dt.float32, name=None):
    """A tensor of zeros.

    Args:
        shape: a list, tuple, TensorShape or 1-D int tensor.
        dtype: the element type (float32 by default).

    Returns:
        A tensor of `shape` and `dtype` filled with zeros (False for bool).

    Example:
        >>> tl.zeros([2, 2], dtype=tl.int32).numpy()
        array([[0, 0],
               [0, 0]], dtype=int32)
    """
    return fill(shape, constant(_dt.as_dtype(dtype).as_numpy_dtype(0), dtype=dtype))  # False/True for bool


def ones(shape, dtype=_dt.float32, name=None):
    """A tensor of ones (True for bool); arguments as `zeros`.

    Args:
        shape: a list, tuple, TensorShape or 1-D int tensor.
        dtype: the element type (float32 by default).

    Example:
        >>> tl.ones([3]).numpy()
        array([1., 1., 1.], dtype=float32)
    """
    return fill(shape, constant(_dt.as_dtype(dtype).as_numpy_dtype(1), dtype=dtype))  # False/True for bool


def _eye_infer(num_rows, num_columns, batch_shape, dtype):
    return spec(tuple(batch_shape) + (num_rows, num_columns), dtype)


@defop("Eye", infer=_eye_infer, differentiable=False)
def _eye(xp, num_rows, num_columns, batch_shape, dtype):
    matrix = xp.eye(num_rows, num_columns, dtype=dtype.np)
    return xp.broadcast_to(matrix, tuple(batch_shape) + matrix.shape).copy() if batch_shape else matrix


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dt.float32, name=None):
    """An identity matrix (or a batch of them).

    Args:
        num_rows: rows of each matrix.
        num_columns: columns (default `num_rows`).
        batch_shape: leading batch dims (a list of ints), or None.
        dtype: the element type (float32 by default).

    Returns:
        A tensor of shape `batch_shape + [num_rows, num_columns]`.

    Example:
        >>> tl.eye(2, 3).numpy()
        array([[1., 0., 0.],
               [0., 1., 0.]], dtype=float32)
    """
    rows = _static_int(num_rows, "num_rows", "Eye")
    cols = rows if num_columns is None else _static_int(num_columns, "num_columns", "Eye")
    batch = () if batch_shape is None else _static_or_tensor(batch_shape, "batch_shape", "Eye")[0]
    if batch is None or rows < 0 or cols < 0 or any(d < 0 for d in batch):
        raise ValueError(f"eye needs non-negative static sizes, got num_rows={num_rows}, "
                         f"num_columns={num_columns}, batch_shape={batch_shape}")
    return apply("Eye", num_rows=rows, num_columns=cols, batch_shape=batch, dtype=_dt.as_dtype(dtype))


def _static_int(value, name, op_name):
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"{op_name}: {name} must be known while tracing (a Python int), got the "
                        f"symbolic tensor {value.name}")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, Tensor)):
        raise TypeError(f"{op_name}: {name} must be an int, got {value!r}")
    return int(value)


# ------------------------------------------------------------------ range, linspace

def _range_length(start, limit, delta):
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return -((start - limit) // delta)
    return int(_pymath.ceil(abs((limit - start) / delta)))


def _range_infer(*bounds, dtype, start=None, limit=None, delta=None):
    for b in bounds:
        if b.shape.rank is not None and b.shape.rank != 0:
            raise ValueError(f"start, limit and delta must be scalars, got shape {b.shape}")
    if bounds:
        return spec([None], dtype)
    return spec([_range_length(start, limit, delta)], dtype)


@defop("Range", infer=_range_infer, differentiable=False)
def _range(xp, *bounds, dtype, start=None, limit=None, delta=None):
    if bounds:
        start, limit, delta = (b.item() for b in bounds)
    n = _range_length(start, limit, delta)
    # start + i * delta, as TensorFlow computes it (arange's float steps could add an element)
    return (xp.arange(n, dtype=dtype.np) * xp.asarray(delta, dtype=dtype.np)
            + xp.asarray(start, dtype=dtype.np)).astype(dtype.np, copy=False)


_RANGE_ORDER = (_dt.int32, _dt.int64, _dt.float32, _dt.float64)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 -- TensorFlow's name
    """A 1-D tensor of numbers from `start` up to (not including) `limit`, by `delta`.

    Like Python's range, `tl.range(n)` counts from 0. The dtype is `dtype`, or
    the widest of the arguments' (Python ints int32, floats float32).

    Args:
        start: the first value (or the limit when `limit` is None).
        limit: the exclusive end.
        delta: the step (non-zero).
        dtype: the result dtype.

    Returns:
        A 1-D tensor.

    Raises:
        InvalidArgumentError: for delta 0 or a delta pointing away from limit.

    Example:
        >>> tl.range(3, 18, 3).numpy()
        array([ 3,  6,  9, 12, 15], dtype=int32)
    """
    if limit is None:
        start, limit = 0, start
    values = (start, limit, delta)
    if dtype is None:
        kinds = [v.dtype if hasattr(v, "dtype") else _dt.infer_python_dtype(v) for v in values]
        kinds = [_dt.as_dtype(k) for k in kinds if k is not None]
        dtype = max(kinds, key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else -1)
    dtype = _dt.as_dtype(dtype)
    if any(isinstance(v, SymbolicTensor) for v in values):
        tensors = [_cast_to(convert_to_tensor(v), dtype) if is_tensor(v) else convert_to_tensor(v, dtype)
                   for v in values]
        return apply("Range", *tensors, dtype=dtype)
    py = int if dtype.is_integer else float
    start, limit, delta = (py(np.asarray(v).item()) for v in values)
    return apply("Range", dtype=dtype, start=start, limit=limit, delta=delta)


def _linspace_infer(start, stop, num, axis=0):
    d = _same_floating_dtype("LinSpace", start, stop)
    base = broadcast_shapes(start.shape, stop.shape)
    if num < 0:
        raise ValueError(f"num must be non-negative, got {num}")
    if base.rank is None:
        return spec(None, d)
    axis = normalize_axis(axis, base.rank + 1)
    dims = list(base)
    dims.insert(axis, num)
    return spec(dims, d)


def _same_floating_dtype(op_name, a, b):
    if a.dtype is not b.dtype:
        raise TypeError(f"{op_name} needs equal dtypes, got {a.dtype.name} and {b.dtype.name}")
    if not a.dtype.is_floating:
        raise TypeError(f"{op_name} needs a floating dtype, got {a.dtype.name}")
    return a.dtype


def _linspace_grad(op, dy):
    start = op.inputs[0]
    num, axis = op.attrs["num"], op.attrs.get("axis", 0)
    rank = dy.shape.rank
    axis = axis % rank
    weights = reshape(linspace(constant(0, start.dtype), constant(1, start.dtype), num),
                      [num if i == axis else 1 for i in _py.range(rank)])
    return (_sum(dy * (1 - weights), [axis]), _sum(dy * weights, [axis]))


@defop("LinSpace", infer=_linspace_infer, grad=_linspace_grad)
def _linspace(xp, start, stop, num, axis=0):
    start, stop = xp.broadcast_arrays(start, stop)
    steps = xp.arange(num, dtype=start.dtype).reshape((num,) + (1,) * start.ndim)
    out = start + steps * ((stop - start) / max(num - 1, 1))
    if num > 1:
        out[-1] = stop  # the last value is exactly `stop`, as TensorFlow's
    return xp.moveaxis(out, 0, axis).astype(start.dtype, copy=False)


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included.

    Args:
        start, stop: floating scalars or tensors (broadcast together).
        num: how many values (a Python int).
        axis: where the new dim goes in the result.

    Returns:
        A tensor of the broadcast shape with `num` inserted at `axis`.

    Example:
        >>> tl.linspace(0.0, 1.0, 3).numpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """
    start, stop = convert_same_dtype("LinSpace", (start, stop))
    if start.dtype.is_integer:  # integers: TensorFlow computes in float64
        start, stop = _cast_to(start, _dt.float64), _cast_to(stop, _dt.float64)
    num = _static_int(num, "num", "LinSpace")
    return apply("LinSpace", start, stop, num=num, axis=int(axis))


# ------------------------------------------------------------------ shape queries

def _shape_infer(x, out_type=_dt.int32):
    return spec([x.shape.rank], out_type)


@defop("Shape", infer=_shape_infer, differentiable=False)
def _shape(xp, x, out_type=_dt.int32):
    return xp.asarray(x.shape, dtype=out_type.np).reshape((x.ndim,))


@defop("Size", infer=lambda x, out_type=_dt.int32: spec([], out_type), differentiable=False)
def _size(xp, x, out_type=_dt.int32):
    return xp.asarray(x.size, dtype=out_type.np)


@defop("Rank", infer=lambda x: spec([], _dt.int32), differentiable=False)
def _rank(xp, x):
    return xp.asarray(x.ndim, dtype=_dt.int32.np)


def _out_type(out_type):
    out_type = _dt.as_dtype(out_type)
    if out_type not in _INDEX_DTYPES:
        raise TypeError(f"out_type must be tl.int32 or tl.int64, got {out_type!r}")
    return out_type


def shape(input, out_type=_dt.int32, name=None):  # noqa: A002
    """The run-time shape of `input` as a 1-D integer tensor.

    Inside a graph this also works for dims unknown at trace time.

    Args:
        input: a tensor.
        out_type: tl.int32 (default) or tl.int64.

    Example:
        >>> tl.shape(tl.zeros([2, 3])).numpy()
        array([2, 3], dtype=int32)
    """
    return apply("Shape", convert_to_tensor(input), out_type=_out_type(out_type))


def size(input, out_type=_dt.int32, name=None):  # noqa: A002
    """The number of elements of `input` as a scalar integer tensor.

    Args:
        input: a tensor.
        out_type: tl.int32 (default) or tl.int64.

    Example:
        >>> int(tl.size(tl.zeros([2, 3])))
        6
    """
    return apply("Size", convert_to_tensor(input), out_type=_out_type(out_type))


def rank(input, name=None):  # noqa: A002
    """The number of dims of `input` as a scalar int32 tensor.

    Args:
        input: a tensor.

    Example:
        >>> int(tl.rank(tl.zeros([2, 3])))
        2
    """
    return apply("Rank", convert_to_tensor(input))


# ------------------------------------------------------------------ reshape, transpose, dims

def _reshape_dims(in_shape, target):
    """The output dims of reshaping `in_shape` to `target` (one -1 allowed); ValueError names both sizes."""
    target = list(target)
    if target.count(-1) > 1:
        raise ValueError(f"only one dimension of shape can be -1, got {target}")
    if any(d < -1 for d in target):
        raise ValueError(f"shape dims must be >= -1, got {target}")
    n = in_shape.num_elements() if in_shape.rank is not None else None
    known = _pymath.prod(d for d in target if d != -1)
    if -1 in target:
        if n is None:
            return [None if d == -1 else d for d in target]
        if known == 0:
            raise ValueError(f"Reshape cannot infer the missing input size for an empty tensor "
                             f"unless all specified input sizes are non-zero (tensor with {n} "
                             f"values to shape {target})")
        if n % known:
            raise ValueError(f"Input to reshape is a tensor with {n} values, but the requested "
                             f"shape requires a multiple of {known} (shape {target})")
        return [n // known if d == -1 else d for d in target]
    if n is not None and n != known:
        raise ValueError(f"Input to reshape is a tensor with {n} values, but the requested shape "
                         f"has {known} (shape {target})")
    return target


def _reshape_infer(x, shape_tensor=None, shape=None):
    if shape_tensor is not None:
        if shape is not None:  # a hint: the dims known while tracing, None elsewhere
            return spec([None if d == -1 else d for d in shape], x.dtype)
        return spec(_shape_from_spec(shape_tensor), x.dtype)
    return spec(_reshape_dims(x.shape, shape), x.dtype)


@defop("Reshape", infer=_reshape_infer,
       grad=lambda op, dy: _first_only(op, reshape(dy, _shape_arg(op.inputs[0]))))
def _reshape(xp, x, shape_tensor=None, shape=None):
    shape = _ints(shape_tensor) if shape_tensor is not None else shape
    return x.reshape(_reshape_dims(TensorShape(x.shape), shape))


def reshape(tensor, shape, name=None):
    """The same elements in a new shape (row-major order).

    Args:
        tensor: a tensor.
        shape: a list/tuple/TensorShape or 1-D int tensor; one dim may be -1
            (inferred from the others).

    Returns:
        A tensor of `shape`.

    Raises:
        InvalidArgumentError: if the number of elements differs (both sizes named).

    Example:
        >>> tl.reshape(tl.range(6), [2, -1]).shape
        TensorShape([2, 3])
    """
    x = convert_to_tensor(tensor)
    static, dynamic = _static_or_tensor(shape, "shape", "Reshape")
    if dynamic is None:
        return apply("Reshape", x, shape=static)
    return apply("Reshape", x, dynamic, shape=_shape_hint(shape))


def _check_perm(perm, rank):
    if rank is not None and sorted(perm) != list(_py.range(rank)):
        raise ValueError(f"perm must be a permutation of 0..{rank - 1} for a tensor of rank "
                         f"{rank}, got {list(perm)}")


def _transpose_infer(x, perm=None):
    if x.shape.rank is None:
        return spec(None, x.dtype)
    if perm is None:
        return spec(list(x.shape)[::-1], x.dtype)
    _check_perm(perm, x.shape.rank)
    return spec([x.shape[p] for p in perm], x.dtype)


def _transpose_grad(op, dy):
    perm = op.attrs.get("perm")
    inverse = None if perm is None else tuple(int(i) for i in np.argsort(perm))
    return (apply("Transpose", dy, perm=inverse),)


@defop("Transpose", infer=_transpose_infer, grad=_transpose_grad)
def _transpose(xp, x, perm=None):
    return xp.transpose(x, perm)


def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes the dims of `a`: output dim i is input dim `perm[i]`.

    Args:
        a: a tensor.
        perm: a permutation of `range(rank)` (default: reverse the dims).

    Example:
        >>> tl.transpose(tl.zeros([2, 3])).shape
        TensorShape([3, 2])
    """
    x = convert_to_tensor(a)
    if perm is not None:
        perm, dynamic = _static_or_tensor(perm, "perm", "Transpose")
        if dynamic is not None:
            raise TypeError("Transpose: perm must be known while tracing (a list of ints)")
    return apply("Transpose", x, perm=perm)


def _expand_dims_infer(x, axis):
    if x.shape.rank is None:
        return spec(None, x.dtype)
    dims = list(x.shape)
    dims.insert(normalize_axis(axis, len(dims) + 1), 1)
    return spec(dims, x.dtype)


@defop("ExpandDims", infer=_expand_dims_infer,
       grad=lambda op, dy: (reshape(dy, _shape_arg(op.inputs[0])),))
def _expand_dims(xp, x, axis):
    return xp.expand_dims(x, axis)


def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a dim of size 1 at `axis` (in `[-rank-1, rank]`).

    Args:
        input: a tensor.
        axis: a Python int.

    Example:
        >>> tl.expand_dims(tl.zeros([2, 3]), -1).shape
        TensorShape([2, 3, 1])
    """
    return apply("ExpandDims", convert_to_tensor(input), axis=_static_int(axis, "axis", "ExpandDims"))


def _squeeze_infer(x, axis=()):
    if x.shape.rank is None:
        return spec(None, x.dtype)
    dims = list(x.shape)
    if not axis:
        if None in dims:  # which dims are 1 is known only at run time
            return spec(None, x.dtype)
        return spec([d for d in dims if d != 1], x.dtype)
    axes = {normalize_axis(a, len(dims)) for a in axis}
    for a in sorted(axes):
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]} "
                             f"(shape {x.shape})")
    return spec([d for i, d in enumerate(dims) if i not in axes], x.dtype)


@defop("Squeeze", infer=_squeeze_infer,
       grad=lambda op, dy: (reshape(dy, _shape_arg(op.inputs[0])),))
def _squeeze(xp, x, axis=()):
    if axis:
        for a in axis:
            if x.shape[a] != 1:
                raise InvalidArgumentError(f"Can not squeeze dim[{a % x.ndim}], expected a "
                                           f"dimension of 1, got {x.shape[a]} (shape {list(x.shape)})")
        return xp.squeeze(x, axis=tuple(axis))
    return xp.squeeze(x)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes dims of size 1: those in `axis`, or all of them.

    Args:
        input: a tensor.
        axis: an int or list of ints, or None for every dim of size 1.

    Raises:
        InvalidArgumentError: if a dim named in `axis` is not 1.

    Example:
        >>> tl.squeeze(tl.zeros([1, 2, 1]), axis=[0]).shape
        TensorShape([2, 1])
    """
    if axis is None:
        axis = ()
    elif isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    else:
        axis = tuple(int(a) for a in axis)
    return apply("Squeeze", convert_to_tensor(input), axis=axis)


# ------------------------------------------------------------------ broadcast_to, tile, reverse

def _broadcast_to_infer(x, shape_tensor=None, shape=None):
    target = _shape_from_spec(shape_tensor) if shape_tensor is not None and shape is None else \
        TensorShape(shape)  # with a tensor, `shape` is a hint: None where only known at run time
    if x.shape.rank is not None and target.rank is not None:
        if x.shape.rank > target.rank:
            raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to tensor of shape "
                             f"{target}: it has more dims")
        try:
            merged = broadcast_shapes(x.shape, target)
        except ValueError:
            raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to tensor of shape "
                             f"{target}") from None
        if not merged.is_compatible_with(target):
            raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to tensor of shape "
                             f"{target}")
        target = TensorShape([t if t is not None else m for t, m in zip(target, merged)])
    if target.rank is not None:  # the kernel's result is a view, but every consumer reads it all
        check_result_size(target.as_list(), x.dtype)
    return spec(target, x.dtype)


def _broadcast_to_grad(op, dy):
    return _first_only(op, sum_to_shape_of(dy, op.inputs[0]))


@defop("BroadcastTo", infer=_broadcast_to_infer, grad=_broadcast_to_grad)
def _broadcast_to(xp, x, shape_tensor=None, shape=None):
    shape = _ints(shape_tensor) if shape_tensor is not None else shape
    _broadcast_to_infer(spec(x.shape, _dt.from_numpy(x.dtype)), shape=shape)
    return xp.broadcast_to(x, shape)


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape` (numpy rules: dims of 1 stretch, leading dims are added).

    Args:
        input: a tensor.
        shape: a list/tuple/TensorShape or 1-D int tensor.

    Raises:
        InvalidArgumentError: if `input` does not broadcast to `shape`.

    Example:
        >>> tl.broadcast_to([1, 2], [2, 2]).numpy()
        array([[1, 2],
               [1, 2]], dtype=int32)
    """
    x = convert_to_tensor(input)
    static, dynamic = _static_or_tensor(shape, "shape", "BroadcastTo")
    if dynamic is None:
        return apply("BroadcastTo", x, shape=static)
    return apply("BroadcastTo", x, dynamic, shape=_shape_hint(shape))


def _tile_infer(x, multiples_tensor=None, multiples=None):
    if multiples_tensor is not None:
        _check_index_spec(multiples_tensor, "multiples")
        n = multiples_tensor.shape[0] if multiples_tensor.shape.rank else None
        if x.shape.rank is not None and n is not None and n != x.shape.rank:
            raise ValueError(f"multiples must have one entry per dim of the input: {n} entries for "
                             f"shape {x.shape}")
        return spec(TensorShape(None) if x.shape.rank is None else [None] * x.shape.rank, x.dtype)
    if any(m < 0 for m in multiples):
        raise ValueError(f"multiples must be non-negative, got {list(multiples)}")
    if x.shape.rank is None:
        return spec([None] * len(multiples), x.dtype)
    if len(multiples) != x.shape.rank:
        raise ValueError(f"multiples must have one entry per dim of the input: got "
                         f"{list(multiples)} for shape {x.shape}")
    shape = [None if d is None else d * m for d, m in zip(x.shape, multiples)]
    check_result_size(shape, x.dtype)
    return spec(shape, x.dtype)


def _tile_grad(op, dy):
    x = op.inputs[0]
    static = op.attrs.get("multiples")
    rank = dy.shape.rank
    if static is not None and x.shape.is_fully_defined():
        split_shape = [n for pair in zip(static, x.shape) for n in pair]
    else:
        multiples = op.inputs[1] if static is None else constant(static, _dt.int32)
        split_shape = reshape(stack([multiples, shape(x, out_type=multiples.dtype)], axis=1), [-1])
    summed = _sum(reshape(dy, split_shape), _py.range(0, 2 * rank, 2))
    return _first_only(op, summed)


@defop("Tile", infer=_tile_infer, grad=_tile_grad)
def _tile(xp, x, multiples_tensor=None, multiples=None):
    multiples = _ints(multiples_tensor) if multiples_tensor is not None else multiples
    if len(multiples) != x.ndim or any(m < 0 for m in multiples):
        raise InvalidArgumentError(f"multiples must have one entry per dim of the input, each "
                                   f"non-negative: got {list(multiples)} for shape {list(x.shape)}")
    check_result_size([d * m for d, m in zip(x.shape, multiples)], x.dtype)
    return xp.tile(x, multiples)


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats `input` `multiples[i]` times along dim i.

    Args:
        input: a tensor.
        multiples: one non-negative int per dim (a list or 1-D int tensor).

    Example:
        >>> tl.tile([[1, 2]], [2, 1]).numpy()
        array([[1, 2],
               [1, 2]], dtype=int32)
    """
    x = convert_to_tensor(input)
    static, dynamic = _static_or_tensor(multiples, "multiples", "Tile")
    return apply("Tile", x, multiples=static) if dynamic is None else apply("Tile", x, dynamic)


def _reverse_infer(x, axis):
    if x.shape.rank is not None:
        axes = [normalize_axis(a, x.shape.rank) for a in axis]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis {list(axis)} names a dim twice")
    return spec(x.shape, x.dtype)


@defop("ReverseV2", infer=_reverse_infer,
       grad=lambda op, dy: (apply("ReverseV2", dy, axis=op.attrs["axis"]),))
def _reverse(xp, x, axis):
    return xp.flip(x, axis=axis) if axis else x


def reverse(tensor, axis, name=None):
    """Reverses the order of elements along the dims in `axis`.

    Args:
        tensor: a tensor.
        axis: an int or list of ints (distinct dims).

    Example:
        >>> tl.reverse([[1, 2, 3]], axis=[1]).numpy()
        array([[3, 2, 1]], dtype=int32)
    """
    axis = (int(axis),) if isinstance(axis, (int, np.integer)) else \
        _static_or_tensor(axis, "axis", "ReverseV2")[0]
    if axis is None:
        raise TypeError("ReverseV2: axis must be known while tracing (a list of ints)")
    return apply("ReverseV2", convert_to_tensor(tensor), axis=tuple(axis))


# ------------------------------------------------------------------ concat, stack, unstack, split

def _concat_infer(*values, axis):
    dtype = values[0].dtype
    for v in values[1:]:
        if v.dtype is not dtype:
            raise TypeError(f"ConcatV2 needs equal dtypes, got {dtype.name} and {v.dtype.name}")
    ranks = {v.shape.rank for v in values} - {None}
    if len(ranks) > 1:
        raise ValueError("Shape must be of equal rank, got shapes "
                         + ", ".join(str(v.shape) for v in values))
    if not ranks:
        return spec(None, dtype)
    rank = ranks.pop()
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tl.stack instead)")
    axis = normalize_axis(axis, rank)
    dims = [None] * rank
    total = 0
    for v in values:
        if v.shape.rank is None:
            total = None
            continue
        for i, d in enumerate(v.shape):
            if i == axis:
                total = None if total is None or d is None else total + d
            elif d is not None:
                if dims[i] is not None and dims[i] != d:
                    raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{dims[i]} and {d}. Shapes are "
                                     + " and ".join(str(w.shape) for w in values))
                dims[i] = d
    dims[axis] = total
    return spec(dims, dtype)


def _concat_grad(op, dy):
    axis = op.attrs["axis"]
    sizes = [x.shape[axis] if x.shape.rank else None for x in op.inputs]
    if None not in sizes:
        return tuple(apply("SplitV", dy, size_splits=tuple(sizes), num_split=len(sizes), axis=axis))
    size_splits = stack([shape(x)[axis] for x in op.inputs])
    return tuple(apply("SplitV", dy, size_splits, num_split=len(sizes), axis=axis))


# classes that join by their own rule in concat/stack (`_tl_concat`, `_tl_stack`):
# ops/ragged.py registers RaggedTensor (a set lookup: no cost to tensors)
JOINING_COMPOSITES = set()


def _composite_with(values, method):
    """The first value's class that joins by its own rule (a RaggedTensor's `_tl_concat`,
    `_tl_stack`), else None."""
    for v in values:
        if type(v) in JOINING_COMPOSITES:
            return type(v)
    return None


@defop("ConcatV2", infer=_concat_infer, grad=_concat_grad)
def _concat(xp, *values, axis):
    return xp.concatenate(values, axis=axis)


def concat(values, axis, name="concat"):
    """Joins tensors of one dtype along an existing dim.

    Args:
        values: a list of tensors with equal dtypes and equal dims except `axis`.
        axis: the dim to join along (negative counts from the end).

    Returns:
        A tensor whose `axis` dim is the sum of the inputs'.

    Raises:
        InvalidArgumentError: on mixed dtypes (naming both) or mismatched shapes.

    Example:
        >>> tl.concat([[[1, 2]], [[3, 4]]], axis=0).numpy()
        array([[1, 2],
               [3, 4]], dtype=int32)
    """
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("concat needs a non-empty list of tensors")
    ragged = _composite_with(values, "_tl_concat")
    if ragged is not None:  # RaggedTensors join by their own rule
        return ragged._tl_concat(list(values), axis)
    tensors = convert_same_dtype("ConcatV2", list(values))
    if len(tensors) == 1:
        return identity(tensors[0])
    return apply("ConcatV2", *tensors, axis=_static_int(axis, "axis", "ConcatV2"))


def _pack_infer(*values, axis=0):
    dtype = values[0].dtype
    merged = TensorShape(None)
    for v in values:
        if v.dtype is not dtype:
            raise TypeError(f"Pack needs equal dtypes, got {dtype.name} and {v.dtype.name}")
        if not merged.is_compatible_with(v.shape):
            raise ValueError("Shapes of all inputs must match: "
                             + " vs ".join(str(w.shape) for w in values))
        merged = merged.merge_with(v.shape)
    if merged.rank is None:
        return spec(None, dtype)
    dims = list(merged)
    dims.insert(normalize_axis(axis, len(dims) + 1), len(values))
    return spec(dims, dtype)


@defop("Pack", infer=_pack_infer,
       grad=lambda op, dy: tuple(unstack(dy, num=len(op.inputs), axis=op.attrs.get("axis", 0))))
def _pack(xp, *values, axis=0):
    return xp.stack(values, axis=axis)


def stack(values, axis=0, name="stack"):
    """Stacks tensors of one shape and dtype along a new dim `axis`.

    Args:
        values: a non-empty list of tensors of one shape and dtype.
        axis: where the new dim goes, in `[-rank-1, rank]`.

    Raises:
        InvalidArgumentError: on mixed dtypes or shapes.

    Example:
        >>> tl.stack([[1, 2], [3, 4]], axis=1).numpy()
        array([[1, 3],
               [2, 4]], dtype=int32)
    """
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("stack needs a non-empty list of tensors")
    ragged = _composite_with(values, "_tl_stack")
    if ragged is not None:
        return ragged._tl_stack(list(values), axis)
    tensors = convert_same_dtype("Pack", list(values))
    return apply("Pack", *tensors, axis=_static_int(axis, "axis", "Pack"))


def _unpack_infer(x, num, axis=0):
    if x.shape.rank is None:
        return tuple(spec(None, x.dtype) for _ in _py.range(num))
    axis = normalize_axis(axis, x.shape.rank, "Unpack")
    dims = list(x.shape)
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Unpack of {num} values along axis {axis} of a tensor of shape {x.shape}")
    del dims[axis]
    return tuple(spec(dims, x.dtype) for _ in _py.range(num))


def _unpack_grad(op, *dys):
    return (stack(list(dys), axis=op.attrs.get("axis", 0)),)


@defop("Unpack", infer=_unpack_infer, grad=_unpack_grad, num_outputs=None)
def _unpack(xp, x, num, axis=0):
    if x.shape[axis] != num:
        raise InvalidArgumentError(f"Unpack of {num} values along axis {axis} of an array of shape "
                                   f"{list(x.shape)}")
    out = tuple(xp.take(x, i, axis=axis) for i in _py.range(num))
    if out and type(out[0]) is bytes:
        return tuple(_string_scalar(v) for v in out)
    return out


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits `value` along `axis` into a list of tensors of one rank less.

    Args:
        value: a tensor of rank >= 1.
        num: the length of `axis` (needed only when unknown while tracing).
        axis: the dim to unstack.

    Raises:
        ValueError: if `num` is None and the dim is unknown.

    Example:
        >>> [t.numpy() for t in tl.unstack([[1, 2], [3, 4]])]
        [array([1, 2], dtype=int32), array([3, 4], dtype=int32)]
    """
    x = convert_to_tensor(value)
    if x.shape.rank == 0:
        raise ValueError("unstack needs a tensor of rank >= 1, got a scalar")
    axis = int(axis)
    if x.shape.rank is not None:
        axis = normalize_axis(axis, x.shape.rank)
    if num is None:
        num = x.shape[axis] if x.shape.rank is not None else None
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    return list(apply("Unpack", x, num=int(num), axis=axis) or ())


def _split_infer(x, num_split, axis):
    if x.shape.rank is None:
        return tuple(spec(None, x.dtype) for _ in _py.range(num_split))
    axis = normalize_axis(axis, x.shape.rank)
    dims = list(x.shape)
    if dims[axis] is not None:
        if num_split <= 0 or dims[axis] % num_split:
            raise ValueError(f"Dimension {axis} must be evenly divisible by {num_split} but is "
                             f"{dims[axis]}")
        dims[axis] //= num_split
    return tuple(spec(dims, x.dtype) for _ in _py.range(num_split))


def _slices_inline(op, sizes):
    """A compiled graph splits along a static axis as basic slices (views, as the kernels
    return) written out, `x[:, 0:64], x[:, 64:128]`, without a kernel call; None when the
    rank or a size is not known while compiling."""
    x = op.inputs[0]
    if x.shape.rank is None or None in sizes:
        return None
    axis = normalize_axis(op.attrs["axis"], x.shape.rank)
    parts, start = [], 0
    for size in sizes:
        parts.append("{0}[" + ":, " * axis + f"{start}:{start + size}]")
        start += size
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _split_inline(op):
    rank = op.inputs[0].shape.rank
    if not rank:
        return None
    axis = normalize_axis(op.attrs["axis"], rank)
    return _slices_inline(op, [t.shape[axis] if t.shape.rank == rank else None
                               for t in op.outputs])


@defop("Split", infer=_split_infer, num_outputs=None, inline=_split_inline,
       grad=lambda op, *dys: (concat(list(dys), axis=op.attrs["axis"]),))
def _split(xp, x, num_split, axis):
    if x.shape[axis] % num_split:
        raise InvalidArgumentError(f"Dimension {axis} must be evenly divisible by {num_split} but "
                                   f"is {x.shape[axis]}")
    # basic slices (views, as xp.split's) without array_split's per-call Python overhead
    size = x.shape[axis] // num_split
    index = [_py.slice(None)] * x.ndim
    out = []
    for i in _py.range(num_split):
        index[axis] = _py.slice(i * size, (i + 1) * size)
        out.append(x[tuple(index)])
    return tuple(out)


def _split_sizes(sizes, total):
    """`sizes` with its -1 resolved against `total` (ValueError if they do not add up)."""
    sizes = list(sizes)
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError(f"size_splits may hold one -1 and otherwise non-negative sizes, got {sizes}")
    known = _py.sum(s for s in sizes if s != -1)
    if total is None:
        return [None if s == -1 else s for s in sizes]
    if -1 in sizes:
        if known > total:
            raise ValueError(f"size_splits {sizes} add up to more than the dim's size {total}")
        sizes[sizes.index(-1)] = total - known
    elif known != total:
        raise ValueError(f"Determined shape must either match input shape along split_dim exactly "
                         f"if fully specified, or be less than the size of the input along "
                         f"split_dim if not fully specified. Got: {known} vs. {total} "
                         f"(size_splits {sizes})")
    return sizes


def _split_v_infer(x, size_splits_tensor=None, num_split=None, axis=0, size_splits=None):
    if x.shape.rank is None:
        return tuple(spec(None, x.dtype) for _ in _py.range(num_split))
    axis = normalize_axis(axis, x.shape.rank)
    dims = list(x.shape)
    if size_splits_tensor is not None:
        _check_index_spec(size_splits_tensor, "size_splits")
        sizes = [None] * num_split
    else:
        sizes = _split_sizes(size_splits, dims[axis])
    return tuple(spec(dims[:axis] + [s] + dims[axis + 1:], x.dtype) for s in sizes)


def _split_v_inline(op):
    if len(op.inputs) != 1:   # sizes read at run time
        return None
    return _split_inline(op)


@defop("SplitV", infer=_split_v_infer, num_outputs=None, inline=_split_v_inline,
       grad=lambda op, *dys: _first_only(op, concat(list(dys), axis=op.attrs["axis"])))
def _split_v(xp, x, size_splits_tensor=None, num_split=None, axis=0, size_splits=None):
    sizes = _ints(size_splits_tensor) if size_splits_tensor is not None else size_splits
    try:
        sizes = _split_sizes(sizes, x.shape[axis])
    except ValueError as e:
        raise InvalidArgumentError(str(e)) from None
    bounds = [0]
    for s in sizes:
        bounds.append(bounds[-1] + s)
    return tuple(x[_axis_index(x.ndim, axis, _py.slice(a, b))] for a, b in zip(bounds, bounds[1:]))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into equal parts or parts of given sizes.

    Args:
        value: a tensor.
        num_or_size_splits: an int (that many equal parts) or a list / 1-D int
            tensor of sizes (one may be -1).
        axis: the dim to split.
        num: the number of parts when sizes are a tensor of unknown length.

    Returns:
        A list of tensors.

    Raises:
        InvalidArgumentError: if the parts do not fill the dim exactly.

    Example:
        >>> [t.shape for t in tl.split(tl.zeros([5, 2]), [2, -1])]
        [TensorShape([2, 2]), TensorShape([3, 2])]
    """
    x = convert_to_tensor(value)
    axis = _static_int(axis, "axis", "Split")
    if x.shape.rank is not None:
        axis = normalize_axis(axis, x.shape.rank)
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(num_or_size_splits, bool):
        n = int(num_or_size_splits)
        if n <= 0:
            raise ValueError(f"num_or_size_splits must be >= 1, got {n}")
        return list(apply("Split", x, num_split=n, axis=axis))
    static, dynamic = _static_or_tensor(num_or_size_splits, "num_or_size_splits", "SplitV")
    if dynamic is None:
        return list(apply("SplitV", x, size_splits=static, num_split=len(static), axis=axis) or ())
    n = num if num is not None else (dynamic.shape[0] if dynamic.shape.rank == 1 else None)
    if n is None:
        raise ValueError(f"Cannot infer argument `num` from shape {dynamic.shape}")
    return list(apply("SplitV", x, dynamic, num_split=int(n), axis=axis) or ())


# ------------------------------------------------------------------ gather, gather_nd

def _gather_axes(params, indices, axis, batch_dims):
    """(axis, batch_dims) made non-negative and checked, or None where a rank is unknown."""
    if indices.shape.rank is not None and batch_dims < 0:
        batch_dims += indices.shape.rank
    if indices.shape.rank is not None and not 0 <= batch_dims <= indices.shape.rank:
        raise ValueError(f"batch_dims must be in [-{indices.shape.rank}, {indices.shape.rank}] for "
                         f"indices of rank {indices.shape.rank}, got {batch_dims}")
    if params.shape.rank is None:
        return None, batch_dims
    if params.shape.rank == 0:
        raise ValueError("params must be at least 1-D, got a scalar")
    axis = normalize_axis(axis, params.shape.rank)
    if batch_dims > axis:
        raise ValueError(f"batch_dims ({batch_dims}) must be <= axis ({axis})")
    return axis, batch_dims


def _gather_infer(params, indices, axis=0, batch_dims=0):
    _check_index_spec(indices, "indices", indices.shape.rank)
    axis, batch_dims = _gather_axes(params, indices, axis, batch_dims)
    if axis is None or indices.shape.rank is None:
        return spec(None, params.dtype)
    p = list(params.shape)
    for i in _py.range(batch_dims):
        a, b = p[i], indices.shape[i]
        if a is not None and b is not None and a != b:
            raise ValueError(f"params.shape[{i}] ({a}) must equal indices.shape[{i}] ({b}) for "
                             f"batch_dims={batch_dims}")
    return spec(p[:axis] + list(indices.shape)[batch_dims:] + p[axis + 1:], params.dtype)


def _gather_layout(xp, params, indices, axis, batch_dims):
    """params as (batch, size of axis, before, after) and indices as (batch, n), for one fancy index."""
    pshape = params.shape
    batch = _pymath.prod(pshape[:batch_dims])
    before = _pymath.prod(pshape[batch_dims:axis])
    after = _pymath.prod(pshape[axis + 1:])
    p = params.reshape((batch, before, pshape[axis], after)).transpose(0, 2, 1, 3)
    idx = indices.reshape((batch, _pymath.prod(indices.shape[batch_dims:])))
    rows = xp.arange(batch).reshape((batch, 1))
    return p, idx, rows, (batch, before, after)


def _check_in_range(xp, indices, limit, what="indices"):
    bad = (indices < 0) | (indices >= limit)
    if indices.size and bool(bad.any()):
        flat = int(xp.argmax(bad.reshape(-1)))
        value = int(indices.reshape(-1)[flat])
        raise InvalidArgumentError(f"{what}[{_unravel(flat, indices.shape)}] = {value} is not in "
                                   f"[0, {limit})")


def _gather_inline(op):
    """A compiled graph reads one row of axis 0 (a loop's step t) as `params[i]`, a view
    (GatherV2 is not listed as making fresh arrays, so the memory plan treats its result as
    one); an index out of range takes the kernel, which names it."""
    params, indices = op.inputs
    if op.attrs.get("axis", 0) != 0 or op.attrs.get("batch_dims", 0) != 0 or \
            indices.shape.rank != 0 or not params.shape.rank:
        return None
    return "({0}[{1}] if 0 <= {1} < len({0}) else {kernel}(xp, {0}, {1}))"


@defop("GatherV2", infer=_gather_infer, inline=_gather_inline,
       grad=lambda op, dy: (apply("GatherV2Grad", dy, op.inputs[1], op.inputs[0], **op.attrs),
                            None))
def _gather(xp, params, indices, axis=0, batch_dims=0):
    batch_dims = batch_dims % indices.ndim if batch_dims < 0 else batch_dims
    axis = axis % params.ndim
    if indices.ndim == 0 and axis == 0:   # one row (a loop reading step t): no fancy indexing
        row = int(indices)
        if 0 <= row < params.shape[0]:
            return params[row].copy()
    _check_in_range(xp, indices, params.shape[axis])
    if axis == 0 and batch_dims == 0:   # rows of a table (an embedding): take, twice as fast
        return xp.take(params, indices, axis=0)
    p, idx, rows, (batch, before, after) = _gather_layout(xp, params, indices, axis, batch_dims)
    out = p[rows, idx]  # (batch, n, before, after)
    out = out.transpose(0, 2, 1, 3)
    return out.reshape(params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:])


def _gather_grad_infer(dy, indices, params, axis=0, batch_dims=0):
    return spec(params.shape, dy.dtype)


def _gather_grad_grad(op, g):
    return (apply("GatherV2", g, op.inputs[1], **op.attrs), None, None)


# occurrences of a row added by fancy assignment, one round each, before np.add.at takes the
# rest: most rows of an embedding's batch occur once or twice, and add.at is ~20x slower per row
_ASSIGN_ROUNDS = 4


def scatter_add_rows(xp, out, rows, values):
    """`out[rows[i]] += values[i]` for every i, rows repeating, into the 2-D `out` (in place).

    The same sums as `xp.add.at(out, rows, values)`, added in the same order (a stable
    sort groups each row's occurrences in input order; round k adds every row's k-th), but by
    fancy assignment over unique rows: `add.at` costs ~20 ns per element, so the gradient of
    an embedding lookup would spend most of a train step there.
    """
    n = rows.shape[0]
    if n == 0:
        return out
    order = xp.argsort(rows, kind="stable")
    rows = rows[order]
    first = xp.empty(n, dtype=bool)
    first[0] = True
    xp.not_equal(rows[1:], rows[:-1], out=first[1:])
    starts = xp.flatnonzero(first)
    # rank[j]: which occurrence of its row the j-th sorted entry is (0 for the first)
    rank = xp.arange(n) - xp.repeat(starts, xp.diff(xp.append(starts, n)))
    for k in _py.range(_ASSIGN_ROUNDS):
        pick = starts if k == 0 else xp.flatnonzero(rank == k)
        if not pick.size:
            return out
        out[rows[pick]] += xp.take(values, order[pick], axis=0)
    rest = xp.flatnonzero(rank >= _ASSIGN_ROUNDS)
    if rest.size:
        xp.add.at(out, rows[rest], xp.take(values, order[rest], axis=0))
    return out


def _gather_grad_direct(op):
    """The kernel takes out= (a dead buffer, or its slice of a flat optimizer's gradient)
    where the attrs are its defaults, the only ones a direct call can pass."""
    if op.attrs.get("axis", 0) == 0 and op.attrs.get("batch_dims", 0) == 0:
        return _gather_grad_kernel, None
    return None


@defop("GatherV2Grad", infer=_gather_grad_infer, grad=_gather_grad_grad,
       direct=_gather_grad_direct)
def _gather_grad_kernel(xp, dy, indices, params, axis=0, batch_dims=0, out=None):
    """Scatter-adds `dy` (shaped like a GatherV2 output) into zeros shaped like `params`
    (into `out` when given, zeroed first)."""
    batch_dims = batch_dims % indices.ndim if batch_dims < 0 else batch_dims
    axis = axis % params.ndim
    if axis == 0 and batch_dims == 0:   # rows of a table: no layout change
        if out is None:
            out = xp.zeros(params.shape, dtype=dy.dtype)
        else:
            out[...] = 0
        width = _pymath.prod(params.shape[1:])
        scatter_add_rows(xp, out.reshape((params.shape[0], width)), indices.reshape(-1),
                         dy.reshape((indices.size, width)))
        return out
    zeros = xp.zeros(params.shape, dtype=dy.dtype)
    z, idx, rows, (batch, before, after) = _gather_layout(xp, zeros, indices, axis, batch_dims)
    size = z.shape[1]
    z = z.copy().reshape((batch * size, before * after))   # rows (batch, size), contiguous
    values = dy.reshape((batch, before, idx.shape[1], after)).transpose(0, 2, 1, 3)
    scatter_add_rows(xp, z, (rows * size + idx).reshape(-1),
                     values.reshape((batch * idx.shape[1], before * after)))
    return z.reshape((batch, size, before, after)).transpose(0, 2, 1, 3).reshape(params.shape)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of `params` along `axis` at `indices`.

    Args:
        params: the tensor to gather from.
        indices: an int32/int64 tensor of indices in `[0, params.shape[axis])`.
        axis: the dim of `params` to gather along (default `batch_dims`).
        batch_dims: leading dims shared by `params` and `indices`.

    Returns:
        A tensor of shape `params.shape[:axis] + indices.shape[batch_dims:] +
        params.shape[axis + 1:]`.

    Raises:
        InvalidArgumentError: for an index out of range (naming it and the range).

    Example:
        >>> tl.gather([10, 20, 30], [2, 0]).numpy()
        array([30, 10], dtype=int32)
    """
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    if i.dtype not in _INDEX_DTYPES:
        raise TypeError(f"GatherV2: indices must be int32 or int64, got {i.dtype.name}")
    batch_dims = int(batch_dims)
    axis = batch_dims if axis is None else _static_int(axis, "axis", "GatherV2")
    if p.shape.rank:
        axis = normalize_axis(axis, p.shape.rank)
    if batch_dims < 0 and i.shape.rank is not None:
        batch_dims += i.shape.rank
    return apply("GatherV2", p, i, axis=axis, batch_dims=batch_dims)


def _gather_nd_infer(params, indices, batch_dims=0):
    _check_index_spec(indices, "indices", indices.shape.rank)
    if indices.shape.rank == 0:
        raise ValueError("indices must be at least 1-D")
    if params.shape.rank is None or indices.shape.rank is None or indices.shape[-1] is None:
        return spec(None, params.dtype)
    k = indices.shape[-1]
    if batch_dims + k > params.shape.rank:
        raise ValueError(f"index innermost dimension length ({k}) plus batch_dims ({batch_dims}) "
                         f"must be <= params rank ({params.shape.rank})")
    return spec(list(indices.shape)[:-1] + list(params.shape)[batch_dims + k:], params.dtype)


def _gather_nd_coords(xp, params, indices, batch_dims):
    """The advanced-index tuple into params reshaped to (batch, ...), and the index count."""
    k = indices.shape[-1]
    batch = _pymath.prod(params.shape[:batch_dims])
    n = _pymath.prod(indices.shape[batch_dims:-1])
    idx = indices.reshape((batch, n, k))
    limits = xp.asarray(params.shape[batch_dims:batch_dims + k], dtype=idx.dtype)
    bad = ((idx < 0) | (idx >= limits)).any(axis=-1)
    if bad.size and bool(bad.any()):
        flat = int(xp.argmax(bad.reshape(-1)))
        where = _unravel(flat, indices.shape[:-1])
        value = [int(v) for v in idx.reshape((-1, k))[flat].tolist()]
        raise InvalidArgumentError(f"indices[{where}] = {value} does not index into param shape "
                                   f"{list(params.shape)}")
    rows = xp.broadcast_to(xp.arange(batch).reshape((batch, 1)), (batch, n))
    return (rows,) + tuple(idx[:, :, j] for j in _py.range(k)), batch, n


@defop("GatherNd", infer=_gather_nd_infer,
       grad=lambda op, dy: (apply("GatherNdGrad", dy, op.inputs[1], op.inputs[0], **op.attrs), None))
def _gather_nd(xp, params, indices, batch_dims=0):
    coords, batch, n = _gather_nd_coords(xp, params, indices, batch_dims)
    p = params.reshape((batch,) + params.shape[batch_dims:])
    out = p[coords]  # (batch, n, rest...)
    k = indices.shape[-1]
    return out.reshape(indices.shape[:-1] + params.shape[batch_dims + k:])


@defop("GatherNdGrad", infer=lambda dy, indices, params, batch_dims=0: spec(params.shape, dy.dtype),
       grad=lambda op, g: (apply("GatherNd", g, op.inputs[1], **op.attrs), None, None))
def _gather_nd_grad(xp, dy, indices, params, batch_dims=0):
    """Scatter-adds `dy` (shaped like a GatherNd output) into zeros shaped like `params`."""
    coords, batch, n = _gather_nd_coords(xp, params, indices, batch_dims)
    k = indices.shape[-1]
    z = xp.zeros((batch,) + params.shape[batch_dims:], dtype=dy.dtype)
    xp.add.at(z, coords, dy.reshape((batch, n) + params.shape[batch_dims + k:]))
    return z.reshape(params.shape)


def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of `params` at the multi-dim `indices` (the last dim indexes params).

    Args:
        params: the tensor to gather from.
        indices: int tensor whose last dim K indexes the first K dims of
            `params` (after `batch_dims`).
        batch_dims: leading dims shared by `params` and `indices`.

    Returns:
        A tensor of shape `indices.shape[:-1] + params.shape[batch_dims + K:]`.

    Raises:
        InvalidArgumentError: for an index out of range.

    Example:
        >>> tl.gather_nd([[1, 2], [3, 4]], [[1, 0]]).numpy()
        array([3], dtype=int32)
    """
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    if i.dtype not in _INDEX_DTYPES:
        raise TypeError(f"GatherNd: indices must be int32 or int64, got {i.dtype.name}")
    return apply("GatherNd", p, i, batch_dims=int(batch_dims))


# ------------------------------------------------------------------ one_hot

def _one_hot_infer(indices, on_value, off_value, depth, axis=-1):
    _check_index_spec(indices, "indices", indices.shape.rank)
    if on_value.dtype is not off_value.dtype:
        raise TypeError(f"on_value and off_value must have one dtype, got {on_value.dtype.name} "
                        f"and {off_value.dtype.name}")
    if depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    if indices.shape.rank is None:
        return spec(None, on_value.dtype)
    dims = list(indices.shape)
    if not -1 <= axis <= len(dims):
        raise ValueError(f"axis must be in [-1, {len(dims)}], got {axis}")
    dims.insert(len(dims) if axis == -1 else axis, depth)
    return spec(dims, on_value.dtype)


@defop("OneHot", infer=_one_hot_infer, differentiable=False)
def _one_hot(xp, indices, on_value, off_value, depth, axis=-1):
    axis = indices.ndim if axis == -1 else axis
    classes = xp.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    hit = xp.expand_dims(indices, axis) == classes
    return xp.where(hit, on_value, off_value)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot vectors: `on_value` where the position equals the index, else `off_value`.

    Indices outside `[0, depth)` (negative ones too) give all-`off_value` rows.

    Args:
        indices: an int tensor.
        depth: the number of classes (a Python int).
        on_value, off_value: scalars (default 1 and 0).
        axis: where the new dim goes (default -1, the end).
        dtype: the output dtype (default that of on/off_value, else float32).

    Example:
        >>> tl.one_hot([0, 2], 3).numpy()
        array([[1., 0., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    i = convert_to_tensor(indices)
    if i.dtype not in (_dt.uint8, _dt.int8, _dt.int32, _dt.int64):
        raise op_error(InvalidArgumentError, "OneHot",
                       f"indices must be uint8, int8, int32 or int64, got {i.dtype.name}")
    # TensorFlow's rules: given values convert with dtype as a hint and must match it;
    # missing ones are 1 and 0 of the dtype (float32 when nothing decides it)
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    on = None if on_value is None else convert_to_tensor(on_value, dtype_hint=dtype)
    off = None if off_value is None else convert_to_tensor(off_value, dtype_hint=dtype)
    for value, which in ((on, "on_value"), (off, "off_value")):
        if value is not None and dtype is not None and value.dtype is not dtype:
            raise TypeError(f"OneHot: dtype {value.dtype.name} of {which} does not match the "
                            f"dtype parameter {dtype.name}")
    dtype = dtype or (on.dtype if on is not None else off.dtype if off is not None else _dt.float32)
    on = convert_to_tensor(1, dtype) if on is None else on
    off = convert_to_tensor(0, dtype) if off is None else off
    if on.dtype is not off.dtype:
        raise TypeError(f"OneHot: dtype {on.dtype.name} of on_value does not match dtype "
                        f"{off.dtype.name} of off_value")
    axis = -1 if axis is None else int(axis)
    depth = _static_int(depth, "depth", "OneHot")
    if depth < 0:
        raise op_error(InvalidArgumentError, "OneHot", f"depth must be non-negative, got {depth}")
    return apply("OneHot", i, on, off, depth=depth, axis=axis)


# ------------------------------------------------------------------ pad

def _paddings_infer(x, paddings_tensor, paddings, mode):
    """Output spec of padding `x`, checking the paddings against its shape."""
    if paddings_tensor is not None:
        _check_index_spec(paddings_tensor, "paddings", 2)
        n = paddings_tensor.shape[0] if paddings_tensor.shape.rank else None
        rank = x.shape.rank if x.shape.rank is not None else n
        return spec(None if rank is None else [None] * rank, x.dtype)
    _check_paddings(TensorShape(x.shape) if x.shape.rank is not None else None, paddings, mode)
    if x.shape.rank is None:
        return spec([None] * len(paddings), x.dtype)
    return spec([None if d is None else d + lo + hi for d, (lo, hi) in zip(x.shape, paddings)],
                x.dtype)


def _check_paddings(in_shape, paddings, mode):
    if any(len(p) != 2 for p in paddings):
        raise ValueError(f"paddings must have shape [rank, 2], got {[list(p) for p in paddings]}")
    if in_shape is not None and len(paddings) != in_shape.rank:
        raise ValueError(f"The first dimension of paddings must be the rank of inputs: paddings "
                         f"{[list(p) for p in paddings]} for shape {in_shape}")
    for i, (lo, hi) in enumerate(paddings):
        if lo < 0 or hi < 0:
            raise ValueError(f"Paddings must be non-negative: {lo} {hi}")
        d = None if in_shape is None else in_shape[i]
        if mode != "CONSTANT" and d is not None:
            limit = d - 1 if mode == "REFLECT" else d
            if lo > limit or hi > limit:
                raise ValueError(f"paddings must be no greater than the dimension size minus "
                                 f"{1 if mode == 'REFLECT' else 0} in {mode} mode: {lo}, {hi} "
                                 f"greater than {limit} for dim {i} of shape {in_shape}")


def _pad_v2_infer(x, constant_values, paddings_tensor=None, paddings=None):
    if constant_values.dtype is not x.dtype:
        raise TypeError(f"constant_values must have the dtype of the input ({x.dtype.name}), "
                        f"got {constant_values.dtype.name}")
    if constant_values.shape.rank not in (None, 0):
        raise ValueError(f"constant_values must be a scalar, got shape {constant_values.shape}")
    return _paddings_infer(x, paddings_tensor, paddings, "CONSTANT")


def _pad_grad(op, dy):
    x = op.inputs[0]
    paddings = op.attrs.get("paddings")
    if paddings is not None:
        begin = [lo for lo, _ in paddings]
        size = _shape_arg(x)
        if not isinstance(size, list):
            begin = constant(begin, _dt.int32)
        return (slice(dy, begin, size),) + (None,) * (len(op.inputs) - 1)
    paddings_tensor = op.inputs[-1]
    begin = reshape(getitem(paddings_tensor, (_py.slice(None), 0)), [-1])
    return (slice(dy, begin, shape(x, out_type=paddings_tensor.dtype)),) + (None,) * (len(op.inputs) - 1)


def _padded(xp, x, paddings, fill):
    out = xp.broadcast_to(fill, tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, paddings))).copy()
    out[tuple(_py.slice(lo, lo + d) for d, (lo, _) in zip(x.shape, paddings))] = x
    return out


@defop("PadV2", infer=_pad_v2_infer, grad=_pad_grad)
def _pad_v2(xp, x, constant_values, paddings_tensor=None, paddings=None):
    paddings = _ints(paddings_tensor) if paddings_tensor is not None else paddings
    _kernel_check(_check_paddings, TensorShape(x.shape), paddings, "CONSTANT")
    return _padded(xp, x, paddings, constant_values)


def _kernel_check(check, *args):
    try:
        check(*args)
    except ValueError as e:
        raise InvalidArgumentError(str(e)) from None


def _mirror_pad_infer(x, paddings_tensor=None, paddings=None, mode="REFLECT"):
    return _paddings_infer(x, paddings_tensor, paddings, mode)


def _mirror_pad_grad(op, dy):
    return _first_only(op, apply("MirrorPadGrad", dy, *op.inputs[1:], **op.attrs))


@defop("MirrorPad", infer=_mirror_pad_infer, grad=_mirror_pad_grad)
def _mirror_pad(xp, x, paddings_tensor=None, paddings=None, mode="REFLECT"):
    paddings = _ints(paddings_tensor) if paddings_tensor is not None else paddings
    _kernel_check(_check_paddings, TensorShape(x.shape), paddings, mode)
    return xp.pad(x, paddings, mode=mode.lower())


def _mirror_pad_grad_infer(dy, paddings_tensor=None, paddings=None, mode="REFLECT"):
    if paddings_tensor is not None or dy.shape.rank is None:
        return spec(None if dy.shape.rank is None else [None] * dy.shape.rank, dy.dtype)
    return spec([None if d is None else d - lo - hi for d, (lo, hi) in zip(dy.shape, paddings)],
                dy.dtype)


@defop("MirrorPadGrad", infer=_mirror_pad_grad_infer,
       grad=lambda op, g: _first_only(op, apply("MirrorPad", g, *op.inputs[1:], **op.attrs)))
def _mirror_pad_grad_kernel(xp, dy, paddings_tensor=None, paddings=None, mode="REFLECT"):
    """Folds the mirrored borders of `dy` back onto the elements they copied."""
    paddings = _ints(paddings_tensor) if paddings_tensor is not None else paddings
    skip = 1 if mode == "REFLECT" else 0  # REFLECT does not repeat the edge element
    g = dy
    for axis, (lo, hi) in enumerate(paddings):
        n = g.shape[axis] - lo - hi
        core = g[_axis_index(g.ndim, axis, _py.slice(lo, lo + n))].copy()
        if lo:
            left = xp.flip(g[_axis_index(g.ndim, axis, _py.slice(0, lo))], axis=axis)
            core[_axis_index(g.ndim, axis, _py.slice(skip, skip + lo))] += left
        if hi:
            right = xp.flip(g[_axis_index(g.ndim, axis, _py.slice(lo + n, None))], axis=axis)
            core[_axis_index(g.ndim, axis, _py.slice(n - skip - hi, n - skip))] += right
        g = core
    return g


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads `tensor` with `paddings[i] = [before, after]` elements along dim i.

    Args:
        tensor: a tensor.
        paddings: a [rank, 2] list or int tensor of non-negative counts.
        mode: "CONSTANT" (fill with `constant_values`), "REFLECT" (mirror
            without the edge) or "SYMMETRIC" (mirror with the edge); any case.
        constant_values: the fill value for CONSTANT mode.

    Returns:
        The padded tensor.

    Raises:
        InvalidArgumentError: for negative or too large paddings.

    Example:
        >>> tl.pad([[1, 2]], [[1, 0], [0, 1]]).numpy()
        array([[0, 0, 0],
               [1, 2, 0]], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    mode = str(mode).upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    static, dynamic = _static_or_tensor(paddings, "paddings", "Pad")
    if static is not None:
        static = tuple(tuple(p) if isinstance(p, tuple) else (p,) for p in static)
    tail = (dynamic,) if dynamic is not None else ()
    attrs = {} if dynamic is not None else {"paddings": static}
    if mode == "CONSTANT":
        value = convert_same_dtype("PadV2", (x, constant_values))[1]
        return apply("PadV2", x, value, *tail, **attrs)
    return apply("MirrorPad", x, *tail, mode=mode, **attrs)


# ------------------------------------------------------------------ slice

def _slice_dims(in_shape, begin, size):
    if len(begin) != len(size) or (in_shape.rank is not None and len(begin) != in_shape.rank):
        raise ValueError(f"begin and size must have one entry per dim of the input: begin "
                         f"{list(begin)}, size {list(size)}, input shape {in_shape}")
    dims = []
    for i, (b, s) in enumerate(zip(begin, size)):
        d = in_shape[i] if in_shape.rank is not None else None
        if b < 0 or s < -1 or d is not None and (b > d or s != -1 and b + s > d):
            raise ValueError(f"Expected begin[{i}] in [0, {d}] and size[{i}] in [0, {d} - begin], "
                             f"but got begin {b} and size {s} (input shape {in_shape})")
        dims.append(s if s != -1 else (None if d is None else d - b))
    return dims


def _slice_infer(x, *bounds, begin=None, size=None):
    if bounds:
        for b in bounds:
            _check_index_spec(b, "begin and size")
        n = bounds[0].shape[0] if bounds[0].shape.rank else None
        rank = x.shape.rank if x.shape.rank is not None else n
        return spec(None if rank is None else [None] * rank, x.dtype)
    return spec(_slice_dims(x.shape, begin, size), x.dtype)


@defop("Slice", infer=_slice_infer, grad=lambda op, dy: _first_only(op, _slice_grad(op, dy)))
def _slice(xp, x, *bounds, begin=None, size=None):
    if bounds:
        begin, size = _ints(bounds[0]), _ints(bounds[1])
    dims = _slice_dims(TensorShape(x.shape), begin, size)
    return x[tuple(_py.slice(b, b + s) for b, s in zip(begin, dims))]


def _slice_grad(op, dy):
    x = op.inputs[0]
    begin = op.attrs.get("begin")
    if begin is not None and x.shape.is_fully_defined() and dy.shape.is_fully_defined():
        return pad(dy, [[b, d - b - s] for b, d, s in zip(begin, x.shape, dy.shape)])
    begin = op.inputs[1] if begin is None else constant(begin, _dt.int32)
    after = shape(x, out_type=begin.dtype) - begin - shape(dy, out_type=begin.dtype)
    return pad(dy, stack([begin, after], axis=1))


def slice(input_, begin, size, name=None):  # noqa: A001 -- TensorFlow's name
    """The block of `input_` starting at `begin` with extent `size` (-1: to the end).

    Args:
        input_: a tensor.
        begin: the start index per dim (a list or 1-D int tensor).
        size: the extent per dim; -1 means to the end.

    Raises:
        InvalidArgumentError: if the block does not fit inside `input_`.

    Example:
        >>> tl.slice([[1, 2, 3], [4, 5, 6]], [1, 0], [1, 2]).numpy()
        array([[4, 5]], dtype=int32)
    """
    x = convert_to_tensor(input_)
    b_static, b_dynamic = _static_or_tensor(begin, "begin", "Slice")
    s_static, s_dynamic = _static_or_tensor(size, "size", "Slice")
    if b_dynamic is None and s_dynamic is None:
        return apply("Slice", x, begin=b_static, size=s_static)
    bounds = convert_same_dtype("Slice", (begin if b_dynamic is None else b_dynamic,
                                          size if s_dynamic is None else s_dynamic))
    return apply("Slice", x, *bounds)


# ------------------------------------------------------------------ getitem (strided slice)
# A key is a static tuple of entries: ("int", i), ("slice", start, stop, step),
# ("newaxis",), ("ellipsis",). Each i/start/stop/step is a Python int, None, or
# ("input", k): the k-th index tensor after the sliced tensor (a scalar known
# only at run time).

def _key_layout(key, rank):
    """The entries with the ellipsis expanded and trailing dims made explicit, each paired
    with the input dim it consumes (None for newaxis)."""
    consumed = _py.sum(1 for e in key if e[0] in ("int", "slice"))
    if consumed > rank:
        raise ValueError(f"Index out of range: {consumed} indices for a tensor of rank {rank}")
    layout, axis = [], 0
    full = ("slice", None, None, None)
    for e in key:
        if e[0] == "ellipsis":
            for _ in _py.range(rank - consumed):
                layout.append((full, axis))
                axis += 1
        elif e[0] == "newaxis":
            layout.append((e, None))
        else:
            layout.append((e, axis))
            axis += 1
    while axis < rank:
        layout.append((full, axis))
        axis += 1
    return layout


def _key_value(v, dynamic):
    if isinstance(v, tuple):
        return None if dynamic is None else int(dynamic[v[1]])
    return v


def _check_int_index(i, d, axis):
    if d is not None and not -d <= i < d:
        raise ValueError(f"slice index {i} of dimension {axis} out of bounds: the dimension has "
                         f"size {d}, so valid indices are [{-d}, {d})")


def _strided_slice_infer(x, *index_tensors, key):
    for t in index_tensors:
        _check_index_spec(t, "a tensor index", 0)
    if x.shape.rank is None:
        return spec(None, x.dtype)
    dims = []
    for e, axis in _key_layout(key, x.shape.rank):
        d = None if axis is None else x.shape[axis]
        if e[0] == "newaxis":
            dims.append(1)
        elif e[0] == "int":
            if not isinstance(e[1], tuple):
                _check_int_index(e[1], d, axis)
        else:
            bounds = e[1:]
            if d is None or any(isinstance(b, tuple) for b in bounds):
                dims.append(None)
            else:
                dims.append(len(_py.range(*_py.slice(*bounds).indices(d))))
    return spec(dims, x.dtype)


def _numpy_key(x, index_arrays, key):
    out = []
    for e, axis in _key_layout(key, x.ndim):
        if e[0] == "newaxis":
            out.append(None)
        elif e[0] == "int":
            i = _key_value(e[1], index_arrays)
            try:
                _check_int_index(i, x.shape[axis], axis)
            except ValueError as err:
                raise InvalidArgumentError(str(err)) from None
            out.append(i)
        else:
            out.append(_py.slice(*(_key_value(b, index_arrays) for b in e[1:])))
    return tuple(out)


def _strided_slice_grad(op, dy):
    x, *index_tensors = op.inputs
    return (apply("StridedSliceGrad", dy, x, *index_tensors, key=op.attrs["key"]),) + \
        (None,) * len(index_tensors)


@defop("StridedSlice", infer=_strided_slice_infer, grad=_strided_slice_grad)
def _strided_slice(xp, x, *index_arrays, key):
    out = x[_numpy_key(x, index_arrays, key)]
    return out if type(out) is not bytes else _string_scalar(out)


def _string_scalar(value):
    """A 0-d string array: an element picked from a string array is bare bytes, which has
    no shape and would leave tl.string's storage (object arrays)."""
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _strided_slice_grad_grad(op, g):
    _, _, *index_tensors = op.inputs
    return (apply("StridedSlice", g, *index_tensors, key=op.attrs["key"]), None) + \
        (None,) * len(index_tensors)


@defop("StridedSliceGrad", infer=lambda dy, x, *index_tensors, key: spec(x.shape, dy.dtype),
       grad=_strided_slice_grad_grad)
def _strided_slice_grad_kernel(xp, dy, x, *index_arrays, key):
    """Writes `dy` (shaped like the slice) into zeros shaped like `x`."""
    out = xp.zeros(x.shape, dtype=dy.dtype)
    out[_numpy_key(x, index_arrays, key)] = dy
    return out


_BAD_INDEX = ("Only integers, slices (`:`), ellipsis (`...`), tl.newaxis (`None`) and scalar "
              "tl.int32/tl.int64 tensors are valid indices, got {!r}")


def getitem(tensor, key):
    """`tensor[key]`: basic indexing as TensorFlow's (a StridedSlice op).

    Args:
        tensor: the tensor to index.
        key: ints, slices (negative steps too), `...`, `None` (new axis), or
            scalar int tensors, alone or in a tuple.

    Returns:
        The selected elements.

    Raises:
        InvalidArgumentError: for an index out of range.
        TypeError: for other keys (lists, float or non-scalar tensors).

    Example:
        >>> tl.constant([[1, 2, 3], [4, 5, 6]])[1, ::-1].numpy()
        array([6, 5, 4], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    # as TensorFlow's _slice_helper: a bool mask selects (boolean_mask), a list is a tuple
    if isinstance(key, (bool, np.bool_)) or (is_tensor(key) and key.dtype is _dt.bool) or \
            (isinstance(key, np.ndarray) and key.dtype == bool):
        return boolean_mask(x, key)
    if not isinstance(key, tuple):
        key = tuple(key) if isinstance(key, list) else (key,)
    inputs, entries = [], []

    def bound(v, allow_none):
        if v is None and allow_none:
            return None
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(_BAD_INDEX.format(v))
        if isinstance(v, (int, np.integer)):
            return int(v)
        if is_tensor(v) or hasattr(v, "read_value"):
            t = convert_to_tensor(v)
            if t.dtype not in _INDEX_DTYPES or (t.shape.rank is not None and t.shape.rank != 0):
                raise TypeError(_BAD_INDEX.format(v))
            if isinstance(t, Tensor):
                return int(t)
            inputs.append(t)
            return ("input", len(inputs) - 1)
        raise TypeError(_BAD_INDEX.format(v))

    for k in key:
        if k is Ellipsis:
            if ("ellipsis",) in entries:
                raise ValueError("Multiple ellipses in slice spec not allowed")
            entries.append(("ellipsis",))
        elif k is None:
            entries.append(("newaxis",))
        elif isinstance(k, _py.slice):
            if k.step is not None and not isinstance(k.step, SymbolicTensor) and int(k.step) == 0:
                raise ValueError("slice step cannot be zero")
            entries.append(("slice", bound(k.start, True), bound(k.stop, True), bound(k.step, True)))
        else:
            entries.append(("int", bound(k, False)))
    return apply("StridedSlice", x, *inputs, key=tuple(entries))


# ------------------------------------------------------------------ boolean_mask

def _boolean_mask_infer(x, mask, axis=0):
    if not mask.dtype.is_bool:
        raise TypeError(f"mask must be bool, got {mask.dtype.name}")
    if x.shape.rank is None or mask.shape.rank is None:
        return spec(None, x.dtype)
    k = mask.shape.rank
    if k == 0:
        raise ValueError("mask cannot be a scalar")
    if axis + k > x.shape.rank:
        raise ValueError(f"mask of rank {k} at axis {axis} does not fit a tensor of shape {x.shape}")
    part = x.shape[axis:axis + k]
    if not part.is_compatible_with(mask.shape):
        raise ValueError(f"Shapes {part} and {mask.shape} are incompatible: the mask must match "
                         f"dims {axis}..{axis + k - 1} of the tensor (shape {x.shape})")
    return spec(list(x.shape)[:axis] + [None] + list(x.shape)[axis + k:], x.dtype)


def _mask_index(x, mask, axis):
    if tuple(x.shape[axis:axis + mask.ndim]) != tuple(mask.shape):
        raise InvalidArgumentError(f"mask of shape {list(mask.shape)} does not match dims "
                                   f"{axis}..{axis + mask.ndim - 1} of shape {list(x.shape)}")
    return (_py.slice(None),) * axis + (mask,)


@defop("BooleanMask", infer=_boolean_mask_infer,
       grad=lambda op, dy: (apply("BooleanMaskGrad", dy, op.inputs[1], op.inputs[0], **op.attrs), None))
def _boolean_mask(xp, x, mask, axis=0):
    return x[_mask_index(x, mask, axis)]


@defop("BooleanMaskGrad", infer=lambda dy, mask, x, axis=0: spec(x.shape, dy.dtype),
       grad=lambda op, g: (apply("BooleanMask", g, op.inputs[1], **op.attrs), None, None))
def _boolean_mask_grad(xp, dy, mask, x, axis=0):
    """Writes `dy` back at the kept positions of zeros shaped like `x`."""
    out = xp.zeros(x.shape, dtype=dy.dtype)
    out[_mask_index(x, mask, axis)] = dy
    return out


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The elements (or slices) of `tensor` where `mask` is True, flattened over the mask's dims.

    Args:
        tensor: a tensor.
        mask: a bool tensor matching dims `axis .. axis + mask.rank - 1` of `tensor`.
        axis: where the mask's dims start (default 0).

    Returns:
        A tensor whose masked dims become one dim of the number of True values.

    Example:
        >>> tl.boolean_mask([1, 2, 3], [True, False, True]).numpy()
        array([1, 3], dtype=int32)
    """
    x = convert_to_tensor(tensor)
    m = convert_to_tensor(mask)
    if m.shape.rank == 0:
        raise ValueError("boolean_mask: mask cannot be scalar; give one bool per element")
    axis = 0 if axis is None else _static_int(axis, "axis", "BooleanMask")
    if x.shape.rank is not None:
        axis = normalize_axis(axis, x.shape.rank)
    return apply("BooleanMask", x, m, axis=axis)


# ------------------------------------------------------------------ sorting, searching, unique
# ArgSort is trainlib's op (TensorFlow builds tf.argsort from TopKV2); both directions keep
# ties in index order, as TensorFlow's top_k-based sort does. `sort` gathers by it, so its
# gradient is GatherV2's.

import collections as _collections  # noqa: E402

__all__ += ["sort", "argsort", "roll", "repeat", "meshgrid", "unique", "unique_with_counts",
            "searchsorted", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
            "tensor_scatter_nd_sub", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
            "reverse_sequence", "newaxis", "ensure_shape"]

newaxis = None

_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _sortable(x, op_name):
    if x.dtype.is_bool or x.dtype.is_complex or x.dtype is _dt.resource:
        raise TypeError(f"{op_name} needs a real numeric tensor, got {x.dtype.name}")


def _argsort_infer(x, axis=-1, direction="ASCENDING"):
    _sortable(x, "ArgSort")
    if x.shape.rank == 0:
        raise ValueError("argsort needs a tensor of rank >= 1, got a scalar")
    if x.shape.rank is not None:
        normalize_axis(axis, x.shape.rank)
    return spec(x.shape, _dt.int32)


@defop("ArgSort", infer=_argsort_infer, differentiable=False)
def _argsort(xp, x, axis=-1, direction="ASCENDING"):
    if direction == "ASCENDING":
        return xp.argsort(x, axis=axis, kind="stable").astype(xp.int32)
    return stable_descending(xp, x, axis).astype(xp.int32)


def _direction(direction, op_name):
    if direction not in _DIRECTIONS:
        raise ValueError(f"{op_name}: direction must be 'ASCENDING' or 'DESCENDING', got "
                         f"{direction!r}")
    return direction


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Int32 indices that sort `values` along `axis`; ties keep their order (always stable).

    Args:
        values: a real numeric tensor of rank >= 1.
        axis: the dim to sort along (default the last).
        direction: 'ASCENDING' or 'DESCENDING'.
        stable: accepted for TensorFlow's signature; the sort is always stable.

    Raises:
        ValueError: for an unknown direction.

    Example:
        >>> tl.argsort([3, 1, 2]).numpy()
        array([1, 2, 0], dtype=int32)
    """
    x = convert_to_tensor(values)
    _sortable(x, "argsort")
    return apply("ArgSort", x, axis=_static_int(axis, "axis", "ArgSort"),
                 direction=_direction(direction, "argsort"))


def _along_last(x, axis, fn):
    """fn applied to x with `axis` moved last (rank must be known), then moved back."""
    rank = x.shape.rank
    if rank is None:
        raise ValueError("sort needs a tensor of known rank while tracing")
    axis = normalize_axis(axis, rank)
    if axis == rank - 1:
        return fn(x)
    perm = list(_py.range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose(fn(transpose(x, perm)), perm)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis` (differentiable: the gradient follows each element).

    Args:
        values: a real numeric tensor of rank >= 1.
        axis: the dim to sort along (default the last).
        direction: 'ASCENDING' or 'DESCENDING'.

    Example:
        >>> tl.sort([3, 1, 2], direction="DESCENDING").numpy()
        array([3, 2, 1], dtype=int32)
    """
    x = convert_to_tensor(values)
    _sortable(x, "sort")
    direction = _direction(direction, "sort")
    axis = _static_int(axis, "axis", "sort")

    def sort_last(v):
        r = v.shape.rank
        order = apply("ArgSort", v, axis=r - 1, direction=direction)
        return apply("GatherV2", v, order, axis=r - 1, batch_dims=r - 1)
    if x.shape.rank == 0:
        raise ValueError("sort needs a tensor of rank >= 1, got a scalar")
    return _along_last(x, axis, sort_last)


Unique = _collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = _collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _unique_infer(x, out_idx=_dt.int32, with_counts=False):
    if x.shape.rank not in (None, 1):
        raise ValueError(f"unique needs a 1-D tensor, got shape {x.shape}")
    if out_idx not in _INDEX_DTYPES:
        raise TypeError(f"out_idx must be int32 or int64, got {out_idx!r}")
    n = x.shape[0] if x.shape.rank else None
    out = (spec([None], x.dtype), spec([n], out_idx))
    return out + (spec([None], out_idx),) if with_counts else out


@defop("Unique", infer=_unique_infer, differentiable=False, num_outputs=None)
def _unique(xp, x, out_idx=_dt.int32, with_counts=False):
    if x.ndim != 1:
        raise ValueError("unique needs a 1-D tensor")
    values, first, inverse, counts = xp.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = xp.argsort(first, kind="stable")  # uniques in order of first occurrence
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.shape[0], dtype=order.dtype)
    idx = rank[inverse.reshape(-1)].astype(out_idx.np)
    out = (values[order], idx)
    return out + (counts[order].astype(out_idx.np),) if with_counts else out


def unique(x, out_idx=_dt.int32, name=None):
    """The distinct values of the 1-D `x` in order of first occurrence, and for each element of
    `x` the index of its value among them.

    Returns:
        A namedtuple `Unique(y, idx)`; idx has dtype `out_idx` (int32).

    Example:
        >>> y, idx = tl.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
        >>> y.numpy(), idx.numpy()
        (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))
    """
    out = apply("Unique", convert_to_tensor(x), out_idx=_dt.as_dtype(out_idx))
    return Unique(*out)


def unique_with_counts(x, out_idx=_dt.int32, name=None):
    """`unique` plus how often each distinct value occurs: `UniqueWithCounts(y, idx, count)`."""
    out = apply("Unique", convert_to_tensor(x), out_idx=_dt.as_dtype(out_idx), with_counts=True)
    return UniqueWithCounts(*out)


def _searchsorted_infer(sorted_sequence, values, side="left", out_type=_dt.int32):
    if sorted_sequence.dtype is not values.dtype:
        raise TypeError(f"searchsorted needs one dtype, got {sorted_sequence.dtype.name} and "
                        f"{values.dtype.name}")
    s, v = sorted_sequence.shape, values.shape
    if s.rank == 0 or v.rank == 0:
        raise ValueError("searchsorted needs sorted_sequence and values of rank >= 1")
    if s.rank is not None and v.rank is not None and \
            not s[:-1].is_compatible_with(v[:-1]):
        raise ValueError(f"sorted_sequence {s} and values {v} must agree on all but the last dim")
    return spec(v, out_type)


@defop("SearchSorted", infer=_searchsorted_infer, differentiable=False)
def _searchsorted(xp, sorted_sequence, values, side="left", out_type=_dt.int32):
    if sorted_sequence.shape[:-1] != values.shape[:-1]:
        raise ValueError("sorted_sequence and values must agree on all but the last dim")
    s = sorted_sequence.reshape((-1, 1, sorted_sequence.shape[-1]))
    v = values.reshape((s.shape[0], -1, 1))
    below = (s < v) if side == "left" else (s <= v)
    return xp.sum(below, axis=-1).reshape(values.shape).astype(out_type.np)


def searchsorted(sorted_sequence, values, side="left", out_type=_dt.int32, name=None):
    """Where each value would be inserted in the innermost sorted sequence to keep it sorted.

    Args:
        sorted_sequence: [..., N], sorted ascending along the last dim.
        values: [..., M] with the same leading dims.
        side: 'left' (the first suitable index) or 'right' (the last).
        out_type: int32 or int64.

    Example:
        >>> tl.searchsorted([0.0, 1.0, 2.0], [1.0, 1.5], side="right").numpy()
        array([2, 2], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    s, v = convert_same_dtype("SearchSorted", (sorted_sequence, values))
    out_type = _dt.as_dtype(out_type)
    if out_type not in _INDEX_DTYPES:
        raise TypeError(f"searchsorted: out_type must be int32 or int64, got {out_type.name}")
    return apply("SearchSorted", s, v, side=side, out_type=out_type)


# ------------------------------------------------------------------ roll, repeat, meshgrid

def _roll_infer(x, shift, axis):
    if x.shape.rank is not None:
        for a in axis:
            normalize_axis(a, x.shape.rank)
    return spec(x.shape, x.dtype)


@defop("Roll", infer=_roll_infer,
       grad=lambda op, dy: (apply("Roll", dy, shift=tuple(-s for s in op.attrs["shift"]),
                                  axis=op.attrs["axis"]),))
def _roll(xp, x, shift, axis):
    return xp.roll(x, shift, axis) if axis else x


def roll(input, shift, axis, name=None):  # noqa: A002
    """Rolls elements along `axis` by `shift` (elements leaving one end come back at the other).

    Args:
        input: a tensor.
        shift: an int or list of ints (positive rolls toward higher indices).
        axis: an int or list of ints, one per shift; an axis may repeat (shifts add up).

    Raises:
        ValueError: if shift and axis differ in length.

    Example:
        >>> tl.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy()
        array([3, 4, 0, 1, 2], dtype=int32)
    """
    x = convert_to_tensor(input)
    shifts = _static_or_tensor(shift, "shift", "Roll")[0]
    axes = _static_or_tensor(axis, "axis", "Roll")[0]
    if shifts is None or axes is None:
        raise TypeError("Roll: shift and axis must be known while tracing (Python ints)")
    if len(shifts) != len(axes):
        raise ValueError(f"Roll: shift and axis must have the same length, got {list(shifts)} "
                         f"and {list(axes)}")
    return apply("Roll", x, shift=tuple(shifts), axis=tuple(axes))


def _repeat_infer(x, repeats, axis):
    if x.shape.rank is None:
        return spec(None, x.dtype)
    axis = normalize_axis(axis, x.shape.rank)
    dims = list(x.shape)
    n = dims[axis]
    if isinstance(repeats, tuple):
        if len(repeats) != 1 and n is not None and len(repeats) != n:
            raise ValueError(f"repeats has {len(repeats)} entries for a dim of size {n}")
        dims[axis] = sum(repeats) if len(repeats) != 1 else (None if n is None else n * repeats[0])
    else:
        dims[axis] = None if n is None else n * repeats
    return spec(dims, x.dtype)


def _repeats_array(xp, repeats, n):
    if isinstance(repeats, tuple) and len(repeats) == 1:
        repeats = repeats[0]
    if not isinstance(repeats, tuple):
        return repeats
    if len(repeats) != n:
        raise InvalidArgumentError(f"repeats has {len(repeats)} entries for a dim of size {n}")
    return xp.asarray(np.asarray(repeats, np.int64))


@defop("Repeat", infer=_repeat_infer,
       grad=lambda op, dy: (apply("RepeatGrad", dy, op.inputs[0], **op.attrs),))
def _repeat(xp, x, repeats, axis):
    return xp.repeat(x, _repeats_array(xp, repeats, x.shape[axis]), axis=axis)


@defop("RepeatGrad", infer=lambda dy, x, repeats, axis: spec(x.shape, dy.dtype),
       grad=lambda op, g: (apply("Repeat", g, **op.attrs), None))
def _repeat_grad(xp, dy, x, repeats, axis):
    """Sums the copies `Repeat` made of each slice back into it."""
    n = x.shape[axis]
    owner = xp.repeat(xp.arange(n), _repeats_array(xp, repeats, n))
    out = xp.zeros((n,) + x.shape[:axis] + x.shape[axis + 1:], dtype=dy.dtype)
    xp.add.at(out, owner, xp.moveaxis(dy, axis, 0))
    return xp.moveaxis(out, 0, axis)


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeats each slice of `input` along `axis` (the flattened input when axis is None).

    Args:
        input: a tensor.
        repeats: a non-negative int, or one per slice along `axis` (a list).
        axis: the dim to repeat along, or None.

    Example:
        >>> tl.repeat([1, 2], 2).numpy()
        array([1, 1, 2, 2], dtype=int32)
        >>> tl.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy()
        array([[1, 2],
               [3, 4],
               [3, 4]], dtype=int32)
    """
    x = convert_to_tensor(input)
    static = _static_or_tensor(repeats, "repeats", "Repeat")[0]
    if static is None:
        raise TypeError("Repeat: repeats must be known while tracing (ints)")
    if any(r < 0 for r in static):
        raise ValueError(f"Repeat: repeats must be non-negative, got {list(static)}")
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    axis = _static_int(axis, "axis", "Repeat")
    if x.shape.rank == 0:
        raise ValueError("Repeat: input must have rank >= 1 when axis is given")
    if x.shape.rank is not None:
        axis = normalize_axis(axis, x.shape.rank)
    scalar = np.ndim(repeats.numpy() if isinstance(repeats, Tensor) else repeats) == 0
    return apply("Repeat", x, repeats=static[0] if scalar else tuple(static), axis=axis)


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from 1-D coordinate tensors, as numpy.meshgrid.

    Args:
        *args: 1-D tensors of one dtype.
        indexing: 'xy' (default: the first two output dims are swapped, Cartesian) or 'ij'.

    Returns:
        A list of N tensors, each of the grid's shape.

    Example:
        >>> x, y = tl.meshgrid([1, 2, 3], [4, 5])
        >>> x.shape, y.numpy()[:, 0]
        (TensorShape([2, 3]), array([4, 5], dtype=int32))
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not args:
        return []
    tensors = [reshape(t, [-1]) for t in convert_same_dtype("meshgrid", list(args))]
    n = len(tensors)
    sizes = [t.shape[0] if t.shape[0] is not None else size(t) for t in tensors]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        position = i
        if indexing == "xy" and n > 1 and i < 2:
            position = 1 - i
        shape_i = [1] * n
        shape_i[position] = -1
        out.append(broadcast_to(reshape(t, shape_i), sizes))
    return out


# ------------------------------------------------------------------ scatter_nd and friends

def _scatter_check(indices, updates, shape, op_name):
    """Inference check: updates.shape == indices.shape[:-1] + shape[K:]."""
    _check_index_spec(indices, "indices", indices.shape.rank)
    if indices.shape.rank == 0:
        raise ValueError("indices must be at least 1-D")
    if indices.shape.rank is None or shape.rank is None or indices.shape[-1] is None or \
            updates.shape.rank is None:
        return
    k = indices.shape[-1]
    if k > shape.rank:
        raise ValueError(f"indices.shape[-1] ({k}) must be <= the rank of the output ({shape.rank})")
    want = TensorShape(list(indices.shape)[:-1] + list(shape)[k:])
    if not want.is_compatible_with(updates.shape):
        raise ValueError(f"updates must have shape indices.shape[:-1] + shape[{k}:] = {want}, got "
                         f"{updates.shape}")


def _scatter_coords(xp, indices, shape):
    """The advanced-index tuple of `indices` ([..., K]) into `shape`, checked, and the count."""
    k = indices.shape[-1]
    idx = indices.reshape((-1, k))
    limits = xp.asarray(np.asarray(shape[:k], np.int64)).astype(idx.dtype)
    bad = ((idx < 0) | (idx >= limits)).any(axis=-1)
    if bad.size and bool(bad.any()):
        flat = int(xp.argmax(bad))
        value = [int(v) for v in idx[flat].tolist()]
        raise InvalidArgumentError(f"indices[{_unravel(flat, indices.shape[:-1])}] = {value} does "
                                   f"not index into shape {list(shape)}")
    return tuple(idx[:, j] for j in _py.range(k)), idx.shape[0]


def _scatter_nd_infer(indices, updates, *shape_tensor, shape=None):
    out = _shape_from_spec(shape_tensor[0]) if shape_tensor else TensorShape(shape)
    _scatter_check(indices, updates, out, "ScatterNd")
    return spec(out, updates.dtype)


@defop("ScatterNd", infer=_scatter_nd_infer,
       grad=lambda op, dy: (None, gather_nd(dy, op.inputs[0])) + (None,) * (len(op.inputs) - 2))
def _scatter_nd(xp, indices, updates, *shape_tensor, shape=None):
    shape = _ints(shape_tensor[0]) if shape_tensor else shape
    coords, n = _scatter_coords(xp, indices, shape)
    out = xp.zeros(tuple(shape), dtype=updates.dtype)
    k = indices.shape[-1]
    xp.add.at(out, coords, updates.reshape((n,) + tuple(shape[k:])))  # duplicates add up
    return out


def scatter_nd(indices, updates, shape, name=None):
    """A zero tensor of `shape` with `updates` added at `indices` (duplicate indices add up).

    Args:
        indices: int tensor [..., K] of positions in the first K dims of the output.
        updates: tensor of shape indices.shape[:-1] + shape[K:].
        shape: the output shape (a list or 1-D int tensor).

    Raises:
        InvalidArgumentError: for an index out of range or mismatched shapes.

    Example:
        >>> tl.scatter_nd([[1], [3]], [9, 10], [5]).numpy()
        array([ 0,  9,  0, 10,  0], dtype=int32)
    """
    i = convert_to_tensor(indices)
    if i.dtype not in _INDEX_DTYPES:
        raise TypeError(f"ScatterNd: indices must be int32 or int64, got {i.dtype.name}")
    u = convert_to_tensor(updates)
    static, dynamic = _static_or_tensor(shape, "shape", "ScatterNd")
    if dynamic is None:
        return apply("ScatterNd", i, u, shape=static)
    return apply("ScatterNd", i, u, dynamic)


def _tensor_scatter_infer(tensor, indices, updates):
    if tensor.dtype is not updates.dtype:
        raise TypeError(f"tensor and updates must have one dtype, got {tensor.dtype.name} and "
                        f"{updates.dtype.name}")
    _scatter_check(indices, updates, tensor.shape, "TensorScatter")
    return spec(tensor.shape, tensor.dtype)


def _tensor_scatter_kernel(mode):
    def kernel(xp, tensor, indices, updates):
        return in_place(xp, tensor.copy(), indices, updates)

    def in_place(xp, out, indices, updates):
        """The scatter into `out` itself (a loop-owned buffer: a While gradient's sum of a
        captured tensor's row gradients); one row of axis 0 as `out[i] op= row`."""
        if indices.shape == (1, 1) and mode in ("add", "update"):
            row = int(indices[0, 0])
            if 0 <= row < out.shape[0]:
                value = updates.reshape(out.shape[1:])
                if mode == "add":
                    out[row] += value
                else:
                    out[row] = value
                return out
        coords, n = _scatter_coords(xp, indices, out.shape)
        k = indices.shape[-1]
        values = updates.reshape((n,) + out.shape[k:])
        if mode == "update":
            out[coords] = values
        elif mode == "add":
            xp.add.at(out, coords, values)
        elif mode == "sub":
            xp.subtract.at(out, coords, values)
        else:
            getattr(xp, mode).at(out, coords, values)
        return out
    kernel.in_place = in_place
    return kernel


def _scatter_update_grad(op, dy):
    indices, updates = op.inputs[1], op.inputs[2]
    return (apply("TensorScatterUpdate", dy, indices, updates * 0), None,
            gather_nd(dy, indices))


def _scatter_extremum_grad(op, dy):
    # TensorFlow's _TensorScatterMinOrMaxGrad: ties between tensor and updates share equally
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_hit = apply("Cast", apply("Equal", x, out), DstT=dy.dtype)
    y_hit = apply("Cast", apply("Equal", y, gather_nd(out, indices)), DstT=dy.dtype)
    hits = x_hit + apply("TensorScatterAdd", x_hit * 0, indices, y_hit)
    share = dy / hits
    return share * x_hit, None, gather_nd(share, indices) * y_hit


for _name, _mode, _grad in (
        ("TensorScatterUpdate", "update", _scatter_update_grad),
        ("TensorScatterAdd", "add", lambda op, dy: (dy, None, gather_nd(dy, op.inputs[1]))),
        ("TensorScatterSub", "sub", lambda op, dy: (dy, None, -gather_nd(dy, op.inputs[1]))),
        ("TensorScatterMax", "maximum", _scatter_extremum_grad),
        ("TensorScatterMin", "minimum", _scatter_extremum_grad)):
    _kernel = _tensor_scatter_kernel(_mode)
    defop(_name, infer=_tensor_scatter_infer, grad=_grad, in_place=_kernel.in_place)(_kernel)
del _name, _mode, _grad, _kernel


def _tensor_scatter(op_name, tensor, indices, updates):
    i = convert_to_tensor(indices)
    if i.dtype not in _INDEX_DTYPES:
        raise TypeError(f"{op_name}: indices must be int32 or int64, got {i.dtype.name}")
    t, u = convert_same_dtype(op_name, (tensor, updates))
    return apply(op_name, t, i, u)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices at `indices` replaced by `updates`.

    Args:
        tensor: the tensor to copy.
        indices: int tensor [..., K] of positions in the first K dims of `tensor`.
        updates: tensor of shape indices.shape[:-1] + tensor.shape[K:].

    Raises:
        InvalidArgumentError: for an index out of range or mismatched shapes.

    Example:
        >>> tl.tensor_scatter_nd_update([1, 2, 3], [[0], [2]], [9, 8]).numpy()
        array([9, 2, 8], dtype=int32)
    """
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` added at `indices` (duplicates add up)."""
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` subtracted at `indices` (duplicates add up)."""
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of `tensor` holding max(tensor, update) at `indices`."""
    return _tensor_scatter("TensorScatterMax", tensor, indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of `tensor` holding min(tensor, update) at `indices`."""
    return _tensor_scatter("TensorScatterMin", tensor, indices, updates)


# ------------------------------------------------------------------ reverse_sequence, ensure_shape

def _reverse_sequence_infer(x, seq_lengths, seq_axis, batch_axis=0):
    _check_index_spec(seq_lengths, "seq_lengths")
    if x.shape.rank is not None:
        s, b = normalize_axis(seq_axis, x.shape.rank), normalize_axis(batch_axis, x.shape.rank)
        if s == b:
            raise ValueError(f"seq_axis and batch_axis must differ, both are {s}")
        n, m = x.shape[b], seq_lengths.shape[0] if seq_lengths.shape.rank else None
        if n is not None and m is not None and n != m:
            raise ValueError(f"seq_lengths has {m} entries but input.shape[{b}] is {n}")
    return spec(x.shape, x.dtype)


@defop("ReverseSequence", infer=_reverse_sequence_infer,
       grad=lambda op, dy: (apply("ReverseSequence", dy, op.inputs[1], **op.attrs), None))
def _reverse_sequence(xp, x, seq_lengths, seq_axis, batch_axis=0):
    seq_axis, batch_axis = seq_axis % x.ndim, batch_axis % x.ndim
    length = x.shape[seq_axis]
    if seq_lengths.size and bool(((seq_lengths < 0) | (seq_lengths > length)).any()):
        raise InvalidArgumentError(f"seq_lengths must be in [0, {length}], got "
                                   f"{seq_lengths.tolist()}")
    view = [1] * x.ndim
    view[batch_axis] = x.shape[batch_axis]
    lengths = seq_lengths.astype(xp.int64).reshape(view)
    view = [1] * x.ndim
    view[seq_axis] = length
    j = xp.arange(length).reshape(view)
    index = xp.where(j < lengths, lengths - 1 - j, j)
    return xp.take_along_axis(x, xp.broadcast_to(index, x.shape), axis=seq_axis)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Reverses the first seq_lengths[b] elements along `seq_axis` of each batch entry b.

    Args:
        input: a tensor.
        seq_lengths: 1-D int tensor, one length per entry along `batch_axis`.
        seq_axis: the dim to reverse along.
        batch_axis: the batch dim (default 0).

    Raises:
        InvalidArgumentError: for a length outside [0, input.shape[seq_axis]].

    Example:
        >>> tl.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1).numpy()
        array([[2, 1, 3],
               [6, 5, 4]], dtype=int32)
    """
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    x = convert_to_tensor(input)
    lengths = _index_tensor(seq_lengths, "seq_lengths", "ReverseSequence")
    return apply("ReverseSequence", x, lengths, seq_axis=_static_int(seq_axis, "seq_axis", "x"),
                 batch_axis=0 if batch_axis is None else _static_int(batch_axis, "batch_axis", "x"))


def _ensure_shape_infer(x, shape):
    want = TensorShape(shape)
    if not x.shape.is_compatible_with(want):
        raise ValueError(f"Shape of tensor {list(x.shape)} is not compatible with expected shape "
                         f"{want}")
    return spec(x.shape.merge_with(want), x.dtype)


@defop("EnsureShape", infer=_ensure_shape_infer, grad=lambda op, dy: (dy,))
def _ensure_shape(xp, x, shape):
    if not TensorShape(x.shape).is_compatible_with(TensorShape(shape)):
        raise InvalidArgumentError(f"Shape of tensor {list(x.shape)} is not compatible with "
                                   f"expected shape {TensorShape(shape)}")
    return x


def ensure_shape(x, shape, name=None):
    """`x` itself, checked to have a shape compatible with `shape` (None dims match anything).

    While tracing, the result carries the merged static shape.

    Raises:
        InvalidArgumentError: if the shapes are not compatible.

    Example:
        >>> tl.ensure_shape(tl.ones([2, 3]), [None, 3]).shape
        TensorShape([2, 3])
    """
    shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
    dims = None if shape.rank is None else tuple(shape.as_list())
    return apply("EnsureShape", convert_to_tensor(x), shape=dims)


# ------------------------------------------------------------------ broadcasting undone
# Used by the autodiff driver (never by gradient rules): sums a gradient down to
# the shape of the input it belongs to, when that shape is only known at run time.

def _reduce_axes_to(shape_from, shape_to):
    lead = len(shape_from) - len(shape_to)
    axes = tuple(_py.range(lead)) + tuple(lead + i for i, d in enumerate(shape_to)
                                      if d == 1 and shape_from[lead + i] != 1)
    return axes


def sum_to_shape_of(g, x):
    """Sums `g` over broadcast axes so that it has the shape of `x`."""
    return apply("SumToShapeOf", g, x)


def broadcast_to_shape_of(x, like):
    """Broadcasts `x` to the shape of `like`."""
    return apply("BroadcastToShapeOf", x, like)


@defop("SumToShapeOf", fresh_output=True, infer=lambda g, x: spec(x.shape, g.dtype),
       grad=lambda op, dy: (broadcast_to_shape_of(dy, op.inputs[0]), None))
def _sum_to_shape_of(xp, g, x):
    if g.shape == x.shape:
        return g
    axes = _reduce_axes_to(g.shape, x.shape)
    return xp.sum(g, axis=axes, dtype=g.dtype).reshape(x.shape)


@defop("BroadcastToShapeOf", infer=lambda x, like: spec(like.shape, x.dtype),
       grad=lambda op, dy: (sum_to_shape_of(dy, op.inputs[0]), None))
def _broadcast_to_shape_of(xp, x, like):
    return xp.broadcast_to(x, like.shape)


# ------------------------------------------------------------------ InvertPermutation

def _invert_permutation_infer(x):
    if x.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"InvertPermutation needs int32 or int64, got {x.dtype.name}")
    if x.shape.rank not in (None, 1):
        raise ValueError(f"invert_permutation needs a 1-D tensor, got shape {x.shape}")
    return spec(x.shape, x.dtype)


@defop("InvertPermutation", infer=_invert_permutation_infer, differentiable=False)
def _invert_permutation(xp, x):
    n = x.shape[0]
    if n and (bool((x < 0).any()) or bool((x >= n).any()) or
              int(xp.unique(x).shape[0]) != n):
        raise InvalidArgumentError(f"invert_permutation: {x.tolist()[:20]} is not a "
                                   f"permutation of 0..{n - 1}")
    out = xp.empty_like(x)
    out[x] = xp.arange(n, dtype=x.dtype)
    return out


def invert_permutation(x, name=None):
    """The inverse permutation y with y[x[i]] = i.

    Raises:
        InvalidArgumentError: if x is not a permutation of 0..n-1.

    Example:
        >>> tl.math.invert_permutation([3, 4, 0, 2, 1]).numpy()
        array([2, 4, 3, 0, 1], dtype=int32)
    """
    return apply("InvertPermutation", convert_to_tensor(x))
