"""Math ops: elementwise arithmetic, comparisons, matmul, reductions.

Owns: the OpDefs and public functions of `tl.math` (re-exported as `tl.*`).
Invariants: kernels produce exactly the dtype the inference rule says
(numpy would widen integer sums to int64; kernels pass dtype=);
binary ops take same-dtype inputs, converted by `convert_same_dtype`;
gradient rules ignore broadcasting (the autodiff driver sums it away).
"""
from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_same_dtype, convert_to_tensor, defop, same_dtype, spec

# ------------------------------------------------------------------ helpers


def _binary_infer(name, out_dtype=None, allowed=None):
    def infer(a, b):
        d = same_dtype(name, a, b)
        if allowed is not None and not allowed(d):
            raise TypeError(f"{name} does not support dtype {d.name}")
        return spec(broadcast_shapes(a.shape, b.shape), out_dtype or d)
    return infer


def _unary_infer(name, allowed=None, out_dtype=None):
    def infer(x):
        if allowed is not None and not allowed(x.dtype):
            raise TypeError(f"{name} does not support dtype {x.dtype.name}")
        return spec(x.shape, out_dtype or x.dtype)
    return infer


def _numeric(d):
    return not d.is_bool and d is not _dt.resource


def _floating(d):
    return d.is_floating or d.is_complex


def binary(name, a, b, op_name):
    a, b = convert_same_dtype(op_name, (a, b))
    return apply(op_name, a, b)


# ------------------------------------------------------------------ arithmetic

@defop("AddV2", infer=_binary_infer("AddV2", allowed=_numeric), elementwise=True,
       grad=lambda op, dy: (dy, dy))
def _add(xp, a, b):
    return xp.add(a, b)


@defop("Sub", infer=_binary_infer("Sub", allowed=_numeric), elementwise=True,
       grad=lambda op, dy: (dy, -dy))
def _sub(xp, a, b):
    return xp.subtract(a, b)


@defop("Mul", infer=_binary_infer("Mul", allowed=_numeric), elementwise=True,
       grad=lambda op, dy: (dy * op.inputs[1], dy * op.inputs[0]))
def _mul(xp, a, b):
    return xp.multiply(a, b)


def add(x, y, name=None):
    """Elementwise x + y with broadcasting.

    Args:
        x, y: tensors or Python values of one dtype.

    Returns:
        A tensor of that dtype and the broadcast shape.

    Raises:
        InvalidArgumentError: if the dtypes differ or the shapes do not broadcast.

    Example:
        >>> tl.add(tl.constant([1.0, 2.0]), 1.0)
        <tl.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """
    return binary("add", x, y, "AddV2")


def subtract(x, y, name=None):
    """Elementwise x - y with broadcasting (see `add`)."""
    return binary("subtract", x, y, "Sub")


def multiply(x, y, name=None):
    """Elementwise x * y with broadcasting (see `add`)."""
    return binary("multiply", x, y, "Mul")


# ------------------------------------------------------------------ matmul

def _matmul_infer(a, b, transpose_a=False, transpose_b=False):
    d = same_dtype("MatMul", a, b)
    if a.shape.rank is not None and a.shape.rank < 2 or b.shape.rank is not None and b.shape.rank < 2:
        raise ValueError(f"MatMul needs inputs of rank >= 2, got shapes {a.shape} and {b.shape}")
    if a.shape.rank is None or b.shape.rank is None:
        return spec(None, d)
    m, k1 = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"MatMul inner dimensions differ: {a.shape} @ {b.shape} "
                         f"(contracting {k1} with {k2})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return spec(batch.concatenate([m, n]), d)


def _matmul_grad(op, dy):
    a, b = op.inputs
    ta, tb = op.attrs.get("transpose_a", False), op.attrs.get("transpose_b", False)
    if not ta and not tb:
        return (matmul(dy, b, transpose_b=True), matmul(a, dy, transpose_a=True))
    if not ta and tb:
        return (matmul(dy, b), matmul(dy, a, transpose_a=True))
    if ta and not tb:
        return (matmul(b, dy, transpose_b=True), matmul(a, dy))
    return (matmul(b, dy, transpose_a=True, transpose_b=True),
            matmul(dy, a, transpose_a=True, transpose_b=True))


@defop("MatMul", infer=_matmul_infer, grad=_matmul_grad)
def _matmul(xp, a, b, transpose_a=False, transpose_b=False):
    if transpose_a:
        a = xp.swapaxes(a, -1, -2)
    if transpose_b:
        b = xp.swapaxes(b, -1, -2)
    return xp.matmul(a, b)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product of the last two dims, batch dims broadcast.

    Args:
        a, b: tensors of rank >= 2 and one dtype.
        transpose_a, transpose_b: transpose the last two dims first.

    Returns:
        A tensor of shape batch + [m, n].

    Raises:
        InvalidArgumentError: on mismatched inner dims or dtypes.

    Example:
        >>> tl.matmul(tl.ones([2, 3]), tl.ones([3, 4])).shape
        TensorShape([2, 4])
    """
    a, b = convert_same_dtype("MatMul", (a, b))
    if transpose_a or transpose_b:
        return apply("MatMul", a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))
    return apply("MatMul", a, b)


def negative(x, name=None):
    """Elementwise -x."""
    return apply("Neg", convert_to_tensor(x))


@defop("Neg", infer=_unary_infer("Neg", allowed=_numeric), elementwise=True,
       grad=lambda op, dy: (negative(dy),))
def _neg(xp, x):
    return xp.negative(x)


# ------------------------------------------------------------------ broadcasting undone
# Used by the autodiff driver (never by gradient rules): sums a gradient down to
# the shape of the input it belongs to, when that shape is only known at run time.

def _reduce_axes_to(shape_from, shape_to):
    lead = len(shape_from) - len(shape_to)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape_to)
                                      if d == 1 and shape_from[lead + i] != 1)
    return axes


def sum_to_shape_of(g, x):
    """Sums `g` over broadcast axes so that it has the shape of `x`."""
    return apply("SumToShapeOf", g, x)


def broadcast_to_shape_of(x, like):
    """Broadcasts `x` to the shape of `like`."""
    return apply("BroadcastToShapeOf", x, like)


@defop("SumToShapeOf", infer=lambda g, x: spec(x.shape, g.dtype),
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
