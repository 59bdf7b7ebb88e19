"""`tl.TensorArray`: a list of same-shaped tensors that loops can fill, as TensorFlow's.

Owns: the `TensorArrayWrite` op (a copy of a buffer with rows replaced, grown
when the array is dynamic) and the `TensorArray` class built on it and on
existing ops (read and gather are `GatherV2`, stack is the buffer itself).
Invariants: a TensorArray is a composite value: static facts (dtype, element
shape, dynamic_size, requested size) plus ONE tensor, `buffer`, of shape
[size, *element_shape]; every method returns a new TensorArray and never
changes the old one, so it can be a loop variable of `tl.while_loop` and of
AutoGraph loops (`_tl_flatten` / `_tl_rebuild`, see graph/nest.py), and
gradients flow through the ops like through any others. Before its first
write, an array whose element shape is not fully known has no buffer (its
one leaf is None); graph loops learn the element shape from one trace of
the body. Elements are never cleared after a read (`clear_after_read` is
accepted and ignored, as TensorFlow 2 does inside tf.function); unwritten
elements read as zeros.
"""
import threading
import weakref

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import SymbolicTensor, TensorShape, as_shape, is_tensor
from . import array as _array
from ..properties import read_only

__all__ = ["TensorArray"]

_INDEX_DTYPES = (_dt.int32, _dt.int64)


# ------------------------------------------------------------------ the op

def _write_infer(buffer, index, value, dynamic_size=False, geometric=False):
    if value.dtype is not buffer.dtype:
        raise TypeError(f"TensorArray dtype is {buffer.dtype.name} but the value written is "
                        f"{value.dtype.name}")
    if index.dtype not in _INDEX_DTYPES:
        raise TypeError(f"TensorArray indices must be int32 or int64, got {index.dtype.name}")
    if index.shape.rank not in (0, 1, None):
        raise ValueError(f"TensorArray index must be a scalar or a vector, got shape {index.shape}")
    if buffer.shape.rank is None or index.shape.rank is None:
        return spec(TensorShape(None), buffer.dtype)
    element = buffer.shape[1:]
    expected = index.shape.concatenate(element)
    if not expected.is_compatible_with(value.shape):
        what = "value" if index.shape.rank == 0 else "values (one row per index)"
        raise ValueError(f"Incompatible shape for {what}: {value.shape}, expected {expected}")
    element = element.merge_with(value.shape[index.shape.rank:])
    rows = None if dynamic_size or geometric else buffer.shape[0]
    return spec(TensorShape([rows]).concatenate(element), buffer.dtype)


def _write_grad(op, dy):
    buffer, index, value = op.inputs
    d_value = _array.gather(dy, index)
    # the written rows of the old buffer did not reach the output
    d_buffer = apply("TensorArrayWrite", dy, index, _array.zeros_like(value), dynamic_size=False)
    if op.attrs.get("dynamic_size") or op.attrs.get("geometric"):
        # the output may have grown: the old rows are a prefix
        if buffer.shape.is_fully_defined():
            d_buffer = _array.slice(d_buffer, [0] * buffer.shape.rank, buffer.shape.as_list())
        else:
            rows = _array.shape(buffer)
            d_buffer = _array.slice(d_buffer, _array.zeros_like(rows), rows)
    return d_buffer, None, d_value


def _check_write(xp, buffer, index, value, dynamic_size):
    """Validates a write; True if it needs a bigger buffer."""
    n = buffer.shape[0]
    if value.shape != index.shape + buffer.shape[1:]:
        raise InvalidArgumentError(f"Incompatible shape for value: {tuple(value.shape)}, expected "
                                   f"{tuple(index.shape + buffer.shape[1:])}")
    if index.ndim == 0:  # one element: the common case, kept cheap (loops write one per step)
        low = high = int(index)
    elif not index.size:
        return False
    else:
        low, high = int(index.min()), int(index.max())
    if low < 0:
        raise InvalidArgumentError(f"Writing to negative indices (index {low}) is not allowed")
    if index.ndim == 1 and index.size > 1:
        ordered = xp.sort(index)
        if bool((ordered[1:] == ordered[:-1]).any()):
            raise InvalidArgumentError("Could not scatter to TensorArray: an index appears twice "
                                       "(each element can be written once per scatter)")
    if high >= n and not dynamic_size:
        raise InvalidArgumentError(
            f"Tried to write to index {high} but array is not resizeable and size is: {n}. "
            "Create the TensorArray with dynamic_size=True to let it grow.")
    return high >= n


