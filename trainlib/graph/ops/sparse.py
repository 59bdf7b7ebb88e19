"""Sparse tensors: `tl.SparseTensor` (indices, values, dense_shape) and the `tl.sparse`
basics TensorFlow's guide uses (`to_dense`, `from_dense`, `add`, `sparse_dense_matmul`,
`reduce_sum`), and `SparseCrossHashed`, the hashed feature cross of dense columns.

Owns: the SparseTensor value type. Invariants: `indices` is int64 [N, rank], `values` [N],
`dense_shape` int64 [rank]; the math goes through dense ops (`ScatterNd`, `MatMul`,
reductions), so gradients reach `values` and dense operands as they do for dense code.
"""
import numpy as np

from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import TensorShape, TensorSpec
from . import array as _array
from . import math as _math
from ..properties import read_only
from .farmhash import fingerprint64, fingerprint_cat64

__all__ = ["SparseTensor", "to_dense", "from_dense", "add", "sparse_dense_matmul", "reduce_sum",
           "cross_hashed_dense"]


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
    """The dense tensor: the values at their indices, `default_value` (0) elsewhere."""
    dense = _array.scatter_nd(sp_input.indices, sp_input.values, sp_input.dense_shape)
    if default_value is None or default_value == 0:
        return dense
    present = _array.scatter_nd(sp_input.indices, _array.ones_like(sp_input.values),
                                sp_input.dense_shape)
    return _math.where(_math.cast(present, _dt.bool), dense, default_value)


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
