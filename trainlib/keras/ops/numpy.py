"""`trainlib.keras.ops.numpy`: Keras 3's NumPy-style ops over trainlib's ops.

Owns: Keras's signatures and semantics (NumPy's argument forms: `axis=None` means all axes,
`split(x, indices_or_sections)`, `take` with negative indices, `where` with one argument,
Keras's dtype promotion) mapped onto trainlib's ops by argument adaptation and composition.
Invariants: no kernel lives here; every function calls trainlib ops (defined once under
`trainlib.graph.ops`), so each works eagerly, inside `tl.function` and under `GradientTape`,
and the differentiable ones get their gradients from the ops they are made of. Shapes that
decide the structure of a composition (`kron`, `diagonal` offsets...) must be static.
"""
import builtins as _py
import math as _pymath

import numpy as _np

from ...graph import dtypes as _dt
from ...graph.ops import array as _a
from ...graph.ops import bitwise as _b
from ...graph.ops import complex as _cx
from ...graph.ops import linalg as _la
from ...graph.ops import math as _m
from ...graph.ops import numeric as _num
from ...graph.tensor import _TensorBase
from . import core as _core
from ._convert import floatx_dtype as _floatx, axes as _axes, dtype_or as _dtype_or, floating as _float, promote as _promote
from ._convert import ndim as _ndim, result_type as _result_type, small_int as _small_int
from ._convert import spec_of as _spec_of, strong as _strong
from ._convert import static_shape as _static_shape, tensor as _t

__all__ = [
    "abs", "absolute", "add", "all", "allclose", "amax", "amin", "angle", "any", "append", "arange",
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin",
    "argpartition", "argsort", "array", "array_split", "average", "bartlett", "bincount",
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "blackman", "broadcast_to", "cbrt", "ceil", "clip",
    "concatenate", "conj", "conjugate", "copy", "corrcoef", "correlate", "cos", "cosh",
    "count_nonzero", "cross", "cumprod", "cumsum", "deg2rad", "diag", "diagflat", "diagonal", "diff",
    "digitize", "divide", "divide_no_nan", "dot", "dsplit", "dstack", "einsum", "empty", "empty_like",
    "equal", "exp", "exp2", "expand_dims", "expm1", "eye", "fabs", "flip", "fliplr", "flipud",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "full", "full_like", "gcd", "geomspace",
    "get_item", "greater", "greater_equal", "hamming", "hanning", "heaviside", "histogram", "hsplit",
    "hstack", "hypot", "i0", "identity", "imag", "inner", "isclose", "isfinite", "isin", "isinf",
    "isnan", "isneginf", "isposinf", "isreal", "kaiser", "kron", "lcm", "ldexp", "left_shift", "less",
    "less_equal", "linspace", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logspace", "matmul", "max",
    "maximum", "mean", "median", "meshgrid", "min", "minimum", "mod", "moveaxis", "multiply",
    "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "ndim", "negative", "nextafter", "nonzero", "not_equal", "ones", "ones_like", "outer", "pad",
    "percentile", "power", "prod", "ptp", "quantile", "rad2deg", "ravel", "real", "reciprocal",
    "repeat", "reshape", "right_shift", "roll", "rot90", "round", "searchsorted", "select", "sign",
    "signbit", "sin", "sinc", "sinh", "size", "slogdet", "sort", "split", "sqrt", "square", "squeeze",
    "stack", "std", "subtract", "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh",
    "tensordot", "tile", "trace", "transpose", "trapezoid", "tri", "tril", "triu", "true_divide",
    "trunc", "unique", "unravel_index", "vander", "var", "vdot", "vectorize", "view", "vsplit",
    "vstack", "where", "zeros", "zeros_like",
]


def _binary(fn, doc, name=None):
    """A two-argument keras.ops function: `fn` on the arguments promoted as Keras does."""
    def op(x1, x2):
        a, b = _promote(x1, x2)
        return fn(a, b)
    op.__doc__ = doc
    if name is not None:
        op.__name__ = op.__qualname__ = name
    return op


_rank = _ndim


def _flatten(x):
    return _a.reshape(x, [-1])


def _axis_or_flat(x, axis):
    """(x, axis): x flattened with axis 0 when axis is None, as NumPy's `axis=None`."""
    if axis is None:
        return _flatten(x), 0
    return x, int(axis) % _py.max(_rank(x), 1)


def _reduce_axis(x, axis):
    return None if axis is None else list(_axes(axis, _rank(x)))


# ------------------------------------------------------------------ elementwise, one input

def _float_unary(fn, doc):
    def op(x):
        return fn(_float(x))
    op.__doc__ = doc
    return op


def abs(x):  # noqa: A001 -- NumPy's name
    """Elementwise absolute value (NumPy's `abs`)."""
    x = _t(x)
    return x if x.dtype.is_bool or x.dtype.is_unsigned else _m.abs(x)


absolute = abs


def fabs(x):
    """Elementwise absolute value as a float (NumPy's `fabs`: integers become float32)."""
    return _m.abs(_float(x))


def negative(x):
    """Elementwise `-x`."""
    return _m.negative(_t(x))


def sign(x):
    """Elementwise sign (-1, 0, 1) in the dtype of `x`."""
    return _m.sign(_t(x))


def square(x):
    """Elementwise `x * x` (bool becomes int32)."""
    x = _t(x)
    if x.dtype.is_bool:
        x = _m.cast(x, _dt.int32)
    return _m.square(x)


def _floor_like(fn):
    def op(x):
        x = _t(x)
        return fn(x) if x.dtype.is_floating else _m.cast(x, _floatx())
    return op


ceil = _floor_like(_m.ceil)
ceil.__doc__ = "Elementwise ceiling (integers become float32, as Keras)."
floor = _floor_like(_m.floor)
floor.__doc__ = "Elementwise floor (integers become float32, as Keras)."


def trunc(x):
    """Elementwise rounding toward zero (integers keep their dtype)."""
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    return _m.where(_m.less(x, 0), _m.ceil(x), _m.floor(x))


def round(x, decimals=0):  # noqa: A001 -- NumPy's name
    """Elementwise rounding to `decimals` places, halves to even."""
    x = _t(x)
    if not x.dtype.is_floating:
        if decimals >= 0:
            return x
        f = 10 ** (-decimals)
        return _m.cast(_m.round(_m.cast(x, _floatx()) / f) * f, x.dtype)
    if decimals == 0:
        return _m.round(x)
    f = _m.cast(10.0 ** decimals, x.dtype)
    return _m.round(x * f) / f


