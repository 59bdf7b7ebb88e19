"""One table of `keras.ops` calls: inputs, numpy reference, gradient flag (shared by the tests).

`tests/keras/ops/test_table.py` checks each row against its numpy reference, eager against
traced, and float64 finite differences; `tests/keras_compare/test_ops.py` runs the same rows on
Keras 3 (TensorFlow backend) and compares values, shapes and dtypes.

A row names the op as Keras does (`"mean"`, `"nn.conv"`, `"image.resize"`), lists its tensor
inputs as shape specs, its fixed arguments (`kw`, or `Lit` positional values), and how to call it
(`call(op, *args)`) and what numpy gives (`ref(*arrays)`), both defaulting to the plain call.
"""
import dataclasses
import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

F = ("float32", "float64")
F32 = ("float32",)
I = ("int32",)  # noqa: E741
FI = ("float32", "int32")


@dataclasses.dataclass(frozen=True)
class In:
    """A tensor input: shape, value kind ('f' floats in [lo, hi], 'i' ints in [lo, hi), 'b' bools,
    'spd' symmetric positive-definite matrices, 'fixed' the given array), dtype override."""
    shape: tuple
    kind: str = "f"
    lo: float = -2.0
    hi: float = 2.0
    dtype: Optional[str] = None
    value: Any = None


def Int(shape, lo=0, hi=5):  # noqa: N802
    return In(tuple(shape), "i", lo, hi, "int32")


def Bool(shape):  # noqa: N802
    return In(tuple(shape), "b", dtype="bool")


def Pos(shape, lo=0.5, hi=2.0):  # noqa: N802
    return In(tuple(shape), "f", lo, hi)


def Spd(n):  # noqa: N802
    return In((n, n), "spd")


def Fixed(value, dtype=None):  # noqa: N802
    return In(np.asarray(value).shape, "fixed", dtype=dtype, value=np.asarray(value))


@dataclasses.dataclass(frozen=True)
class Lit:
    """A non-tensor positional argument (an int, a tuple, a string), passed as it is."""
    value: Any


@dataclasses.dataclass
class Case:
    name: str                       # the Keras name: "mean", "nn.softmax", "image.resize"
    inputs: Sequence[Any]           # In / Lit entries (positional arguments, in order)
    kw: dict = dataclasses.field(default_factory=dict)
    ref: Optional[Callable] = None  # numpy reference on the arrays (default np.<name>(*arrays, **kw))
    call: Optional[Callable] = None  # call(op, *args) (default op(*args, **kw))
    grad: bool = False              # finite-difference gradient check (float64)
    dtypes: Sequence[str] = F
    rtol: float = 1e-5
    atol: float = 1e-6
    keras: bool = True              # compare with Keras (False where Keras differs by design)
    keras_dtypes: Optional[Sequence[str]] = None  # dtypes Keras's TF backend keeps (default dtypes)
    id: str = ""                    # distinguishes several rows of one name
    no_ref: bool = False            # no numpy reference (checked against Keras only)
    traced: bool = True             # eager == traced check (False for eager-only Python values)
    unordered: bool = False         # a 1-D result whose order is unspecified (compared sorted)

    def __post_init__(self):
        self.inputs = [In(tuple(s)) if isinstance(s, tuple) else s for s in self.inputs]

    def __str__(self):
        return self.name + (f"[{self.id}]" if self.id else "")


