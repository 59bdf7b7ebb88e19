"""Sparse tensors: `tl.SparseTensor` (indices, values, dense_shape) and the `tl.sparse`
basics TensorFlow's guide uses (`to_dense`, `from_dense`, `add`, `sparse_dense_matmul`,
`reduce_sum`), the rest of tf.sparse's reshaping, slicing, joining, elementwise, reduction,
segment and counting functions (compositions of dense ops over indices and values, so they
trace into tl.function and their gradients reach the values), and `SparseCrossHashed`, the
hashed feature cross of dense columns.

Owns: the SparseTensor value type. Invariants: `indices` is int64 [N, rank], `values` [N],
`dense_shape` int64 [rank]; the math goes through dense ops (`ScatterNd`, `MatMul`,
reductions), so gradients reach `values` and dense operands as they do for dense code.
"""
import itertools

import numpy as np

from .. import dtypes as _dt
from .. import errors
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import SymbolicTensor, TensorShape, TensorSpec
from . import array as _array
from . import math as _math
from . import segment as _segment_ops
from .tf_array import get_static_value
from ..properties import read_only
from .farmhash import fingerprint64, fingerprint_cat64

__all__ = ["SparseTensor", "to_dense", "from_dense", "add", "sparse_dense_matmul", "reduce_sum",
           "cross_hashed_dense", "reorder", "reshape", "expand_dims", "transpose", "eye",
           "to_indicator", "retain", "reset_shape", "map_values", "maximum", "minimum",
           "reduce_max", "softmax", "slice", "split", "concat", "fill_empty_rows", "segment_sum",
           "segment_mean", "segment_sqrt_n", "bincount", "sampled_addmm", "cross", "cross_hashed"]


class SparseTensor:
    """A tensor given by its non-default entries: `values[i]` sits at `indices[i]`.

    Example:
        >>> st = tl.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
        >>> tl.sparse.to_dense(st).numpy()[1]
        array([0, 0, 2, 0], dtype=int32)
    """

    def __init__(self, indices, values, dense_shape):
        self.indices = convert_to_tensor(indices, dtype=_dt.int64)
        self.values = convert_to_tensor(values)
        self.dense_shape = convert_to_tensor(dense_shape, dtype=_dt.int64)
        if self.indices.shape.rank != 2 or self.values.shape.rank != 1:
            raise ValueError(f"SparseTensor needs indices of shape [N, rank] and values of shape "
                             f"[N]; got {self.indices.shape} and {self.values.shape}")
        n, rank = self.indices.shape[0], self.indices.shape[1]
        if n is not None and self.values.shape[0] is not None and n != self.values.shape[0]:
            raise ValueError(f"SparseTensor has {n} indices but {self.values.shape[0]} values "
                             f"(indices {self.indices.shape}, values {self.values.shape})")
        if self.dense_shape.shape.rank != 1 or (rank is not None and
                                                self.dense_shape.shape[0] not in (None, rank)):
            raise ValueError(f"SparseTensor's dense_shape must be a vector of the indices' rank "
                             f"({rank}), got shape {self.dense_shape.shape}")

    dtype = read_only("values.dtype", "The dtype of the values.")

    @property
    def shape(self):
        try:
            return TensorShape([int(d) for d in np.asarray(self.dense_shape)])
        except (TypeError, ValueError):  # a symbolic dense_shape: only the rank is known
            return TensorShape([None] * (self.indices.shape[1] or 0))

    # a composite (graph/nest.py): tl.function takes and returns it by its three components
    def _tl_flatten(self):
        return [self.indices, self.values, self.dense_shape]

    def _tl_rebuild(self, parts):  # the parts may be placeholders of a Function's outputs
        return SparseTensorSpec._tl_rebuild(self, parts)

    def _tl_static_key(self):
        return ()

    def __repr__(self):
        return (f"SparseTensor(indices={self.indices}, values={self.values}, "
                f"dense_shape={self.dense_shape})")