sqrt = _float_unary(_m.sqrt, "Elementwise square root (integers become float32).")
exp = _float_unary(_m.exp, "Elementwise `e ** x`.")
expm1 = _float_unary(_m.expm1, "Elementwise `e ** x - 1`, accurate near 0.")
log = _float_unary(_m.log, "Elementwise natural logarithm.")
log1p = _float_unary(_m.log1p, "Elementwise `log(1 + x)`, accurate near 0.")
sin = _float_unary(_m.sin, "Elementwise sine.")
cos = _float_unary(_m.cos, "Elementwise cosine.")
tan = _float_unary(_m.tan, "Elementwise tangent.")
sinh = _float_unary(_m.sinh, "Elementwise hyperbolic sine.")
cosh = _float_unary(_m.cosh, "Elementwise hyperbolic cosine.")
tanh = _float_unary(_m.tanh, "Elementwise hyperbolic tangent.")
arcsin = _float_unary(_m.asin, "Elementwise inverse sine.")
arccos = _float_unary(_m.acos, "Elementwise inverse cosine.")
arctan = _float_unary(_m.atan, "Elementwise inverse tangent.")
arcsinh = _float_unary(_m.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = _float_unary(_m.acosh, "Elementwise inverse hyperbolic cosine.")
arctanh = _float_unary(_m.atanh, "Elementwise inverse hyperbolic tangent.")
reciprocal = _float_unary(_m.reciprocal, "Elementwise `1 / x`.")


def exp2(x):
    """Elementwise `2 ** x`."""
    x = _float(x)
    return _m.exp(x * _m.cast(_np.log(2.0), x.dtype))


def log2(x):
    """Elementwise base-2 logarithm."""
    x = _float(x)
    return _m.log(x) / _m.cast(_np.log(2.0), x.dtype)


def log10(x):
    """Elementwise base-10 logarithm."""
    x = _float(x)
    return _m.log(x) / _m.cast(_np.log(10.0), x.dtype)


def cbrt(x):
    """Elementwise real cube root."""
    x = _float(x)
    return _m.sign(x) * _m.pow(_m.abs(x), _m.cast(1.0 / 3.0, x.dtype))


def deg2rad(x):
    """Degrees to radians."""
    x = _float(x)
    return x * _m.cast(_np.pi / 180.0, x.dtype)


def rad2deg(x):
    """Radians to degrees."""
    x = _float(x)
    return x * _m.cast(180.0 / _np.pi, x.dtype)


def sinc(x):
    """Normalized sinc, `sin(pi x) / (pi x)`, 1 at 0."""
    x = _float(x)
    zero = _m.equal(x, 0)
    safe = _m.where(zero, _a.ones_like(x), x)  # no 0/0 (its gradient would be NaN)
    pix = safe * _m.cast(_np.pi, x.dtype)
    return _m.where(zero, _a.ones_like(x), _m.sin(pix) / pix)


def i0(x):
    """Modified Bessel function of the first kind, order 0."""
    return _num.i0(_float(x))


def signbit(x):
    """Elementwise: whether the sign bit is set (True for -0.0 too)."""
    x = _t(x)
    if x.dtype.is_bool or x.dtype.is_unsigned:
        return _m.cast(_a.zeros_like(x), _dt.bool)
    if not x.dtype.is_floating:
        return _m.less(x, 0)
    return _num.signbit(x)


def isfinite(x):
    """Elementwise: finite (integers always are)."""
    x = _t(x)
    return _m.is_finite(x) if x.dtype.is_floating else _m.cast(_a.ones_like(x), _dt.bool)


def isinf(x):
    """Elementwise: infinite."""
    x = _t(x)
    return _m.is_inf(x) if x.dtype.is_floating else _m.cast(_a.zeros_like(x), _dt.bool)


def isnan(x):
    """Elementwise: NaN."""
    x = _t(x)
    return _m.is_nan(x) if x.dtype.is_floating else _m.cast(_a.zeros_like(x), _dt.bool)


def isneginf(x):
    """Elementwise: equal to -inf."""
    x = _t(x)
    return _m.logical_and(isinf(x), _m.less(x, 0)) if x.dtype.is_floating else isinf(x)


def isposinf(x):
    """Elementwise: equal to +inf."""
    x = _t(x)
    return _m.logical_and(isinf(x), _m.greater(x, 0)) if x.dtype.is_floating else isinf(x)


def isreal(x):
    """Elementwise: the imaginary part is zero (always True for real dtypes)."""
    x = _t(x)
    if x.dtype.is_complex:
        return _m.equal(_cx.imag(x), 0.0)
    return _m.cast(_a.ones_like(x), _dt.bool)


def real(x):
    """The real part (real tensors are returned as they are)."""
    x = _t(x)
    return _cx.real(x) if x.dtype.is_complex else x


def imag(x):
    """The imaginary part (zeros for real tensors)."""
    x = _t(x)
    return _cx.imag(x) if x.dtype.is_complex else _a.zeros_like(x)


def conj(x):
    """The complex conjugate (real tensors are returned as they are)."""
    x = _t(x)
    return _cx.conj(x) if x.dtype.is_complex else x


conjugate = conj


def angle(x):
    """The complex argument atan2(imag, real); for real tensors 0 where x >= 0 and pi where
    x < 0 (float)."""
    x = _t(x)
    if x.dtype.is_complex:
        return _m.atan2(_cx.imag(x), _cx.real(x))
    x = _float(x)
    return _m.where(_m.less(x, 0), _a.fill(_a.shape(x), _t(_np.pi, x.dtype)), _a.zeros_like(x))


def copy(x):
    """A copy of `x`."""
    return _a.identity(_t(x))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """`x` with NaN, +inf and -inf replaced (by 0, the dtype's max and min by default)."""
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    info = _np.finfo(x.dtype.np)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = _m.where(_m.is_nan(x), _a.fill(_a.shape(x), _t(float(nan), x.dtype)), x)
    x = _m.where(isposinf(x), _a.fill(_a.shape(x), _t(float(big), x.dtype)), x)
    return _m.where(isneginf(x), _a.fill(_a.shape(x), _t(float(small), x.dtype)), x)


# ------------------------------------------------------------------ elementwise, two inputs

def add(x1, x2):
    """Elementwise `x1 + x2` with Keras's dtype promotion."""
    a, b = _promote(x1, x2)
    if a.dtype.is_bool:
        return _m.logical_or(a, b)
    return _m.add(a, b)


subtract = _binary(_m.subtract, "Elementwise `x1 - x2` with Keras's dtype promotion.", "subtract")


def multiply(x1, x2):
    """Elementwise `x1 * x2` with Keras's dtype promotion."""
    a, b = _promote(x1, x2)
    if a.dtype.is_bool:
        return _m.logical_and(a, b)
    return _m.multiply(a, b)


def divide(x1, x2):
    """Elementwise true division (integers become float32)."""
    a, b = _promote(x1, x2, floating=True)
    return _m.divide(a, b)


true_divide = divide


def divide_no_nan(x1, x2):
    """Elementwise `x1 / x2`, 0 where `x2` is 0."""
    a, b = _promote(x1, x2, floating=True)
    return _m.divide_no_nan(a, b)


def _bool_as_int32(a, b):
    """(a, b), promoted operands, as int32 when they are bool (integer division's rule)."""
    if a.dtype.is_bool:
        return _m.cast(a, _dt.int32), _m.cast(b, _dt.int32)
    return a, b


def floor_divide(x1, x2):
    """Elementwise floor division (NumPy's `//`)."""
    return _m.floordiv(*_bool_as_int32(*_promote(x1, x2)))


def mod(x1, x2):
    """Elementwise remainder with the sign of the divisor (NumPy's `%`)."""
    # Keras converts both first: scalars are not weak
    return _m.floormod(*_bool_as_int32(*_promote(_strong(x1), _strong(x2))))


def fmod(x1, x2):
    """Elementwise remainder with the sign of the dividend (C's fmod)."""
    return _m.truncatemod(*_bool_as_int32(*_promote(x1, x2)))


power = _binary(_m.pow, "Elementwise `x1 ** x2` with Keras's dtype promotion.", "power")


maximum = _binary(_m.maximum, 'Elementwise maximum (NaN propagates).', "maximum")


minimum = _binary(_m.minimum, 'Elementwise minimum (NaN propagates).', "minimum")


def fmax(x1, x2):
    """Elementwise maximum ignoring NaN (NaN only where both are)."""
    a, b = _promote(x1, x2)
    if not a.dtype.is_floating:
        return _m.maximum(a, b)
    return _m.where(_m.is_nan(a), b, _m.where(_m.is_nan(b), a, _m.maximum(a, b)))


def fmin(x1, x2):
    """Elementwise minimum ignoring NaN (NaN only where both are)."""
    a, b = _promote(x1, x2)
    if not a.dtype.is_floating:
        return _m.minimum(a, b)
    return _m.where(_m.is_nan(a), b, _m.where(_m.is_nan(b), a, _m.minimum(a, b)))


def arctan2(x1, x2):
    """Elementwise `atan2(x1, x2)` (the angle of the point (x2, x1))."""
    a, b = _promote(_strong(x1), _strong(x2), floating=True)  # scalars are not weak, as Keras
    return _m.atan2(a, b)


def hypot(x1, x2):
    """Elementwise `sqrt(x1**2 + x2**2)`."""
    a, b = _promote(x1, x2, floating=True)
    big = _m.maximum(_m.abs(a), _m.abs(b))
    small = _m.minimum(_m.abs(a), _m.abs(b))
    ratio = _m.divide_no_nan(small, big)
    return big * _m.sqrt(1 + ratio * ratio)


def logaddexp(x1, x2):
    """Elementwise `log(exp(x1) + exp(x2))`, stable."""
    a, b = _promote(x1, x2, floating=True)
    big = _m.maximum(a, b)
    return big + _m.log1p(_m.exp(-_m.abs(a - b)))


def logaddexp2(x1, x2):
    """Elementwise `log2(2**x1 + 2**x2)`, stable."""
    a, b = _promote(x1, x2, floating=True)
    ln2 = _m.cast(_np.log(2.0), a.dtype)
    big = _m.maximum(a, b)
    return big + _m.log1p(_m.exp(-_m.abs(a - b) * ln2)) / ln2


def heaviside(x1, x2):
    """Heaviside step: 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    a, b = _promote(x1, x2)
    if not a.dtype.is_floating:
        a, b = _m.cast(a, _floatx()), _m.cast(b, _floatx())
    one, zero = _a.ones_like(a), _a.zeros_like(a)
    b = b + zero
    return _m.where(_m.less(a, 0), zero, _m.where(_m.greater(a, 0), one, b))


def ldexp(x1, x2):
    """Elementwise `x1 * 2 ** x2` (x2 integer)."""
    x2 = _t(x2)
    if x2.dtype.is_floating:
        raise TypeError(f"ldexp needs an integer exponent, got {x2.dtype.name}")
    a = _float(x1)
    return a * _m.pow(_m.cast(2.0, a.dtype), _m.cast(x2, a.dtype))


def nextafter(x1, x2):
    """The next representable float after `x1` toward `x2`."""
    a, b = _promote(x1, x2, floating=True)
    return _num.nextafter(a, b)


gcd = _binary(_num.gcd, 'Elementwise greatest common divisor of integers.', "gcd")


lcm = _binary(_num.lcm, 'Elementwise least common multiple of integers.', "lcm")


equal = _binary(_m.equal, "Elementwise `x1 == x2`.", "equal")
not_equal = _binary(_m.not_equal, "Elementwise `x1 != x2`.", "not_equal")
greater = _binary(_m.greater, "Elementwise `x1 > x2`.", "greater")
greater_equal = _binary(_m.greater_equal, "Elementwise `x1 >= x2`.", "greater_equal")
less = _binary(_m.less, "Elementwise `x1 < x2`.", "less")
less_equal = _binary(_m.less_equal, "Elementwise `x1 <= x2`.", "less_equal")


def _bool(x):
    x = _t(x)
    return x if x.dtype.is_bool else _m.not_equal(x, _m.cast(0, x.dtype))


def logical_and(x1, x2):
    """Elementwise logical and (non-zero is True)."""
    return _m.logical_and(_bool(x1), _bool(x2))


def logical_or(x1, x2):
    """Elementwise logical or (non-zero is True)."""
    return _m.logical_or(_bool(x1), _bool(x2))


def logical_xor(x1, x2):
    """Elementwise logical xor (non-zero is True)."""
    return _m.not_equal(_bool(x1), _bool(x2))


def logical_not(x):
    """Elementwise logical not (non-zero is True)."""
    return _m.logical_not(_bool(x))


def _bitwise(fn, doc):
    def op(x, y):
        a, b = _promote(x, y)
        return fn(a, b)
    op.__doc__ = doc
    return op


bitwise_and = _bitwise(_b.bitwise_and, "Elementwise bitwise and of integers (or bools).")
bitwise_or = _bitwise(_b.bitwise_or, "Elementwise bitwise or of integers (or bools).")
bitwise_xor = _bitwise(_b.bitwise_xor, "Elementwise bitwise xor of integers (or bools).")
bitwise_left_shift = _bitwise(_b.left_shift, "Elementwise `x << y` of integers.")
bitwise_right_shift = _bitwise(_b.right_shift, "Elementwise `x >> y` of integers (arithmetic).")
left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


def bitwise_invert(x):
    """Elementwise bitwise not (logical not for bools)."""
    x = _t(x)
    return _m.logical_not(x) if x.dtype.is_bool else _b.invert(x)


bitwise_not = bitwise_invert


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Elementwise `|x1 - x2| <= atol + rtol * |x2|` (NumPy's isclose)."""
    a, b = _promote(x1, x2)
    if not a.dtype.is_floating:
        return _m.equal(a, b)
    close = _m.less_equal(_m.abs(a - b), _m.cast(atol, a.dtype) + _m.cast(rtol, a.dtype) * _m.abs(b))
    close = _m.logical_or(close, _m.logical_and(_m.equal(a, b), _m.is_inf(a)))
    if equal_nan:
        close = _m.logical_or(close, _m.logical_and(_m.is_nan(a), _m.is_nan(b)))
    return close


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether all elements are close (see `isclose`)."""
    return _m.reduce_all(isclose(x1, x2, rtol, atol, equal_nan))


def clip(x, x_min, x_max):
    """`x` limited to [x_min, x_max], in x's dtype (bool becomes int32), as Keras."""
    x = _t(x)
    if x.dtype.is_bool:
        x = _m.cast(x, _dt.int32)
    lo, hi = _t(x_min, x.dtype), _t(x_max, x.dtype)
    return _m.minimum(_m.maximum(x, lo), hi)


def where(condition, x1=None, x2=None):
    """`x1` where `condition` else `x2`; with one argument, a tuple of index arrays (`nonzero`)."""
    if (x1 is None) != (x2 is None):
        raise ValueError("keras.ops.where needs both x1 and x2, or neither")
    if x1 is None:
        return nonzero(condition)
    c = _bool(condition)
    a, b = _promote(x1, x2)
    return _m.where(c, a, b)


def select(condlist, choicelist, default=0):
    """From `choicelist`, the entry of the first true condition of `condlist` (else default)."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select needs as many conditions as choices, got {len(condlist)} and "
                         f"{len(choicelist)}")
    *choices, out = _promote(*choicelist, default)  # `out` starts as the default
    for c, v in reversed(list(zip(condlist, choices))):
        out = _m.where(_bool(c), v, out)  # where broadcasts condition, choice and default
    return out


# ------------------------------------------------------------------ reductions

def sum(x, axis=None, keepdims=False):  # noqa: A001 -- NumPy's name
    """Sum over `axis` (None: all); bool and small integers sum as int32."""
    x = _t(x)
    if _small_int(x.dtype):
        x = _m.cast(x, _dt.int32)
    return _m.reduce_sum(x, None if axis is None else _reduce_axis(x, axis), keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product over `axis` (None: all)."""
    x = _t(x)
    if dtype is not None:
        x = _m.cast(x, dtype)
    elif _small_int(x.dtype):
        x = _m.cast(x, _dt.int32)
    return _m.reduce_prod(x, _reduce_axis(x, axis), keepdims)


def mean(x, axis=None, keepdims=False):
    """Mean over `axis` (None: all); integers give float32."""
    x = _float(x, _dt.float32)   # float32 whatever floatx is, as Keras's
    return _m.reduce_mean(x, _reduce_axis(x, axis), keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001 -- NumPy's name
    """Maximum over `axis` (None: all), at least `initial` if given."""
    x = _t(x)
    out = _m.reduce_max(x, _reduce_axis(x, axis), keepdims) if not x.dtype.is_bool else \
        _m.reduce_any(x, _reduce_axis(x, axis), keepdims)
    return out if initial is None else maximum(out, _m.cast(initial, out.dtype))


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001 -- NumPy's name
    """Minimum over `axis` (None: all), at most `initial` if given."""
    x = _t(x)
    out = _m.reduce_min(x, _reduce_axis(x, axis), keepdims) if not x.dtype.is_bool else \
        _m.reduce_all(x, _reduce_axis(x, axis), keepdims)
    return out if initial is None else minimum(out, _m.cast(initial, out.dtype))


amax = max
amin = min


def all(x, axis=None, keepdims=False):  # noqa: A001 -- NumPy's name
    """Whether all elements over `axis` are true (non-zero)."""
    x = _bool(x)
    return _m.reduce_all(x, _reduce_axis(x, axis), keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001 -- NumPy's name
    """Whether any element over `axis` is true (non-zero)."""
    x = _bool(x)
    return _m.reduce_any(x, _reduce_axis(x, axis), keepdims)


def var(x, axis=None, keepdims=False):
    """Population variance over `axis` (None: all)."""
    x = _float(x)
    return _m.reduce_variance(x, _reduce_axis(x, axis), keepdims)


def std(x, axis=None, keepdims=False):
    """Population standard deviation over `axis` (None: all)."""
    x = _float(x)
    return _m.sqrt(_m.reduce_variance(x, _reduce_axis(x, axis), keepdims))


def ptp(x, axis=None, keepdims=False):
    """Range (max - min) over `axis`."""
    return subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def count_nonzero(x, axis=None):
    """The number of non-zero elements over `axis` (int32)."""
    x = _bool(x)
    return _m.reduce_sum(_m.cast(x, _dt.int32), _reduce_axis(x, axis))


def argmax(x, axis=None, keepdims=False):
    """Index of the (first) maximum along `axis` (None: of the flattened tensor), int32."""
    return _arg(_m.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the (first) minimum along `axis` (None: of the flattened tensor), int32."""
    return _arg(_m.argmin, x, axis, keepdims)


def _arg(fn, x, axis, keepdims):
    x = _t(x)
    if x.dtype.is_bool:
        x = _m.cast(x, _dt.int32)
    rank = _rank(x)
    if axis is None:
        out = fn(_flatten(x), axis=0, output_type=_dt.int32)
        return _a.reshape(out, [1] * rank) if keepdims else out
    out = fn(x, axis=int(axis), output_type=_dt.int32)
    return _a.expand_dims(out, int(axis) % rank) if keepdims else out


def average(x, axis=None, weights=None):
    """Weighted mean over `axis` (weights 1-D along `axis`, or of x's shape)."""
    if weights is None:
        return mean(x, axis)
    x, w = _promote(x, weights, floating=True)
    if axis is not None and _rank(w) == 1 and _rank(x) > 1:
        shape = [1] * _rank(x)
        shape[int(axis) % _rank(x)] = -1
        w = _a.reshape(w, shape)
    w = _a.broadcast_to(w, _a.shape(x)) if w.shape != x.shape else w
    ax = _reduce_axis(x, axis)
    return _m.reduce_sum(x * w, ax) / _m.reduce_sum(w, ax)


def _nan_filled(x, fill):
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    return _m.where(_m.is_nan(x), _a.fill(_a.shape(x), _t(fill, x.dtype)), x)


def nansum(x, axis=None, keepdims=False):
    """Sum ignoring NaN."""
    return sum(_nan_filled(x, 0.0), axis, keepdims)


def nanprod(x, axis=None, keepdims=False):
    """Product ignoring NaN."""
    return prod(_nan_filled(x, 1.0), axis, keepdims)


def _nan_extremum(reduce, fill, x, axis, keepdims):
    """`reduce` (max or min) ignoring NaN, NaN filled with `fill` (its identity); NaN where
    all are NaN."""
    x = _t(x)
    if not x.dtype.is_floating:
        return reduce(x, axis, keepdims)
    out = reduce(_nan_filled(x, fill), axis, keepdims)
    return _m.where(all(isnan(x), axis, keepdims), _m.cast(_np.nan, x.dtype) + out * 0, out)


def nanmax(x, axis=None, keepdims=False):
    """Maximum ignoring NaN (NaN where all are NaN)."""
    return _nan_extremum(max, -_np.inf, x, axis, keepdims)


def nanmin(x, axis=None, keepdims=False):
    """Minimum ignoring NaN (NaN where all are NaN)."""
    return _nan_extremum(min, _np.inf, x, axis, keepdims)


def _nan_count(x, axis, keepdims):
    return sum(_m.cast(logical_not(isnan(x)), x.dtype), axis, keepdims)


def nanmean(x, axis=None, keepdims=False):
    """Mean ignoring NaN."""
    x = _float(x, _dt.float32)   # float32 whatever floatx is, as Keras's
    return nansum(x, axis, keepdims) / _nan_count(x, axis, keepdims)


def nanvar(x, axis=None, keepdims=False):
    """Variance ignoring NaN."""
    x = _float(x)
    m = nanmean(x, axis, keepdims=True)
    d = _nan_filled(x - m, 0.0)
    return sum(d * d, axis, keepdims) / _nan_count(x, axis, keepdims)


def nanstd(x, axis=None, keepdims=False):
    """Standard deviation ignoring NaN."""
    return _m.sqrt(nanvar(x, axis, keepdims))


def nanargmax(x, axis=None, keepdims=False):
    """Index of the maximum ignoring NaN."""
    return argmax(_nan_filled(x, -_np.inf), axis, keepdims)


def nanargmin(x, axis=None, keepdims=False):
    """Index of the minimum ignoring NaN."""
    return argmin(_nan_filled(x, _np.inf), axis, keepdims)


def nancumsum(x, axis=None, dtype=None):
    """Cumulative sum treating NaN as 0."""
    return cumsum(_nan_filled(x, 0.0), axis, dtype)


def nancumprod(x, axis=None, dtype=None):
    """Cumulative product treating NaN as 1."""
    return cumprod(_nan_filled(x, 1.0), axis, dtype)


def _scan(scan, x, axis, dtype):
    """`scan` (tl's cumsum or cumprod) along `axis` (None: of the flattened tensor), in
    `dtype` (default: x's, int32 for bool)."""
    x = _t(x)
    if dtype is not None:
        x = _m.cast(x, dtype)
    elif x.dtype.is_bool:
        x = _m.cast(x, _dt.int32)
    x, axis = _axis_or_flat(x, axis)
    return scan(x, axis=axis)


def cumsum(x, axis=None, dtype=None):
    """Cumulative sum along `axis` (None: of the flattened tensor)."""
    return _scan(_m.cumsum, x, axis, dtype)


def cumprod(x, axis=None, dtype=None):
    """Cumulative product along `axis` (None: of the flattened tensor)."""
    return _scan(_m.cumprod, x, axis, dtype)


# ------------------------------------------------------------------ quantiles

def _quantile_along_last(x, q, method, ignore_nan):
    """Quantiles `q` (1-D float tensor) of x along its last axis; result [len(q), ...]."""
    n = x.shape[-1]
    s = _a.sort(x, axis=-1)  # NaN sorts last
    if ignore_nan:
        count = _m.reduce_sum(_m.cast(logical_not(isnan(x)), x.dtype), axis=-1, keepdims=True)
    else:
        size = _t(float(n), x.dtype) if n is not None else _m.cast(_a.shape(x)[-1], x.dtype)
        count = _a.fill(_a.concat([_a.shape(x)[:-1], [1]], 0), size)
    last = _m.maximum(count - 1, _a.zeros_like(count))
    qs = _a.reshape(q, [-1] + [1] * _rank(x))  # [nq, 1..., 1]
    pos = qs * last  # [nq, ..., 1]
    lo = _m.floor(pos)
    hi = _m.ceil(pos)
    if method == "lower":
        pick = [(lo, None)]
    elif method == "higher":
        pick = [(hi, None)]
    elif method == "nearest":
        pick = [(_m.round(pos), None)]
    elif method == "midpoint":
        pick = [(lo, 0.5), (hi, 0.5)]
    elif method == "linear":
        pick = [(lo, 1.0 - (pos - lo)), (hi, pos - lo)]
    else:
        raise ValueError(f"quantile method must be one of linear, lower, higher, midpoint, nearest; "
                         f"got {method!r}")
    nq = q.shape[0]
    sb = _a.broadcast_to(_a.expand_dims(s, 0), _a.concat([[nq], _a.shape(s)], 0))
    out = None
    for idx, w in pick:
        i = _m.cast(_m.minimum(idx, last), _dt.int32)
        v = take_along_axis(sb, i, axis=-1)
        term = v if w is None else v * (w if isinstance(w, _TensorBase) else _m.cast(w, x.dtype))
        out = term if out is None else out + term
    out = _a.squeeze(out, [-1])
    if not ignore_nan:
        out = _m.where(_m.reduce_any(_m.is_nan(x), axis=-1), _m.cast(_np.nan, x.dtype) + out * 0, out)
    else:
        out = _m.where(_m.equal(_a.squeeze(count, [-1]), 0), _m.cast(_np.nan, x.dtype) + out * 0, out)
    return out


def _quantile(x, q, axis, method, keepdims, ignore_nan):
    x = _float(x)
    q = _t(q, x.dtype) if not isinstance(q, _TensorBase) else _m.cast(q, x.dtype)
    scalar_q = q.shape.rank == 0
    q = _a.reshape(q, [-1])
    rank = _rank(x)
    red = _axes(axis, rank)
    keep = [i for i in range(rank) if i not in red]
    xt = _a.transpose(x, keep + list(red)) if list(keep) + list(red) != list(range(rank)) else x
    kept = [x.shape[i] for i in keep]
    if None in kept:
        xt = _a.reshape(xt, _a.concat([_a.shape(xt)[:len(keep)], [-1]], 0))
    else:
        xt = _a.reshape(xt, kept + [-1])
    out = _quantile_along_last(xt, q, method, ignore_nan)  # [nq, kept...]
    if keepdims:
        shape = [1 if i in red else x.shape[i] for i in range(rank)]
        out = _a.reshape(out, [-1] + [(-1 if d is None else d) for d in shape]) if \
            shape.count(None) <= 1 else out
    return out[0] if scalar_q else out


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th quantiles (q in [0, 1]) over `axis` (None: all), NumPy's methods."""
    return _quantile(x, q, axis, method, keepdims, ignore_nan=False)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """`quantile` ignoring NaN."""
    return _quantile(x, q, axis, method, keepdims, ignore_nan=True)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th percentiles (q in [0, 100]) over `axis`."""
    return quantile(x, _float(q) / 100.0, axis, method, keepdims)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """`percentile` ignoring NaN."""
    return nanquantile(x, _float(q) / 100.0, axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    """Median over `axis` (None: all)."""
    return quantile(x, 0.5, axis, "linear", keepdims)


def nanmedian(x, axis=None, keepdims=False):
    """Median ignoring NaN."""
    return nanquantile(x, 0.5, axis, "linear", keepdims)


# ------------------------------------------------------------------ creation

def array(x, dtype=None):
    """A tensor from `x` (Keras's `ops.array`)."""
    return _t(x, dtype)


def _shape_list(shape):
    if isinstance(shape, int):
        return [shape]
    return list(shape)


def zeros(shape, dtype=None):
    """A tensor of zeros (floatx, float32 unless set, by default)."""
    return _a.zeros(_shape_list(shape), _dtype_or(dtype, _floatx()))


def ones(shape, dtype=None):
    """A tensor of ones (floatx, float32 unless set, by default)."""
    return _a.ones(_shape_list(shape), _dtype_or(dtype, _floatx()))


def empty(shape, dtype=None):
    """A tensor of the given shape (trainlib fills it with zeros)."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """A tensor filled with `fill_value` (float32 unless `dtype` says otherwise, as Keras)."""
    value = _t(fill_value, _dtype_or(dtype, _floatx()))
    return _a.broadcast_to(value, _shape_list(shape))


def zeros_like(x, dtype=None):
    """Zeros shaped as `x`."""
    return _a.zeros_like(_t(x), dtype)


def ones_like(x, dtype=None):
    """Ones shaped as `x`."""
    return _a.ones_like(_t(x), dtype)


def empty_like(x, dtype=None):
    """A tensor shaped as `x` (trainlib fills it with zeros)."""
    return zeros_like(x, dtype)


def full_like(x, fill_value, dtype=None):
    """A tensor shaped as `x` filled with `fill_value`."""
    x = _t(x)
    d = _dtype_or(dtype, x.dtype)
    return _a.broadcast_to(_t(fill_value, d), _a.shape(x))


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 -- NumPy's names
    """A 2-D tensor with ones on diagonal `k`."""
    return tri(N, M, k, dtype) - tri(N, M, k - 1, dtype) if k else \
        _a.eye(N, M, dtype=_dtype_or(dtype, _floatx()))


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return _a.eye(n, dtype=_dtype_or(dtype, _floatx()))


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 -- NumPy's names
    """Ones at and below diagonal `k` of an N x M matrix."""
    M = N if M is None else M  # noqa: N806
    rows = _a.reshape(_a.range(N), [N, 1])
    cols = _a.reshape(_a.range(M), [1, M])
    return _m.cast(_m.less_equal(cols - rows, k), _dtype_or(dtype, _floatx()))


def _tri_mask(x, k, lower):
    n, m = x.shape[-2], x.shape[-1]
    if n is None or m is None:
        raise ValueError("tril/triu need static matrix dims")
    rows = _a.reshape(_a.range(n), [n, 1])
    cols = _a.reshape(_a.range(m), [1, m])
    return _m.less_equal(cols - rows, k) if lower else _m.greater_equal(cols - rows, k)


def tril(x, k=0):
    """`x` with the elements above diagonal `k` zeroed."""
    x = _t(x)
    return _m.where(_tri_mask(x, k, True), x, _a.zeros_like(x))


def triu(x, k=0):
    """`x` with the elements below diagonal `k` zeroed."""
    x = _t(x)
    return _m.where(_tri_mask(x, k, False), x, _a.zeros_like(x))


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop) (Keras's dtype from the arguments)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    d = _dtype_or(dtype, _result_type(*(v for v in (start, stop, step))))
    if d.is_floating:
        n = int(_np.ceil((float(stop) - float(start)) / float(step))) if not \
            _py.any(isinstance(v, _TensorBase) for v in (start, stop, step)) else None
        if n is not None:
            return _m.cast(_a.range(n), d) * _m.cast(step, d) + _m.cast(start, d)
    return _a.range(_t(start, d), _t(stop, d), _t(step, d), dtype=d)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from `start` to `stop` (differentiable in start and stop)."""
    start, stop = _promote(start, stop, floating=True)
    d = start.dtype
    div = (num - 1) if endpoint else num
    step = (stop - start) / _m.cast(div if div > 0 else 1, d)
    i = _m.cast(_a.range(num), d)
    shape = [num] + [1] * _rank(step)
    out = _a.expand_dims(start, 0) + _a.reshape(i, shape) * _a.expand_dims(step, 0)
    if endpoint and num > 1:
        out = _a.concat([out[:-1], _a.expand_dims(stop, 0)], 0)
    if axis != 0:
        out = moveaxis(out, 0, axis)
    if dtype is not None:
        out = _m.cast(out, dtype)
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """`base ** linspace(start, stop, num)`."""
    y = linspace(start, stop, num, endpoint, axis=axis)
    out = _m.pow(_m.cast(base, y.dtype), y)
    return out if dtype is None else _m.cast(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from `start` to `stop`."""
    start, stop = _promote(start, stop, floating=True)
    sgn = _m.sign(start)
    y = linspace(_m.log(_m.abs(start)), _m.log(_m.abs(stop)), num, endpoint, axis=axis)
    out = sgn * _m.exp(y)
    return out if dtype is None else _m.cast(out, dtype)


def _window(n, fn):
    if n < 1:
        return _a.zeros([0], _floatx())
    if n == 1:
        return _a.ones([1], _floatx())
    i = _m.cast(_a.range(n), _dt.float64)
    return _m.cast(fn(i, float(n - 1)), _floatx())


def bartlett(x):
    """The Bartlett (triangular) window of length x."""
    return _window(int(x), lambda i, m: 1.0 - _m.abs(2.0 * i / m - 1.0))


def blackman(x):
    """The Blackman window of length x."""
    return _window(int(x), lambda i, m: 0.42 - 0.5 * _m.cos(2 * _np.pi * i / m)
                   + 0.08 * _m.cos(4 * _np.pi * i / m))


def hamming(x):
    """The Hamming window of length x."""
    return _window(int(x), lambda i, m: 0.54 - 0.46 * _m.cos(2 * _np.pi * i / m))


def hanning(x):
    """The Hann window of length x."""
    return _window(int(x), lambda i, m: 0.5 - 0.5 * _m.cos(2 * _np.pi * i / m))


def kaiser(x, beta):
    """The Kaiser window of length x with shape parameter beta."""
    beta = float(beta)
    return _window(int(x), lambda i, m: _num.i0(beta * _m.sqrt(1.0 - (2.0 * i / m - 1.0) ** 2))
                   / _np.i0(beta))


def vander(x, N=None, increasing=False):  # noqa: N803 -- NumPy's name
    """The Vandermonde matrix of the 1-D x (powers N-1 ... 0, or increasing)."""
    x = _t(x)
    n = x.shape[0] if N is None else N
    p = _a.range(n) if increasing else _a.range(n - 1, -1, -1)
    xx = _a.expand_dims(x, 1)
    return _m.pow(xx + _a.zeros([1, n], x.dtype), _m.cast(_a.reshape(p, [1, n]), x.dtype))


def meshgrid(*x, indexing="xy"):
    """Coordinate matrices from coordinate vectors (NumPy's meshgrid)."""
    return _a.meshgrid(*[_t(v) for v in x], indexing=indexing)


# ------------------------------------------------------------------ shapes and layout

def ndim(x):
    """The rank of `x` (a Python int)."""
    return _spec_of(x).ndim  # KerasTensors and tensors both have ndim


def size(x):
    """The number of elements of `x` (an int32 tensor)."""
    return _a.size(_t(x))


def reshape(x, newshape):
    """`x` with shape `newshape` (one dim may be -1)."""
    return _a.reshape(_t(x), _shape_list(newshape) if not isinstance(newshape, _TensorBase) else newshape)


def ravel(x):
    """`x` flattened to 1-D."""
    return _flatten(_t(x))


def transpose(x, axes=None):
    """`x` with its axes permuted (reversed by default)."""
    return _a.transpose(_t(x), None if axes is None else list(axes))


def moveaxis(x, source, destination):
    """`x` with axes `source` moved to positions `destination`."""
    x = _t(x)
    rank = _rank(x)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [s % rank for s in src]
    dst = [d % rank for d in dst]
    order = [i for i in range(rank) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _a.transpose(x, order) if order != list(range(rank)) else x


def swapaxes(x, axis1, axis2):
    """`x` with two axes swapped."""
    x = _t(x)
    perm = list(range(_rank(x)))
    a, b = axis1 % len(perm), axis2 % len(perm)
    perm[a], perm[b] = perm[b], perm[a]
    return _a.transpose(x, perm)


def expand_dims(x, axis):
    """`x` with new size-1 axes at `axis` (an int or a tuple)."""
    x = _t(x)
    if isinstance(axis, int):
        return _a.expand_dims(x, axis)
    out_rank = _rank(x) + len(axis)
    for a in sorted(a % out_rank for a in axis):
        x = _a.expand_dims(x, a)
    return x


def squeeze(x, axis=None):
    """`x` without size-1 axes (those in `axis`, or all)."""
    x = _t(x)
    if axis is None:
        return _a.squeeze(x)
    return _a.squeeze(x, list(_axes(axis, _rank(x))))


def broadcast_to(x, shape):
    """`x` broadcast to `shape`."""
    return _a.broadcast_to(_t(x), _shape_list(shape) if not isinstance(shape, _TensorBase) else shape)


def flip(x, axis=None):
    """`x` reversed along `axis` (None: all)."""
    x = _t(x)
    return _a.reverse(x, list(_axes(axis, _rank(x))))


def fliplr(x):
    """`x` reversed along axis 1."""
    return flip(x, 1)


def flipud(x):
    """`x` reversed along axis 0."""
    return flip(x, 0)


def rot90(array, k=1, axes=(0, 1)):
    """`array` rotated by 90 degrees k times in the plane of `axes`."""
    x = _t(array)
    a0, a1 = (a % _rank(x) for a in axes)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    x = swapaxes(x, a0, a1)
    return flip(x, a0) if k == 1 else flip(x, a1)


def roll(x, shift, axis=None):
    """`x` with elements shifted cyclically along `axis` (None: of the flattened tensor)."""
    x = _t(x)
    if axis is None:
        return _a.reshape(_a.roll(_flatten(x), shift, 0), _a.shape(x))
    return _a.roll(x, shift, axis)


def tile(x, repeats):
    """`x` repeated `repeats` times per axis (NumPy's rules for differing lengths)."""
    x = _t(x)
    reps = [repeats] if isinstance(repeats, int) else list(repeats)
    rank = _rank(x)
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    elif len(reps) > rank:
        x = _a.reshape(x, [1] * (len(reps) - rank) + [(-1 if d is None else d) for d in x.shape])
    return _a.tile(x, reps)


def repeat(x, repeats, axis=None):
    """Each element of `x` repeated `repeats` times along `axis` (None: flattened)."""
    x = _t(x)
    if axis is None:
        x, axis = _flatten(x), 0
    return _a.repeat(x, repeats, axis=axis)


def concatenate(xs, axis=0):
    """The tensors `xs` joined along `axis` (None: flattened first), dtypes promoted."""
    xs = _promote(*xs)
    if axis is None:
        xs, axis = [_flatten(x) for x in xs], 0
    return _a.concat(xs, axis)


def append(x1, x2, axis=None):
    """`x2` appended to `x1` along `axis` (None: both flattened)."""
    return concatenate([x1, x2], axis)


def stack(x, axis=0):
    """The tensors `x` stacked along a new axis."""
    return _a.stack(_promote(*x), axis)


def _atleast(x, n):
    """x with at least n dims, as NumPy's atleast_2d / atleast_3d place them."""
    x = _t(x)
    r = _rank(x)
    if r >= n:
        return x
    if r == 0:
        return _a.reshape(x, [1] * n)
    if r == 1:
        return _a.reshape(x, [1, -1] if n == 2 else [1, -1, 1])
    return _a.expand_dims(x, 2)


def hstack(xs):
    """Tensors stacked horizontally (axis 1; axis 0 for 1-D)."""
    xs = _promote(*xs)
    return _a.concat(xs, 0 if _rank(xs[0]) == 1 else 1)


def vstack(xs):
    """Tensors stacked vertically (axis 0, 1-D ones as rows)."""
    return _a.concat([_atleast(x, 2) for x in _promote(*xs)], 0)


def dstack(xs):
    """Tensors stacked along axis 2."""
    return _a.concat([_atleast(x, 3) for x in _promote(*xs)], 2)


def _split_sizes(n, sections, exact):
    if isinstance(sections, int):
        if exact and n % sections:
            raise ValueError(f"array split does not result in an equal division: {n} elements "
                             f"into {sections} sections")
        q, r = divmod(n, sections)
        return [q + 1] * r + [q] * (sections - r)
    bounds = [0] + [_py.min(_py.max(int(i) if i >= 0 else n + int(i), 0), n) for i in sections] + [n]
    return [_py.max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]


def _split(x, indices_or_sections, axis, exact):
    x = _t(x)
    axis %= _rank(x)
    n = x.shape[axis]
    if n is None:
        raise ValueError("split needs a static size along the split axis")
    sizes = _split_sizes(n, indices_or_sections, exact)
    out, start = [], 0
    for s in sizes:
        key = [slice(None)] * axis + [slice(start, start + s)]
        out.append(_a.getitem(x, tuple(key)))
        start += s
    return out


def split(x, indices_or_sections, axis=0):
    """`x` split into equal sections (an int) or at indices (a list), as NumPy."""
    return _split(x, indices_or_sections, axis, exact=True)


def array_split(x, indices_or_sections, axis=0):
    """`split` that allows unequal sections (the first ones one larger)."""
    return _split(x, indices_or_sections, axis, exact=False)


def hsplit(x, indices_or_sections):
    """`split` along axis 1 (axis 0 for 1-D)."""
    x = _t(x)
    return split(x, indices_or_sections, 0 if _rank(x) == 1 else 1)


def vsplit(x, indices_or_sections):
    """`split` along axis 0."""
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    """`split` along axis 2."""
    return split(x, indices_or_sections, 2)


def pad(x, pad_width, mode="constant", constant_values=None):
    """`x` padded (NumPy's pad_width forms; modes constant, reflect, symmetric)."""
    x = _t(x)
    rank = _rank(x)
    pw = _np.asarray(pad_width, dtype=_np.int64)
    if pw.ndim == 0:
        pw = _np.full((rank, 2), int(pw))
    elif pw.ndim == 1:
        pw = _np.tile(pw.reshape(1, -1) if pw.size == 2 else pw.reshape(1, 1), (rank, 2 // pw.size))
    elif pw.shape[0] == 1 and rank > 1:
        pw = _np.tile(pw, (rank, 1))
    modes = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}
    if mode not in modes:
        raise ValueError(f"pad mode must be one of {sorted(modes)}, got {mode!r}")
    if constant_values is not None and mode != "constant":
        raise ValueError("pad: constant_values only applies to mode='constant'")
    value = 0 if constant_values is None else constant_values
    return _a.pad(x, pw.tolist(), modes[mode], constant_values=value)


def get_item(x, key):
    """`x[key]`."""
    return _a.getitem(_t(x), key)


def _wrap(indices, n):
    indices = _t(indices)
    if indices.dtype.is_floating:
        raise TypeError("indices must be integers")
    if indices.dtype not in (_dt.int32, _dt.int64):
        indices = _m.cast(indices, _dt.int32)
    return _m.where(_m.less(indices, 0), indices + _m.cast(n, indices.dtype), indices)


def take(x, indices, axis=None):
    """Elements of `x` at `indices` along `axis` (None: of the flattened tensor); negative
    indices count from the end."""
    x = _t(x)
    if axis is None:
        x, axis = _flatten(x), 0
    axis %= _rank(x)
    n = x.shape[axis] if x.shape[axis] is not None else _a.shape(x)[axis]
    return _a.gather(x, _wrap(indices, n), axis=axis)


def take_along_axis(x, indices, axis=None):
    """Values of `x` at `indices` along `axis`, broadcasting the other dims (NumPy's rules)."""
    x = _t(x)
    if axis is None:
        x, axis = _flatten(x), 0
    indices = _t(indices)
    rank = _rank(x)
    axis %= rank
    n = x.shape[axis] if x.shape[axis] is not None else _a.shape(x)[axis]
    indices = _wrap(indices, n)
    # broadcast the non-axis dims of x and indices against each other
    xs = [d for i, d in enumerate(x.shape) if i != axis]
    ids = [d for i, d in enumerate(indices.shape) if i != axis]
    if xs != ids:
        xshape = _a.shape(x)
        ishape = _a.shape(indices)
        both = _m.maximum(_a.concat([xshape[:axis], xshape[axis + 1:]], 0),
                          _a.concat([ishape[:axis], ishape[axis + 1:]], 0))
        x = _a.broadcast_to(x, _a.concat([both[:axis], xshape[axis:axis + 1], both[axis:]], 0))
        indices = _a.broadcast_to(indices, _a.concat([both[:axis], ishape[axis:axis + 1],
                                                      both[axis:]], 0))
    perm = [i for i in range(rank) if i != axis] + [axis]
    xt = _a.transpose(x, perm) if axis != rank - 1 else x
    it = _a.transpose(indices, perm) if axis != rank - 1 else indices
    out = _a.gather(xt, it, axis=rank - 1, batch_dims=rank - 1)
    if axis == rank - 1:
        return out
    inv = list(_np.argsort(perm))
    return _a.transpose(out, inv)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal `offset` of the matrices in axes (axis1, axis2), as the last axis."""
    x = _t(x)
    rank = _rank(x)
    a1, a2 = axis1 % rank, axis2 % rank
    rest = [i for i in range(rank) if i not in (a1, a2)]
    xt = _a.transpose(x, rest + [a1, a2])
    n, m = x.shape[a1], x.shape[a2]
    if n is None or m is None:
        raise ValueError("diagonal needs static sizes on axis1 and axis2")
    i0 = _py.max(0, -offset)
    j0 = _py.max(0, offset)
    length = _py.max(0, _py.min(n - i0, m - j0))
    flat = _a.reshape(xt, _a.concat([_a.shape(xt)[:-2], [n * m]], 0))
    idx = _np.arange(length) * (m + 1) + i0 * m + j0
    return _a.gather(flat, _a.constant(idx.astype(_np.int32)), axis=len(rest))


def diag(x, k=0):
    """The diagonal k of a 2-D x, or a 2-D matrix with the 1-D x on diagonal k."""
    x = _t(x)
    if _rank(x) == 2:
        return diagonal(x, k)
    if _rank(x) != 1:
        raise ValueError(f"diag needs a 1-D or 2-D tensor, got shape {x.shape}")
    n = x.shape[0]
    size_ = n + _py.abs(k)
    idx = (_np.arange(n) + _py.max(0, -k)) * size_ + _np.arange(n) + _py.max(0, k)
    flat = _a.scatter_nd(_a.constant(idx.reshape(-1, 1).astype(_np.int32)), x, [size_ * size_])
    return _a.reshape(flat, [size_, size_])


def diagflat(x, k=0):
    """A 2-D matrix with the flattened x on diagonal k."""
    return diag(ravel(x), k)


def trace(x, offset=0, axis1=0, axis2=1):
    """The sum along diagonal `offset` of the matrices in (axis1, axis2)."""
    x = _t(x)
    if _small_int(x.dtype):
        x = _m.cast(x, _dt.int32)
    return _m.reduce_sum(diagonal(x, offset, axis1, axis2), -1)


def diff(a, n=1, axis=-1):
    """The n-th discrete difference along `axis`."""
    x = _t(a)
    rank = _rank(x)
    axis %= rank
    for _ in range(n):
        hi = tuple([slice(None)] * axis + [slice(1, None)])
        lo = tuple([slice(None)] * axis + [slice(None, -1)])
        x = _a.getitem(x, hi) - _a.getitem(x, lo) if not x.dtype.is_bool else \
            _m.not_equal(_a.getitem(x, hi), _a.getitem(x, lo))
    return x


# ------------------------------------------------------------------ products

def matmul(x1, x2):
    """Matrix product with NumPy's rules (1-D operands, broadcast batch dims)."""
    a, b = _promote(x1, x2)
    if _small_int(a.dtype):  # computed in int32; returned in the promoted dtype (int8: int32), as Keras
        out = matmul(_m.cast(a, _dt.int32), _m.cast(b, _dt.int32))
        both_int8 = _result_type(x1) is _dt.int8 and _result_type(x2) is _dt.int8
        return out if both_int8 else _m.cast(out, a.dtype)
    ra, rb = _rank(a), _rank(b)
    if ra == 2 and rb == 2:
        return _m.matmul(a, b)
    if ra == 1 and rb == 1:
        return _m.reduce_sum(a * b)
    if ra == 1:
        return _a.squeeze(_m.matmul(_a.expand_dims(a, 0), b), [-2])
    if rb == 1:
        return _a.squeeze(_m.matmul(a, _a.expand_dims(b, 1)), [-1])
    batch_a, batch_b = list(a.shape)[:-2], list(b.shape)[:-2]
    if batch_a != batch_b and None not in batch_a + batch_b:
        batch = list(_m.broadcast_shapes(batch_a, batch_b))
        a = _a.broadcast_to(a, _a.concat([batch, _a.shape(a)[-2:]], 0))
        b = _a.broadcast_to(b, _a.concat([batch, _a.shape(b)[-2:]], 0))
    return _m.matmul(a, b)


def dot(x1, x2):
    """NumPy's dot: products of scalars, inner products of vectors, matrix products,
    and sums over the last axis of x1 and the second-to-last of x2."""
    a, b = _promote(x1, x2)
    ra, rb = _rank(a), _rank(b)
    if ra == 0 or rb == 0:
        return multiply(a, b)
    if rb == 1 or ra == 1 or (ra == 2 and rb == 2):
        return matmul(a, b) if ra <= 2 and rb <= 2 else _m.tensordot(a, b, [[ra - 1], [0]])
    return _m.tensordot(a, b, [[ra - 1], [rb - 2]])


def vdot(x1, x2):
    """The dot product of the flattened inputs."""
    a, b = _promote(x1, x2)
    return _m.reduce_sum(_flatten(a) * _flatten(b))


def inner(x1, x2):
    """Inner product over the last axes."""
    a, b = _promote(x1, x2)
    if _rank(a) == 0 or _rank(b) == 0:
        return a * b
    return _m.tensordot(a, b, [[_rank(a) - 1], [_rank(b) - 1]])


def outer(x1, x2):
    """The outer product of the flattened inputs."""
    a, b = _promote(x1, x2)
    return _a.expand_dims(_flatten(a), 1) * _a.expand_dims(_flatten(b), 0)


def tensordot(x1, x2, axes=2):
    """Sum of products over the given axes (an int or a pair of axis lists)."""
    a, b = _promote(x1, x2)
    return _m.tensordot(a, b, axes)


def einsum(subscripts, *operands, **kwargs):
    """Einstein summation (operands promoted to one dtype)."""
    ops_ = _promote(*operands)
    if ops_[0].dtype.is_bool:
        ops_ = [_m.cast(o, _dt.int32) for o in ops_]
    return _m.einsum(subscripts, *ops_, **kwargs)


def kron(x1, x2):
    """The Kronecker product."""
    a, b = _promote(x1, x2)
    ra, rb = _rank(a), _rank(b)
    r = _py.max(ra, rb)
    sa = [1] * (r - ra) + list(_static_shape(a, "kron"))
    sb = [1] * (r - rb) + list(_static_shape(b, "kron"))
    a = _a.reshape(a, [v for d in sa for v in (d, 1)])
    b = _a.reshape(b, [v for d in sb for v in (1, d)])
    return _a.reshape(a * b, [p * q for p, q in zip(sa, sb)])


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors, as NumPy) along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote(x1, x2)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross needs vectors of size 2 or 3, got {na} and {nb}")

    def parts(v, n):
        ps = [v[..., i] for i in range(n)]
        return ps + [_a.zeros_like(ps[0])] * (3 - n)
    a0, a1, a2 = parts(a, na)
    b0, b1, b2 = parts(b, nb)
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    out = _a.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return moveaxis(out, -1, axisc)


def correlate(x1, x2, mode="valid"):
    """Cross-correlation of two 1-D sequences (NumPy's modes valid, same, full)."""
    a, b = _promote(x1, x2, floating=True)
    n, m = a.shape[0], b.shape[0]
    if n is None or m is None:
        raise ValueError("correlate needs static lengths")
    if n < m:  # NumPy swaps and reverses so the longer one slides
        return flip(correlate(b, a, mode), 0)
    if mode == "valid":
        left, right = 0, 0
    elif mode == "same":
        left = m // 2
        right = m - 1 - left
    elif mode == "full":
        left = right = m - 1
    else:
        raise ValueError(f"correlate mode must be valid, same or full, got {mode!r}")
    ap = _a.pad(a, [[left, right]])
    out_len = n + left + right - m + 1
    idx = _np.arange(out_len)[:, None] + _np.arange(m)[None, :]
    windows = _a.gather(ap, _a.constant(idx.astype(_np.int32)))
    return _m.reduce_sum(windows * _a.expand_dims(b, 0), -1)


def corrcoef(x):
    """Pearson correlation coefficients of the rows of x."""
    x = _float(x)
    if _rank(x) == 1:
        x = _a.expand_dims(x, 0)
    c = x - _m.reduce_mean(x, 1, keepdims=True)
    cov = _m.matmul(c, c, transpose_b=True)
    d = _m.sqrt(diagonal(cov))
    out = cov / _a.expand_dims(d, 1) / _a.expand_dims(d, 0)
    out = _m.minimum(_m.maximum(out, _m.cast(-1.0, out.dtype)), _m.cast(1.0, out.dtype))
    return out[0, 0] if out.shape == (1, 1) else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along `axis` by the trapezoid rule (samples x, or spacing dx)."""
    y = _float(y)
    rank = _rank(y)
    axis %= rank
    hi = tuple([slice(None)] * axis + [slice(1, None)])
    lo = tuple([slice(None)] * axis + [slice(None, -1)])
    avg = (_a.getitem(y, hi) + _a.getitem(y, lo)) / _m.cast(2.0, y.dtype)
    if x is None:
        return _m.reduce_sum(avg, axis) * _m.cast(dx, y.dtype)
    x = _t(x, y.dtype)
    d = diff(x, axis=-1 if _rank(x) == 1 else axis)
    if _rank(x) == 1:
        shape = [1] * rank
        shape[axis] = -1
        d = _a.reshape(d, shape)
    return _m.reduce_sum(avg * d, axis)


# ------------------------------------------------------------------ sorting, searching, sets

def sort(x, axis=-1):
    """`x` sorted ascending along `axis` (None: flattened)."""
    x = _t(x)
    if axis is None:
        x, axis = _flatten(x), 0
    if x.dtype.is_bool:
        return _m.cast(_a.sort(_m.cast(x, _dt.int32), axis), _dt.bool)
    return _a.sort(x, axis)


def argsort(x, axis=-1):
    """Int32 indices that sort `x` (stably) along `axis` (None: flattened)."""
    x = _t(x)
    if axis is None:
        x, axis = _flatten(x), 0
    if x.dtype.is_bool:
        x = _m.cast(x, _dt.int32)
    if _rank(x) == 0:
        return _a.zeros([], _dt.int32)
    return _a.argsort(x, axis)


def argpartition(x, kth, axis=-1):
    """Indices that partition `x` around its `kth` element along `axis` (a full stable sort
    is one valid partition)."""
    return argsort(x, axis)


def searchsorted(sorted_sequence, values, side="left"):
    """Indices at which `values` keep the 1-D `sorted_sequence` sorted (int32)."""
    s = _t(sorted_sequence)
    if _rank(s) != 1:
        raise ValueError(f"searchsorted needs a 1-D sorted_sequence, got shape {s.shape}")
    s, v = _promote(s, values)
    flat = _a.reshape(v, [1, -1])
    out = _a.searchsorted(_a.expand_dims(s, 0), flat, side=side, out_type=_dt.int32)
    return _a.reshape(out, _a.shape(v))


def digitize(x, bins):
    """For each x, the index of the bin it falls in (NumPy's digitize, increasing bins)."""
    b = _t(bins)
    x, b = _promote(x, b)
    return searchsorted(b, x, side="right")


def nonzero(x):
    """A tuple of int32 index arrays, one per axis, of the non-zero elements."""
    x = _bool(x)
    coords = _m.cast(_m.where(x), _dt.int32)
    return tuple(coords[:, i] for i in range(_rank(x)))


def isin(x1, x2, assume_unique=False, invert=False):
    """Elementwise: whether each element of x1 is in x2."""
    a, b = _promote(x1, x2)
    hit = _m.reduce_any(_m.equal(_a.expand_dims(a, -1), _flatten(b)), -1)
    return _m.logical_not(hit) if invert else hit


def unique(x, sorted=True, return_inverse=False, return_counts=False, axis=None, size=None,  # noqa: A002
           fill_value=None):
    """The sorted distinct elements of x (flattened), with inverse indices and counts if asked."""
    if axis is not None:
        raise NotImplementedError("keras.ops.unique: axis is not supported by trainlib yet")
    x = _flatten(_t(x))
    y, idx, counts = _a.unique_with_counts(x)
    if sorted:
        order = _a.argsort(y)
        y = _a.gather(y, order)
        counts = _a.gather(counts, order)
        rank = _a.argsort(order)
        idx = _a.gather(rank, idx)
    if size is not None:
        fill = y[0] if fill_value is None else _t(fill_value, y.dtype)
        k = _m.minimum(_a.size(y), size)
        pad_n = size - k
        y = _a.concat([y[:k], _a.broadcast_to(fill, _a.reshape(pad_n, [1]))], 0)
        counts = _a.concat([counts[:k], _a.zeros(_a.reshape(pad_n, [1]), counts.dtype)], 0)
    out = [y]
    if return_inverse:
        out.append(idx)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def unravel_index(indices, shape):
    """The coordinates, one tensor per dim of `shape`, of flat `indices`."""
    i = _t(indices)
    out = []
    for d in reversed(list(shape)):
        out.append(_m.floormod(i, _m.cast(d, i.dtype)))
        i = _m.floordiv(i, _m.cast(d, i.dtype))
    return tuple(reversed(out))


def bincount(x, weights=None, minlength=0, sparse=False):
    """Counts of each non-negative integer in x (weighted sums with `weights`)."""
    if sparse:
        raise NotImplementedError("keras.ops.bincount: sparse=True is not supported by trainlib")
    x = _t(x)
    if x.dtype not in (_dt.int32, _dt.int64):
        x = _m.cast(x, _dt.int32)
    if _rank(x) == 2:
        return _a.stack([bincount(x[i], None if weights is None else _t(weights)[i], minlength)
                         for i in range(x.shape[0])]) if x.shape[0] is not None else None
    if weights is None:
        return _m.bincount(x, minlength=minlength, dtype=_dt.int32)
    w = _t(weights)
    if w.dtype.is_integer or w.dtype.is_bool:
        w = _m.cast(w, _dt.int32)
    return _m.bincount(x, weights=w, minlength=minlength, dtype=w.dtype)


def histogram(x, bins=10, range=None):  # noqa: A002 -- NumPy's name
    """(counts, bin_edges) of the 1-D x with `bins` equal bins over `range` (default min..max);
    counts in x's dtype, as Keras."""
    count_dtype = _t(x).dtype
    x = _float(x)
    if range is None:
        lo, hi = _m.reduce_min(x), _m.reduce_max(x)
    else:
        lo, hi = _m.cast(range[0], x.dtype), _m.cast(range[1], x.dtype)
    edges = linspace(lo, hi, bins + 1)
    width = (hi - lo) / _m.cast(bins, x.dtype)
    idx = _m.cast(_m.floor((x - lo) / width), _dt.int32)
    idx = _m.where(_m.equal(x, hi), _a.fill(_a.shape(idx), bins - 1), idx)
    inside = _m.logical_and(_m.greater_equal(x, lo), _m.less_equal(x, hi))
    counts = _m.bincount(_a.boolean_mask(idx, inside), minlength=bins, maxlength=bins, dtype=_dt.int32)
    return _m.cast(counts, count_dtype), _m.cast(edges, count_dtype)  # both in x's dtype, as Keras


# ------------------------------------------------------------------ misc

def slogdet(x):
    """(sign, log|det|) of square matrices."""
    return tuple(_la.slogdet(_float(x)))


def view(x, dtype=None):
    """The bytes of x reinterpreted as `dtype` (the last dim scales with the itemsize)."""
    x = _t(x)
    if dtype is None:
        return x
    return _num.bitcast(x, _dt.as_dtype(dtype))


def vectorize(pyfunc, *, excluded=None, signature=None):
    """`pyfunc` applied elementwise over broadcast tensor arguments (NumPy's vectorize)."""
    excluded = set(excluded or ())
    if signature is not None:
        raise NotImplementedError("keras.ops.vectorize: signature is not supported by trainlib yet")

    def wrapped(*args):
        positions = [i for i in range(len(args)) if i not in excluded]
        tensors = _promote(*[args[i] for i in positions]) if positions else []
        if not tensors:
            return pyfunc(*args)
        shape = tensors[0]
        for t in tensors[1:]:
            shape = shape + _a.zeros_like(t) if not t.dtype.is_bool else shape
        tensors = [_a.broadcast_to(t, _a.shape(shape)) for t in tensors]
        flat = [_flatten(t) for t in tensors]

        def one(elems):
            call = list(args)
            for i, e in zip(positions, elems):
                call[i] = e
            return pyfunc(*call)
        out = _core.vectorized_map(one, flat)
        return _a.reshape(out, _a.shape(shape))
    return wrapped
