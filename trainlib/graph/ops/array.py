"""Array ops: creation (constants, zeros, eye...), shapes, reshaping, indexing, gathering.

Owns: the OpDefs and public functions for building and rearranging arrays.
Invariants: `Const` holds an array of the active array module and is the only
way a Python value enters a graph; `Placeholder` is fed, never computed.
"""
from .. import dtypes as _dt
from ..context import state
from ..op import apply, convert_to_tensor, defop, normalize_axis, spec
from ..tensor import Tensor, is_tensor, to_array


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
        return value if dtype is None or value.dtype is _dt.as_dtype(dtype) else \
            apply("Cast", value, DstT=_dt.as_dtype(dtype))
    array = to_array(state.xp, value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if array.size == 1:
            array = state.xp.broadcast_to(array.reshape(()), shape).copy()
        else:
            array = array.reshape(shape)
    if state.graph is None:
        return Tensor(array)
    return apply("Const", value=array, dtype=_dt.from_numpy(array.dtype))


def identity(input, name=None):  # noqa: A002 -- TensorFlow's argument name
    """Returns a tensor with the same value (a new graph node while tracing)."""
    return apply("Identity", convert_to_tensor(input))


def _unpack_infer(x, num, axis=0):
    axis = normalize_axis(axis, x.shape.rank, "Unpack")
    dims = list(x.shape)
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Unpack of {num} values along axis {axis} of a tensor of shape {x.shape}")
    del dims[axis]
    return tuple(spec(dims, x.dtype) for _ in range(num))


def _unpack_grad(op, *dys):
    from .array import stack  # noqa: PLC0415 -- same module, defined below
    return (stack(list(dys), axis=op.attrs["axis"]),)


@defop("Unpack", infer=_unpack_infer, grad=_unpack_grad, num_outputs=None)
def _unpack(xp, x, num, axis=0):
    return tuple(xp.take(x, i, axis=axis) for i in range(num))


@defop("ZerosLike", infer=lambda x: spec(x.shape, x.dtype), differentiable=False, elementwise=True)
def _zeros_like(xp, x):
    return xp.zeros_like(x)


@defop("OnesLike", infer=lambda x: spec(x.shape, x.dtype), differentiable=False, elementwise=True)
def _ones_like(xp, x):
    return xp.ones_like(x)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of zeros with the shape (and by default the dtype) of `input`."""
    x = convert_to_tensor(input)
    out = apply("ZerosLike", x)
    return out if dtype is None or _dt.as_dtype(dtype) is x.dtype else apply("Cast", out, DstT=_dt.as_dtype(dtype))


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of ones with the shape (and by default the dtype) of `input`."""
    x = convert_to_tensor(input)
    out = apply("OnesLike", x)
    return out if dtype is None or _dt.as_dtype(dtype) is x.dtype else apply("Cast", out, DstT=_dt.as_dtype(dtype))