class SparseTensorSpec:
    """Describes a SparseTensor: its dense `shape` and `dtype` (tf.SparseTensorSpec). A
    composite of the specs of its three components, so a Dataset element or a tl.function
    argument that is a SparseTensor is traced by it.

    Example:
        >>> tl.SparseTensorSpec([None], tl.int64)
        SparseTensorSpec(TensorShape([None]), tl.int64)
    """

    def __init__(self, shape=None, dtype=_dt.float32):
        self._shape = TensorShape(shape)
        self._dtype = _dt.as_dtype(dtype)
        if self._shape.rank is None:
            raise ValueError("SparseTensorSpec needs a known rank")

    @classmethod
    def from_value(cls, value):
        """The spec of a SparseTensor."""
        return cls(value.shape, value.dtype)

    shape = read_only("_shape", "The static dense shape.")
    dtype = read_only("_dtype", "The dtype of the values.")

    def _tl_flatten(self):
        rank = self._shape.rank
        return [TensorSpec([None, rank], _dt.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], _dt.int64)]

    def _tl_rebuild(self, parts):
        out = object.__new__(SparseTensor)
        out.indices, out.values, out.dense_shape = parts
        return out

    def _tl_static_key(self):
        return (self._shape.rank,)

    def batched(self, batch_size=None):
        """The spec of `batch_size` (None: unknown) of these values batched."""
        return SparseTensorSpec(TensorShape([batch_size]).concatenate(self._shape), self._dtype)

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and self._shape == other._shape and \
            self._dtype is other._dtype

    def __hash__(self):
        return hash((tuple(self._shape.as_list()), self._dtype.name))

    def __repr__(self):
        return f"SparseTensorSpec({self._shape!r}, {self._dtype!r})"


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor: the values at their indices, `default_value` (0) elsewhere.

    With `validate_indices` (the default), a repeated index is an InvalidArgumentError, as
    TensorFlow's (checked where the indices are known: eagerly, or constant in a trace);
    `validate_indices=False` sums the values of a repeated index."""
    if validate_indices:
        _refuse_repeated(sp_input.indices)
    dense = _array.scatter_nd(sp_input.indices, sp_input.values, sp_input.dense_shape)
    if default_value is None or default_value == 0:
        return dense
    present = _array.scatter_nd(sp_input.indices, _array.ones_like(sp_input.values),
                                sp_input.dense_shape)
    return _math.where(_math.cast(present, _dt.bool), dense, default_value)


def _refuse_repeated(indices):
    known = get_static_value(indices)
    if known is None or len(known) < 2:
        return
    known = np.asarray(known).reshape(len(known), -1)
    _, first, counts = np.unique(known, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        row = known[first[np.argmax(counts > 1)]]
        at = int(np.flatnonzero((known == row).all(axis=1))[1])
        raise errors.InvalidArgumentError(
            f"SparseToDense: indices[{at}] = {row.tolist()} is repeated (pass "
            "validate_indices=False to sum the values of repeated indices)")


def from_dense(tensor, name=None):
    """A SparseTensor of the non-zero entries of `tensor`."""
    t = convert_to_tensor(tensor)
    indices = _math.where(_math.not_equal(t, _array.zeros_like(t)))
    return SparseTensor(indices, _array.gather_nd(t, indices), _array.shape(t, out_type=_dt.int64))


def add(a, b, threshold=0, name=None):
    """a + b: a SparseTensor when both are sparse (entries at the same index summed, indices
    sorted), else a dense tensor."""
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        dense = to_dense(a) + to_dense(b)
        indices = np.unique(np.concatenate([np.asarray(a.indices), np.asarray(b.indices)]), axis=0)
        return SparseTensor(indices, _array.gather_nd(dense, indices), a.dense_shape)
    if isinstance(a, SparseTensor):
        return to_dense(a) + b
    return a + to_dense(b)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The matrix product of a sparse matrix and a dense one (as a dense tensor)."""
    return _math.matmul(to_dense(sp_a), b, transpose_a=adjoint_a, transpose_b=adjoint_b)


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum of the entries (along `axis`), as a dense tensor."""
    if output_is_sparse:
        return from_dense(reduce_sum(sp_input, axis, keepdims))
    return _math.reduce_sum(to_dense(sp_input), axis=axis, keepdims=bool(keepdims))


# ------------------------------------------------------------------ hashed crossing

_DEFAULT_HASH_KEY = 0xDECAFCAFFE   # TensorFlow's default key of cross_hashed


def _cross_infer(*columns, num_buckets, hash_key):
    for c in columns:
        if not (c.dtype is _dt.string or c.dtype.is_integer):
            raise TypeError(f"SparseCrossHashed: columns must be integer or string, got "
                            f"{c.dtype.name}")
    return spec(columns[0].shape, _dt.int64)


@defop("SparseCrossHashed", infer=_cross_infer, differentiable=False, host=True)
def _cross_hashed(xp, *columns, num_buckets, hash_key):
    flat = [c.reshape(-1) for c in columns]
    out = xp.empty(flat[0].shape, dtype="int64")
    modulus = num_buckets if num_buckets > 0 else (1 << 63) - 1
    for i in range(out.shape[0]):
        hashed = hash_key
        for column in flat:
            value = column[i]
            feature = fingerprint64(value) if isinstance(value, bytes) else \
                int(value) & ((1 << 64) - 1)
            hashed = fingerprint_cat64(hashed, feature)
        out[i] = hashed % modulus
    return out.reshape(columns[0].shape)


def cross_hashed_dense(columns, num_buckets=0, hash_key=None):
    """The hashed cross of same-shaped dense columns (one feature per row each), as
    TensorFlow's `SparseCrossHashed` of single-valued columns: per row, the key
    `hash_key` (default 0xDECAFCAFFE) chained through FingerprintCat64 with each column's
    feature (an integer's own 64 bits, other numbers cast to int64 first, a string's FarmHash Fingerprint64), modulo
    `num_buckets` (0: modulo 2**63 - 1). An int64 tensor of the columns' shape.

    Example:
        >>> tl.sparse.cross_hashed_dense([tl.constant([1, 2]), tl.constant([3, 3])], 5).shape
        TensorShape([2])
    """
    columns = [convert_to_tensor(c) for c in columns]
    shapes = {tuple(c.shape) for c in columns}
    if len(shapes) != 1:
        raise ValueError(f"cross_hashed_dense: columns must have one shape, got {sorted(shapes)}")
    # as TensorFlow's: every non-string column is cast to int64
    columns = [c if c.dtype in (_dt.string, _dt.int64) else _math.cast(c, _dt.int64)
               for c in columns]
    return apply("SparseCrossHashed", *columns, num_buckets=int(num_buckets),
                 hash_key=int(hash_key if hash_key is not None else _DEFAULT_HASH_KEY))


# ------------------------------------------------------------------ reshaping and reordering
# Index bookkeeping is composed of dense ops on `indices` (int64) and `dense_shape`, so every
# function works eagerly and inside tl.function; values pass through gathers and boolean masks,
# whose gradients reach the input values.


def _rank(sp, op):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"tl.sparse.{op}: expected a SparseTensor, got {type(sp).__name__}")
    rank = sp.indices.shape[1]
    if rank is None:
        raise ValueError(f"tl.sparse.{op}: the rank of the SparseTensor must be known")
    return rank


def _strides(dense_shape, rank):
    """Row-major strides (int64 [rank]) of `dense_shape`."""
    return _array.stack([_math.reduce_prod(dense_shape[k + 1:]) for k in range(rank)])


def _linear(indices, dense_shape, rank):
    return _math.reduce_sum(indices * _strides(dense_shape, rank), axis=1)


def _unravel(linear, dense_shape, rank):
    strides = _strides(dense_shape, rank)
    return _array.stack([(linear // strides[k]) % dense_shape[k] for k in range(rank)], axis=1)


def _known(x):
    """The numpy value of `x` when it is known without running anything, else None."""
    value = get_static_value(x)
    return None if value is None else np.asarray(value)


def _sorted(indices, values, dense_shape, rank):
    order = _array.argsort(_linear(indices, dense_shape, rank), stable=True)
    return SparseTensor(_array.gather(indices, order), _array.gather(values, order), dense_shape)


def reorder(sp_input, name=None):
    """The same SparseTensor with its entries in row-major (canonical) order."""
    rank = _rank(sp_input, "reorder")
    return _sorted(sp_input.indices, sp_input.values, sp_input.dense_shape, rank)


def reshape(sp_input, shape, name=None):
    """The SparseTensor with dense shape `shape` (one entry may be -1), entries in the same
    row-major positions."""
    rank = _rank(sp_input, "reshape")
    shape = convert_to_tensor(shape, dtype=_dt.int64)
    if shape.shape.rank != 1 or shape.shape[0] is None:
        raise ValueError(f"tl.sparse.reshape: the new shape must be a vector of known length, "
                         f"got shape {shape.shape}")
    total = _math.reduce_prod(sp_input.dense_shape)
    known = _math.reduce_prod(_math.where(_math.equal(shape, -1),
                                          _array.ones_like(shape), shape))
    new_shape = _math.where(_math.equal(shape, -1), total // _math.maximum(known, 1) +
                            _array.zeros_like(shape), shape)
    s, d = _known(shape), _known(sp_input.dense_shape)
    if s is not None and d is not None:
        # TensorFlow: a static shape mismatch fails while tracing (ValueError), else at run
        error = ValueError if isinstance(shape, SymbolicTensor) else errors.InvalidArgumentError
        total, fixed = int(np.prod(d)), int(np.prod(s[s != -1]))
        if (s == -1).sum() > 1:
            raise error(f"SparseReshape: at most one dimension of the new shape can be -1, "
                        f"got {list(s)}")
        if (total != fixed) if (s != -1).all() else (fixed == 0 or total % fixed):
            raise error(f"SparseReshape: input has {total} dense values, the requested shape "
                        f"{list(s)} cannot hold them")
    linear = _linear(sp_input.indices, sp_input.dense_shape, rank)
    return SparseTensor(_unravel(linear, new_shape, int(shape.shape[0])), sp_input.values,
                        new_shape)


def expand_dims(sp_input, axis=None, name=None):
    """The SparseTensor with a new dimension of size 1 inserted at `axis`."""
    rank = _rank(sp_input, "expand_dims")
    axis = 0 if axis is None else int(axis)
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"tl.sparse.expand_dims: axis must be in [{-rank - 1}, {rank}], "
                         f"got {axis}")
    axis = axis + rank + 1 if axis < 0 else axis
    ind, ds = sp_input.indices, sp_input.dense_shape
    zeros = _array.zeros_like(ind[:, :1])
    return SparseTensor(_array.concat([ind[:, :axis], zeros, ind[:, axis:]], axis=1),
                        sp_input.values,
                        _array.concat([ds[:axis], _array.ones_like(ds[:1]), ds[axis:]], 0))


def transpose(sp_input, perm=None, name=None):
    """The SparseTensor with its dimensions permuted by `perm` (reversed by default); the
    entries come back in row-major order."""
    rank = _rank(sp_input, "transpose")
    perm = list(range(rank))[::-1] if perm is None else [int(p) for p in _known(perm)]
    if sorted(perm) != list(range(rank)):
        raise errors.InvalidArgumentError(f"SparseTranspose: perm must be a permutation of "
                                          f"0..{rank - 1}, got {perm}")
    return _sorted(_array.gather(sp_input.indices, perm, axis=1), sp_input.values,
                   _array.gather(sp_input.dense_shape, perm), rank)


def eye(num_rows, num_columns=None, dtype=_dt.float32, name=None):
    """A sparse identity matrix: ones on the diagonal of a [num_rows, num_columns] matrix."""
    rows = convert_to_tensor(num_rows, dtype=_dt.int64)
    cols = rows if num_columns is None else convert_to_tensor(num_columns, dtype=_dt.int64)
    diag = _array.range(_math.minimum(rows, cols), dtype=_dt.int64)
    return SparseTensor(_array.stack([diag, diag], axis=1),
                        _array.ones_like(diag, dtype=_dt.as_dtype(dtype)),
                        _array.stack([rows, cols]))


def to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor [..., vocab_size]: True at [..., id] for each id (the values) of
    each row of the last dimension."""
    _rank(sp_input, "to_indicator")
    if not sp_input.dtype.is_integer:
        raise TypeError(f"tl.sparse.to_indicator: expected integer ids, got "
                        f"{sp_input.dtype.name}")
    ids = _math.cast(sp_input.values, _dt.int64)
    indices = _array.concat([sp_input.indices[:, :-1], ids[:, None]], axis=1)
    shape = _array.concat([sp_input.dense_shape[:-1],
                           convert_to_tensor([vocab_size], dtype=_dt.int64)], 0)
    counts = _array.scatter_nd(indices, _array.ones_like(ids, dtype=_dt.int32), shape)
    return _math.greater(counts, 0)


