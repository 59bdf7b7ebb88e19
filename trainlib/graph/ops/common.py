"""Helpers shared by the op modules, below all of them (math, array, nn... import it; it
imports none of them).

Owns: the floating-point checks of unary float ops (`float_infer` for inference,
`float_tensor` for public functions) and `stable_descending`, the xp index sort that
TopKV2 and ArgSort share. Invariant: nothing here defines an op or calls one; a helper
lives here only when two op modules need it and neither sits below the other.
"""
from ..errors import InvalidArgumentError, op_error
from ..op import convert_to_tensor, spec


def float_infer(name):
    """An inference rule for a unary op of floating inputs: same shape and dtype, a
    TypeError naming op `name` for other dtypes."""
    def infer(x, **attrs):
        if not x.dtype.is_floating:
            raise TypeError(f"{name} needs a floating-point tensor, got {x.dtype.name}")
        return spec(x.shape, x.dtype)
    return infer


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
