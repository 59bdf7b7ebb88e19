"""DType objects, their numpy mapping, and the weak-type rules for Python values.

Owns: the fixed set of dtypes (`tl.float32`, ...), `as_dtype`, and
`infer_python_dtype` (a Python float is float32, an int is int32, as
TensorFlow). Invariant: exactly one DType object per dtype, so dtypes compare
by identity and hash cheaply. `tl.string` holds bytes (as TensorFlow) in numpy
object arrays; `str` values are encoded as UTF-8 on conversion.
"""
import numpy as np

_pybool = type(True)  # `bool` below is the DType, as tl.bool


class DType:
    """A tensor element type, printed as `tl.float32`.

    Args:
        name: the TensorFlow name (`"float32"`).
        np_dtype: the matching numpy dtype, or None for `resource`.

    Example:
        >>> tl.float32.is_floating
        True
    """

    __slots__ = ("name", "as_numpy_dtype", "np", "is_floating", "is_integer", "is_bool",
                 "is_unsigned", "is_complex", "is_string")

    def __init__(self, name, np_dtype):
        self.name = name
        self.np = None if np_dtype is None else np.dtype(np_dtype)
        self.as_numpy_dtype = None if np_dtype is None else self.np.type
        kind = None if self.np is None else self.np.kind
        self.is_floating = kind == "f"
        self.is_integer = kind in ("i", "u")
        self.is_unsigned = kind == "u"
        self.is_bool = kind == "b"
        self.is_complex = kind == "c"
        self.is_string = kind == "O"

    @property
    def base_dtype(self):
        return self

    @property
    def min(self):
        """Smallest representable value."""
        return np.finfo(self.np).min if self.is_floating else np.iinfo(self.np).min

    @property
    def max(self):
        """Largest representable value."""
        return np.finfo(self.np).max if self.is_floating else np.iinfo(self.np).max

    @property
    def size(self):
        return 0 if self.np is None else self.np.itemsize

    def __repr__(self):
        return f"tl.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other):
        if self is other:
            return True
        if isinstance(other, DType) or other is None:  # np.dtype(None) would be float64
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    __hash__ = object.__hash__  # one object per dtype: identity is the fast, exact hash

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)  # noqa: A001 -- TensorFlow's public name
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
string = DType("string", object)
resource = DType("resource", None)
half, double = float16, float64

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool,
       complex64, complex128, string, resource)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(half=float16, double=float64, float=float32, int=int32, cdouble=complex128)
_BY_NP = {d.np: d for d in ALL if d.np is not None}


def as_dtype(value):
    """Converts a DType, name, numpy dtype or Python type to a DType.

    Args:
        value: `tl.float32`, `"float32"`, `np.float32`, `np.dtype("f4")`, `float`...

    Returns:
        The DType.

    Raises:
        TypeError: if `value` names no supported dtype.

    Example:
        >>> tl.as_dtype("int32")
        tl.int32
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is not None:
            return found
    elif value is float:
        return float32
    elif value is int:
        return int32
    elif value is _pybool:
        return bool
    elif value is str or value is bytes:
        return string
    else:
        try:
            found = _BY_NP.get(np.dtype(value))
            if found is None and np.dtype(value).kind in "SU":
                found = string
        except TypeError:
            found = None
        if found is not None:
            return found
    raise TypeError(f"Cannot convert {value!r} to a trainlib dtype; expected one of "
                    f"{', '.join(sorted(d.name for d in ALL))}")


def from_numpy(np_dtype):
    """The DType of a numpy dtype (fast path for arrays)."""
    found = _BY_NP.get(np_dtype)
    if found is None:
        found = as_dtype(np_dtype)
    return found


def infer_python_dtype(value):
    """The dtype a Python value converts to on its own, as TensorFlow does.

    float -> float32, int -> int32, complex -> complex128, bool -> bool, nested lists by their
    widest element (any float makes float32). Returns None for non-Python
    values (arrays, tensors).
    """
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    if isinstance(value, complex):
        return complex128   # TensorFlow's default for a Python complex
    if isinstance(value, (str, bytes)):
        return string
    if isinstance(value, (list, tuple)):
        kinds = set()
        _collect_kinds(value, kinds)
        if not kinds:
            return float32
        for d in (string, complex128, float32, int32, bool):
            if d in kinds:
                return d
        return float32
    if isinstance(value, np.generic) or isinstance(value, np.ndarray):
        return from_numpy(value.dtype)
    return None


def _collect_kinds(value, kinds):
    for v in value:
        if isinstance(v, (list, tuple)):
            _collect_kinds(v, kinds)
        else:
            d = infer_python_dtype(v)
            if d is not None:
                kinds.add(d)