def retain(sp_input, to_retain):
    """The SparseTensor of the entries where the bool vector `to_retain` is True."""
    _rank(sp_input, "retain")
    keep = convert_to_tensor(to_retain, dtype=_dt.bool)
    if keep.shape.rank != 1:
        raise ValueError(f"tl.sparse.retain: to_retain must be a vector, got shape {keep.shape}")
    return SparseTensor(_array.boolean_mask(sp_input.indices, keep),
                        _array.boolean_mask(sp_input.values, keep), sp_input.dense_shape)


def reset_shape(sp_input, new_shape=None):
    """The SparseTensor with dense shape `new_shape` (no smaller than the current one), or the
    tightest shape holding its indices when None."""
    rank = _rank(sp_input, "reset_shape")
    if new_shape is None:
        return SparseTensor(sp_input.indices, sp_input.values,
                            _math.reduce_max(sp_input.indices, axis=0) + 1)
    new_shape = convert_to_tensor(new_shape, dtype=_dt.int64)
    if new_shape.shape.rank != 1 or new_shape.shape[0] not in (None, rank):
        raise ValueError(f"tl.sparse.reset_shape: new_shape must be a vector of {rank} "
                         f"dimensions, got shape {new_shape.shape}")
    a, b = _known(new_shape), _known(sp_input.dense_shape)
    if a is not None and b is not None and (a < b).any():
        raise ValueError(f"tl.sparse.reset_shape: new_shape {list(a)} is smaller than the "
                         f"current shape {list(b)}")
    return SparseTensor(sp_input.indices, sp_input.values, new_shape)


