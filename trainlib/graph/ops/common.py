"""Helpers shared by the op modules, below all of them (math, array, nn... import it; it
imports none of them).

Owns: the dtype checks of unary ops (`dtype_infer` and `float_infer` for inference,
`float_tensor` for public functions) and `stable_descending`, the xp index sort that
TopKV2 and ArgSort share. Invariant: nothing here defines an op or calls one; a helper
lives here only when two op modules need it and neither sits below the other.
"""
from ..errors import InvalidArgumentError, op_error
from ..op import convert_to_tensor, spec


def dtype_infer(name, accepts, what, out_dtype=None):
    """An inference rule for a unary op: the input's shape, `out_dtype` (default: the input's
    dtype); a TypeError naming op `name` and `what` it needs when `accepts(dtype)` is false."""
    def infer(x, **attrs):
        if not accepts(x.dtype):
            raise TypeError(f"{name} needs {what} tensor, got {x.dtype.name}")
        return spec(x.shape, out_dtype or x.dtype)
    return infer


def float_infer(name):
    """An inference rule for a unary op of floating inputs: same shape and dtype."""
    return dtype_infer(name, lambda dtype: dtype.is_floating, "a floating-point")


def float_tensor(x, op_name=None):
    """A tensor of `x` (Python numbers by their own kind, as TensorFlow: `elu(2)` is an int32
    error). With `op_name`, a non-float tensor is an InvalidArgumentError now: eager calls skip
    inference, and numpy would silently widen ints."""
    x = convert_to_tensor(x)
    if op_name is not None and not x.dtype.is_floating:
        raise op_error(InvalidArgumentError, op_name,
                       f"needs a floating-point tensor, got {x.dtype.name}; cast it with tl.cast")
    return x


def stable_descending(xp, x, axis=-1):
    """Indices sorting `x` along `axis` from largest to smallest, ties in index order."""
    n = x.shape[axis]
    flipped = xp.argsort(xp.flip(x, axis), axis=axis, kind="stable")
    return xp.flip((n - 1) - flipped, axis)
