"""The rest of `tl.debugging`'s checks: signs, ranks, dtypes, finiteness.

Owns: `assert_positive`/`negative`/`non_positive`/`non_negative` (element-wise
comparisons with zero, built on `io.py`'s assertions, so they run on every call
of a graph), and the static checks TensorFlow makes while tracing (`assert_integer`,
`assert_type`, `assert_scalar`, `assert_rank_at_least`, `assert_rank_in`,
`assert_same_float_dtype`, `is_numeric_tensor`); `assert_all_finite` is `check_numerics`.
"""
from .. import dtypes as _dt
from ..op import convert_to_tensor
from ..tensor import is_tensor
from . import array as _array, math as _math
from .io import Assert, _comparison, check_numerics

__all__ = ["assert_positive", "assert_negative", "assert_non_positive", "assert_non_negative",
           "assert_integer", "assert_type", "assert_scalar", "assert_rank_at_least",
           "assert_rank_in", "assert_same_float_dtype", "assert_all_finite", "is_numeric_tensor"]


# name -> (symbol, comparison, zero on the left): x > 0 is checked as 0 < x, as TensorFlow words it
_SIGNS = {"assert_positive": ("<", "less", True), "assert_negative": ("<", "less", False),
          "assert_non_negative": ("<=", "less_equal", True),
          "assert_non_positive": ("<=", "less_equal", False)}


def _sign(fn_name, x, message, summarize):
    x = convert_to_tensor(x)
    zero = _array.zeros([], x.dtype)
    symbol, compare, zero_left = _SIGNS[fn_name]
    a, b = (zero, x) if zero_left else (x, zero)
    _comparison(fn_name, symbol, compare, a, b, message, summarize)


def assert_positive(x, message=None, summarize=None, name=None):
    """Asserts x > 0 element-wise, every time it runs (InvalidArgumentError otherwise)."""
    _sign("assert_positive", x, message, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    """Asserts x < 0 element-wise (see `assert_positive`)."""
    _sign("assert_negative", x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    """Asserts x >= 0 element-wise (see `assert_positive`)."""
    _sign("assert_non_negative", x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    """Asserts x <= 0 element-wise (see `assert_positive`)."""
    _sign("assert_non_positive", x, message, summarize)


def _prefix(message):
    return f"{message}. " if message else ""


def assert_integer(x, message=None, name=None):
    """Raises TypeError unless `x` has an integer dtype (a static check)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"assert_integer: {_prefix(message)}Expected integer type, got "
                        f"{x.dtype.name}")


def assert_type(tensor, tf_type, message=None, name=None):
    """Raises TypeError unless `tensor` has dtype `tf_type` (a static check)."""
    tensor = convert_to_tensor(tensor)
    want = _dt.as_dtype(tf_type)
    if tensor.dtype is not want:
        raise TypeError(f"assert_type: {_prefix(message)}tensor must be of type {want.name}, got "
                        f"{tensor.dtype.name}")


def assert_scalar(tensor, message=None, name=None):
    """Asserts that `tensor` is a scalar (ValueError from its static rank; returns None, as
    TensorFlow 2's)."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.rank is None:
        Assert(_math.equal(_array.rank(tensor), 0), ["rank = ", _array.rank(tensor)],
               message=f"assert_scalar: {_prefix(message)}Expected scalar. ")
    elif tensor.shape.rank != 0:
        raise ValueError(f"assert_scalar: {_prefix(message)}Expected scalar shape, saw shape: "
                         f"{tensor.shape}")


def _rank_check(fn, x, ok, wanted, message):
    x = convert_to_tensor(x)
    if x.shape.rank is not None:
        if not ok(x.shape.rank):
            raise ValueError(f"{fn}: {_prefix(message)}Tensor must have rank {wanted}. Received "
                             f"rank {x.shape.rank}, shape {x.shape}")
        return None
    return x


def assert_rank_at_least(x, rank, message=None, name=None):
    """Asserts that `x` has rank `rank` or more (static when the rank is known)."""
    rank = int(rank)
    x = _rank_check("assert_rank_at_least", x, lambda r: r >= rank, f"at least {rank}", message)
    if x is not None:
        Assert(_math.greater_equal(_array.rank(x), rank), ["rank = ", _array.rank(x)],
               message=f"assert_rank_at_least: {_prefix(message)}Tensor must have rank at least "
                       f"{rank}. ")


def assert_rank_in(x, ranks, message=None, name=None):
    """Asserts that the rank of `x` is one of `ranks` (static when the rank is known)."""
    ranks = [int(r) for r in ranks]
    x = _rank_check("assert_rank_in", x, lambda r: r in ranks, f"in {ranks}", message)
    if x is not None:
        r = _array.rank(x)
        held = _math.reduce_any(_math.equal(r, ranks))
        Assert(held, ["rank = ", r], message=f"assert_rank_in: {_prefix(message)}Tensor must have "
                                               f"rank in {ranks}. ")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating dtype of `tensors` (and `dtype`), float32 when there are none; ValueError
    if they differ or are not floating."""
    found = None if dtype is None else _dt.as_dtype(dtype)
    for t in tensors or ():
        d = t.dtype if hasattr(t, "dtype") else convert_to_tensor(t).dtype
        d = _dt.as_dtype(d)
        if found is not None and d is not found:
            raise ValueError(f"assert_same_float_dtype: expected dtype {found.name}, got "
                             f"{d.name}")
        found = d
    if found is None:
        return _dt.float32
    if not found.is_floating:
        raise ValueError(f"assert_same_float_dtype: expected a floating dtype, got {found.name}")
    return found


def assert_all_finite(x, message, name=None):
    """`x`, checked for NaN and Inf every time it runs (`check_numerics`)."""
    return check_numerics(x, message)


def is_numeric_tensor(tensor):
    """True for a tensor of a numeric dtype (integers, floats, complex; not bool or string)."""
    return is_tensor(tensor) and (tensor.dtype.is_integer or tensor.dtype.is_floating
                                  or tensor.dtype.is_complex)
