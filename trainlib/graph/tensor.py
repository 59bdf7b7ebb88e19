"""Values: the eager `Tensor`, the graph `SymbolicTensor`, `TensorShape`, `TensorSpec`.

Owns: how values look (printing as TensorFlow prints, with `tl.`), their static
shape and dtype, and conversion of Python/numpy data to arrays (`to_array`).
Invariants: a Tensor's value is an array of the active array module whose
dtype is the Tensor's dtype, and nobody writes into it: arrays coming in are
copied (`to_array`), and `numpy()` / `np.asarray` hand out read-only views; a
SymbolicTensor is produced by exactly one Operation output. Operators (`+`, `@`, `[]`...) are installed by `ops/` so that
this module stays below the op registry.
"""
import os
import sys
import warnings

import numpy as np

from . import dtypes as _dt
from .backend import device_of, to_numpy
from .context import state
from .errors import user_location
from .properties import read_only


class TensorShape:
    """A static shape: a tuple of dims, each an int or None (unknown), or unknown rank.

    Args:
        dims: an iterable of ints/None, or None for an unknown rank.

    Example:
        >>> tl.TensorShape([2, None]).as_list()
        [2, None]
    """

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        elif dims is not None:
            if isinstance(dims, (int, np.integer)):
                dims = (dims,)
            dims = tuple(None if d is None else _as_dim(d) for d in dims)
        self._dims = dims

    @property
    def rank(self):
        """Number of dims, or None if unknown."""
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self):
        """The dims as a list (raises ValueError for an unknown rank)."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self):
        return self._dims

    def is_fully_defined(self):
        return self._dims is not None and None not in self._dims

    def num_elements(self):
        """Product of the dims, or None if any is unknown."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other):
        """True if some concrete shape matches both."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        """The most specific shape compatible with both (ValueError if none)."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other):
        """The most specific shape that both shapes are instances of (dims that differ become None)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def _as_dim(d):
    d = int(d) if not isinstance(d, int) else d
    if d < 0:
        if d == -1:
            return None
        raise ValueError(f"Dimension {d} must be >= 0")
    return d


def as_shape(shape):
    """A TensorShape from a TensorShape, tuple, list or None."""
    if isinstance(shape, TensorShape):
        return shape
    return TensorShape(shape)


class TensorSpec:
    """Describes a tensor: shape (dims may be None), dtype and an optional name.

    Args:
        shape: a TensorShape, list or tuple (None dims allowed).
        dtype: a DType or dtype name, float32 by default.
        name: an optional name for the placeholder it becomes.

    Example:
        >>> tl.TensorSpec(shape=[None, 3], dtype=tl.float32)
        TensorSpec(shape=(None, 3), dtype=tl.float32, name=None)
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=_dt.float32, name=None):
        self.shape = as_shape(shape)
        self.dtype = _dt.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of a tensor's shape and dtype."""
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, value):
        """True if `value` (a spec or tensor) has this dtype and a compatible shape."""
        return value.dtype == self.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype is other.dtype and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        name = "None" if self.name is None else repr(self.name)
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={name})"


class _TensorBase:
    """What eager and symbolic tensors share: shape helpers and the no-hash rule."""

    __slots__ = ()
    __array_priority__ = 100  # numpy defers `ndarray + tensor` to the tensor's operator

    ndim = read_only("shape.rank", "The number of dimensions (None if unknown).")

    def get_shape(self):
        return self.shape

    def __hash__(self):
        raise TypeError("Tensor is unhashable (== is elementwise). Use tensor.ref() as a key.")

    def ref(self):
        """A hashable reference to this tensor, for use as a dict key."""
        return TensorRef(self)