def _grown(xp, buffer, index, value, geometric):
    """A bigger copy of `buffer` with `value` written: just big enough, or (`geometric`) with at
    least twice the rows, so that n appends copy O(n) rows in all."""
    rows = int(index.max()) + 1
    if geometric:
        rows = max(rows, 2 * buffer.shape[0])
    out = xp.zeros((rows,) + buffer.shape[1:], dtype=buffer.dtype)
    out[:buffer.shape[0]] = buffer
    out[index] = value
    return out


def _write(xp, buffer, index, value, dynamic_size=False, geometric=False):
    """A copy of `buffer` with row(s) `index` set to `value`, grown if dynamic and needed.

    `geometric=True` (an accumulator's buffer, whose row count is a capacity, not the
    array's size: the While gradient's saved iterations) grows it to at least twice its rows.
    """
    if _check_write(xp, buffer, index, value, dynamic_size or geometric):
        if not geometric and index.ndim == 0 and int(index) == buffer.shape[0]:
            return _append(xp, buffer, value)
        return _grown(xp, buffer, index, value, geometric)
    out = buffer.copy()
    out[index] = value
    return out


_claimed = {}   # id(base) -> [weak reference to a capacity base, rows some array already shows]
_claimed_lock = threading.Lock()


def _append(xp, buffer, value):
    """`buffer` with `value` as one more row, without copying the rows it has when it can.

    The result is the view of the first n + 1 rows of a base with spare rows (twice as many
    when it is made); the array that was appended to keeps seeing its n rows, so it is
    unchanged. The next append to the result writes the spare row in place, as long as no
    other append took that row first (the base records how many rows are claimed), so n
    appends one after another copy O(n) rows in all instead of O(n^2), eagerly too."""
    n = buffer.shape[0]
    base = buffer.base
    with _claimed_lock:
        entry = _claimed.get(id(base)) if base is not None else None
        if entry is not None and entry[0]() is base and entry[1] == n and base.shape[0] > n \
                and _data(base) == _data(buffer) and base.shape[1:] == buffer.shape[1:]:
            entry[1] = n + 1
            base[n] = value
            return base[:n + 1]
    base = xp.zeros((max(2 * n, n + 1),) + buffer.shape[1:], buffer.dtype)
    base[:n] = buffer
    base[n] = value
    key = id(base)
    with _claimed_lock:
        _claimed[key] = [weakref.ref(base, lambda _, key=key: _claimed.pop(key, None)), n + 1]
    return base[:n + 1]


def _write_in_place(xp, buffer, index, value, dynamic_size=False, geometric=False):
    """TensorArrayWrite into `buffer` itself: codegen's lowering inside a loop that owns the
    buffer (its old value is read by nothing else), which makes n writes O(n), not O(n^2).

    A dynamic array that must grow gets a base of twice the rows (zeros) and is returned as
    the view of its first rows; a later write past the end widens that view while the base
    has room, so n appends of one row copy O(n) rows in all, and the array's shape is still
    its size. (The loop's owned copy, `.copy()` on entry, drops the spare rows.)"""
    if index.ndim == 0:
        row = int(index)
        if 0 <= row < len(buffer) and value.shape == buffer.shape[1:]:
            buffer[row] = value   # one row inside the array: a loop's step, kept cheap
            return buffer
    if _check_write(xp, buffer, index, value, dynamic_size or geometric):
        if geometric:
            return _grown(xp, buffer, index, value, True)
        rows = int(index.max()) + 1
        base = buffer.base
        if base is not None and getattr(base, "shape", (0,))[0] >= rows and \
                base.shape[1:] == buffer.shape[1:] and base.dtype == buffer.dtype and \
                base.flags.c_contiguous and buffer.flags.c_contiguous and \
                _data(base) == _data(buffer):
            buffer = base[:rows]    # the spare rows: zeros no write has reached
        else:
            base = xp.zeros((max(rows, 2 * buffer.shape[0]),) + buffer.shape[1:], buffer.dtype)
            base[:buffer.shape[0]] = buffer
            buffer = base[:rows]
    buffer[index] = value
    return buffer


