"""Bitwise ops on integer tensors (`tl.bitwise.*`) and the `& | ^ ~` operators' dispatch.

Owns: BitwiseAnd/Or/Xor, Invert, LeftShift, RightShift (integer dtypes only,
no gradient), and the operator functions that, as TensorFlow's, act
logically on bool tensors and bitwise on integer tensors.
"""
from ..op import apply, broadcast_shapes, convert_same_dtype, convert_to_tensor, defufunc, \
    same_dtype, spec
from . import math as _math

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _integer_infer(name):
    def infer(*xs):
        d = same_dtype(name, *xs) if len(xs) > 1 else xs[0].dtype
        if not d.is_integer:
            raise TypeError(f"{name} needs integer tensors, got {d.name}")
        return spec(broadcast_shapes(*[x.shape for x in xs]), d)
    return infer


for _name, _ufunc in (("BitwiseAnd", "bitwise_and"), ("BitwiseOr", "bitwise_or"),
                      ("BitwiseXor", "bitwise_xor"), ("Invert", "invert"),
                      ("LeftShift", "left_shift"), ("RightShift", "right_shift")):
    defufunc(_name, _ufunc, infer=_integer_infer(_name), differentiable=False, elementwise=True)


def _binary(op_name, x, y):
    x, y = convert_same_dtype(op_name, (x, y))
    if not x.dtype.is_integer:
        raise TypeError(f"{op_name}: needs integer tensors, got {x.dtype.name}")
    return apply(op_name, x, y)


def bitwise_and(x, y, name=None):
    """Elementwise x AND y, bit by bit, of integer tensors.

    Example:
        >>> tl.bitwise.bitwise_and(tl.constant([12]), 10).numpy()
        array([8], dtype=int32)
    """
    return _binary("BitwiseAnd", x, y)


def bitwise_or(x, y, name=None):
    """Elementwise x OR y, bit by bit, of integer tensors."""
    return _binary("BitwiseOr", x, y)


def bitwise_xor(x, y, name=None):
    """Elementwise x XOR y, bit by bit, of integer tensors."""
    return _binary("BitwiseXor", x, y)


def left_shift(x, y, name=None):
    """Elementwise x << y of integer tensors."""
    return _binary("LeftShift", x, y)


def right_shift(x, y, name=None):
    """Elementwise x >> y of integer tensors (arithmetic for signed dtypes)."""
    return _binary("RightShift", x, y)


def invert(x, name=None):
    """Elementwise NOT, bit by bit, of an integer tensor (`~x`)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"Invert: needs an integer tensor, got {x.dtype.name}")
    return apply("Invert", x)


# -- the Python operators: logical on bool tensors, bitwise on integer tensors (as TensorFlow)

def and_operator(x, y):
    """`x & y`."""
    x, y = convert_same_dtype("and", (x, y))
    return _math.logical_and(x, y) if x.dtype.is_bool else bitwise_and(x, y)


def or_operator(x, y):
    """`x | y`."""
    x, y = convert_same_dtype("or", (x, y))
    return _math.logical_or(x, y) if x.dtype.is_bool else bitwise_or(x, y)


def xor_operator(x, y):
    """`x ^ y`."""
    x, y = convert_same_dtype("xor", (x, y))
    return _math.logical_xor(x, y) if x.dtype.is_bool else bitwise_xor(x, y)


def invert_operator(x):
    """`~x`."""
    x = convert_to_tensor(x)
    return _math.logical_not(x) if x.dtype.is_bool else invert(x)
