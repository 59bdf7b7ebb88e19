"""Ragged tensors: `tl.RaggedTensor` (flat values plus row splits per ragged
dimension), `tl.ragged.constant`, `tl.ragged.map_flat_values`, and the
`RaggedTensorToTensor` op that pads one to a dense tensor.

Owns: the RaggedTensor value type and its constructors. Invariants: a
RaggedTensor is `values` (a tensor, or another RaggedTensor for more ragged
dimensions) and an int64 `row_splits` vector starting at 0, non-decreasing,
ending at the number of rows of `values`; it is immutable.
"""
import operator as _operator

import numpy as np

from .. import dtypes as _dt
from .. import errors as _errors
from ..op import apply, convert_to_tensor, defop, spec
from ..properties import read_only
from ..tensor import SymbolicTensor, Tensor, TensorShape, TensorSpec
from . import array as _array
from . import math as _math
from . import segment as _segment

__all__ = ["RaggedTensor", "RaggedTensorSpec", "constant", "map_flat_values"]


class RaggedTensor:
    """A tensor whose rows have different lengths: `values` split into rows by `row_splits`.

    Example:
        >>> rt = tl.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1])
        >>> rt.to_list()
        [[1, 2], [], [3]]
    """

    def __init__(self, values, row_splits):
        self._values = values
        self._row_splits = row_splits

    # -------------------------------------------------- composite value protocol (graph/nest.py)
    def _tl_flatten(self):
        """Components, as TensorFlow orders them: the flat values, then the row splits of each
        ragged dimension from the outermost in."""
        return [self.flat_values] + self.nested_row_splits

    def _tl_rebuild(self, parts):
        return _from_components(parts)

    def _tl_static_key(self):
        return (self.ragged_rank,)

    def _tl_type_spec(self):
        """The RaggedTensorSpec a tl.function keys and traces this value by (rows known, the
        ragged dimensions and the number of flat values not)."""
        return RaggedTensorSpec.from_value(self)

    @property
    def nested_row_splits(self):
        """The row splits of every ragged dimension, outermost first."""
        out, v = [], self
        while isinstance(v, RaggedTensor):
            out.append(v.row_splits)
            v = v.values
        return out

    # -------------------------------------------------- constructors
    @classmethod
    def from_row_splits(cls, values, row_splits, validate=True, name=None):
        """Rows `values[row_splits[i]:row_splits[i+1]]`."""
        values = values if isinstance(values, RaggedTensor) else convert_to_tensor(values)
        splits = convert_to_tensor(row_splits, dtype_hint=_dt.int64)
        if splits.dtype is not _dt.int64:
            splits = apply("Cast", splits, DstT=_dt.int64)
        if validate and isinstance(splits, Tensor):
            s = splits.numpy()
            nvals = _nrows_static(values)
            if s.ndim != 1 or s.size == 0 or s[0] != 0 or np.any(np.diff(s) < 0) or \
                    (nvals is not None and s[-1] != nvals):
                raise ValueError(f"row_splits must be a vector starting at 0, non-decreasing and "
                                 f"ending at the number of values ({nvals}); got {s.tolist()}")
        return cls(values, splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, validate=True, name=None):
        """Rows of `row_lengths[i]` consecutive values."""
        lengths = convert_to_tensor(row_lengths, dtype_hint=_dt.int64)
        if not isinstance(lengths, Tensor):  # a graph value: the splits are ops
            return cls.from_row_splits(values, _splits_of_lengths(_math.cast(lengths, _dt.int64)))
        lengths = np.asarray(lengths, dtype=np.int64)
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(lengths)]), validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, validate=True, name=None):
        """Value i goes to row `value_rowids[i]` (sorted); `nrows` rows in all."""
        ids = np.asarray(convert_to_tensor(value_rowids, dtype_hint=_dt.int64), dtype=np.int64)
        n = int(nrows) if nrows is not None else (int(ids[-1]) + 1 if ids.size else 0)
        if ids.size and (ids[0] < 0 or (np.diff(ids) < 0).any() or ids[-1] >= n):
            # bincount below would place values in rows they do not belong to
            raise _errors.InvalidArgumentError(
                "RaggedTensor.from_value_rowids: value_rowids must be sorted, non-negative and "
                f"less than nrows={n}; got {ids.tolist()[:20]}")
        return cls.from_row_lengths(values, np.bincount(ids, minlength=n)[:n], validate)

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None):
        """A RaggedTensor of the rows of a dense tensor (all of each row, or `lengths`)."""
        t = convert_to_tensor(tensor)
        if not isinstance(t, Tensor):  # a graph value: uniform rows built with ops
            if lengths is not None or padding is not None:
                raise ValueError("RaggedTensor.from_tensor of a graph value takes neither "
                                 "lengths nor padding in trainlib")
            return _uniform_rows(t, ragged_rank)
        rows, cols = t.shape[0], t.shape[1]
        lengths = [cols] * rows if lengths is None else list(np.asarray(lengths))
        flat = np.asarray(t).reshape((rows * cols,) + tuple(t.shape[2:]))
        keep = np.concatenate([np.arange(i * cols, i * cols + n) for i, n in enumerate(lengths)]
                              ) if rows else np.zeros(0, np.int64)
        return cls.from_row_lengths(flat[keep.astype(np.int64)], lengths)

    # -------------------------------------------------- properties
    values = read_only("_values", "The concatenated rows (a tensor, or a RaggedTensor for nested "
                                  "ragged dims).")
    row_splits = read_only("_row_splits", "int64 vector: row i is "
                                          "`values[row_splits[i]:row_splits[i+1]]`.")

    @property
    def flat_values(self):
        """The innermost values tensor."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v.values
        return v

    dtype = read_only("flat_values.dtype", "The dtype of the values.")

    @property
    def ragged_rank(self):
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def shape(self):
        """Static shape: the number of rows, then None for the ragged dimension."""
        inner = self._values.shape
        return TensorShape([self._row_splits.shape[0] - 1 if self._row_splits.shape[0] is not None
                            else None, None] + list(inner)[1:])

    def nrows(self, out_type=_dt.int64, name=None):
        """The number of rows."""
        n = _nrows(self)
        return n if _dt.as_dtype(out_type) is _dt.int64 else _math.cast(n, out_type)

    def value_rowids(self, name=None):
        """int64 vector: the row of each value (graph values too)."""
        s = self._row_splits
        count = _array.range(s[-1], dtype=_dt.int64)
        ids = _array.searchsorted(_array.reshape(s[1:], [1, -1]), _array.reshape(count, [1, -1]),
                                  side="right", out_type=_dt.int64)
        return _array.reshape(ids, [-1])

    def row_lengths(self, axis=1, name=None):
        """int64 vector of each row's length."""
        s = self._row_splits
        return s[1:] - s[:-1]

    # -------------------------------------------------- conversion
    def to_list(self):
        """Nested Python lists of the values."""
        s = np.asarray(self._row_splits)
        inner = self._values.to_list() if isinstance(self._values, RaggedTensor) else \
            np.asarray(self._values).tolist()
        return [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def to_tensor(self, default_value=None, name=None, shape=None):
        """A dense tensor, rows padded with `default_value` (0 or b"") to the longest row,
        or cut/padded to `shape`."""
        if isinstance(self._values, RaggedTensor):
            inner = self._values.to_tensor(default_value)
            return RaggedTensor(inner, self._row_splits).to_tensor(default_value, shape=shape)
        values = self._values
        if default_value is None:
            default_value = b"" if values.dtype is _dt.string else 0
        default = convert_to_tensor(default_value, dtype=values.dtype)
        dims = None if shape is None else tuple(-1 if d is None else int(d)
                                                for d in TensorShape(shape).as_list())
        return apply("RaggedTensorToTensor", values, self._row_splits, default, shape=dims)

    def numpy(self):
        """An object array of each row's numpy array (as TensorFlow)."""
        s = np.asarray(self._row_splits)
        v = np.asarray(self._values)
        out = np.empty(len(s) - 1, dtype=object)
        for i in range(len(out)):
            out[i] = v[s[i]:s[i + 1]]
        return out

    def with_flat_values(self, new_values):
        """The same row structure over new innermost values."""
        if isinstance(self._values, RaggedTensor):
            return RaggedTensor(self._values.with_flat_values(new_values), self._row_splits)
        return RaggedTensor(convert_to_tensor(new_values), self._row_splits)

    def __getitem__(self, key):
        if isinstance(self._row_splits, SymbolicTensor):  # a graph value: index with ops
            return self._symbolic_item(key)
        if isinstance(key, (int, np.integer)):
            s = np.asarray(self._row_splits)
            n = len(s) - 1
            if not -n <= key < n:
                raise IndexError(f"row {key} is out of range for {n} rows")
            key %= n
            return self._values[int(s[key]):int(s[key + 1])]
        if isinstance(key, slice):
            s = np.asarray(self._row_splits)
            rows = range(len(s) - 1)[key]
            if key.step not in (None, 1):
                raise ValueError("RaggedTensor slices take step 1 only")
            start, stop = (rows.start, rows.stop) if len(rows) else (0, 0)
            return RaggedTensor(self._values[int(s[start]):int(s[stop])],
                                convert_to_tensor(s[start:stop + 1] - s[start]))
        raise TypeError(f"RaggedTensor indices are ints or slices, got {type(key).__name__}")

    # -------------------------------------------------- tl.reduce_* (ops/math.py asks)
    _SEGMENT = {"Sum": "unsorted_segment_sum", "Max": "unsorted_segment_max",
                "Min": "unsorted_segment_min", "Mean": None}

    def _tl_reduce(self, op_name, axis, keepdims):
        """tl.reduce_sum/mean/max/min/prod of a RaggedTensor, over all its values (axis None) or
        along its ragged dimension (axis 1 of ragged rank 1: one value per row; an empty row
        gives the reduction's identity, nan for a mean). Integer means are float64, as
        TensorFlow's."""
        values = self.flat_values
        if op_name == "Mean" and values.dtype.is_integer:
            values = _math.cast(values, _dt.float64)
        if axis is None and not keepdims:
            return _math._reduce(op_name, values, None, False)
        axes = [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])] \
            if axis is not None else None
        rank = self.shape.rank
        if axes is None or [a % rank for a in axes] != [1] or self.ragged_rank != 1 or \
                op_name not in self._SEGMENT and op_name != "Prod":
            raise ValueError(f"reduce ({op_name}) of a RaggedTensor: trainlib reduces over all "
                             "values (axis=None) or along the ragged axis 1 of ragged rank 1 "
                             f"(sum, mean, max, min, prod); got axis={axis}, ragged rank "
                             f"{self.ragged_rank}. Reduce rt.to_tensor() instead.")
        rows = self._row_splits.shape[0]
        if rows is None:
            raise ValueError(f"reduce ({op_name}) of a RaggedTensor along its rows needs a known "
                             "number of rows while tracing (a RaggedTensorSpec with a row count)")
        n = rows - 1
        ids = self.value_rowids()
        if op_name == "Mean":  # sum / length: an empty row is nan (0/0), as TensorFlow's
            lengths = _math.cast(self.row_lengths(), values.dtype)
            if values.shape.rank and values.shape.rank > 1:
                lengths = _array.reshape(lengths, [-1] + [1] * (values.shape.rank - 1))
            out = _math.unsorted_segment_sum(values, ids, n) / lengths
        else:
            segment = _segment.unsorted_segment_prod if op_name == "Prod" else \
                getattr(_math, self._SEGMENT[op_name])
            out = segment(values, ids, n)
        return _array.expand_dims(out, 1) if keepdims else out

    # -------------------------------------------------- tl.concat / tl.stack (ops/array.py asks)
    @staticmethod
    def _tl_concat(values, axis):
        """tl.concat of RaggedTensors (dense tensors among them taken as uniform rows)."""
        parts = _like_ragged(values, "concat")
        rank = parts[0].shape.rank
        axis = int(axis) + rank if int(axis) < 0 else int(axis)
        if axis == 0:
            return _concat_rows(parts)
        if axis == 1 and parts[0].ragged_rank == 1:
            perm, _ = apply("RaggedRowInterleave", *[p.row_splits for p in parts])
            values = _array.gather(_array.concat([p.values for p in parts], 0), perm)
            return RaggedTensor(values, _math.add_n([p.row_splits for p in parts]))
        raise ValueError(f"concat of RaggedTensors: axis {axis} is not supported for ragged "
                         f"rank {parts[0].ragged_rank} (axis 0, or axis 1 of ragged rank 1)")

    @staticmethod
    def _tl_stack(values, axis):
        """tl.stack of RaggedTensors (dense tensors among them taken as uniform rows)."""
        parts = _like_ragged(values, "stack")
        rank = parts[0].shape.rank
        axis = int(axis) + rank + 1 if int(axis) < 0 else int(axis)
        if axis == 0:
            return _concat_rows([RaggedTensor(p, _array.stack([_zero64(), _nrows(p)]))
                                 for p in parts])
        if axis == 1 and parts[0].ragged_rank == 1:
            perm, lengths = apply("RaggedRowInterleave", *[p.row_splits for p in parts])
            values = _array.gather(_array.concat([p.values for p in parts], 0), perm)
            inner = RaggedTensor(values, _splits_of_lengths(lengths))
            k = _zero64() + len(parts)
            return RaggedTensor(inner, _array.range(_nrows(parts[0]) + 1, dtype=_dt.int64) * k)
        raise ValueError(f"stack of RaggedTensors: axis {axis} is not supported for ragged "
                         f"rank {parts[0].ragged_rank} (axis 0, or axis 1 of ragged rank 1)")

    def _symbolic_item(self, key):
        s, n = self._row_splits, _nrows(self)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError("RaggedTensor slices take step 1 only")
            start = _clamp(key.start, n, 0)
            stop = _math.maximum(_clamp(key.stop, n, n), start)
            splits = s[start:stop + 1]
            return RaggedTensor(self._values[s[start]:s[stop]], splits - splits[0])
        if isinstance(key, (int, np.integer)) or (hasattr(key, "dtype") and key.dtype.is_integer):
            i = convert_to_tensor(key, dtype_hint=_dt.int64)
            i = _math.cast(i, _dt.int64)
            i = _math.floormod(i, n)  # (negative rows count from the end)
            return self._values[s[i]:s[i + 1]]
        raise TypeError(f"RaggedTensor indices are ints or slices, got {type(key).__name__}")

    @staticmethod
    def _tl_elementwise(fn, *args):
        """`fn` (an elementwise function) of `args` with RaggedTensors among them: applied to
        their flat values, the result takes the first one's rows (tl.math's functions ask)."""
        template = next(a for a in args if isinstance(a, RaggedTensor))
        for a in args:
            if not isinstance(a, RaggedTensor) and _rank(a) != 0:
                raise ValueError("an elementwise op on a RaggedTensor takes scalars or "
                                 "RaggedTensors of its rows beside it, not a tensor of shape "
                                 f"{getattr(a, 'shape', np.shape(a))}; convert one side with "
                                 "to_tensor() or RaggedTensor.from_tensor()")
        return template.with_flat_values(
            fn(*[a.flat_values if isinstance(a, RaggedTensor) else a for a in args]))

    # elementwise operators act on the flat values and keep the rows (as TensorFlow's)
    __add__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.add, self, o)  # noqa: E731
    __sub__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.sub, self, o)  # noqa: E731
    __mul__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.mul, self, o)  # noqa: E731
    __truediv__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.truediv, self, o)  # noqa: E731
    __floordiv__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.floordiv, self, o)  # noqa: E731
    __mod__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.mod, self, o)  # noqa: E731
    __pow__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.pow, self, o)  # noqa: E731
    __radd__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.add, o, self)  # noqa: E731
    __rsub__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.sub, o, self)  # noqa: E731
    __rmul__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.mul, o, self)  # noqa: E731
    __rtruediv__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.truediv, o, self)  # noqa: E731
    __rfloordiv__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.floordiv, o, self)  # noqa: E731
    __rmod__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.mod, o, self)  # noqa: E731
    __rpow__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.pow, o, self)  # noqa: E731
    __lt__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.lt, self, o)  # noqa: E731
    __le__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.le, self, o)  # noqa: E731
    __gt__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.gt, self, o)  # noqa: E731
    __ge__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.ge, self, o)  # noqa: E731
    __eq__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.eq, self, o)  # noqa: E731
    __ne__ = lambda self, o: RaggedTensor._tl_elementwise(_operator.ne, self, o)  # noqa: E731

    def __neg__(self):
        return self.with_flat_values(-self.flat_values)

    def __abs__(self):
        return self.with_flat_values(abs(self.flat_values))

    __hash__ = object.__hash__

    def __repr__(self):
        if isinstance(self._row_splits, SymbolicTensor):  # a graph value has no list yet
            return f"tl.RaggedTensor(values={self._values}, row_splits={self._row_splits})"
        return f"<tl.RaggedTensor {self.to_list()!r}>"