def _data(array):
    """The address of an array's first element (numpy's and CuPy's)."""
    data = getattr(array, "__array_interface__", None) or \
        getattr(array, "__cuda_array_interface__", None)
    return None if data is None else data["data"][0]


def _row_write(op):
    """A step's write of one row of a loop-owned buffer of known row shape: `buf[i] = v`
    while i is in range and v has the row's shape (else `_write_in_place`, which grows the
    buffer or names the error)."""
    buffer, index, value = op.inputs
    if index.shape.rank != 0 or value.shape.rank is None or buffer.shape.rank is None or \
            value.shape.rank != buffer.shape.rank - 1:
        return None
    return "0 <= {1} < len({0}) and {2}.shape == {0}.shape[1:]", "{0}[{1}] = {2}"


defop("TensorArrayWrite", infer=_write_infer, grad=_write_grad, in_place=_write_in_place,
      row_write=_row_write)(_write)


# ------------------------------------------------------------------ the class

class TensorArray:
    """A list of tensors of one dtype and shape, written and read by index; loop-friendly.

    Every method returns a new TensorArray (write it back: `ta = ta.write(i, x)`),
    so a TensorArray can be a loop variable of `tl.while_loop` and of loops
    over tensors in a `tl.function`. Gradients flow through write, read, stack,
    unstack, gather, scatter and concat.

    Args:
        dtype: the dtype of the elements.
        size: the number of elements (a Python int or an int scalar tensor).
        dynamic_size: let writes past the end grow the array (else they raise).
        clear_after_read: accepted for TensorFlow compatibility; elements are
            never cleared (as in TensorFlow 2's tf.function).
        element_shape: the shape of every element; if None (or partly
            unknown), it is learned from the first write.
        infer_shape: accepted for TensorFlow compatibility; the element shape is
            always fixed by the first write.

    Raises:
        InvalidArgumentError: (from write/scatter) for an index past the end of
            a fixed-size array, a negative index, or a value of another dtype.
        ValueError: for a value whose shape differs from the element shape.

    Example:
        >>> @tl.function
        ... def squares(n):
        ...     ta = tl.TensorArray(tl.float32, size=n)
        ...     for i in tl.range(n):
        ...         ta = ta.write(i, tl.cast(i * i, tl.float32))
        ...     return ta.stack()
        >>> squares(tl.constant(4)).numpy()
        array([0., 1., 4., 9.], dtype=float32)
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = _dt.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = as_shape(element_shape)
        if size is None:
            size = 0
        if is_tensor(size):
            if size.dtype not in _INDEX_DTYPES or size.shape.rank not in (0, None):
                raise TypeError(f"TensorArray size must be an int scalar, got {size.dtype.name} "
                                f"of shape {size.shape}")
            if not isinstance(size, SymbolicTensor):  # an eager size is a static fact
                size = int(size)
        elif not isinstance(size, int) or size < 0:
            raise ValueError(f"TensorArray size must be a non-negative int, got {size!r}")
        self._size = size
        self._buffer = None
        if self._element_shape.is_fully_defined():
            self._buffer = _zeros(size, self._element_shape, self._dtype)

    @classmethod
    def _from(cls, like, buffer, size=None):
        ta = cls.__new__(cls)
        ta.__dict__.update(like.__dict__)
        ta._buffer = buffer
        if buffer is not None and is_tensor(buffer):
            ta._element_shape = like._element_shape.merge_with(buffer.shape[1:]) \
                if like._element_shape.is_compatible_with(buffer.shape[1:]) else buffer.shape[1:]
        if size is not None:
            ta._size = size
        return ta

    # -- composite value protocol (nest.flatten / pack_as: control flow, tl.function)
    def _tl_flatten(self):
        return [self._buffer]

    def _tl_rebuild(self, leaves):
        buffer, = leaves
        return TensorArray._from(self, buffer)

    def _tl_static_key(self):
        """What a tl.function's trace cache must tell apart beyond the buffer's spec."""
        if self._buffer is not None:
            return (self._dtype, self._dynamic_size)
        return (self._dtype, self._dynamic_size, self._element_shape,
                self._size if isinstance(self._size, int) else None)

    def _tl_shape_invariants(self):
        """Per leaf, the shape a loop carries it with: a growing buffer has an unknown first dim."""
        if not self._dynamic_size or not is_tensor(self._buffer):
            return [None]
        return [TensorShape([None]).concatenate(self._buffer.shape[1:])]

    def _tl_complete(self, after):
        """This array with a buffer, given `after` (what a loop body makes of it): the missing
        element shape comes from there. None if `after` does not say."""
        if self._buffer is not None or not isinstance(after, TensorArray) or \
                not is_tensor(after._buffer):
            return None
        element = after._buffer.shape[1:]
        if not element.is_fully_defined():
            raise ValueError(
                f"A TensorArray is a loop variable before its first write and the loop writes "
                f"elements of shape {element}, which is not fully known; pass "
                "element_shape=... to tl.TensorArray.")
        ta = TensorArray._from(self, _zeros(self._size, element, self._dtype))
        ta._element_shape = element
        return ta

    # -- properties
    dtype = read_only("_dtype", "The dtype of the elements.")
    element_shape = read_only("_element_shape", "The static shape of the elements (None dims "
                                                "where unknown).")
    dynamic_size = read_only("_dynamic_size", "Whether writes past the end grow the array.")

    def size(self, name=None):
        """The number of elements, an int32 scalar tensor."""
        if self._buffer is None:
            return convert_to_tensor(self._size) if not is_tensor(self._size) else self._size
        rows = self._buffer.shape[0]
        if rows is not None:
            return convert_to_tensor(rows)
        return _array.shape(self._buffer)[0]

    # -- writing
    def write(self, index, value, name=None):
        """A new TensorArray whose element `index` is `value`.

        Args:
            index: an int scalar (tensor).
            value: a tensor of the array's dtype and element shape.

        Returns:
            The new TensorArray (the old one is unchanged).

        Raises:
            InvalidArgumentError: for a value of another dtype, or (when run) an
                index < 0 or past the end of a fixed-size array.
            ValueError: for a value of another shape than the elements.
        """
        index = _index(index, scalar=True)
        value = self._value(value)
        self._check_element(value.shape)
        buffer = self._buffer_for(value.shape, value)
        return TensorArray._from(self, apply("TensorArrayWrite", buffer, index, value,
                                             dynamic_size=self._dynamic_size))

    def scatter(self, indices, value, name=None):
        """A new TensorArray whose elements `indices[k]` are `value[k]`.

        Args:
            indices: a 1-D int tensor of distinct indices.
            value: a tensor of shape [len(indices), *element_shape].
        """
        indices = _index(indices, scalar=False)
        value = self._value(value)
        if value.shape.rank == 0:
            raise ValueError("TensorArray.scatter needs a value with a leading dim (one row per index)")
        self._check_element(value.shape[1:])
        buffer = self._buffer_for(value.shape[1:])
        return TensorArray._from(self, apply("TensorArrayWrite", buffer, indices, value,
                                             dynamic_size=self._dynamic_size))

    def unstack(self, value, name=None):
        """A new TensorArray whose elements are the rows of `value` (its size is their number).

        Raises:
            ValueError: if a fixed-size array of static size would get more rows.
        """
        value = self._value(value)
        if value.shape.rank == 0:
            raise ValueError("TensorArray.unstack needs a tensor of rank >= 1, got a scalar")
        self._check_element(value.shape[1:])
        rows = value.shape[0] if value.shape.rank is not None else None
        if not self._dynamic_size and isinstance(self._size, int) and rows is not None and \
                rows > self._size:
            raise ValueError(f"Cannot unstack {rows} tensors into a TensorArray of static size "
                             f"{self._size}")
        return TensorArray._from(self, apply("Identity", value))

    # -- reading
    def read(self, index, name=None):
        """Element `index` (zeros if it was never written).

        Raises:
            InvalidArgumentError: for an index outside [0, size).
        """
        buffer = self._need_buffer("read")
        n = buffer.shape[0]
        if isinstance(index, int) and (index < 0 or n is not None and index >= n):
            raise op_error(InvalidArgumentError, "TensorArrayRead",
                           f"Tried to read from index {index} but array size is: {n}")
        return _array.gather(buffer, _index(index, scalar=True))

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked: shape [len(indices), *element_shape]."""
        return _array.gather(self._need_buffer("gather"), _index(indices, scalar=False))

    def stack(self, name=None):
        """All elements stacked: a tensor of shape [size, *element_shape]."""
        return self._need_buffer("stack")

    def concat(self, name=None):
        """All elements joined along their first dim: shape [size * d0, *element_shape[1:]]."""
        buffer = self._need_buffer("concat")
        if buffer.shape.rank is not None and buffer.shape.rank < 2:
            raise ValueError("TensorArray.concat needs elements of rank >= 1 (they are joined "
                             "along their first dim); use stack() for scalars")
        rest = buffer.shape[2:]
        if rest.is_fully_defined():
            return _array.reshape(buffer, [-1] + rest.as_list())
        return _array.reshape(buffer, _array.concat([[-1], _array.shape(buffer)[2:]], 0))

    def identity(self):
        """A new TensorArray with the same elements (TensorFlow's control-dependency helper)."""
        return TensorArray._from(self, None if self._buffer is None else
                                 apply("Identity", self._buffer))

    def close(self, name=None):
        """Does nothing (TensorFlow releases resources here; a TensorArray holds none)."""
        return None

    def __repr__(self):
        return (f"<tl.TensorArray dtype={self._dtype.name} size={_size_text(self)} "
                f"element_shape={self._element_shape}>")

    # -- helpers
    def _value(self, value):
        if is_tensor(value) or hasattr(value, "_array"):  # tensors and Variables keep their dtype
            value = convert_to_tensor(value)
            if value.dtype is not self._dtype:
                raise op_error(InvalidArgumentError, "TensorArrayWrite",
                               f"TensorArray dtype is {self._dtype.name} but Op is trying to write "
                               f"dtype {value.dtype.name}; cast it with tl.cast(value, "
                               f"tl.{self._dtype.name})")
            return value
        return convert_to_tensor(value, dtype=self._dtype)

    def _check_element(self, shape):
        if not self._element_shape.is_compatible_with(shape):
            raise op_error(ValueError, "TensorArrayWrite", f"Incompatible shape for value ({shape}), "
                           f"expected ({self._element_shape})")

    def _buffer_for(self, element, value=None):
        if self._buffer is not None:
            return self._buffer
        element = self._element_shape.merge_with(element)
        if element.is_fully_defined():
            return _zeros(self._size, element, self._dtype)
        if value is not None and element.rank is not None and not self._dynamic_size:
            # outside a loop the first value's dims are known when the graph runs
            shape = _array.concat([_array.reshape(self._size, [1]) if is_tensor(self._size)
                                   else [self._size], _array.shape(value)], 0)
            return _array.zeros(shape, dtype=self._dtype)
        raise ValueError(f"TensorArray: the first write has elements of shape {element}, which is "
                         "not fully known; pass element_shape=... to tl.TensorArray.")

    def _need_buffer(self, what):
        if self._buffer is None:
            raise ValueError(f"Cannot {what} a TensorArray before its first write when its element "
                             f"shape ({self._element_shape}) is not fully known; write to it first or "
                             "pass element_shape=... to tl.TensorArray.")
        return self._buffer


def _index(index, scalar):
    t = convert_to_tensor(index)
    if t.dtype not in _INDEX_DTYPES:
        raise TypeError(f"TensorArray indices must be int32 or int64, got {t.dtype.name}")
    want = 0 if scalar else 1
    if t.shape.rank not in (want, None):
        raise ValueError(f"TensorArray {'index' if scalar else 'indices'} must be "
                         f"{'a scalar' if scalar else 'a vector'}, got shape {t.shape}")
    return t


def _zeros(size, element, dtype):
    if is_tensor(size):
        shape = _array.concat([_array.reshape(size, [1]), element.as_list()], 0)
        return _array.zeros(shape, dtype=dtype)
    return _array.zeros([size] + element.as_list(), dtype=dtype)


def _size_text(ta):
    if ta._buffer is not None and is_tensor(ta._buffer):
        return ta._buffer.shape[0]
    return ta._size if isinstance(ta._size, int) else None
