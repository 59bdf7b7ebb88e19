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


# ------------------------------------------------------------------ the gamma family
# Lgamma (Lanczos, g=7), Digamma (reflection, recurrence to x >= 6, asymptotic series) and the
# Hurwitz Zeta (Euler-Maclaurin after 9 explicit terms); polygamma and lbeta are compositions.

__all__ += ["lgamma", "digamma", "zeta", "polygamma", "lbeta", "ndtri", "bessel_i0e",
            "bessel_i1e", "xlog1py"]

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# Bernoulli numbers B_2k / (2k)!, for the asymptotic tails
_BERNOULLI_OVER_FACTORIAL = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                             -691 / 1307674368000, 1 / 74724249600)


def _lgamma_right(xp, x):
    """log|Gamma(x)| for x >= 0.5."""
    y = x - 1.0
    a = xp.full_like(y, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], 1):
        a = a + c / (y + i)
    t = y + 7.5
    return 0.5 * _pymath.log(2 * _pymath.pi) + (y + 0.5) * xp.log(t) - t + xp.log(a)


@defop("Lgamma", infer=float_infer("Lgamma"), elementwise=True,
       grad=lambda op, dy: (dy * digamma(op.inputs[0]),))
def _lgamma(xp, x):
    w = x.astype(xp.float64)
    left = w < 0.5
    right = xp.where(left, 1.0 - w, w)
    out = _lgamma_right(xp, right)
    with xp.errstate(divide="ignore", invalid="ignore"):
        reflected = _pymath.log(_pymath.pi) - xp.log(xp.abs(xp.sin(_pymath.pi * w))) - out
    out = xp.where(left, reflected, out)
    out = xp.where((w <= 0) & (w == xp.floor(w)), xp.inf, out)  # the poles
    return out.astype(x.dtype)


def _digamma_kernel(xp, w):
    left = w < 0.5
    y = xp.where(left, 1.0 - w, w)
    shift = xp.zeros_like(y)
    for _ in range(6):  # psi(y) = psi(y + 1) - 1/y until y >= 6
        small = y < 6
        shift = shift - xp.where(small, 1.0 / y, 0.0)
        y = xp.where(small, y + 1, y)
    inv2 = 1.0 / (y * y)
    series = xp.zeros_like(y)
    for k, b in reversed(list(enumerate(_BERNOULLI_OVER_FACTORIAL[:6], 1))):
        series = (series + b * _pymath.factorial(2 * k - 1)) * inv2
    out = xp.log(y) - 0.5 / y - series + shift
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.where(left, out - _pymath.pi / xp.tan(_pymath.pi * w), out)
    return xp.where((w <= 0) & (w == xp.floor(w)), xp.nan, out)


@defop("Digamma", infer=float_infer("Digamma"), elementwise=True,
       grad=lambda op, dy: (dy * zeta(_math.cast(2, op.inputs[0].dtype), op.inputs[0]),))
def _digamma(xp, x):
    return _digamma_kernel(xp, x.astype(xp.float64)).astype(x.dtype)


def _zeta_grad(op, dy):
    s, q = op.inputs
    return None, dy * -s * zeta(s + 1, q)


@defop("Zeta", infer=_binary_infer("Zeta", ("is_floating",)), elementwise=True, grad=_zeta_grad)
def _zeta(xp, s, q):
    s64, q64 = xp.broadcast_arrays(s.astype(xp.float64), q.astype(xp.float64))
    n = 9
    total = xp.zeros_like(s64)
    with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for k in range(n):
            total = total + (q64 + k) ** -s64
        a = q64 + n
        total = total + a ** (1 - s64) / (s64 - 1) + 0.5 * a ** -s64
        rising = s64.copy()  # s (s+1) ... (s+2k-2)
        for k, b in enumerate(_BERNOULLI_OVER_FACTORIAL, 1):
            total = total + b * rising * a ** (-s64 - 2 * k + 1)
            rising = rising * (s64 + 2 * k - 1) * (s64 + 2 * k)
    total = xp.where(s64 == 1, xp.inf, xp.where((s64 < 1) | (q64 <= 0), xp.nan, total))
    return total.astype(s.dtype)