def make_args(case, dtype, seed=0):
    """The positional arguments (numpy arrays and literals) of `case` for `dtype`."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in case.inputs:
        if isinstance(spec, Lit):
            out.append(spec.value)
            continue
        d = np.dtype(spec.dtype or dtype)
        if spec.kind == "fixed":
            out.append(spec.value.astype(spec.dtype or (dtype if spec.value.dtype.kind == "f" else
                                                        spec.value.dtype)))
        elif spec.kind == "b":
            out.append(rng.random(spec.shape) > 0.5)
        elif spec.kind == "i" or d.kind in "iu":
            out.append(rng.integers(int(spec.lo), int(spec.hi) + (1 if spec.kind != "i" else 0),
                                    size=spec.shape).astype(d))
        elif spec.kind == "spd":
            n = spec.shape[0]
            a = rng.uniform(-1, 1, size=(n, n))
            out.append((a @ a.T + n * np.eye(n)).astype(d))
        else:
            out.append(rng.uniform(spec.lo, spec.hi, size=spec.shape).astype(d))
    return out


def _np(name):
    return getattr(np, name)


def _u(name, **kw):
    """A unary elementwise case (float32/float64, gradients checked)."""
    return Case(name, [(3, 4)], grad=True, **kw)


def _b(name, **kw):
    """A binary elementwise case with broadcasting."""
    return Case(name, [(3, 4), (4,)], grad=kw.pop("grad", True), **kw)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _erf(x):
    return np.vectorize(math.erf)(x).astype(x.dtype)


def _windows(fn, n):
    return fn(n).astype(np.float32)


def _conv2d_ref(x, k, stride=1, padding="valid"):
    n, h, w, c = x.shape
    kh, kw, _, co = k.shape
    if padding == "same":
        ph, pw = kh - 1, kw - 1
        oh, ow = -(-h // stride), -(-w // stride)
        th = max((oh - 1) * stride + kh - h, 0)
        tw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (th // 2, th - th // 2), (tw // 2, tw - tw // 2), (0, 0)))
        del ph, pw
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((n, oh, ow, co), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=3)
    return out


def _quantile_ref(x, q, axis=None, method="linear", keepdims=False):
    return np.quantile(x, q, axis=axis, method=method, keepdims=keepdims).astype(x.dtype)


def _bilinear_ref(x, size):
    n, h, w, c = x.shape
    th, tw = size

    def taps(n_in, n_out):
        src = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        lo = np.floor(src)
        frac = src - lo
        return (np.clip(lo, 0, n_in - 1).astype(int), np.clip(np.ceil(src), 0, n_in - 1).astype(int),
                frac)
    lo, hi, f = taps(h, th)
    x = x[:, lo] * (1 - f)[None, :, None, None] + x[:, hi] * f[None, :, None, None]
    lo, hi, f = taps(w, tw)
    return (x[:, :, lo] * (1 - f)[None, None, :, None] + x[:, :, hi] * f[None, None, :, None]).astype(
        np.float32 if x.dtype == np.float32 else x.dtype)


def _sat(op, x, scale, translation, **kw):
    """scale_and_translate with its tensors by keyword (output_shape comes before them)."""
    return op(x, scale=scale, translation=translation, **kw)


# ------------------------------------------------------------------ the table

UNARY_FLOAT = ["abs", "absolute", "negative", "square", "sqrt", "exp", "expm1", "log", "log1p",
               "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "arcsinh",
               "cbrt", "deg2rad", "rad2deg", "reciprocal", "exp2", "fabs"]
_POSITIVE = {"sqrt", "log", "log2", "log10", "reciprocal"}
_DOMAIN = {"log1p": In((3, 4), lo=-0.9, hi=2.0)}

CASES = []
for _name in UNARY_FLOAT:
    CASES.append(Case(_name, [_DOMAIN.get(_name, Pos((3, 4)) if _name in _POSITIVE else In((3, 4)))],
                      grad=True))
CASES += [
    Case("arcsin", [In((3, 4), lo=-0.9, hi=0.9)], grad=True),
    Case("arccos", [In((3, 4), lo=-0.9, hi=0.9)], grad=True),
    Case("arctanh", [In((3, 4), lo=-0.9, hi=0.9)], grad=True),
    Case("arccosh", [Pos((3, 4), 1.2, 3.0)], grad=True),
    Case("sign", [In((3, 4))], dtypes=FI),
    Case("ceil", [In((3, 4))]),
    Case("floor", [In((3, 4))]),
    Case("trunc", [In((3, 4))]),
    Case("round", [In((3, 4))]),
    Case("round", [In((3, 4))], kw={"decimals": 1}, id="decimals"),
    Case("sinc", [In((3, 4))], grad=True),
    Case("i0", [In((3, 4), lo=-5, hi=5)], grad=True, ref=lambda x: np.i0(x).astype(x.dtype),
         rtol=1e-5),
    Case("signbit", [Fixed([-1.0, -0.0, 0.0, 2.0])]),
    Case("isfinite", [Fixed([1.0, np.inf, -np.inf, np.nan])]),
    Case("isinf", [Fixed([1.0, np.inf, -np.inf, np.nan])]),
    Case("isnan", [Fixed([1.0, np.inf, -np.inf, np.nan])]),
    Case("isneginf", [Fixed([1.0, np.inf, -np.inf, np.nan])]),
    Case("isposinf", [Fixed([1.0, np.inf, -np.inf, np.nan])]),
    Case("isreal", [In((3, 4))]),
    Case("real", [In((3, 4))], grad=True),
    Case("imag", [In((3, 4))]),
    Case("conj", [In((3, 4))], grad=True),
    Case("conjugate", [In((3, 4))], grad=True),
    Case("angle", [In((3, 4))]),
    Case("copy", [In((3, 4))], grad=True),
    Case("nan_to_num", [Fixed([1.0, np.nan, np.inf, -np.inf])], dtypes=F,
         ref=lambda x: np.nan_to_num(x)),
    Case("nan_to_num", [Fixed([1.0, np.nan, np.inf, -np.inf])], kw=dict(nan=2.0, posinf=9.0,
                                                                        neginf=-9.0), id="values"),
    # two inputs
    _b("add", dtypes=FI), _b("subtract", dtypes=FI), _b("multiply", dtypes=FI),
    Case("divide", [(3, 4), Pos((4,))], grad=True),
    Case("true_divide", [(3, 4), Pos((4,))], grad=True),
    Case("divide_no_nan", [(3, 4), Fixed([1.0, 0.0, 2.0, -1.0])], grad=False,
         ref=lambda a, b: np.where(b == 0, 0, a / np.where(b == 0, 1, b)).astype(a.dtype)),
    Case("floor_divide", [(3, 4), Pos((4,))], dtypes=F32),
    Case("floor_divide", [Int((3, 4), -5, 5), Int((4,), 1, 4)], dtypes=I, id="int"),
    Case("mod", [(3, 4), Pos((4,))], dtypes=F32),
    Case("mod", [Int((3, 4), -5, 5), Int((4,), 1, 4)], dtypes=I, id="int"),
    Case("fmod", [(3, 4), Pos((4,))], dtypes=F32),
    Case("fmod", [Int((3, 4), -5, 5), Int((4,), 1, 4)], dtypes=I, id="int"),
    Case("power", [Pos((3, 4)), (4,)], grad=True),
    Case("power", [Int((3, 4), 0, 4), Int((4,), 0, 3)], dtypes=I, id="int"),
    _b("maximum", dtypes=FI), _b("minimum", dtypes=FI),
    Case("fmax", [Fixed([1.0, np.nan, 3.0, np.nan]), Fixed([2.0, 1.0, np.nan, np.nan])]),
    Case("fmin", [Fixed([1.0, np.nan, 3.0, np.nan]), Fixed([2.0, 1.0, np.nan, np.nan])]),
    _b("arctan2"), _b("hypot"), _b("logaddexp"), _b("logaddexp2"),
    Case("heaviside", [Fixed([-1.0, 0.0, 2.0, 0.0]), Fixed([0.5, 0.5, 0.5, 0.3])]),
    Case("ldexp", [(3, 4), Int((4,), -2, 3)], grad=True,
         ref=lambda a, b: np.ldexp(a, b).astype(a.dtype)),
    Case("nextafter", [(3, 4), (4,)]),
    Case("gcd", [Int((3, 4), 0, 30), Int((4,), 1, 20)], dtypes=I),
    Case("lcm", [Int((3, 4), 0, 12), Int((4,), 1, 9)], dtypes=I),
    _b("equal", grad=False, dtypes=FI), _b("not_equal", grad=False, dtypes=FI),
    _b("greater", grad=False, dtypes=FI), _b("greater_equal", grad=False, dtypes=FI),
    _b("less", grad=False, dtypes=FI), _b("less_equal", grad=False, dtypes=FI),
    Case("logical_and", [Bool((3, 4)), Bool((4,))]),
    Case("logical_or", [Bool((3, 4)), Bool((4,))]),
    Case("logical_xor", [Bool((3, 4)), Bool((4,))]),
    Case("logical_not", [Bool((3, 4))]),
    Case("bitwise_and", [Int((3, 4), 0, 64), Int((4,), 0, 64)], dtypes=I),
    Case("bitwise_or", [Int((3, 4), 0, 64), Int((4,), 0, 64)], dtypes=I),
    Case("bitwise_xor", [Int((3, 4), 0, 64), Int((4,), 0, 64)], dtypes=I),
    Case("bitwise_invert", [Int((3, 4), -9, 9)], dtypes=I, ref=np.invert),
    Case("bitwise_not", [Int((3, 4), -9, 9)], dtypes=I, ref=np.invert),
    Case("bitwise_left_shift", [Int((3, 4), 0, 64), Int((4,), 0, 4)], dtypes=I, ref=np.left_shift),
    Case("bitwise_right_shift", [Int((3, 4), -64, 64), Int((4,), 0, 4)], dtypes=I,
         ref=np.right_shift),
    Case("left_shift", [Int((3, 4), 0, 64), Int((4,), 0, 4)], dtypes=I),
    Case("right_shift", [Int((3, 4), -64, 64), Int((4,), 0, 4)], dtypes=I),
    Case("isclose", [Fixed([1.0, 1.0, 2.0, np.nan]), Fixed([1.0, 1.000001, 2.1, np.nan])]),
    Case("allclose", [Fixed([1.0, 1.0, 2.0]), Fixed([1.0, 1.000001, 2.0])]),
    Case("clip", [(3, 4), Lit(-0.5), Lit(0.5)], grad=True),
    Case("clip", [Int((3, 4), -5, 5), Lit(-2), Lit(2)], dtypes=I, id="int"),
    Case("where", [Bool((3, 4)), (3, 4), (4,)], grad=True),
    Case("where", [Bool((3, 4))], ref=lambda c: tuple(i.astype(np.int32) for i in np.nonzero(c)),
         id="one_arg", traced=False),
    Case("select", [Bool((3, 4)), Bool((3, 4)), (3, 4), (3, 4)],
         call=lambda op, c1, c2, a, b: op([c1, c2], [a, b], 0.0),
         ref=lambda c1, c2, a, b: np.select([c1, c2], [a, b], 0.0).astype(a.dtype)),
    # reductions
    Case("sum", [(3, 4, 2)], kw={"axis": 1}, grad=True, dtypes=("float32", "float64", "int32")),
    Case("sum", [(3, 4)], grad=True, id="all"),
    Case("sum", [(3, 4, 2)], kw={"axis": (0, 2), "keepdims": True}, grad=True, id="keepdims"),
    Case("prod", [(3, 4)], kw={"axis": 0}, grad=True),
    Case("mean", [(3, 4, 2)], kw={"axis": -1}, grad=True),
    Case("mean", [Int((3, 4), 0, 9)], dtypes=I, id="int",
         ref=lambda x: np.mean(x).astype(np.float32)),
    Case("max", [(3, 4)], kw={"axis": 1}, grad=True, dtypes=FI),
    Case("min", [(3, 4)], kw={"axis": 0, "keepdims": True}, grad=True, dtypes=FI),
    Case("amax", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("amin", [(3, 4)], grad=True),
    Case("all", [Bool((3, 4))], kw={"axis": 1}),
    Case("any", [Bool((3, 4))], kw={"axis": 0}),
    Case("var", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("std", [(3, 4)], kw={"axis": 0}, grad=True),
    Case("ptp", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("count_nonzero", [Int((3, 4), 0, 2)], kw={"axis": 1}, dtypes=I,
         ref=lambda x, axis: np.count_nonzero(x, axis=axis).astype(np.int32)),
    Case("argmax", [(3, 4)], kw={"axis": 1}, ref=lambda x, axis: np.argmax(x, axis).astype(np.int32)),
    Case("argmax", [(3, 4)], ref=lambda x: np.int32(np.argmax(x)), id="flat"),
    Case("argmin", [(3, 4)], kw={"axis": 0}, ref=lambda x, axis: np.argmin(x, axis).astype(np.int32)),
    Case("average", [(3, 4), Pos((4,))], kw={"axis": 1}, grad=True,
         call=lambda op, x, w, axis: op(x, axis=axis, weights=w),
         ref=lambda x, w, axis: np.average(x, axis=axis, weights=w).astype(x.dtype)),
    Case("cumsum", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("cumsum", [(3, 4)], grad=True, id="flat"),
    Case("cumprod", [(3, 4)], kw={"axis": 0}, grad=True),
    Case("median", [(3, 5)], kw={"axis": 1}, grad=True),
    Case("median", [(3, 4)], grad=True, id="all"),
    Case("quantile", [(3, 5), Lit(0.3)], kw={"axis": 1}, grad=True,
         ref=lambda x, q, axis: _quantile_ref(x, q, axis)),
    Case("quantile", [(7,), Lit(0.3)], kw={"method": "nearest"}, id="nearest",
         ref=lambda x, q, method: _quantile_ref(x, q, method=method)),
    Case("quantile", [(7,), Lit(0.3)], kw={"method": "lower"}, id="lower",
         ref=lambda x, q, method: _quantile_ref(x, q, method=method)),
    Case("quantile", [(7,), Lit(0.3)], kw={"method": "higher"}, id="higher",
         ref=lambda x, q, method: _quantile_ref(x, q, method=method)),
    Case("quantile", [(7,), Lit(0.3)], kw={"method": "midpoint"}, id="midpoint",
         ref=lambda x, q, method: _quantile_ref(x, q, method=method)),
    Case("percentile", [(3, 5), Lit(40.0)], kw={"axis": 0}, grad=True,
         ref=lambda x, q, axis: np.percentile(x, q, axis=axis).astype(x.dtype)),
    Case("nansum", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanprod", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanmean", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanmax", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanmin", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanvar", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanstd", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanargmax", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1},
         ref=lambda x, axis: np.nanargmax(x, axis).astype(np.int32)),
    Case("nanargmin", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1},
         ref=lambda x, axis: np.nanargmin(x, axis).astype(np.int32)),
    Case("nancumsum", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nancumprod", [Fixed([[1.0, np.nan, 3.0], [np.nan, 2.0, 1.0]])], kw={"axis": 1}),
    Case("nanmedian", [Fixed([[1.0, np.nan, 3.0, 0.5], [np.nan, 2.0, 1.0, 4.0]])], kw={"axis": 1}),
    Case("nanquantile", [Fixed([[1.0, np.nan, 3.0, 0.5], [np.nan, 2.0, 1.0, 4.0]]), Lit(0.3)],
         kw={"axis": 1}, ref=lambda x, q, axis: np.nanquantile(x, q, axis=axis).astype(x.dtype)),
    Case("nanpercentile", [Fixed([[1.0, np.nan, 3.0, 0.5], [np.nan, 2.0, 1.0, 4.0]]), Lit(30.0)],
         kw={"axis": 1}, ref=lambda x, q, axis: np.nanpercentile(x, q, axis=axis).astype(x.dtype)),
    # creation
    Case("array", [(3, 4)], grad=True),
    Case("zeros", [Lit((2, 3))], ref=lambda s: np.zeros(s, np.float32)),
    Case("ones", [Lit((2, 3))], ref=lambda s: np.ones(s, np.float32)),
    Case("empty", [Lit((2, 3))], ref=lambda s: np.zeros(s, np.float32), keras=False),
    Case("full", [Lit((2, 3)), Lit(1.5)], ref=lambda s, v: np.full(s, v, np.float32)),
    Case("zeros_like", [(3, 4)]),
    Case("ones_like", [(3, 4)]),
    Case("empty_like", [(3, 4)], ref=np.zeros_like, keras=False),
    Case("full_like", [(3, 4), Lit(2.0)]),
    Case("eye", [Lit(3), Lit(4)], kw={"k": 1}, ref=lambda n, m, k: np.eye(n, m, k, np.float32)),
    Case("eye", [Lit(3)], ref=lambda n: np.eye(n, dtype=np.float32), id="square"),
    Case("identity", [Lit(3)], ref=lambda n: np.identity(n, np.float32)),
    Case("tri", [Lit(3), Lit(4)], kw={"k": -1}, ref=lambda n, m, k: np.tri(n, m, k, np.float32)),
    Case("tril", [(4, 4)], kw={"k": -1}, grad=True),
    Case("triu", [(3, 4)], kw={"k": 1}, grad=True),
    Case("arange", [Lit(2), Lit(11), Lit(3)], ref=lambda a, b, c: np.arange(a, b, c, dtype=np.int32)),
    Case("arange", [Lit(0.5), Lit(3.0), Lit(0.5)], id="float",
         ref=lambda a, b, c: np.arange(a, b, c, dtype=np.float32)),
    Case("linspace", [Lit(0.0), Lit(1.0)], kw={"num": 5},
         ref=lambda a, b, num: np.linspace(a, b, num).astype(np.float32)),
    Case("linspace", [(2,), (2,)], kw={"num": 4}, grad=True, id="tensors",
         ref=lambda a, b, num: np.linspace(a, b, num).astype(a.dtype)),
    Case("logspace", [Lit(0.0), Lit(2.0)], kw={"num": 4},
         ref=lambda a, b, num: np.logspace(a, b, num).astype(np.float32), rtol=1e-5),
    Case("geomspace", [Lit(1.0), Lit(100.0)], kw={"num": 4},
         ref=lambda a, b, num: np.geomspace(a, b, num).astype(np.float32), rtol=1e-5),
    Case("bartlett", [Lit(6)], ref=lambda n: _windows(np.bartlett, n)),
    Case("blackman", [Lit(6)], ref=lambda n: _windows(np.blackman, n), atol=1e-6),
    Case("hamming", [Lit(6)], ref=lambda n: _windows(np.hamming, n)),
    Case("hanning", [Lit(6)], ref=lambda n: _windows(np.hanning, n)),
    Case("kaiser", [Lit(6), Lit(2.5)], ref=lambda n, b: np.kaiser(n, b).astype(np.float32)),
    Case("vander", [(4,)], kw={"N": 3}, grad=True),
    Case("meshgrid", [(3,), (4,)], grad=True),
    Case("meshgrid", [(3,), (4,)], kw={"indexing": "ij"}, grad=True, id="ij"),
    # shapes and layout
    Case("ndim", [(3, 4)], ref=np.ndim, traced=False),
    Case("size", [(3, 4)], ref=lambda x: np.int32(np.size(x))),
    Case("shape", [(3, 4)], ref=np.shape, traced=False),
    Case("reshape", [(3, 4)], kw={"newshape": (2, -1)}, grad=True,
         ref=lambda x, newshape: np.reshape(x, newshape)),
    Case("ravel", [(3, 4)], grad=True),
    Case("transpose", [(2, 3, 4)], kw={"axes": (1, 0, 2)}, grad=True),
    Case("transpose", [(2, 3, 4)], grad=True, id="default"),
    Case("moveaxis", [(2, 3, 4)], kw={"source": 0, "destination": -1}, grad=True),
    Case("swapaxes", [(2, 3, 4)], kw={"axis1": 0, "axis2": 2}, grad=True),
    Case("expand_dims", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("expand_dims", [(3, 4)], kw={"axis": (0, 3)}, grad=True, id="tuple"),
    Case("squeeze", [(3, 1, 4, 1)], grad=True),
    Case("squeeze", [(3, 1, 4, 1)], kw={"axis": 1}, grad=True, id="axis"),
    Case("broadcast_to", [(1, 4)], kw={"shape": (3, 4)}, grad=True),
    Case("flip", [(3, 4)], kw={"axis": 1}, grad=True),
    Case("flip", [(3, 4)], grad=True, id="all"),
    Case("fliplr", [(3, 4)], grad=True),
    Case("flipud", [(3, 4)], grad=True),
    Case("rot90", [(3, 4)], grad=True),
    Case("rot90", [(3, 4, 2)], kw={"k": 3, "axes": (1, 2)}, grad=True, id="k3"),
    Case("roll", [(3, 4)], kw={"shift": 2, "axis": 1}, grad=True),
    Case("roll", [(3, 4)], kw={"shift": -5}, grad=True, id="flat"),
    Case("tile", [(2, 3)], kw={"repeats": (2, 1, 2)}, grad=True,
         ref=lambda x, repeats: np.tile(x, repeats)),
    Case("repeat", [(2, 3)], kw={"repeats": 2, "axis": 1}, grad=True),
    Case("repeat", [(2, 3)], kw={"repeats": 2}, grad=True, id="flat"),
    Case("concatenate", [(2, 3), (1, 3)], call=lambda op, a, b: op([a, b], axis=0),
         ref=lambda a, b: np.concatenate([a, b], 0), grad=True),
    # Keras's TensorFlow backend rejects axis=None; trainlib follows NumPy (and Keras on JAX)
    Case("concatenate", [(2, 3), (1, 3)], call=lambda op, a, b: op([a, b], axis=None),
         ref=lambda a, b: np.concatenate([a, b], None), grad=True, id="flat", keras=False),
    Case("append", [(2, 3), (1, 3)], kw={"axis": 0}, grad=True),
    Case("stack", [(2, 3), (2, 3)], call=lambda op, a, b: op([a, b], axis=1),
         ref=lambda a, b: np.stack([a, b], 1), grad=True),
    Case("hstack", [(2, 3), (2, 1)], call=lambda op, a, b: op([a, b]),
         ref=lambda a, b: np.hstack([a, b]), grad=True),
    Case("vstack", [(2, 3), (1, 3)], call=lambda op, a, b: op([a, b]),
         ref=lambda a, b: np.vstack([a, b]), grad=True),
    # 1-D rows: NumPy (and Keras on JAX) give (2, 3); Keras on TensorFlow concatenates to (6,)
    Case("vstack", [(3,), (3,)], call=lambda op, a, b: op([a, b]),
         ref=lambda a, b: np.vstack([a, b]), grad=True, id="1d", keras=False),
    Case("dstack", [(2, 3), (2, 3)], call=lambda op, a, b: op([a, b]),
         ref=lambda a, b: np.dstack([a, b]), grad=True),
    Case("split", [(6, 2), Lit(3)], grad=True, ref=lambda x, n: np.split(x, n)),
    Case("split", [(2, 7), Lit([2, 5])], kw={"axis": 1}, grad=True, id="indices",
         ref=lambda x, idx, axis: np.split(x, idx, axis)),
    Case("array_split", [(7, 2), Lit(3)], grad=True, ref=lambda x, n: np.array_split(x, n)),
    Case("hsplit", [(2, 6), Lit(2)], grad=True),
    Case("vsplit", [(4, 2), Lit(2)], grad=True),
    Case("dsplit", [(2, 2, 4), Lit(2)], grad=True),
    Case("pad", [(2, 3)], kw={"pad_width": ((1, 0), (2, 1))}, grad=True),
    Case("pad", [(2, 3)], kw={"pad_width": ((1, 1), (2, 2)), "mode": "reflect"}, grad=True,
         id="reflect"),
    # a scalar pad_width: NumPy's broadcasting (Keras on TensorFlow rejects it)
    Case("pad", [(2, 3)], kw={"pad_width": 1}, grad=True, id="scalar", keras=False),
    Case("pad", [(3, 3)], kw={"pad_width": ((1, 2), (2, 1)), "mode": "symmetric"}, grad=True,
         id="symmetric"),
    Case("pad", [(2, 3)], kw={"pad_width": ((1, 1), (0, 2)), "constant_values": 3}, id="value"),
    Case("get_item", [(3, 4), Lit((slice(1, None), 2))], grad=True,
         ref=lambda x, key: x[key]),
    Case("take", [(3, 4), Fixed([2, -1, 0], "int32")], kw={"axis": 1}, grad=True),
    Case("take", [(3, 4), Fixed([[5, -1], [0, 11]], "int32")], grad=True, id="flat"),
    Case("take_along_axis", [(3, 4), Fixed([[0, 3], [1, 1], [2, 0]], "int32")], kw={"axis": 1},
         grad=True),
    Case("take_along_axis", [(3, 4), Fixed([[0, 2, 1, 0]], "int32")], kw={"axis": 0}, grad=True,
         id="broadcast"),
    Case("diagonal", [(3, 4)], kw={"offset": 1}, grad=True),
    Case("diagonal", [(2, 3, 3)], kw={"offset": -1, "axis1": 1, "axis2": 2}, grad=True, id="axes"),
    Case("diag", [(4,)], kw={"k": 1}, grad=True),
    Case("diag", [(3, 4)], kw={"k": -1}, grad=True, id="extract"),
    Case("diagflat", [(2, 2)], grad=True),
    Case("trace", [(3, 4)], kw={"offset": 1}, grad=True),
    Case("diff", [(3, 5)], kw={"n": 2}, grad=True),
    # products
    Case("matmul", [(2, 3, 4), (4, 5)], grad=True, dtypes=("float32", "float64", "int32")),
    Case("matmul", [(4,), (4, 5)], grad=True, id="vector"),
    Case("dot", [(3, 4), (4, 2)], grad=True),
    Case("dot", [(2, 3, 4), (4,)], grad=True, id="nd_1d"),
    Case("dot", [(2, 3, 4), (5, 4, 2)], grad=True, id="nd_nd"),
    Case("vdot", [(3, 4), (4, 3)], grad=True),
    Case("inner", [(2, 4), (3, 4)], grad=True),
    Case("outer", [(3,), (4,)], grad=True),
    Case("tensordot", [(2, 3, 4), (3, 4, 5)], kw={"axes": 2}, grad=True),
    Case("tensordot", [(2, 3, 4), (4, 3)], kw={"axes": ([1, 2], [1, 0])}, grad=True, id="pairs"),
    Case("einsum", [Lit("ij,jk->ik"), (2, 3), (3, 4)], grad=True),
    Case("kron", [(2, 3), (2, 2)], grad=True),
    Case("cross", [(4, 3), (4, 3)], grad=True),
    Case("correlate", [(6,), (3,)], grad=True),
    Case("correlate", [(6,), (3,)], kw={"mode": "same"}, grad=True, id="same"),
    Case("correlate", [(6,), (3,)], kw={"mode": "full"}, grad=True, id="full"),
    Case("corrcoef", [(3, 6)], grad=True),
    Case("trapezoid", [(3, 5)], grad=True),
    Case("trapezoid", [(3, 5)], kw={"dx": 0.5, "axis": 0}, grad=True, id="dx"),
    # sorting, searching, sets
    Case("sort", [(3, 5)], kw={"axis": 1}, grad=True),
    Case("sort", [(3, 5)], kw={"axis": None}, grad=True, id="flat"),
    Case("argsort", [(3, 5)], kw={"axis": 0}, ref=lambda x, axis: np.argsort(
        x, axis, kind="stable").astype(np.int32)),
    Case("argpartition", [Fixed([[3.0, 1.0, 2.0, 0.5], [0.0, 5.0, -1.0, 2.0]]), Lit(1)],
         ref=None, no_ref=True, keras=False),
    Case("searchsorted", [Fixed([0.0, 1.0, 2.5, 4.0]), (6,)],
         ref=lambda s, v: np.searchsorted(s, v).astype(np.int32)),
    # values of any shape: NumPy's rule (Keras on TensorFlow needs 1-D values)
    Case("searchsorted", [Fixed([0.0, 1.0, 2.5, 4.0]), (3, 2)], id="nd", keras=False,
         ref=lambda s, v: np.searchsorted(s, v).astype(np.int32)),
    Case("searchsorted", [Fixed([0.0, 1.0, 1.0, 4.0]), Fixed([1.0, 3.0])], kw={"side": "right"},
         ref=lambda s, v, side: np.searchsorted(s, v, side).astype(np.int32), id="right"),
    Case("digitize", [(3, 2), Fixed([-1.0, 0.0, 1.0])],
         ref=lambda x, b: np.digitize(x, b).astype(np.int32)),
    Case("nonzero", [Int((3, 4), 0, 2)], dtypes=I, traced=False,
         ref=lambda x: tuple(i.astype(np.int32) for i in np.nonzero(x))),
    Case("isin", [Int((3, 4), 0, 6), Fixed([1, 3, 4], "int32")], dtypes=I),
    Case("unique", [Fixed([3, 1, 3, 2, 1, 5], "int32")], dtypes=I, traced=False),
    Case("unique", [Fixed([3, 1, 3, 2, 1, 5], "int32")], dtypes=I, traced=False, id="inverse",
         kw=dict(return_inverse=True, return_counts=True),
         ref=lambda x, return_inverse, return_counts: tuple(
             a.astype(np.int32) for a in np.unique(x, return_inverse=True, return_counts=True))),
    Case("unravel_index", [Fixed([5, 11, 0], "int32"), Lit((3, 4))], dtypes=I,
         ref=lambda i, s: tuple(a.astype(np.int32) for a in np.unravel_index(i, s))),
    Case("bincount", [Fixed([0, 1, 1, 3], "int32")], dtypes=I,
         ref=lambda x: np.bincount(x).astype(np.int32)),
    Case("bincount", [Fixed([0, 1, 1, 3], "int32"), Pos((4,))], kw={"minlength": 6}, id="weights",
         ref=lambda x, w, minlength: np.bincount(x, w, minlength).astype(w.dtype)),
    Case("histogram", [(20,)], kw={"bins": 4},
         ref=lambda x, bins: (np.histogram(x, bins)[0].astype(x.dtype),
                              np.histogram(x, bins)[1].astype(x.dtype))),
    Case("slogdet", [Spd(3)], grad=True, ref=lambda x: tuple(np.linalg.slogdet(x))),
    Case("view", [Fixed([1.0, -2.0], "float32")], kw={"dtype": "int32"}, dtypes=F32,
         ref=lambda x, dtype: x.view(dtype)),
    Case("vectorize", [(3, 4)], call=lambda op, x: op(lambda v: v * 2.0 + 1.0)(x),
         ref=lambda x: x * 2 + 1, grad=True, keras=False),
]

# ------------------------------------------------------------------ core / math names

CASES += [
    Case("cast", [(3, 4)], kw={"dtype": "int32"}, ref=lambda x, dtype: x.astype(dtype)),
    Case("saturate_cast", [Fixed([-300.0, 1.5, 300.0])], kw={"dtype": "uint8"}, dtypes=F32,
         ref=lambda x, dtype: np.clip(x, 0, 255).astype(dtype)),
    Case("convert_to_tensor", [(3, 4)], grad=True, ref=lambda x: x),
    Case("convert_to_numpy", [(3, 4)], ref=lambda x: x, traced=False),
    Case("is_tensor", [(3, 4)], ref=lambda x: False, traced=False, keras=False,
         call=lambda op, x: op(x)),
    Case("dtype", [(3, 4)], ref=lambda x: str(x.dtype), traced=False),
    Case("stop_gradient", [(3, 4)], ref=lambda x: x),
    Case("unstack", [(3, 4)], kw={"axis": 1}, grad=True, ref=lambda x, axis: list(np.moveaxis(x, 1, 0))),
    Case("slice", [(3, 4), Lit((1, 1)), Lit((2, 2))], grad=True,
         ref=lambda x, s, z: x[1:3, 1:3]),
    Case("slice_update", [(3, 4), Lit((1, 1)), (2, 2)], grad=True,
         ref=lambda x, s, u: np.concatenate([x[:1], np.concatenate([x[1:3, :1], u, x[1:3, 3:]], 1)],
                                            0)),
    Case("scatter", [Fixed([[0, 1], [2, 3], [0, 1]], "int32"), (3,), Lit((3, 4))], grad=True,
         ref=lambda i, v, s: _scatter_ref(i, v, s)),
    Case("scatter_update", [(3, 4), Fixed([[0, 1], [2, 3]], "int32"), (2,)], grad=True,
         ref=lambda x, i, u: _scatter_update_ref(x, i, u)),
    Case("segment_sum", [(5, 2), Fixed([0, 0, 2, 1, 2], "int32")], kw={"num_segments": 3}, grad=True,
         ref=lambda d, s, num_segments: _segment_ref(np.add, 0, d, s, num_segments)),
    Case("segment_max", [(5, 2), Fixed([0, 0, 2, 1, 2], "int32")], kw={"num_segments": 3}, grad=True,
         ref=lambda d, s, num_segments: _segment_ref(np.maximum, -np.inf, d, s, num_segments)),
    Case("segment_min", [(5, 2), Fixed([0, 0, 2, 1, 2], "int32")], kw={"num_segments": 3}, grad=True,
         ref=lambda d, s, num_segments: _segment_ref(np.minimum, np.inf, d, s, num_segments)),
    Case("segment_prod", [(5, 2), Fixed([0, 0, 2, 1, 2], "int32")], kw={"num_segments": 4},
         grad=True, ref=lambda d, s, num_segments: _segment_ref(np.multiply, 1, d, s, num_segments)),
    Case("top_k", [(3, 6)], kw={"k": 2}, grad=True,
         ref=lambda x, k: (-np.sort(-x, -1)[:, :k], np.argsort(-x, -1, kind="stable")[:, :k].astype(
             np.int32))),
    Case("in_top_k", [Fixed([1, 0, 2], "int32"), (3, 4)], kw={"k": 2}, dtypes=F32,
         ref=lambda t, p, k: np.array([t[i] in np.argsort(-p[i])[:k] for i in range(3)])),
    Case("logsumexp", [(3, 4)], kw={"axis": 1}, grad=True,
         ref=lambda x, axis: np.log(np.sum(np.exp(x), axis)).astype(x.dtype)),
    Case("erf", [(3, 4)], grad=True, ref=_erf),
    Case("erfc", [(3, 4)], grad=True, ref=lambda x: (1 - _erf(x)).astype(x.dtype)),
    Case("erfinv", [In((3, 4), lo=-0.9, hi=0.9)], grad=True, no_ref=True),
    Case("rsqrt", [Pos((3, 4))], grad=True, ref=lambda x: 1 / np.sqrt(x)),
    Case("logdet", [Spd(3)], grad=True, ref=lambda x: np.linalg.slogdet(x)[1].astype(x.dtype)),
    Case("cdist", [(3, 4), (5, 4)], grad=True,
         ref=lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))),
    Case("rearrange", [(2, 4, 6, 3), Lit("b (h1 h) (w1 w) c -> (b h1 w1) h w c")],
         kw={"h1": 2, "w1": 2}, grad=True,
         ref=lambda x, p, h1, w1: x.reshape(2, 2, 2, 2, 3, 3).transpose(0, 1, 3, 2, 4, 5).reshape(
             8, 2, 3, 3)),
    Case("extract_sequences", [(2, 10)], kw={"sequence_length": 4, "sequence_stride": 3}, grad=True,
         ref=lambda x, sequence_length, sequence_stride: np.stack(
             [x[:, i:i + 4] for i in range(0, 7, 3)], 1)),
    Case("fft", [(2, 8), (2, 8)], call=lambda op, a, b: op((a, b)), grad=True,
         ref=lambda a, b: (np.fft.fft(a + 1j * b).real.astype(a.dtype),
                           np.fft.fft(a + 1j * b).imag.astype(a.dtype)), rtol=1e-4, atol=1e-5),
    Case("fft2", [(2, 4, 6), (2, 4, 6)], call=lambda op, a, b: op((a, b)), grad=True,
         ref=lambda a, b: (np.fft.fft2(a + 1j * b).real.astype(a.dtype),
                           np.fft.fft2(a + 1j * b).imag.astype(a.dtype)), rtol=1e-4, atol=1e-5),
    Case("ifft2", [(2, 4, 6), (2, 4, 6)], call=lambda op, a, b: op((a, b)), grad=True,
         ref=lambda a, b: (np.fft.ifft2(a + 1j * b).real.astype(a.dtype),
                           np.fft.ifft2(a + 1j * b).imag.astype(a.dtype)), rtol=1e-4, atol=1e-5),
    Case("rfft", [(2, 8)], grad=True, keras_dtypes=F32,
         ref=lambda a: (np.fft.rfft(a).real.astype(a.dtype), np.fft.rfft(a).imag.astype(a.dtype)),
         rtol=1e-4, atol=1e-5),
    Case("rfft", [(2, 7)], kw={"fft_length": 10}, grad=True, id="length", keras_dtypes=F32,
         ref=lambda a, fft_length: (np.fft.rfft(a, 10).real.astype(a.dtype),
                                    np.fft.rfft(a, 10).imag.astype(a.dtype)), rtol=1e-4, atol=1e-5),
    Case("irfft", [(2, 5), (2, 5)], call=lambda op, a, b: op((a, b)), grad=True,
         ref=lambda a, b: np.fft.irfft(a + 1j * b).astype(a.dtype), rtol=1e-4, atol=1e-5),
    Case("stft", [(2, 32)], kw=dict(sequence_length=8, sequence_stride=4, fft_length=8), grad=True,
         no_ref=True, rtol=1e-4, atol=1e-5),
    Case("stft", [(2, 32)], kw=dict(sequence_length=6, sequence_stride=4, fft_length=8,
                                    window="hamming", center=False), no_ref=True, rtol=1e-4,
         atol=1e-5, id="short_window"),
    Case("istft", [(2, 9, 5), (2, 9, 5)], call=lambda op, a, b: op(
        (a, b), sequence_length=8, sequence_stride=4, fft_length=8), no_ref=True, grad=True,
        rtol=1e-4, atol=1e-5),
    Case("cond", [(3,)], call=lambda op, x: op(x[0] > 0, lambda: x * 2.0, lambda: x - 1.0),
         ref=lambda x: x * 2 if x[0] > 0 else x - 1, grad=True),
    Case("while_loop", [(3,)], call=lambda op, x: op(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0),
                                                     (0, x))[1],
         ref=lambda x: x * 8, grad=True),
    Case("fori_loop", [(3,)], call=lambda op, x: op(0, 4, lambda i, v: v * 1.5 + 1.0, x),
         ref=lambda x: (((x * 1.5 + 1) * 1.5 + 1) * 1.5 + 1) * 1.5 + 1, grad=True),
    Case("scan", [(3,), (4, 3)], call=lambda op, c, xs: op(lambda a, x: (a + x, a * x), c, xs),
         ref=lambda c, xs: _scan_ref(c, xs), grad=True),
    Case("associative_scan", [(5, 3)], call=lambda op, x: op(lambda a, b: a + b, x),
         ref=lambda x: np.cumsum(x, 0), grad=True),
    Case("associative_scan", [(5, 3)], call=lambda op, x: op(lambda a, b: a * b, x, reverse=True),
         ref=lambda x: np.cumprod(x[::-1], 0)[::-1], grad=True, id="reverse"),
    Case("map", [(4, 3)], call=lambda op, x: op(lambda v: v * v, x), ref=lambda x: x * x, grad=True),
    Case("vectorized_map", [(4, 3)], call=lambda op, x: op(lambda v: v.sum() if hasattr(v, "sum")
                                                           else v, x),
         ref=None, no_ref=True, keras=False, traced=False),
    Case("switch", [(3,)], call=lambda op, x: op(1, [lambda v: v + 1.0, lambda v: v * 3.0], x),
         ref=lambda x: x * 3, grad=True),
    Case("custom_gradient", [(3,)], call=lambda op, x: op(double_grad)(x), ref=lambda x: x * 1.0),
    Case("jvp", [(3,), (3,)], call=lambda op, x, t: op(lambda v: v * v, (x,), (t,)),
         ref=lambda x, t: (x * x, 2 * x * t)),
]


def double_grad(x):
    """Identity whose custom gradient doubles the upstream gradient."""
    def grad(dy):
        return dy * 2.0
    return x * 1.0, grad


def _scan_ref(c, xs):
    ys = []
    for x in xs:
        c, y = c + x, c * x
        ys.append(y)
    return c, np.stack(ys)


def _scatter_ref(i, v, s):
    out = np.zeros(s, dtype=v.dtype)
    for idx, val in zip(i, v):
        out[tuple(idx)] += val
    return out


def _scatter_update_ref(x, i, u):
    out = x.copy()
    for idx, val in zip(i, u):
        out[tuple(idx)] = val
    return out


def _segment_ref(fn, init, d, s, n):
    out = np.full((n,) + d.shape[1:], init, dtype=np.float64)
    for row, seg in zip(d, s):
        out[seg] = fn(out[seg], row)
    if init in (np.inf, -np.inf):
        info = np.finfo(d.dtype)
        out = np.where(np.isinf(out), info.max if init > 0 else info.min, out)
    return out.astype(d.dtype)


# ------------------------------------------------------------------ nn

def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


CASES += [
    Case("nn.relu", [(3, 4)], grad=True, ref=lambda x: np.maximum(x, 0)),
    Case("nn.relu6", [In((3, 4), lo=-3, hi=8)], grad=True, ref=lambda x: np.clip(x, 0, 6)),
    Case("nn.sigmoid", [(3, 4)], grad=True, ref=_sigmoid),
    Case("nn.softplus", [(3, 4)], grad=True, ref=lambda x: np.log1p(np.exp(x))),
    Case("nn.softsign", [(3, 4)], grad=True, ref=lambda x: x / (1 + np.abs(x))),
    Case("nn.silu", [(3, 4)], grad=True, ref=lambda x: x * _sigmoid(x)),
    Case("nn.swish", [(3, 4)], grad=True, ref=lambda x: x * _sigmoid(x)),
    Case("nn.log_sigmoid", [(3, 4)], grad=True, ref=lambda x: np.log(_sigmoid(x))),
    Case("nn.leaky_relu", [(3, 4)], kw={"negative_slope": 0.1}, grad=True,
         ref=lambda x, negative_slope: np.where(x > 0, x, 0.1 * x)),
    Case("nn.hard_sigmoid", [(3, 4)], grad=True, ref=lambda x: np.clip(x + 3, 0, 6) / 6),
    Case("nn.hard_silu", [(3, 4)], grad=True, ref=lambda x: x * np.clip(x + 3, 0, 6) / 6),
    Case("nn.hard_swish", [(3, 4)], grad=True, ref=lambda x: x * np.clip(x + 3, 0, 6) / 6),
    Case("nn.elu", [(3, 4)], kw={"alpha": 0.5}, grad=True,
         ref=lambda x, alpha: np.where(x > 0, x, 0.5 * np.expm1(x))),
    Case("nn.selu", [(3, 4)], grad=True,
         ref=lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    Case("nn.gelu", [(3, 4)], grad=True, ref=_gelu_tanh),
    Case("nn.gelu", [(3, 4)], kw={"approximate": False}, grad=True, id="exact",
         ref=lambda x, approximate: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    Case("nn.celu", [(3, 4)], kw={"alpha": 0.7}, grad=True,
         ref=lambda x, alpha: np.maximum(x, 0) + 0.7 * np.expm1(np.minimum(x, 0) / 0.7)),
    Case("nn.glu", [(3, 4)], grad=True, ref=lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
    Case("nn.tanh_shrink", [(3, 4)], grad=True, ref=lambda x: x - np.tanh(x)),
    Case("nn.hard_tanh", [(3, 4)], grad=True, ref=lambda x: np.clip(x, -1, 1)),
    Case("nn.hard_shrink", [(3, 4)], grad=True, ref=lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    Case("nn.soft_shrink", [(3, 4)], grad=True,
         ref=lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    Case("nn.threshold", [(3, 4), Lit(0.3), Lit(-1.0)], grad=True,
         ref=lambda x, t, v: np.where(x > t, x, v)),
    Case("nn.sparse_plus", [(3, 4)], grad=True,
         ref=lambda x: np.where(x <= -1, 0, np.where(x < 1, 0.25 * (x + 1) ** 2, x))),
    Case("nn.sparse_sigmoid", [(3, 4)], grad=True,
         ref=lambda x: np.where(x <= -1, 0, np.where(x >= 1, 1, 0.5 * (x + 1)))),
    Case("nn.squareplus", [(3, 4)], grad=True, ref=lambda x: (x + np.sqrt(x * x + 4)) / 2),
    Case("nn.softmax", [(3, 4)], grad=True, ref=_softmax),
    Case("nn.softmax", [(3, 4)], kw={"axis": 0}, grad=True, id="axis0",
         ref=lambda x, axis: _softmax(x, axis)),
    Case("nn.log_softmax", [(3, 4)], grad=True, ref=lambda x: np.log(_softmax(x))),
    Case("nn.sparsemax", [(3, 4)], grad=True, no_ref=True),
    Case("nn.one_hot", [Fixed([0, 2, -1, 1], "int32"), Lit(3)], dtypes=F32,
         ref=lambda x, n: np.where(x[:, None] == np.arange(n)[None], 1.0, 0.0).astype(np.float32)),
    Case("nn.multi_hot", [Fixed([[0, 2], [1, 1]], "int32"), Lit(4)], dtypes=F32,
         ref=lambda x, n: np.array([[1, 0, 1, 0], [0, 1, 0, 0]], np.float32)),
    Case("nn.binary_crossentropy", [In((3, 4), "f", 0, 1), In((3, 4), "f", 0.05, 0.95)], grad=True,
         ref=lambda t, o: -(t * np.log(o) + (1 - t) * np.log(1 - o))),
    Case("nn.binary_crossentropy", [In((3, 4), "f", 0, 1), (3, 4)], kw={"from_logits": True},
         grad=True, id="logits",
         ref=lambda t, o, from_logits: -(t * np.log(_sigmoid(o)) + (1 - t) * np.log(1 - _sigmoid(o)))),
    Case("nn.categorical_crossentropy", [Fixed(np.eye(4)[[0, 2, 1]]), Pos((3, 4), 0.1, 1.0)],
         grad=True, ref=lambda t, o: -(t * np.log(o / o.sum(-1, keepdims=True))).sum(-1)),
    Case("nn.categorical_crossentropy", [Fixed(np.eye(4)[[0, 2, 1]]), (3, 4)],
         kw={"from_logits": True}, grad=True, id="logits",
         ref=lambda t, o, from_logits: -(t * np.log(_softmax(o))).sum(-1)),
    Case("nn.sparse_categorical_crossentropy", [Fixed([0, 2, 1], "int32"), (3, 4)],
         kw={"from_logits": True}, grad=True,
         ref=lambda t, o, from_logits: -np.log(_softmax(o))[np.arange(3), t]),
    Case("nn.moments", [(3, 4, 2)], kw={"axes": [0, 1]}, grad=True,
         ref=lambda x, axes: (x.mean((0, 1)), x.var((0, 1)))),
    Case("nn.batch_normalization", [(3, 4), (4,), Pos((4,)), (4,), (4,)], kw={"axis": -1},
         call=lambda op, x, m, v, o, s, axis: op(x, m, v, axis, offset=o, scale=s), grad=True,
         ref=lambda x, m, v, o, s, axis: (x - m) / np.sqrt(v + 1e-3) * s + o),
    Case("nn.layer_normalization", [(3, 4), (4,), (4,)], grad=True, rtol=1e-4, atol=1e-5,
         call=lambda op, x, g, b: op(x, g, b),
         ref=lambda x, g, b: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                                      + 1e-7) * g + b),
    Case("nn.rms_normalization", [(3, 4), (4,)], grad=True, rtol=1e-4, atol=1e-5,
         ref=lambda x, s: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-7) * s),
    Case("nn.normalize", [(3, 4)], grad=True,
         ref=lambda x: x / np.sqrt((x * x).sum(-1, keepdims=True))),
    Case("nn.normalize", [(3, 4)], kw={"order": 1, "axis": 0}, grad=True, id="l1",
         ref=lambda x, order, axis: x / np.abs(x).sum(0, keepdims=True)),
    Case("nn.psnr", [In((3, 4), "f", 0, 1), In((3, 4), "f", 0, 1), Lit(1.0)], grad=True,
         ref=lambda a, b, m: 20 * np.log10(m) - 10 * np.log10(((a - b) ** 2).mean())),
    Case("nn.conv", [(2, 5, 5, 3), (3, 3, 3, 4)], grad=True, rtol=1e-4, atol=1e-5,
         ref=lambda x, k: _conv2d_ref(x, k)),
    Case("nn.conv", [(2, 6, 6, 3), (3, 3, 3, 4)], kw={"strides": 2, "padding": "same"}, grad=True,
         rtol=1e-4, atol=1e-5, id="same_strided",
         ref=lambda x, k, strides, padding: _conv2d_ref(x, k, 2, "same")),
    Case("nn.conv", [(2, 7, 3), (3, 3, 4)], grad=True, rtol=1e-4, atol=1e-5, id="1d",
         ref=lambda x, k: _conv2d_ref(x[:, None], k[None])[:, 0]),
    # TensorFlow's CPU kernels have no NCHW Conv2D, so Keras cannot run this row on CPU
    Case("nn.conv", [(2, 3, 5, 5), (3, 3, 3, 4)], kw={"data_format": "channels_first"}, grad=True,
         rtol=1e-4, atol=1e-5, id="channels_first", keras=False,
         ref=lambda x, k, data_format: _conv2d_ref(x.transpose(0, 2, 3, 1), k).transpose(0, 3, 1, 2)),
    Case("nn.conv", [(1, 5, 5, 4), (3, 3, 2, 6)], grad=True, rtol=1e-4, atol=1e-5, id="groups",
         ref=lambda x, k: np.concatenate([_conv2d_ref(x[..., :2], k[..., :3]),
                                          _conv2d_ref(x[..., 2:], k[..., 3:])], -1)),
    Case("nn.conv", [(2, 4, 5, 5, 2), (2, 3, 3, 2, 3)], grad=True, rtol=1e-4, atol=1e-5, id="3d",
         no_ref=True),
    Case("nn.conv", [(1, 5, 4, 6, 2), (3, 2, 3, 2, 2)], grad=True, rtol=1e-4, atol=1e-5,
         kw={"strides": (2, 1, 2), "padding": "same"}, id="3d_same_strided", no_ref=True),
    Case("nn.conv_transpose", [(2, 3, 4, 3, 2), (3, 2, 3, 4, 2)], kw={"strides": (2, 1, 2)},
         grad=True, rtol=1e-4, atol=1e-5, id="3d", no_ref=True),
    Case("nn.conv_transpose", [(1, 3, 3, 4, 2), (3, 3, 2, 3, 2)],
         kw={"strides": 2, "padding": "same"}, grad=True, rtol=1e-4, atol=1e-5, id="3d_same",
         no_ref=True),
    Case("nn.max_pool", [(2, 5, 4, 6, 2)], kw={"pool_size": 2, "padding": "same"}, grad=True,
         no_ref=True, id="3d", keras_dtypes=F32),  # TensorFlow's 3-D pools: no float64 on CPU
    Case("nn.average_pool", [(2, 5, 4, 6, 2)], kw={"pool_size": (3, 2, 2), "strides": 2,
                                                   "padding": "same"},
         grad=True, no_ref=True, id="3d", keras_dtypes=F32),
    Case("nn.depthwise_conv", [(2, 5, 5, 3), (3, 3, 3, 2)], grad=True, rtol=1e-4, atol=1e-5,
         ref=lambda x, k: np.stack([_conv2d_ref(x[..., c:c + 1], k[:, :, c:c + 1, :])
                                    for c in range(3)], 3).reshape(2, 3, 3, 6)),
    Case("nn.separable_conv", [(2, 5, 5, 3), (3, 3, 3, 2), (1, 1, 6, 4)], grad=True, rtol=1e-4,
         atol=1e-5, no_ref=True),
    Case("nn.conv_transpose", [(2, 4, 4, 3), (3, 3, 5, 3)], kw={"strides": 2}, grad=True,
         rtol=1e-4, atol=1e-5, no_ref=True),
    Case("nn.conv_transpose", [(2, 4, 4, 3), (3, 3, 5, 3)], kw={"strides": 2, "padding": "same"},
         grad=True, rtol=1e-4, atol=1e-5, no_ref=True, id="same"),
    Case("nn.conv_transpose", [(2, 4, 4, 3), (3, 3, 5, 3)],
         kw={"strides": 2, "padding": "same", "output_padding": 1}, grad=True, rtol=1e-4, atol=1e-5,
         no_ref=True, id="output_padding"),
    Case("nn.conv_transpose", [(2, 5, 3), (3, 4, 3)], kw={"strides": 2}, grad=True, rtol=1e-4,
         atol=1e-5, no_ref=True, id="1d"),
    Case("nn.max_pool", [(2, 6, 6, 3)], kw={"pool_size": 2}, grad=True, keras_dtypes=F32,
         ref=lambda x, pool_size: x.reshape(2, 3, 2, 3, 2, 3).max((2, 4))),
    Case("nn.max_pool", [(2, 7, 3)], kw={"pool_size": 3, "strides": 2, "padding": "same"},
         grad=True, no_ref=True, id="1d_same"),
    Case("nn.average_pool", [(2, 6, 6, 3)], kw={"pool_size": 2}, grad=True,
         ref=lambda x, pool_size: x.reshape(2, 3, 2, 3, 2, 3).mean((2, 4))),
    Case("nn.average_pool", [(2, 3, 5, 5)], kw={"pool_size": 2, "padding": "same",
                                                "data_format": "channels_first"},
         grad=True, no_ref=True, id="same_cf"),
    Case("nn.adaptive_average_pool", [(2, 7, 5, 3)], kw={"output_size": (3, 2)}, grad=True,
         no_ref=True),
    Case("nn.adaptive_max_pool", [(2, 7, 5, 3)], kw={"output_size": 2}, grad=True, no_ref=True),
    Case("nn.depth_to_space", [(2, 2, 3, 8)], kw={"block_size": 2}, grad=True,
         ref=lambda x, block_size: x.reshape(2, 2, 3, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(
             2, 4, 6, 2)),
    Case("nn.space_to_depth", [(2, 4, 6, 2)], kw={"block_size": 2}, grad=True,
         ref=lambda x, block_size: x.reshape(2, 2, 2, 3, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(
             2, 2, 3, 8)),
    Case("nn.unfold", [(2, 3, 5, 5)], kw={"kernel_size": 2, "stride": 2, "padding": 1}, grad=True,
         no_ref=True),
    Case("nn.fold", [(2, 12, 9)], kw={"output_size": 5, "kernel_size": 2, "stride": 2,
                                      "padding": 1}, grad=True, no_ref=True),
    Case("nn.dot_product_attention", [(2, 3, 2, 4), (2, 5, 2, 4), (2, 5, 2, 4)], grad=True,
         rtol=1e-4, atol=1e-5, ref=lambda q, k, v: _attention_ref(q, k, v)),
    Case("nn.dot_product_attention", [(2, 4, 4, 4), (2, 4, 2, 4), (2, 4, 2, 4)],
         kw={"is_causal": True}, grad=True, rtol=1e-4, atol=1e-5, id="causal_gqa", no_ref=True),
]


def _svd_parts(usv):
    """(s, u diag(s) vh, |u|): what a reduced SVD determines (signs of the vectors are free)."""
    u, s, vh = usv
    return s, (u * s[None, :]) @ vh, abs(u)


def _attention_ref(q, k, v):
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    return np.einsum("bnts,bsnh->btnh", _softmax(logits), v).astype(q.dtype)


# ------------------------------------------------------------------ linalg

CASES += [
    Case("cholesky", [Spd(3)], grad=True, ref=np.linalg.cholesky, rtol=1e-4),
    Case("cholesky", [Spd(3)], kw={"upper": True}, grad=True, id="upper", rtol=1e-4,
         ref=lambda x, upper: np.linalg.cholesky(x).T),
    Case("cholesky_inverse", [Fixed(np.linalg.cholesky(np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])))],
         grad=True, rtol=1e-4, ref=lambda l_: np.linalg.inv(l_ @ l_.T)),
    Case("det", [Spd(3)], grad=True, ref=np.linalg.det, rtol=1e-4),
    Case("inv", [Spd(3)], grad=True, ref=np.linalg.inv, rtol=1e-4),
    Case("solve", [Spd(3), (3, 2)], grad=True, ref=np.linalg.solve, rtol=1e-4),
    Case("solve", [Spd(3), (3,)], grad=True, id="vector", ref=np.linalg.solve, rtol=1e-4),
    Case("solve_triangular", [Spd(3), (3, 2)], kw={"lower": True}, grad=True, rtol=1e-4,
         ref=lambda a, b, lower: np.linalg.solve(np.tril(a), b)),
    Case("qr", [(4, 3)], grad=True, rtol=1e-4, atol=1e-5, ref=lambda x: tuple(np.linalg.qr(x))),
    Case("qr", [(3, 4)], kw={"mode": "complete"}, rtol=1e-4, atol=1e-5, id="complete",
         ref=lambda x, mode: tuple(np.linalg.qr(x, mode="complete"))),
    Case("svd", [(4, 3)], kw={"compute_uv": False}, grad=True, rtol=1e-4,
         ref=lambda x, compute_uv: np.linalg.svd(x, compute_uv=False)),
    Case("svd", [(4, 3)], call=lambda op, x: _svd_parts(op(x, full_matrices=False)), rtol=1e-4,
         atol=1e-5, id="reduced", grad=True,
         ref=lambda x: (np.linalg.svd(x, compute_uv=False), x, np.abs(np.linalg.svd(x)[0][:, :3]))),
    Case("eigh", [Spd(3)], call=lambda op, x: op(x)[0], grad=True, rtol=1e-4,
         ref=lambda x: np.linalg.eigh(x)[0]),
    Case("lu_factor", [Spd(3)], rtol=1e-4, no_ref=True),
    Case("norm", [(3, 4)], grad=True, ref=lambda x: np.linalg.norm(x)),
    Case("norm", [(3, 4)], kw={"axis": 1, "ord": 1}, grad=True, id="l1",
         ref=lambda x, axis, ord: np.linalg.norm(x, ord, axis)),
    Case("norm", [(3, 4)], kw={"ord": "nuc"}, grad=True, id="nuc", rtol=1e-4,
         ref=lambda x, ord: np.linalg.norm(x, ord)),
    Case("norm", [(3, 4)], kw={"ord": float("inf")}, grad=True, id="inf",
         ref=lambda x, ord: np.linalg.norm(x, ord)),
    Case("pinv", [(4, 3)], grad=True, rtol=1e-4, atol=1e-5, ref=np.linalg.pinv),
    Case("matrix_rank", [Fixed([[1.0, 2.0], [2.0, 4.0]])],
         ref=lambda x: np.int32(np.linalg.matrix_rank(x))),
    Case("lstsq", [(5, 3), (5, 2)], grad=True, rtol=1e-4, atol=1e-5,
         ref=lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0]),
]

# ------------------------------------------------------------------ image

CASES += [
    Case("image.resize", [(2, 4, 6, 3)], kw={"size": (6, 4)}, grad=True, rtol=1e-4, atol=1e-5,
         ref=lambda x, size: _bilinear_ref(x, size)),
    Case("image.resize", [(2, 5, 4, 3)], kw={"size": (3, 7), "interpolation": "nearest"},
         grad=True, id="nearest", no_ref=True),
    Case("image.resize", [(1, 5, 4, 2)], kw={"size": (7, 3), "interpolation": "bicubic"},
         grad=True, id="bicubic", no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.resize", [(2, 9, 8, 3)], kw={"size": (4, 5), "antialias": True}, grad=True,
         id="antialias", no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.resize", [(2, 5, 6, 3)], kw={"size": (8, 4), "interpolation": "lanczos3"},
         grad=True, id="lanczos3", no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.resize", [(1, 9, 8, 2)], kw={"size": (4, 3), "interpolation": "bicubic",
                                             "antialias": True},
         grad=True, id="bicubic_antialias", no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.resize", [(1, 6, 4, 2)], kw={"size": (3, 3), "crop_to_aspect_ratio": True},
         grad=True, id="crop", no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.crop_images", [(2, 6, 5, 3)], kw=dict(top_cropping=1, left_cropping=2,
                                                      target_height=3, target_width=2),
         grad=True, ref=lambda x, **kw: x[:, 1:4, 2:4]),
    Case("image.pad_images", [(2, 3, 2, 3)], kw=dict(top_padding=1, left_padding=2,
                                                     target_height=5, target_width=6),
         grad=True, ref=lambda x, **kw: np.pad(x, ((0, 0), (1, 1), (2, 2), (0, 0)))),
    Case("image.rgb_to_grayscale", [In((2, 3, 3, 3), "f", 0, 1)], grad=True,
         ref=lambda x: (x @ np.array([0.2989, 0.5870, 0.1140]))[..., None].astype(x.dtype)),
    Case("image.rgb_to_hsv", [In((2, 3, 3, 3), "f", 0, 1)], no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.hsv_to_rgb", [In((2, 3, 3, 3), "f", 0, 1)], no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.extract_patches", [(2, 6, 6, 3)], kw={"size": 2}, grad=True, no_ref=True),
    Case("image.gaussian_blur", [(2, 5, 5, 3)], grad=True, no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.sobel_edges", [(2, 5, 5, 3)], grad=True, no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.map_coordinates", [(4, 5), In((2, 3, 3), "f", -0.5, 4.5)],
         call=lambda op, x, c: op(x, [c[0], c[1]], 1), no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.affine_transform", [(2, 5, 5, 2), Fixed([[1.0, 0.2, 0.5, -0.1, 1.0, 0.3, 0.0, 0.0],
                                                         [0.9, 0.0, 0.0, 0.0, 1.1, -0.5, 0.0, 0.0]])],
         no_ref=True, rtol=1e-4, atol=1e-5),
]

CASES += [
    Case("image.perspective_transform", [(2, 6, 6, 2)], no_ref=True, rtol=1e-4, atol=1e-4,
         kw=dict(start_points=[[0.0, 0.0], [5.0, 0.0], [0.0, 5.0], [5.0, 5.0]],
                 end_points=[[0.5, 0.2], [4.8, 0.1], [0.3, 5.2], [5.1, 4.6]]), dtypes=F32),
    Case("image.extract_patches_3d", [(2, 4, 5, 6, 2)], kw={"size": 2}, grad=True, no_ref=True),
    Case("image.extract_patches_3d", [(2, 5, 5, 5, 2)], id="same_strided",
         kw={"size": (3, 2, 2), "strides": (2, 1, 2), "padding": "same"}, grad=True, no_ref=True),
    Case("image.scale_and_translate", [(2, 6, 5, 3), Fixed([0.6, 1.7]), Fixed([0.3, -0.4])],
         kw=dict(output_shape=(2, 4, 8, 3), spatial_dims=(1, 2), method="linear"), call=_sat, grad=True,
         no_ref=True, rtol=1e-4, atol=1e-5),
    Case("image.scale_and_translate", [(2, 6, 5, 3), Fixed([0.6, 1.7]), Fixed([0.3, -0.4])],
         kw=dict(output_shape=(2, 4, 8, 3), spatial_dims=(1, 2), method="lanczos3",
                 antialias=False), call=_sat, grad=True, no_ref=True, rtol=1e-4, atol=1e-5, id="lanczos3"),
    Case("image.scale_and_translate", [(2, 6, 5, 3), Fixed([0.5, 2.0]), Fixed([0.0, 1.0])],
         kw=dict(output_shape=(2, 3, 10, 3), spatial_dims=(1, 2), method="cubic"), call=_sat,
         grad=True,
         no_ref=True, rtol=1e-4, atol=1e-5, id="cubic"),
    # alpha=0: no displacement, so the random field does not matter (values are compared)
    Case("image.elastic_transform", [(2, 7, 6, 2)], kw=dict(alpha=0.0, sigma=1.0, seed=3),
         grad=True, ref=lambda x, **kw: x, rtol=1e-5, atol=1e-5),
    Case("image.ssim", [In((2, 16, 16, 3), "f", 0, 1), In((2, 16, 16, 3), "f", 0, 1)], grad=True,
         no_ref=True, rtol=1e-4, atol=1e-5),
    Case("nn.ctc_loss", [Fixed([[1, 2, 2], [3, 1, 0]], "int32"), (2, 6, 4),
                         Fixed([3, 2], "int32"), Fixed([6, 5], "int32")], grad=True, no_ref=True,
         rtol=1e-4, atol=1e-4),
    Case("nn.ctc_decode", [Fixed([[[0.1, 2.0, 0.0], [0.1, 2.0, 0.0], [3.0, 0.0, 0.0],
                                   [0.0, 2.0, 0.1], [0.0, 0.0, 4.0]],
                                  [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0],
                                   [0.0, 0.0, 1.0], [0.0, 3.0, 0.0]]]), Fixed([5, 4], "int32")],
         no_ref=True),
]

_C = np.array([[1 + 2j, -0.5 + 0j, 0 - 3j], [2.5 - 1j, 0 + 0j, -1 - 1j]], np.complex64)
CASES += [
    Case("nn.polar", [Pos((3, 4)), (3, 4)], dtypes=F32,
         ref=lambda r, a: (r * np.exp(1j * a)).astype(np.complex64)),
    Case("view_as_complex", [(3, 2)], dtypes=F32,
         ref=lambda x: (x[..., 0] + 1j * x[..., 1]).astype(np.complex64)),
    Case("view_as_real", [Fixed(_C)], dtypes=F32, ref=lambda c: np.stack([c.real, c.imag], -1)),
    Case("eig", [Fixed([[2.0, 1.0, 0.0], [0.5, 3.0, 0.2], [0.0, 0.1, -1.0]])], dtypes=F32,
         call=lambda op, x: op(x)[0], ref=lambda x: np.linalg.eig(x)[0].astype(np.complex64),
         rtol=1e-4, atol=1e-5, unordered=True),
    Case("real", [Fixed(_C)], dtypes=F32, id="complex"),
    Case("imag", [Fixed(_C)], dtypes=F32, id="complex"),
    Case("conj", [Fixed(_C)], dtypes=F32, id="complex"),
    Case("angle", [Fixed(_C)], dtypes=F32, id="complex"),
    Case("isreal", [Fixed(_C)], dtypes=F32, id="complex"),
]

# Keras 3.15's public keras.ops names that trainlib does not provide, and why.
MISSING = {}
MISSING_IMAGE = {}