def _from_components(parts):
    """A RaggedTensor of (flat values, row splits outermost first), unchecked: the parts may be
    tensors, graph values or TensorSpecs (flat values alone: themselves, ragged rank 0)."""
    values = parts[0]
    for splits in reversed(parts[1:]):
        values = RaggedTensor(values, splits)
    return values


class RaggedTensorSpec:
    """Describes a RaggedTensor: `shape` (the number of rows, then None for each ragged
    dimension, then the inner dims), `dtype`, `ragged_rank`. As a tl.function argument or in an
    `input_signature`, a ragged value is traced by its spec: calls with other row lengths reuse
    the trace.

    Example:
        >>> tl.RaggedTensorSpec([None, None], tl.string)
        RaggedTensorSpec(TensorShape([None, None]), tl.string, 1, tl.int64)
    """

    def __init__(self, shape=None, dtype=_dt.float32, ragged_rank=None, row_splits_dtype=_dt.int64,
                 flat_values_spec=None):
        self._shape = TensorShape(shape)
        self._dtype = _dt.as_dtype(dtype)
        if self._shape.rank is None:
            raise ValueError("RaggedTensorSpec needs a known rank (e.g. shape=[None, None])")
        self._ragged_rank = self._shape.rank - 1 if ragged_rank is None else int(ragged_rank)
        if not 0 <= self._ragged_rank < max(self._shape.rank, 1):
            raise ValueError(f"RaggedTensorSpec: ragged_rank must be in [0, {self._shape.rank - 1}]"
                             f" for shape {self._shape}, got {ragged_rank}")
        if _dt.as_dtype(row_splits_dtype) is not _dt.int64:
            raise ValueError("RaggedTensorSpec: trainlib's row splits are int64")

    @classmethod
    def from_value(cls, value):
        """The spec of a RaggedTensor."""
        return cls(value.shape, value.dtype, value.ragged_rank)

    shape = read_only("_shape", "The static shape (None for each ragged dimension).")
    dtype = read_only("_dtype", "The dtype of the values.")
    ragged_rank = read_only("_ragged_rank", "How many dimensions after the first are ragged.")

    @property
    def row_splits_dtype(self):
        return _dt.int64

    def _component_specs(self):
        if self._ragged_rank == 0:  # a dense tensor that batches into a RaggedTensor (tf.data)
            return [TensorSpec(self._shape, self._dtype)]
        dims = self._shape.as_list()
        nrows = dims[0]
        flat = TensorSpec([None] + dims[self._ragged_rank + 1:], self._dtype)
        outer = TensorSpec([None if nrows is None else nrows + 1], _dt.int64)
        return [flat, outer] + [TensorSpec([None], _dt.int64)] * (self._ragged_rank - 1)

    # composite value protocol: the components are TensorSpecs; rebuilt of graph values (or of
    # anything else) it is the RaggedTensor they make
    def _tl_flatten(self):
        return self._component_specs()

    def _tl_rebuild(self, parts):
        return _from_components(parts)

    def _tl_static_key(self):
        return (self._ragged_rank,)

    def batched(self, batch_size=None):
        """The spec of `batch_size` (None: unknown) of these values batched: one more ragged
        dimension outside."""
        return RaggedTensorSpec(TensorShape([batch_size]).concatenate(self._shape), self._dtype,
                                self._ragged_rank + 1)

    def is_compatible_with(self, value):
        """True if `value` (a RaggedTensor or spec) has this dtype, ragged rank and a
        compatible shape."""
        if self._ragged_rank == 0 and not isinstance(value, (RaggedTensor, RaggedTensorSpec)):
            return TensorSpec(self._shape, self._dtype).is_compatible_with(value)
        return isinstance(value, (RaggedTensor, RaggedTensorSpec)) and \
            value.dtype is self._dtype and value.ragged_rank == self._ragged_rank and \
            self._shape.is_compatible_with(value.shape)

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and self._shape == other._shape and \
            self._dtype is other._dtype and self._ragged_rank == other._ragged_rank

    def __hash__(self):
        return hash((self._shape, self._dtype, self._ragged_rank))

    def __repr__(self):
        return (f"RaggedTensorSpec(TensorShape({self._shape.as_list()}), {self._dtype!r}, "
                f"{self._ragged_rank}, tl.int64)")