def map_values(op, *args, **kwargs):
    """`op` applied to the values of the SparseTensor arguments (they must share indices): a
    SparseTensor with the same indices and the results as values."""
    sparse = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("tl.sparse.map_values: no SparseTensor among the arguments")
    first = _known(sparse[0].indices)
    for other in sparse[1:]:
        o = _known(other.indices)
        if first is not None and o is not None and (first.shape != o.shape or (first != o).any()):
            raise errors.InvalidArgumentError("tl.sparse.map_values: SparseTensors do not have "
                                              "matching indices")

    def values(a):
        return a.values if isinstance(a, SparseTensor) else a
    out = op(*[values(a) for a in args], **{k: values(v) for k, v in kwargs.items()})
    return SparseTensor(sparse[0].indices, out, sparse[0].dense_shape)


# ------------------------------------------------------------------ elementwise and reductions


def _presence(sp, dtype=_dt.int32):
    return _array.scatter_nd(sp.indices, _array.ones_like(sp.values, dtype=dtype), sp.dense_shape)


def _union_op(fn, sp_a, sp_b, op):
    _rank(sp_a, op)
    _rank(sp_b, op)
    if sp_a.dtype is not sp_b.dtype:
        raise TypeError(f"tl.sparse.{op}: dtypes differ, {sp_a.dtype.name} vs {sp_b.dtype.name}")
    indices = _math.where(_math.greater(_presence(sp_a) + _presence(sp_b), 0))
    dense = fn(to_dense(sp_a), to_dense(sp_b))
    return SparseTensor(indices, _array.gather_nd(dense, indices), sp_a.dense_shape)