def lgamma(x, name=None):
    """log|Gamma(x)|, elementwise (inf at the poles 0, -1, -2, ...).

    Example:
        >>> round(float(tl.math.lgamma(5.0)), 5)  # log(4!)
        3.17805
    """
    return apply("Lgamma", _float(x, "lgamma"))


def digamma(x, name=None):
    """The digamma function psi(x) = d/dx lgamma(x), elementwise (NaN at the poles).

    Example:
        >>> round(float(tl.math.digamma(1.0)), 6)  # -Euler's gamma
        -0.577216
    """
    return apply("Digamma", _float(x, "digamma"))


def zeta(x, q, name=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (x > 1, q > 0; NaN elsewhere, inf at x = 1).

    Example:
        >>> round(float(tl.math.zeta(2.0, 1.0)), 6)  # pi^2 / 6
        1.644934
    """
    x, q = _math.convert_same_dtype("Zeta", (_float(x, "zeta"), q))
    return apply("Zeta", x, q)


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a a non-negative integer-valued float tensor):
    psi(x) for a = 0, else (-1)^(a+1) a! zeta(a + 1, x).

    Example:
        >>> round(float(tl.math.polygamma(1.0, 1.0)), 6)  # pi^2 / 6
        1.644934
    """
    a, x = _math.convert_same_dtype("Polygamma", (_float(a, "polygamma"), x))
    sign = 1 - 2 * _math.cast(_math.equal(_math.floormod(a, 2), 0), a.dtype)
    higher = sign * _math.exp(lgamma(a + 1)) * zeta(a + 1, x)
    return _math.where(_math.equal(a, 0), digamma(x), higher)


def lbeta(x, name=None):
    """log|Beta(x)| over the last axis: sum(lgamma(x)) - lgamma(sum(x)).

    Example:
        >>> round(float(tl.math.lbeta([1.0, 2.0])), 6)  # log(1/2)
        -0.693147
    """
    x = _float(x, "lbeta")
    return _math.reduce_sum(lgamma(x), -1) - lgamma(_math.reduce_sum(x, -1))


def ndtri(x, name=None):
    """The inverse of the standard normal CDF: sqrt(2) erfinv(2x - 1).

    Example:
        >>> round(float(tl.math.ndtri(0.975)), 4)
        1.96
    """
    x = _float(x, "ndtri")
    if x.dtype is _dt.float64:
        return _pymath.sqrt(2.0) * erfinv(2 * x - 1)
    wide = _math.cast(x, _dt.float64)  # 2x - 1 keeps the lower tail only in float64
    return _math.cast(_pymath.sqrt(2.0) * erfinv(2 * wide - 1), x.dtype)


def bessel_i0e(x, name=None):
    """The exponentially scaled Bessel function exp(-|x|) I0(x).

    Example:
        >>> round(float(tl.math.bessel_i0e(1.0)), 5)
        0.46576
    """
    x = _float(x, "bessel_i0e")
    return _math.exp(-_math.abs(x)) * i0(x)


def bessel_i1e(x, name=None):
    """The exponentially scaled Bessel function exp(-|x|) I1(x) (no gradient: I1 has none)."""
    x = _float(x, "bessel_i1e")
    return _math.exp(-_math.abs(x)) * i1(x)


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x == 0 (whatever y is).

    Example:
        >>> float(tl.math.xlog1py(0.0, -1.0))
        0.0
    """
    x, y = _math.convert_same_dtype("Xlog1py", (_float(x, "xlog1py"), y))
    zero = _math.equal(x, 0)
    safe = _math.where(zero, _math.cast(zero, y.dtype) * 0, y)  # no inf * 0 at y = -1
    return _math.where(zero, x * 0, x * _math.log1p(safe))


__all__ += ["erfcinv"]


def erfcinv(x, name=None):
    """The inverse of erfc: -ndtri(x / 2) / sqrt(2), accurate for small x (no 1 - x).

    Example:
        >>> round(float(tl.math.erfcinv(0.5)), 6)
        0.476936
    """
    x = _float(x, "erfcinv")
    return -ndtri(x / 2) / _pymath.sqrt(2.0)
