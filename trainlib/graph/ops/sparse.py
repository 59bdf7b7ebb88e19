"""Sparse tensors: `tl.SparseTensor` (indices, values, dense_shape) and the `tl.sparse`
basics TensorFlow's guide uses (`to_dense`, `from_dense`, `add`, `sparse_dense_matmul`,
`reduce_sum`).

Owns: the SparseTensor value type. Invariants: `indices` is int64 [N, rank], `values` [N],
`dense_shape` int64 [rank]; the math goes through dense ops (`ScatterNd`, `MatMul`,
reductions), so gradients reach `values` and dense operands as they do for dense code.
"""
import numpy as np

from .. import dtypes as _dt
from ..op import convert_to_tensor
from ..tensor import TensorShape
from . import array as _array
from . import math as _math
from ..properties import read_only

__all__ = ["SparseTensor", "to_dense", "from_dense", "add", "sparse_dense_matmul", "reduce_sum"]


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

    def __repr__(self):
        return (f"SparseTensor(indices={self.indices}, values={self.values}, "
                f"dense_shape={self.dense_shape})")


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