def maximum(sp_a, sp_b, name=None):
    """The elementwise maximum of two SparseTensors of one shape (missing entries are 0),
    at the union of their indices."""
    return _union_op(_math.maximum, sp_a, sp_b, "maximum")


def minimum(sp_a, sp_b, name=None):
    """The elementwise minimum of two SparseTensors of one shape (missing entries are 0),
    at the union of their indices."""
    return _union_op(_math.minimum, sp_a, sp_b, "minimum")


def _lowest(dtype):
    return dtype.min if not dtype.is_floating else -np.inf


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The maximum of the present entries along `axis` (all of them by default); a group with
    no entry gives 0 (or is absent with `output_is_sparse`)."""
    _rank(sp_input, "reduce_max")
    dense = to_dense(sp_input, default_value=_lowest(sp_input.dtype))
    present = _math.reduce_any(_math.greater(_presence(sp_input), 0), axis=axis,
                               keepdims=bool(keepdims))
    top = _math.reduce_max(dense, axis=axis, keepdims=bool(keepdims))
    if output_is_sparse:
        indices = _math.where(present)
        return SparseTensor(indices, _array.gather_nd(top, indices),
                            _array.shape(present, out_type=_dt.int64))
    return _math.where(present, top, _array.zeros_like(top))


def softmax(sp_input, name=None):
    """The softmax of each row (last dimension) over its present entries only, as a
    SparseTensor with the input's indices."""
    _rank(sp_input, "softmax")
    if not sp_input.dtype.is_floating:
        raise TypeError(f"tl.sparse.softmax: expected floating values, got {sp_input.dtype.name}")
    rows = sp_input.indices[:, :-1]
    row_max = _math.reduce_max(to_dense(sp_input, default_value=-np.inf), axis=-1)
    shifted = sp_input.values - _array.stop_gradient(_array.gather_nd(row_max, rows))
    e = _math.exp(shifted)
    sums = _math.reduce_sum(_array.scatter_nd(sp_input.indices, e, sp_input.dense_shape), axis=-1)
    return SparseTensor(sp_input.indices, e / _array.gather_nd(sums, rows), sp_input.dense_shape)


# ------------------------------------------------------------------ slicing and joining


def slice(sp_input, start, size, name=None):  # noqa: A001 -- TensorFlow's name
    """The entries of `sp_input` inside the box [start, start + size), shifted to start at 0."""
    rank = _rank(sp_input, "slice")
    start = convert_to_tensor(start, dtype=_dt.int64)
    size = convert_to_tensor(size, dtype=_dt.int64)
    if start.shape.as_list() != [rank] or size.shape.as_list() != [rank]:
        raise ValueError(f"tl.sparse.slice: start and size must be vectors of {rank}, got "
                         f"shapes {start.shape} and {size.shape}")
    ind = sp_input.indices
    keep = _math.reduce_all(_math.logical_and(_math.greater_equal(ind, start),
                                              _math.less(ind, start + size)), axis=1)
    end = _math.minimum(start + size, sp_input.dense_shape)
    return SparseTensor(_array.boolean_mask(ind, keep) - start,
                        _array.boolean_mask(sp_input.values, keep),
                        _math.maximum(end - start, _array.zeros_like(start)))