class TensorRef:
    """A hashable wrapper of a tensor, compared by identity (`tensor.ref()`)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __eq__(self, other):
        return isinstance(other, TensorRef) and other._tensor is self._tensor

    def __hash__(self):
        return id(self._tensor)


class Tensor(_TensorBase):
    """An eager value: an array plus its dtype, printed as TensorFlow prints.

    Created by ops (`tl.constant`, `tl.add`, ...), never directly.

    Example:
        >>> print(tl.constant([1.0, 0.0]))
        tl.Tensor([1. 0.], shape=(2,), dtype=float32)
    """

    # _keras_mask: the mask Keras layers attach to their outputs (unset: no mask), as TF's
    __slots__ = ("_value", "dtype", "_keras_mask", "__weakref__")

    def __init__(self, value, dtype=None):
        self._value = value
        self.dtype = dtype if dtype is not None else _dt.from_numpy(value.dtype)

    @property
    def shape(self):
        return TensorShape(self._value.shape) if self.dtype is not _dt.resource else TensorShape(())

    @property
    def device(self):
        """'cpu' or 'gpu': where the value lives (the plain names `tl.device` takes)."""
        return device_of(self._value)

    def cpu(self):
        """A copy on the CPU (the tensor itself if it is there); gradients flow through.

        Example:
            >>> tl.constant([1.0]).cpu().device
            'cpu'
        """
        return self._copy_to("cpu")

    def gpu(self):
        """A copy on the GPU (the tensor itself if it is there); gradients flow through.

        Raises:
            RuntimeError: when no GPU is usable (the message says how to get one).
        """
        return self._copy_to("gpu")

    def numpy(self):
        """The value as a numpy array (or numpy scalar for 0-d), copied to the host if needed.

        A host tensor gives a read-only view of its array (cheap, and a tensor stays immutable:
        writing into the result raises); `np.array(t)` or `.numpy().copy()` gives a writable copy.
        """
        if self.dtype is _dt.resource:
            raise TypeError("A resource handle has no numpy value; read the Variable instead.")
        if state.tapes:
            _converted_under_tape(self, "numpy()")
        value = self._value
        if value.ndim == 0:
            return to_numpy(value)[()]
        return _read_only(value) if type(value) is np.ndarray else to_numpy(value)

    def __array__(self, dtype=None, copy=None):
        if state.tapes:
            _converted_under_tape(self, "a numpy array (np.asarray)")
        value = self._value
        if type(value) is not np.ndarray:
            value = to_numpy(value)  # a host copy of a device array: the caller's own
        elif dtype is None and not copy:
            return _read_only(value)  # np.asarray(t): no copy, and no write into the tensor
        if dtype is not None:
            return value.astype(dtype, copy=bool(copy) or value is self._value)
        return value.copy() if copy and value is self._value else value

    def __len__(self):
        shape = self._value.shape
        if not shape:
            raise TypeError("len() of a scalar (0-d) tensor")
        return shape[0]

    # Python conversions delegate to the numpy value, as TensorFlow's do: int() and float()
    # need a 0-d or size-1 value per numpy's rules, bool() of an empty tensor is False.
    def __bool__(self):
        x = self.numpy()
        if isinstance(x, np.ndarray):
            return bool(x.size > 0 and x)
        return bool(x)

    def __int__(self):
        return int(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as an index, not {self.dtype!r}")
        return self.numpy().__index__()

    def __format__(self, spec):
        return to_numpy(self._value).__format__(spec)

    def __str__(self):
        text = np.array2string(to_numpy(self._value), separator=" ") if self._value.ndim else str(self.numpy())
        if "\n" in text:
            text = "\n" + text
        return f"tl.Tensor({text}, shape={self.shape}, dtype={self.dtype.name})"

    def __repr__(self):
        if self.dtype is _dt.resource:
            return "<tl.Tensor: shape=(), dtype=resource>"
        return f"<tl.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={numpy_text(self.numpy())}>"


def _converted_under_tape(tensor, how):
    """A watched value (or one computed from it) leaves the tape as a numpy/Python value:
    each recording tape notes where (its gradient may explain a None with it), and user code
    doing so gets a warning naming the line."""
    noted = False
    for tape in list(state.tapes):
        noted = tape._note_conversion(tensor, how) or noted
    if noted and _called_from_user_code():
        where = user_location() or "?"
        filename, _, line = where.rpartition(":")
        warnings.warn_explicit(
            f"{how} on a value a GradientTape is recording (at {where}): the result is a "
            "constant to the tape, so no gradient flows through what is computed from it. "
            "Keep the computation in tl ops, or move the conversion after the tape.",
            UserWarning, filename or where, int(line) if line.isdigit() else 0)


def _called_from_user_code():
    """True when the frame that asked for the conversion is outside the trainlib package
    (the library's own conversions under a tape stay silent)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    numpy_dir = os.path.dirname(np.__file__)
    frame = sys._getframe(2)
    # float(t) -> t.numpy(), np.mean(t) -> numpy's own code: the caller of the conversion
    while frame is not None and (frame.f_code.co_filename == __file__ or
                                 frame.f_code.co_filename.startswith(numpy_dir)):
        frame = frame.f_back
    if frame is None:
        return False
    return not os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep)