def _zero64():
    return convert_to_tensor(np.int64(0))


_array.JOINING_COMPOSITES.add(RaggedTensor)       # tl.concat / tl.stack join it by its rule
_math.ELEMENTWISE_COMPOSITES.add(RaggedTensor)    # tl.math's elementwise functions map it


def _rank(value):
    """The rank of a tensor, array or Python value beside a RaggedTensor (None: unknown)."""
    shape = getattr(value, "shape", None)
    if hasattr(shape, "rank"):
        return shape.rank
    return np.ndim(value)


def _clamp(bound, n, default):
    """A Python slice bound (None: `default`; negative: from the end) as an int64 index
    tensor in [0, n]."""
    if bound is None:
        return default if isinstance(default, (Tensor, SymbolicTensor)) else \
            convert_to_tensor(np.int64(default))
    b = _math.cast(convert_to_tensor(bound, dtype_hint=_dt.int64), _dt.int64)
    b = _math.where(b < 0, b + n, b)
    return _math.minimum(_math.maximum(b, 0), n)


def _nrows(r):
    """The number of rows of a RaggedTensor, an int64 scalar tensor (graph values too)."""
    return _array.shape(r.row_splits, out_type=_dt.int64)[0] - 1


def _splits_of_lengths(lengths):
    return _array.concat([_array.reshape(_zero64(), [1]), _math.cumsum(lengths)], 0)