def split(sp_input=None, num_split=None, axis=None, name=None):
    """`num_split` SparseTensors cut along `axis`; the first `dim % num_split` pieces are one
    longer."""
    rank = _rank(sp_input, "split")
    if num_split is None or axis is None:
        raise ValueError("tl.sparse.split: num_split and axis are required")
    num_split, axis = int(num_split), int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"tl.sparse.split: axis must be in [{-rank}, {rank}), got {axis}")
    axis %= rank
    dim = sp_input.dense_shape[axis]
    base, extra = dim // num_split, dim % num_split
    one_hot = np.eye(rank, dtype=np.int64)[axis]
    pieces = []
    for i in range(num_split):
        begin = base * i + _math.minimum(convert_to_tensor(i, dtype=_dt.int64), extra)
        length = base + _math.cast(_math.less(convert_to_tensor(i, dtype=_dt.int64), extra),
                                   _dt.int64)
        start = begin * one_hot
        size = _math.where(convert_to_tensor(one_hot.astype(bool)), length * one_hot,
                           sp_input.dense_shape)
        pieces.append(slice(sp_input, start, size))
    return pieces


def concat(axis, sp_inputs, name=None, expand_nonconcat_dims=False, concat_dim=None):
    """The SparseTensors joined along `axis` (entries in row-major order). The other
    dimensions must agree, or with `expand_nonconcat_dims` grow to the largest."""
    axis = concat_dim if concat_dim is not None else axis
    sp_inputs = list(sp_inputs)
    if not sp_inputs:
        raise ValueError("tl.sparse.concat: no inputs")
    rank = _rank(sp_inputs[0], "concat")
    for sp in sp_inputs[1:]:
        if _rank(sp, "concat") != rank:
            raise ValueError("tl.sparse.concat: all inputs must have the same rank")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"tl.sparse.concat: axis must be in [{-rank}, {rank}), got {axis}")
    axis %= rank
    one_hot = convert_to_tensor(np.eye(rank, dtype=np.int64)[axis])
    shapes = [sp.dense_shape for sp in sp_inputs]
    known = [_known(s) for s in shapes]
    if not expand_nonconcat_dims and all(k is not None for k in known):
        for k in known[1:]:
            if any(a != b for d, (a, b) in enumerate(zip(known[0], k)) if d != axis):
                raise errors.InvalidArgumentError(
                    f"SparseConcat: the input shapes must match except in the concat dimension "
                    f"{axis}, got {list(known[0])} and {list(k)}")
    indices, offset = [], convert_to_tensor(0, dtype=_dt.int64)
    for sp, shape in zip(sp_inputs, shapes):
        indices.append(sp.indices + offset * one_hot)
        offset = offset + shape[axis]
    others = shapes[0]
    if expand_nonconcat_dims:
        for shape in shapes[1:]:
            others = _math.maximum(others, shape)
    dense_shape = _math.where(_math.cast(one_hot, _dt.bool), offset * one_hot, others)
    return _sorted(_array.concat(indices, 0), _array.concat([sp.values for sp in sp_inputs], 0),
                   dense_shape, rank)


def fill_empty_rows(sp_input, default_value, name=None):
    """(the SparseTensor with `default_value` at [r, 0, ...] of each row r without entries,
    the bool vector of the rows that were empty)."""
    rank = _rank(sp_input, "fill_empty_rows")
    rows = sp_input.indices[:, 0]
    num_rows = sp_input.dense_shape[0]
    counts = _array.scatter_nd(rows[:, None], _array.ones_like(rows), _array.stack([num_rows]))
    empty = _math.equal(counts, 0)
    empty_rows = _math.where(empty)
    new_indices = _array.concat([empty_rows, _array.zeros_like(
        _array.tile(empty_rows, [1, rank - 1]))], axis=1)
    default = convert_to_tensor(default_value, dtype=sp_input.dtype)
    filler = _array.zeros_like(empty_rows[:, 0], dtype=sp_input.dtype) + default
    return (_sorted(_array.concat([sp_input.indices, new_indices], 0),
                    _array.concat([sp_input.values, filler], 0), sp_input.dense_shape, rank),
            empty)


# ------------------------------------------------------------------ segments and counts