def numpy_text(value):
    """The `numpy=` part of a repr, as TensorFlow writes it: Python's repr of a scalar's item
    (`0.3333333432674408`), numpy's repr of an array, a newline first if it spans lines."""
    if isinstance(value, bytes):
        text = repr(value)
    else:
        text = repr(value.item()) if np.isscalar(value) else repr(value)
    return "\n" + text if "\n" in text else text


class SymbolicTensor(_TensorBase):
    """A value inside a graph: output `value_index` of Operation `op`, with a static spec.

    Has a static `shape` (dims may be None) and `dtype`; it has no value until
    the graph runs, so `bool()` and `.numpy()` raise with the fix.
    """

    __slots__ = ("op", "value_index", "dtype", "shape", "_keras_mask", "__weakref__")

    def __init__(self, op, value_index, shape, dtype):
        self.op = op
        self.value_index = value_index
        self.shape = as_shape(shape)
        self.dtype = dtype

    graph = read_only("op.graph", "The graph the tensor's op belongs to.")

    @property
    def name(self):
        return f"{self.op.name}:{self.value_index}"

    @property
    def device(self):
        return self.op.graph.device if hasattr(self.op.graph, "device") else "cpu"

    def numpy(self):
        raise TypeError(f"{self.name} is a symbolic tensor inside a graph being traced: it has no "
                        "value yet. Return it from the tl.function instead, or use tl.print.")

    def __bool__(self):
        raise TypeError(
            f"Using the symbolic tensor {self.name} as a Python bool is not allowed while tracing "
            "(autograph=False or inside unconverted code). Use tl.cond / tl.where, or keep "
            "autograph=True so that `if` on a tensor becomes graph control flow.")

    def __len__(self):
        d = self.shape[0] if self.shape.rank else None
        if d is None:
            raise TypeError(f"len() of the symbolic tensor {self.name} whose first dim is unknown; "
                            "use tl.shape(x)[0].")
        return d

    def __index__(self):
        raise TypeError(f"The symbolic tensor {self.name} cannot be used as a Python index while tracing.")

    def __repr__(self):
        return f"<tl.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self):
        return f'Tensor("{self.name}", shape={self.shape}, dtype={self.dtype.name})'


def is_symbolic_tensor(value):
    """True for a tensor of a graph being traced (a value known only when the graph runs)."""
    return isinstance(value, SymbolicTensor)


def is_tensor(value):
    """True for eager and symbolic tensors."""
    return isinstance(value, _TensorBase)


def _read_only(array):
    """A view of `array` that refuses writes (the array itself stays writable)."""
    view = array.view()
    view.flags.writeable = False
    return view


