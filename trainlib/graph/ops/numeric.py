"""Numeric special functions and bit-level ops that NumPy and Keras name and TensorFlow mostly lacks.

Owns the OpDefs `BesselI0`, `BesselI1`, `Erfc`, `Erfinv`, `Signbit`, `NextAfter`, `Gcd`, `Lcm` and
`Bitcast`, with their public functions (used by `trainlib.keras.ops`). Invariants: kernels are
written against `xp` only (no scipy), elementwise ops broadcast as NumPy does, float64 results
are accurate to ~1e-13 relative (series and asymptotic expansions chosen per magnitude).
"""
import math as _pymath

from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, same_dtype, spec
from . import math as _math
from .common import float_infer

__all__ = ["i0", "i1", "erfc", "erfinv", "signbit", "nextafter", "gcd", "lcm", "bitcast"]


def _float(x, name):
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    if not x.dtype.is_floating:
        raise TypeError(f"{name} needs a floating tensor, got {x.dtype.name}")
    return x


# ------------------------------------------------------------------ Bessel I0, I1

def _bessel_series(xp, a, order):
    """sum_k (a/2)^(2k+order) / (k! (k+order)!) for |a| <= 15 (60 terms: converged in float64)."""
    half = a / 2
    q = half * half
    term = xp.ones_like(a) if order == 0 else half.copy()
    total = term.copy()
    for k in range(1, 60):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _bessel_asymptotic(xp, a, order):
    """e^a / sqrt(2 pi a) * sum of Hankel's expansion terms, for a > 15."""
    mu = 4.0 * order * order
    term = xp.ones_like(a)
    total = term.copy()
    for k in range(1, 25):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * a)
        total = total + term
    return xp.exp(a) / xp.sqrt(2 * _pymath.pi * a) * total


def _bessel(xp, x, order):
    wide = x.astype(xp.float64)
    a = xp.abs(wide)
    small = xp.minimum(a, 15.0)
    big = xp.maximum(a, 15.0)
    out = xp.where(a <= 15.0, _bessel_series(xp, small, order), _bessel_asymptotic(xp, big, order))
    if order == 1:
        out = xp.sign(wide) * out
    return out.astype(x.dtype)


@defop("BesselI0", infer=float_infer("BesselI0"), elementwise=True,
       grad=lambda op, dy: (dy * apply("BesselI1", op.inputs[0]),))
def _i0(xp, x):
    return _bessel(xp, x, 0)


@defop("BesselI1", infer=float_infer("BesselI1"), elementwise=True, differentiable=False)
def _i1(xp, x):
    return _bessel(xp, x, 1)