def _segment(sorted_op, unsorted_op, data, indices, segment_ids, num_segments):
    rows = _array.gather(data, indices)
    if num_segments is None:
        return sorted_op(rows, segment_ids)
    return unsorted_op(rows, segment_ids, num_segments)


def segment_sum(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """Sums of the rows `data[indices]` grouped by `segment_ids` (sorted unless
    `num_segments` is given)."""
    return _segment(_math.segment_sum, _math.unsorted_segment_sum, data, indices, segment_ids,
                    num_segments)


def segment_mean(data, indices, segment_ids, num_segments=None, name=None,
                 sparse_gradient=False):
    """Means of the rows `data[indices]` grouped by `segment_ids` (0 for empty segments)."""
    return _segment(_math.segment_mean, _math.unsorted_segment_mean, data, indices, segment_ids,
                    num_segments)


def segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None,
                   sparse_gradient=False):
    """Sums of the rows `data[indices]` grouped by `segment_ids`, divided by the square root
    of each segment's row count (0 for empty segments)."""
    rows = _array.gather(data, indices)
    ids = convert_to_tensor(segment_ids)
    if num_segments is not None:
        return _segment_ops.unsorted_segment_sqrt_n(rows, ids, num_segments)
    sums = _math.segment_sum(rows, ids)
    counts = _math.segment_sum(_array.ones_like(ids, dtype=rows.dtype), ids)
    counts = _array.reshape(counts, _array.concat([[-1], _array.ones_like(
        _array.shape(rows)[1:])], 0))
    return sums / _math.sqrt(_math.maximum(counts, 1))


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None):
    """Counts (or summed `weights`) of each integer value as a SparseTensor of the bins that
    occur: over all values (axis=0) or per row of a 2-D input (axis=-1)."""
    if isinstance(values, SparseTensor):
        values = to_dense(values, default_value=-1)
    values = convert_to_tensor(values)
    if axis not in (0, -1):
        raise ValueError(f"tl.sparse.bincount: axis must be 0 or -1, got {axis}")
    if axis == -1 and values.shape.rank != 2:
        raise ValueError(f"tl.sparse.bincount: axis=-1 needs a 2-D input, got shape "
                         f"{values.shape}")
    vals = _math.cast(values, _dt.int64)
    if axis == 0:
        vals, rows = _array.reshape(vals, [-1]), convert_to_tensor(1, dtype=_dt.int64)
    else:
        rows = _array.shape(vals, out_type=_dt.int64)[0]
    depth = _math.maximum(_math.reduce_max(_array.concat([_array.reshape(vals, [-1]),
                                                          [-1]], 0)) + 1, 0)
    if minlength is not None:
        depth = _math.maximum(depth, int(minlength))
    if maxlength is not None:
        depth = _math.minimum(depth, int(maxlength))
    dtype = values.dtype if weights is None else convert_to_tensor(weights).dtype
    w = _array.ones_like(vals, dtype=dtype) if weights is None or binary_output else \
        convert_to_tensor(weights, dtype=dtype)
    keep = _math.logical_and(_math.greater_equal(vals, 0), _math.less(vals, depth))
    if axis == -1:
        vals = vals + _array.range(rows, dtype=_dt.int64)[:, None] * depth
    ids, w = _array.boolean_mask(vals, keep), _array.boolean_mask(w, keep)
    flat = _array.stack([rows * depth])
    counts = _array.scatter_nd(ids[:, None], w, flat)
    occurs = _math.greater(_array.scatter_nd(ids[:, None], _array.ones_like(ids), flat), 0)
    if binary_output:
        counts = _math.cast(occurs, dtype)
    shape = _array.stack([depth]) if axis == 0 else _array.stack([rows, depth])
    indices = _unravel(_math.where(occurs)[:, 0], shape, 1 if axis == 0 else 2)
    return SparseTensor(indices, _array.boolean_mask(counts, occurs), shape)


def sampled_addmm(indices, values, dense_shape, mat1, mat2, beta=1.0, alpha=1.0,
                  output_type=_dt.float32):
    """`alpha * (mat1 @ mat2)` sampled at `indices` (the last dim: row, column; leading dims:
    batch) plus `beta * values`: the components (indices, values, dense_shape) of the result."""
    indices = convert_to_tensor(indices)
    values = convert_to_tensor(values, dtype=output_type)
    dense_shape = convert_to_tensor(dense_shape, dtype=_dt.int32)
    mat1 = convert_to_tensor(mat1, dtype=output_type)
    mat2 = convert_to_tensor(mat2, dtype=output_type)
    if mat1.shape.rank is None or mat1.shape.rank < 2 or mat2.shape.rank != mat1.shape.rank:
        raise ValueError(f"tl.sparse.sampled_addmm: mat1 and mat2 must have one rank >= 2, got "
                         f"shapes {mat1.shape} and {mat2.shape}")
    want, got = [mat1.shape[-2], mat2.shape[-1]], _known(dense_shape)
    if got is not None and None not in want and list(got) != want:
        raise ValueError(f"Dense shape: {list(got)} does not match output shape: {want}")
    product = _math.matmul(mat1, mat2)
    sampled = _array.gather_nd(product, indices, batch_dims=mat1.shape.rank - 2)
    return indices, alpha * sampled + beta * values, dense_shape