def _uniform_rows(t, ragged_rank):
    """A dense tensor as a RaggedTensor of `ragged_rank` whose rows all have its length."""
    if ragged_rank == 0:
        return t
    static = t.shape.as_list() if t.shape.rank is not None else [None, None]
    if None not in static:  # known dims: the splits' and values' shapes stay known
        n, m = static[0], static[1]
        flat = _array.reshape(t, [n * m] + static[2:])
        return RaggedTensor(_uniform_rows(flat, ragged_rank - 1),
                            convert_to_tensor(np.arange(n + 1, dtype=np.int64) * m))
    dims = _array.shape(t, out_type=_dt.int64)
    n, m = dims[0], dims[1]
    flat = _array.reshape(t, _array.concat([_array.reshape(n * m, [1]), dims[2:]], 0))
    return RaggedTensor(_uniform_rows(flat, ragged_rank - 1),
                        _array.range(n + 1, dtype=_dt.int64) * m)


def _like_ragged(values, what):
    """`values` as RaggedTensors of one ragged rank (dense ones as uniform rows)."""
    rank = max(v.ragged_rank for v in values if isinstance(v, RaggedTensor))
    parts = []
    for v in values:
        if not isinstance(v, RaggedTensor):
            v = convert_to_tensor(v)
            if v.shape.rank is not None and v.shape.rank <= rank:
                raise ValueError(f"{what}: a dense tensor of shape {v.shape} cannot join "
                                 f"RaggedTensors of ragged rank {rank}")
            v = _uniform_rows(v, rank)
        if v.ragged_rank != rank:
            raise ValueError(f"{what}: RaggedTensors of different ragged ranks "
                             f"({v.ragged_rank} and {rank})")
        parts.append(v)
    return parts