def to_array(xp, value, dtype=None):
    """An array of `value` (Python scalar, nested list, numpy array) with `dtype`.

    Python values follow TensorFlow: float -> float32, int -> int32 (int64 when
    a value needs it), bool -> bool; a Python float never converts to an
    integer or bool dtype, nor an int to bool (TypeError); ints wrap into
    narrower integer dtypes, as TensorFlow's C conversion does; bools mixed
    with numbers are a ValueError. Numpy values cast with numpy's rules. An array is always
    copied (its owner may write into it later, and a tensor never changes), as TensorFlow copies.
    """
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a tensor")
        value = value.as_list()      # Python ints: int32, as TensorFlow converts a shape
    if isinstance(value, (np.ndarray, np.generic)) or (xp is not np and isinstance(value, xp.ndarray)):
        if value.dtype.kind in "SUO" or dtype is _dt.string:
            return _string_array(value, dtype)
        if dtype is not None:
            dtype = _dt.as_dtype(dtype)
            if value.dtype != dtype.np:
                return xp.asarray(value.astype(dtype.np))  # astype made a copy already
        return xp.array(value, copy=True)
    kinds = set()
    _python_kinds(value, kinds)
    if "other" in kinds:
        return _generic_array(xp, value, dtype)
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    if "str" in kinds or dtype is _dt.string:
        if len(kinds) > 1:
            raise TypeError(f"Cannot convert {_short(value)} to a tensor: it mixes strings and "
                            "other values")
        return _string_array(value, dtype)
    if "bool" in kinds and dtype not in _BOOL_TARGETS:  # TensorFlow's fast path takes bools
        if len(kinds) > 1:                             # to these dtypes only
            raise ValueError(f"Can't convert Python sequence with mixed types to a tensor: "
                             f"{_short(value)} mixes bools and numbers")
        if dtype is not None and dtype is not _dt.bool:
            raise TypeError(f"Cannot convert {_short(value)} to {dtype!r}")
    if dtype is not None and (("float" in kinds or "complex" in kinds) and not
                              (dtype.is_floating or dtype.is_complex) or
                              "complex" in kinds and not dtype.is_complex or
                              "int" in kinds and dtype.is_bool):
        raise TypeError(f"Cannot convert {_short(value)} to {dtype!r}")
    try:
        if "complex" in kinds:
            array = np.asarray(value, dtype=(dtype or _dt.complex128).np)
        elif "float" in kinds:
            array = np.asarray(value, dtype=np.float64)
            if dtype is None:
                big = np.abs(array[np.isfinite(array)]) if array.size else array
                if big.size and big.max() > np.finfo(np.float32).max:
                    raise ValueError(f"Can't convert {_short(value)} to a float32 tensor: a value "
                                     "is out of range; pass dtype=tl.float64")
                dtype = _dt.float32
        elif "int" in kinds and dtype is not None and dtype.is_floating:
            array = np.asarray(value, dtype=np.float64)
        elif "int" in kinds:
            array = np.asarray(value, dtype=np.int64)
            if dtype is None:
                fits = not array.size or (array.min() >= -2**31 and array.max() < 2**31)
                dtype = _dt.int32 if fits else _dt.int64
        else:
            array = np.asarray(value, dtype=bool)
            dtype = dtype or (_dt.bool if kinds else _dt.float32)
    except OverflowError:
        raise ValueError(f"Can't convert {_short(value)} to a tensor: an integer is out of "
                         "range") from None
    except ValueError as e:
        if "out of range" in str(e):
            raise
        raise ValueError(f"Can't convert {_short(value)} to a tensor: {e}") from None
    if dtype is not None and array.dtype != dtype.np:
        with np.errstate(over="ignore", invalid="ignore"):
            array = array.astype(dtype.np)
    return xp.asarray(array)


def _python_kinds(value, kinds):
    """Collects the kinds ("bool", "int", "float", "complex", "other") of a Python value's leaves."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _python_kinds(v, kinds)
    elif isinstance(value, _pybool):
        kinds.add("bool")
    elif isinstance(value, int):
        kinds.add("int")
    elif isinstance(value, float):
        kinds.add("float")
    elif isinstance(value, complex):
        kinds.add("complex")
    elif isinstance(value, (str, bytes)):
        kinds.add("str")
    else:
        kinds.add("other")


def _generic_array(xp, value, dtype):
    """Arrays of values that are not plain Python numbers (tensors inside lists, array-likes)."""
    try:
        array = np.asarray(value)
    except ValueError as e:
        raise TypeError(f"Cannot convert {_short(value)} to a tensor: {e}") from None
    if array.dtype.kind in "SU" or dtype is _dt.string:
        return _string_array(array, dtype)
    if array.dtype == object:
        try:
            return _string_array(array, dtype)
        except TypeError:
            pass
        raise TypeError(f"Cannot convert {_short(value)} (a {type(value).__name__}) to a tensor: it "
                        "is ragged or holds non-numeric values")
    if dtype is None:
        _dt.from_numpy(array.dtype)  # TypeError for dtypes trainlib does not have
    else:
        array = array.astype(_dt.as_dtype(dtype).np)
    return xp.asarray(array)


def _string_array(value, dtype):
    """A numpy object array of `bytes` (tl.string's storage) from strings, bytes or arrays of
    them; `str` is encoded as UTF-8. Always on the host: strings never live on a GPU."""
    if dtype is not None and _dt.as_dtype(dtype) is not _dt.string:
        raise TypeError(f"Cannot convert {_short(value)} to {_dt.as_dtype(dtype)!r}: it holds "
                        "strings; use tl.strings.to_number to parse them")
    array = np.array(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(array.reshape(-1)):
        if isinstance(v, str):
            v = v.encode("utf-8")
        elif isinstance(v, bytes):
            v = bytes(v)  # np.bytes_ -> bytes
        else:
            what = "ragged (rows of different lengths)" if isinstance(v, (list, tuple)) else \
                f"a {type(v).__name__}, not a string"
            raise TypeError(f"Cannot convert {_short(value)} to a string tensor: an element is "
                            f"{what}" + ("; use tl.ragged.constant" if isinstance(v, (list, tuple))
                                         else ""))
        flat[i] = v
    return out


_pybool = type(True)
_BOOL_TARGETS = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)


def _short(value):
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."