# ------------------------------------------------------------------ feature crosses of rows


def _sparse_cross_infer(*parts, kinds, hashed, num_buckets, hash_key, separator):
    return (spec([None, 2], _dt.int64), spec([None], _dt.int64 if hashed else _dt.string),
            spec([2], _dt.int64))


def _row_features(parts, kinds, batch):
    """Per column, per row: the row's features in order."""
    columns, i = [], 0
    for kind in kinds:
        if kind == "sparse":
            indices, values = np.asarray(parts[i]), np.asarray(parts[i + 1]).reshape(-1)
            rows = [[] for _ in range(batch)]
            for idx, v in zip(indices, values):
                rows[int(idx[0])].append(v)
            i += 3
        else:
            dense = np.asarray(parts[i])
            rows = [list(dense[r].reshape(-1)) for r in range(batch)]
            i += 1
        columns.append(rows)
    return columns


@defop("SparseCross", infer=_sparse_cross_infer, differentiable=False, host=True, num_outputs=3)
def _sparse_cross(xp, *parts, kinds, hashed, num_buckets, hash_key, separator):
    first = parts[2] if kinds[0] == "sparse" else np.asarray(parts[0]).shape
    batch = int(np.asarray(first)[0])
    columns = _row_features(parts, kinds, batch)
    modulus = num_buckets if num_buckets > 0 else (1 << 63) - 1
    indices, values, widest = [], [], 0
    for r in range(batch):
        crosses = list(itertools.product(*[c[r] for c in columns]))
        widest = max(widest, len(crosses))
        for j, combo in enumerate(crosses):
            indices.append((r, j))
            if hashed:
                h = hash_key
                for v in combo:
                    h = fingerprint_cat64(h, fingerprint64(v) if isinstance(v, bytes) else
                                          int(v) & ((1 << 64) - 1))
                values.append(h % modulus)
            else:
                values.append(separator.join(v if isinstance(v, bytes) else str(int(v)).encode()
                                             for v in combo))
    out = np.asarray(values, dtype=np.int64) if hashed else np.empty(len(values), dtype=object)
    if not hashed:
        out[:] = values
    return (np.asarray(indices, dtype=np.int64).reshape(-1, 2), out,
            np.asarray([batch, widest], dtype=np.int64))


def _cross(inputs, hashed, num_buckets, hash_key, separator, op):
    parts, kinds = [], []
    for x in inputs:
        if isinstance(x, SparseTensor):
            parts += [x.indices, x.values, x.dense_shape]
            kinds.append("sparse")
        else:
            x = convert_to_tensor(x)
            if x.shape.rank != 2:
                raise ValueError(f"tl.sparse.{op}: dense inputs must be 2-D, got shape {x.shape}")
            parts.append(x)
            kinds.append("dense")
        if not (parts[-2 if kinds[-1] == "sparse" else -1].dtype is _dt.string or
                parts[-2 if kinds[-1] == "sparse" else -1].dtype.is_integer):
            raise TypeError(f"tl.sparse.{op}: inputs must be string or integer")
    if not parts:
        raise ValueError(f"tl.sparse.{op}: no inputs")
    indices, values, shape = apply("SparseCross", *parts, kinds=tuple(kinds), hashed=hashed,
                                   num_buckets=int(num_buckets), hash_key=int(hash_key),
                                   separator=separator)
    return SparseTensor(indices, values, shape)


def cross(inputs, name=None, separator=None):
    """Per row, every combination of one feature from each input (sparse or 2-D dense), the
    features joined by `separator` ("_X_"), as a string SparseTensor."""
    sep = ("_X_" if separator is None else separator).encode()
    return _cross(inputs, False, 0, 0, sep, "cross")


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The hashed `cross`: each combination's FingerprintCat64 chain from `hash_key`, modulo
    `num_buckets` (0: 2**63 - 1), as an int64 SparseTensor (TensorFlow's buckets)."""
    key = _DEFAULT_HASH_KEY if hash_key is None else hash_key
    return _cross(inputs, True, num_buckets, key, b"", "cross_hashed")