def _concat_rows(parts):
    """The rows of RaggedTensors of one ragged rank (or tensors), one after the other."""
    if not isinstance(parts[0], RaggedTensor):
        return _array.concat(parts, 0)
    values = _concat_rows([p.values for p in parts])
    splits, offset = [parts[0].row_splits[:1]], None
    for p in parts:
        s = p.row_splits
        splits.append(s[1:] if offset is None else s[1:] + offset)
        offset = s[-1] if offset is None else offset + s[-1]
    return RaggedTensor(values, _array.concat(splits, 0))


def _interleave_infer(*splits):
    rows = [s.shape[0] for s in splits]
    known = None if None in rows else (rows[0] - 1) * len(splits)
    return spec([None], _dt.int64), spec([known], _dt.int64)


@defop("RaggedRowInterleave", infer=_interleave_infer, differentiable=False, host=True,
       num_outputs=2)
def _interleave(xp, *splits):
    """(perm, lengths): row i of every input in turn; perm indexes the inputs' values
    concatenated, lengths are the lengths of the interleaved rows."""
    if len({len(s) for s in splits}) != 1:
        raise ValueError("RaggedTensors joined along axis 1 need equal numbers of rows, got "
                         f"{[len(s) - 1 for s in splits]}")
    bases = np.concatenate([[0], np.cumsum([int(s[-1]) for s in splits])[:-1]])
    lengths = xp.stack([s[1:] - s[:-1] for s in splits], axis=1).reshape(-1)
    starts = xp.stack([s[:-1] + b for s, b in zip(splits, bases)], axis=1).reshape(-1)
    firsts = xp.cumsum(lengths) - lengths
    perm = xp.repeat(starts - firsts, lengths) + xp.arange(int(lengths.sum()), dtype="int64")
    return perm.astype("int64"), lengths.astype("int64")


