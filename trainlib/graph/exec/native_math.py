"""Scalar math for compiled (numba) kernels: transcendental functions that vectorize.

Owns: the functions generated native kernels call for transcendental ops (`exp`, `log`,
`tanh`, `sigmoid`, `softplus`, `expm1`, `log1p`, `erf`). Each is a numba overload that
picks its body by the argument's type at compile time: for float32 a branch-free
polynomial or rational form (range reduction, then a minimax fit; `exp` and `log`
assemble and split floats through their bits), which LLVM turns into SIMD code, where a
call to libm's scalar function would stop the loop from vectorizing; for float64, libm
(`math.*`), exact to the last bit or two. Imported only when numba is installed.

Accuracy (float32, measured over the whole finite range by tests/graph/exec/test_native.py
against float64 numpy): `exp`, `log`, `tanh`, `sigmoid` within 4 ulp (relative 5e-7),
inside the tolerances TensorFlow's XLA tests give these functions (1e-6 relative,
2e-6 for tanh). Subnormal inputs of `log` are scaled to normal numbers first.
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

__all__ = ["exp", "log", "tanh", "sigmoid", "softplus", "expm1", "log1p", "erf"]

_F = np.float32
_I = np.int32


@intrinsic
def _f32_from_bits(typingctx, bits):
    """The float32 whose bits are the low 32 bits of the integer `bits` (an LLVM bitcast)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = args[0]
        if bits.bitwidth > 32:
            value = builder.trunc(value, ir.IntType(32))
        return builder.bitcast(value, ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def _bits_from_f32(typingctx, x):
    """The int32 bits of the float32 `x`."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


# the float32 bodies: no reassociation (it would undo the range reductions) and no
# no-NaN assumption (they test for NaN); FMA contraction only
_kernel = njit(inline="always", fastmath={"contract"})


def _stub(name):
    def fn(x):
        raise NotImplementedError(f"native_math.{name} runs inside numba kernels only")
    fn.__name__ = name
    return fn


exp, log, tanh, sigmoid, softplus, expm1, log1p, erf = (_stub(n) for n in __all__)


@_kernel
def _exp32(x):
    # exp(x) = 2**n * exp(r), n = round(x / ln 2), |r| <= ln(2) / 2 (ln 2 split in two parts
    # so n * ln2_hi is exact); 2**n assembled from its bits as two factors, so results
    # that overflow give inf and subnormal results come out right
    nan = x != x
    x = min(max(x, _F(-104.0)), _F(89.0))
    n = np.floor(x * _F(1.442695) + _F(0.5))
    r = x - n * _F(0.693359375)
    r = r + n * _F(2.12194440e-4)
    p = _F(1.9875691500e-4)
    p = p * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    p = p * r * r + r + _F(1.0)
    k = _I(n)
    half = k >> _I(1)
    y = p * _f32_from_bits((half + _I(127)) << _I(23)) * _f32_from_bits((k - half + _I(127)) << _I(23))
    return x if nan else y


@_kernel
def _log32(x):
    # x = m * 2**e with m in [sqrt(1/2), sqrt(2)); log(x) = e*ln2 + log(m), log(m) by a
    # polynomial in (m - 1)
    bad = x != x or x < _F(0.0)
    zero = x == _F(0.0)
    inf = x == _F(np.inf)
    subnormal = x < _F(1.17549435e-38)
    x = x * _F(8388608.0) if subnormal else x    # 2**23: subnormals become normal
    bits = _bits_from_f32(x)
    e = ((bits >> _I(23)) & _I(255)) - _I(126)
    e = e - _I(23) if subnormal else e
    m = _f32_from_bits((bits & _I(0x007FFFFF)) | _I(0x3F000000))   # in [0.5, 1)
    small = m < _F(0.70710678)
    e = e - _I(1) if small else e
    m = m + m - _F(1.0) if small else m - _F(1.0)
    z = m * m
    p = _F(7.0376836292e-2)
    p = p * m + _F(-1.1514610310e-1)
    p = p * m + _F(1.1676998740e-1)
    p = p * m + _F(-1.2420140846e-1)
    p = p * m + _F(1.4249322787e-1)
    p = p * m + _F(-1.6668057665e-1)
    p = p * m + _F(2.0000714765e-1)
    p = p * m + _F(-2.4999993993e-1)
    p = p * m + _F(3.3333331174e-1)
    fe = _F(e)
    y = m * z * p + fe * _F(-2.12194440e-4) - _F(0.5) * z + m + fe * _F(0.693359375)
    y = _F(-np.inf) if zero else y
    y = _F(np.inf) if inf else y
    return _F(np.nan) if bad else y


@_kernel
def _tanh32(x):
    # an odd rational minimax fit on [-9, 9]; tanh is +-1 in float32 beyond
    nan = x != x
    x = min(max(x, _F(-9.0)), _F(9.0))
    small = abs(x) < _F(4e-4)
    x2 = x * x
    p = _F(-2.76076847742355e-16)
    p = p * x2 + _F(2.00018790482477e-13)
    p = p * x2 + _F(-8.60467152213735e-11)
    p = p * x2 + _F(5.12229709037114e-08)
    p = p * x2 + _F(1.48572235717979e-05)
    p = p * x2 + _F(6.37261928875436e-04)
    p = p * x2 + _F(4.89352455891786e-03)
    p = p * x
    q = _F(1.19825839466702e-06)
    q = q * x2 + _F(1.18534705686654e-04)
    q = q * x2 + _F(2.26843463243900e-03)
    q = q * x2 + _F(4.89352518554385e-03)
    y = x if small else p / q
    return x if nan else y


@_kernel
def _sigmoid32(x):
    # e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below (which keeps
    # the subnormal results of x near -88 to -103)
    e = _exp32(-abs(x))
    s = _F(1.0) / (_F(1.0) + e)
    return s if x >= _F(0.0) else e * s


@_kernel
def _softplus32(x):
    # log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|))
    return max(x, _F(0.0)) + _log1p32(_exp32(-abs(x)))


@_kernel
def _log1p32(x):
    # log1p(x) = log(u) * x / (u - 1) with u = 1 + x (exact where u - 1 == x)
    u = _F(1.0) + x
    d = u - _F(1.0)
    return x if d == _F(0.0) or u == _F(np.inf) else _log32(u) * (x / d)


@_kernel
def _expm1_32(x):
    # expm1(x) = (u - 1) * x / log(u) with u = exp(x) (Kahan) for small |x|, u - 1 beyond
    u = _exp32(x)
    y = x if u == _F(1.0) else (u - _F(1.0)) * (x / _log32(u))
    return u - _F(1.0) if abs(x) > _F(0.5) else y


@_kernel
def _erf32(x):
    # erf by Abramowitz-Stegun 7.1.26 refined: not vectorizable cheaply, libm in float64
    return _F(math.erf(np.float64(x)))


_FLOAT32 = {"exp": _exp32, "log": _log32, "tanh": _tanh32, "sigmoid": _sigmoid32,
            "softplus": _softplus32, "expm1": _expm1_32, "log1p": _log1p32, "erf": _erf32}


@_kernel
def _sigmoid64(x):
    e = math.exp(-abs(x))
    s = 1.0 / (1.0 + e)
    return s if x >= 0.0 else e * s


@_kernel
def _softplus64(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@_kernel
def _log64(x):
    if x != x or x < 0.0:
        return np.nan
    return -np.inf if x == 0.0 else math.log(x)


@_kernel
def _log1p64(x):
    if x != x or x < -1.0:
        return np.nan
    return -np.inf if x == -1.0 else math.log1p(x)


_FLOAT64 = {"exp": math.exp, "log": _log64, "tanh": math.tanh, "sigmoid": _sigmoid64,
            "softplus": _softplus64, "expm1": math.expm1, "log1p": _log1p64, "erf": math.erf}


def _register(stub):
    name = stub.__name__
    f32, f64 = _FLOAT32[name], _FLOAT64[name]

    @overload(stub, inline="always", fastmath=True)
    def _typed(x):
        if x == types.float32:
            return lambda x: f32(x)
        if x == types.float64:
            return lambda x: f64(x)
        return None


for _stub_fn in (exp, log, tanh, sigmoid, softplus, expm1, log1p, erf):
    _register(_stub_fn)
