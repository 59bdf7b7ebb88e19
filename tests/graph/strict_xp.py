"""A strict array module for tests: numpy underneath, CuPy's rules on top.

`strict_xp` forwards every function to numpy, but its arrays are `ndarray`
wrappers (NOT numpy subclasses) that refuse to become numpy arrays implicitly:
`__array__` raises, numpy operands are rejected, and reductions or scalar
indexing give 0-d arrays rather than numpy scalars, as CuPy does. A kernel that
calls `numpy` directly on its arrays, or relies on numpy-only behaviour, fails
here loudly, exactly where it would fail on a GPU. Host copies come back with
`.get()`, as from CuPy, so `backend.to_numpy` treats these arrays as device arrays.

Functions that take host data (`asarray`, `array`) accept numpy arrays: that is
a host-to-device copy, allowed on CuPy too.
"""
import types

import numpy

_HOST_INPUT = {"asarray", "array", "asanyarray", "ascontiguousarray"}
# what cupy.ndarray offers beyond operators; anything else is numpy-only
_METHODS = {
    "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "conj", "copy", "cumsum",
    "cumprod", "diagonal", "dot", "fill", "flatten", "item", "max", "mean", "min", "nonzero", "prod",
    "ravel", "repeat", "reshape", "round", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "tolist", "trace", "transpose", "var", "view", "put", "partition", "argpartition", "tobytes",
    "choose", "compress", "conjugate",
}
_PROPERTIES = {"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "flags", "base"}


class StrictArrayError(TypeError):
    """A kernel treated a device array as a numpy array."""


def _unwrap(value, host_ok=False):
    if type(value) is ndarray:
        return value._a
    if isinstance(value, numpy.ndarray) and not host_ok:
        raise StrictArrayError(
            f"a numpy array (shape {value.shape}, dtype {value.dtype}) was passed where a device "
            "array is expected; convert it with xp.asarray first")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, host_ok) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, host_ok) for k, v in value.items()}
    return value


def _wrap(value):
    if isinstance(value, numpy.ndarray):
        return ndarray(value)
    if isinstance(value, numpy.generic):  # CuPy returns 0-d arrays where numpy gives scalars
        return ndarray(numpy.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _forward(fn, host_ok=False):
    def call(*args, **kwargs):
        return _wrap(fn(*_unwrap(args, host_ok), **_unwrap(kwargs, host_ok)))
    call.__name__ = getattr(fn, "__name__", "function")
    return call


class ndarray:  # noqa: N801 -- the array module's array type, as cupy.ndarray
    """A device-like array: operators, indexing and cupy.ndarray's methods; no implicit numpy."""

    __slots__ = ("_a",)
    __array_ufunc__ = None  # numpy ufuncs on it fail instead of converting it

    def __init__(self, array):
        self._a = array

    def __array__(self, *args, **kwargs):
        raise StrictArrayError("Implicit conversion to a NumPy array is not allowed (a numpy call "
                               "got a device array). Use xp.* functions, or .get() for a host copy.")

    def __array_function__(self, func, types, args, kwargs):
        raise StrictArrayError(f"numpy.{func.__name__} was called on a device array; kernels must "
                               f"call xp.{func.__name__}")

    def get(self):
        """A numpy copy on the host, as cupy.ndarray.get()."""
        return self._a.copy()

    def __getattr__(self, name):
        if name in _PROPERTIES:
            return getattr(self._a, name)
        if name in _METHODS:
            return _forward(getattr(self._a, name))
        raise AttributeError(f"strict_xp.ndarray has no attribute {name!r} (cupy.ndarray has none "
                             "either, or it is numpy-only)")

    @property
    def T(self):  # noqa: N802
        return ndarray(self._a.T)

    @property
    def real(self):
        return ndarray(self._a.real)

    @property
    def imag(self):
        return ndarray(self._a.imag)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (ndarray(numpy.asarray(v)) for v in self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, host_ok=True)])

    def __setitem__(self, key, value):
        self._a[_unwrap(key, host_ok=True)] = _unwrap(value)

    def __bool__(self):
        return bool(self._a)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        return self._a.__index__()

    def __repr__(self):
        return f"strict_xp.ndarray({self._a!r})"

    def __str__(self):
        return str(self._a)

    def __hash__(self):
        raise TypeError("unhashable type: 'strict_xp.ndarray'")

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        raise StrictArrayError("device arrays are not picklable here; .get() them first")


def _binary(name):
    def method(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)))
    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift", "divmod"):
    for _form in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        if hasattr(numpy.ndarray, _form):
            setattr(ndarray, _form, _binary(_form))
for _form in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(ndarray, _form, _binary(_form))
for _form in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _form, (lambda f: lambda self: ndarray(getattr(self._a, f)()))(_form))


class _Ufunc:
    """A numpy ufunc with its methods (reduce, accumulate, at, outer), strict on arguments."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def __call__(self, *args, **kwargs):
        return _forward(self._ufunc)(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        return _forward(attr) if callable(attr) else attr


class _Module(types.ModuleType):
    """A module-like view of a numpy (sub)module: functions forwarded strictly, types and
    constants passed through."""

    def __init__(self, name, target, submodules=()):
        super().__init__(name)
        self._target = target
        for sub in submodules:
            setattr(self, sub, _Module(f"{name}.{sub}", getattr(target, sub)))

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        if isinstance(attr, numpy.ufunc):
            wrapped = _Ufunc(attr)
        elif isinstance(attr, type) or not callable(attr):  # dtypes, classes, constants
            return attr
        else:
            wrapped = _forward(attr, host_ok=name in _HOST_INPUT)
        setattr(self, name, wrapped)  # cache: the next look-up is a plain attribute
        return wrapped


class _Generator:
    """cupy.random.Generator's surface (random, standard_normal, integers, uniform) on numpy."""

    def __init__(self, seed):
        self._rng = numpy.random.default_rng(seed)

    def __getattr__(self, name):
        if name not in ("random", "standard_normal", "integers", "uniform", "normal"):
            raise AttributeError(f"cupy.random.Generator has no {name!r} here")
        return _forward(getattr(self._rng, name))


class _Random(_Module):
    def default_rng(self, seed=None):
        if seed is not None and not isinstance(seed, (int, numpy.integer)):
            raise TypeError("cupy.random.default_rng takes an int seed")
        return _Generator(seed)


def _make():
    module = _Module("strict_xp", numpy, ("linalg", "fft"))
    module.random = _Random("strict_xp.random", numpy.random)
    module.lib = types.ModuleType("strict_xp.lib")
    module.lib.stride_tricks = _Module("strict_xp.lib.stride_tricks", numpy.lib.stride_tricks)
    module.ndarray = ndarray
    module.StrictArrayError = StrictArrayError
    module.__name__ = "strict_xp"
    return module


strict_xp = _make()