def _nrows_static(values):
    if isinstance(values, RaggedTensor):
        return values.shape[0]
    return values.shape[0] if values.shape.rank else None


def _to_tensor_infer(values, splits, default, shape):
    rows = None if splits.shape[0] is None else splits.shape[0] - 1
    dims = [rows, None] + list(values.shape)[1:]
    if shape is not None:
        dims = [d if s == -1 else s for d, s in zip(dims, shape)]
    return spec(dims, values.dtype)


@defop("RaggedTensorToTensor", infer=_to_tensor_infer, differentiable=False, host=True)
def _to_tensor(xp, values, splits, default, shape):
    lengths = splits[1:] - splits[:-1]
    rows = len(lengths)
    cols = int(lengths.max()) if rows else 0
    if shape is not None:
        rows = rows if shape[0] == -1 else shape[0]
        cols = cols if shape[1] == -1 else shape[1]
    out = xp.empty((rows, cols) + values.shape[1:], dtype=values.dtype)
    out[...] = default
    for i in range(min(rows, len(lengths))):
        n = min(int(lengths[i]), cols)
        out[i, :n] = values[splits[i]:splits[i] + n]
    return out


def _depth(value):
    if isinstance(value, (list, tuple)):
        depths = [_depth(v) for v in value]
        return 1 + (max(depths) if depths else 0)
    return 0


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=None):
    """A RaggedTensor from nested Python lists of uneven lengths.

    Example:
        >>> tl.ragged.constant([[1, 2], [3]]).row_lengths().numpy()
        array([2, 1])
    """
    depth = _depth(pylist)
    if ragged_rank is None:
        ragged_rank = depth - 1
    if ragged_rank < 1:
        raise ValueError("ragged.constant needs nested lists (at least 2 levels)")

    def build(rows, rank):
        lengths = [len(r) for r in rows]
        flat = [v for r in rows for v in r]
        if rank == 1:
            inner = convert_to_tensor(flat, dtype=dtype) if flat or dtype else \
                convert_to_tensor(np.zeros(0, (dtype and _dt.as_dtype(dtype).np) or np.float32))
        else:
            inner = build(flat, rank - 1)
        return RaggedTensor.from_row_lengths(inner, lengths)
    return build(list(pylist), ragged_rank)


def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the RaggedTensor arguments; the result has
    their row structure.

    Example:
        >>> tl.ragged.map_flat_values(tl.square, tl.ragged.constant([[1, 2], [3]])).to_list()
        [[1, 4], [9]]
    """
    template = next(a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor))
    flat = [a.flat_values if isinstance(a, RaggedTensor) else a for a in args]
    kw = {k: v.flat_values if isinstance(v, RaggedTensor) else v for k, v in kwargs.items()}
    return template.with_flat_values(op(*flat, **kw))