def i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise.

    Example:
        >>> round(float(tl.graph.ops.numeric.i0(1.0)), 6)
        1.266066
    """
    return apply("BesselI0", _float(x, "i0"))


def i1(x):
    """The modified Bessel function of the first kind of order 1 (no gradient)."""
    return apply("BesselI1", _float(x, "i1"))


# ------------------------------------------------------------------ erfc, erfinv

@defop("Erfc", infer=float_infer("Erfc"), elementwise=True,
       grad=lambda op, dy: (dy * (-2.0 / _pymath.sqrt(_pymath.pi)) *
                            _math.exp(-_math.square(op.inputs[0])),))
def _erfc(xp, x):
    a = xp.minimum(xp.abs(x), x.dtype.type(30))
    # the tail directly (no cancellation in 1 - erf for large x), Cephes' rational forms
    tail = xp.exp(-a * a) * xp.where(a < 8, _math._poly(a, _math._ERFC_P) / _math._poly(a, _math._ERFC_Q),  # noqa: SLF001
                                     _math._poly(a, _math._ERFC_R) / _math._poly(a, _math._ERFC_S))  # noqa: SLF001
    out = xp.where(a <= 1, 1 - _math._erf(xp, x), xp.where(x > 0, tail, 2 - tail))  # noqa: SLF001
    return out.astype(x.dtype, copy=False)


def erfc(x):
    """The complementary error function 1 - erf(x), accurate in the tails.

    Example:
        >>> round(float(tl.graph.ops.numeric.erfc(0.5)), 6)
        0.4795
    """
    return apply("Erfc", _float(x, "erfc"))


def _erfinv_grad(op, dy):
    y = op.outputs[0]
    return (dy * (_pymath.sqrt(_pymath.pi) / 2) * _math.exp(_math.square(y)),)


@defop("Erfinv", infer=float_infer("Erfinv"), elementwise=True, grad=_erfinv_grad)
def _erfinv(xp, x):
    raw = x.astype(xp.float64)
    w64 = xp.where(xp.abs(raw) < 1.0, raw, 0.0)  # +-1 and beyond are set at the end
    # Giles' approximation, then Newton steps on erf(y) = x (erf from the Erf kernel)
    w = -xp.log(xp.maximum((1.0 - w64) * (1.0 + w64), 1e-300))
    central = w < 5.0
    wc = w - 2.5
    pc = _horner(wc, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                      0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
    wt = xp.sqrt(xp.maximum(w, 5.0)) - 3.0
    pt = _horner(wt, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                      0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
    y = xp.where(central, pc, pt) * w64
    for _ in range(3):
        err = _math._erf(xp, y) - w64
        y = y - err / (2.0 / _pymath.sqrt(_pymath.pi) * xp.exp(-y * y))
    y = xp.where(raw == 1.0, xp.inf, xp.where(raw == -1.0, -xp.inf, y))
    y = xp.where(xp.abs(raw) > 1.0, xp.nan, y)
    return y.astype(x.dtype)


def _horner(x, coefficients):
    y = x * 0 + coefficients[0]
    for c in coefficients[1:]:
        y = y * x + c
    return y


def erfinv(x):
    """The inverse error function, elementwise (NaN outside [-1, 1]).

    Example:
        >>> round(float(tl.graph.ops.numeric.erfinv(0.5)), 6)
        0.476936
    """
    return apply("Erfinv", _float(x, "erfinv"))


# ------------------------------------------------------------------ bit-level

@defop("Signbit", infer=lambda x: spec(x.shape, _dt.bool), elementwise=True, differentiable=False)
def _signbit(xp, x):
    return xp.signbit(x)


def signbit(x):
    """Whether the sign bit of each float is set (True for -0.0 and negative NaN)."""
    return apply("Signbit", _float(x, "signbit"))


def _binary_infer(name, kinds):
    def infer(a, b):
        d = same_dtype(name, a, b)
        if not any(getattr(d, k) for k in kinds):
            raise TypeError(f"{name} does not support {d.name} tensors")
        return spec(broadcast_shapes(a.shape, b.shape), d)
    return infer


@defop("NextAfter", infer=_binary_infer("NextAfter", ("is_floating",)), elementwise=True,
       differentiable=False)
def _nextafter(xp, a, b):
    return xp.nextafter(a, b)


def nextafter(x1, x2):
    """The next representable float after x1 in the direction of x2."""
    a, b = _math.convert_same_dtype("NextAfter", (x1, x2))
    return apply("NextAfter", a, b)


@defop("Gcd", infer=_binary_infer("Gcd", ("is_integer",)), elementwise=True, differentiable=False)
def _gcd(xp, a, b):
    return xp.gcd(a, b)


@defop("Lcm", infer=_binary_infer("Lcm", ("is_integer",)), elementwise=True, differentiable=False)
def _lcm(xp, a, b):
    return xp.lcm(a, b)


def _integers(name, x1, x2):
    a, b = _math.convert_same_dtype(name, (x1, x2))
    if not a.dtype.is_integer:
        raise TypeError(f"{name} needs integer tensors, got {a.dtype.name}")
    return a, b


def gcd(x1, x2):
    """Elementwise greatest common divisor of integer tensors."""
    return apply("Gcd", *_integers("gcd", x1, x2))


def lcm(x1, x2):
    """Elementwise least common multiple of integer tensors."""
    return apply("Lcm", *_integers("lcm", x1, x2))


def _bitcast_infer(x, dtype):
    ratio = x.dtype.size / dtype.size
    shape = list(x.shape) if x.shape.rank is not None else None
    if shape is None:
        return spec(None, dtype)
    if not shape:
        if ratio != 1:
            raise ValueError(f"cannot view a scalar {x.dtype.name} as {dtype.name}")
        return spec([], dtype)
    if shape[-1] is not None:
        total = shape[-1] * x.dtype.size
        if total % dtype.size:
            raise ValueError(f"cannot view a last dim of {shape[-1]} {x.dtype.name} as {dtype.name}")
        shape[-1] = total // dtype.size
    return spec(shape, dtype)


@defop("Bitcast", infer=_bitcast_infer, differentiable=False)
def _bitcast(xp, x, dtype):
    return xp.ascontiguousarray(x).view(dtype.np)


def bitcast(x, dtype):
    """The bytes of x viewed as `dtype` (NumPy's `view`: the last dim scales by the itemsizes)."""
    return apply("Bitcast", convert_to_tensor(x), dtype=_dt.as_dtype(dtype))
