"""`tl.sets`: set operations over the last dimension (TensorFlow's tf.sets), with the op
types `SparseToSparseSetOperation` and `SetSize`.

Owns: the two set OpDefs and the public `difference`, `intersection`, `union`, `size`.
Every group (an index of all but the last dimension) holds a set: the values in that group
(a dense tensor's whole last dimension; a sparse tensor's entries). Dense inputs reach the op
as a sparse tensor holding every entry (a composition), so there is one kernel.
Invariants: results are SparseTensors, groups in row-major order and the values of each
group ascending (bytewise for strings), dense_shape = the group shape + [largest result
set]; inputs whose group shapes differ raise InvalidArgumentError; no set op is
differentiable; they run on the host (string sets).
"""
import numpy as np

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec
from .array import fill, reshape, shape as _shape
from .math import cast, where
from .sparse import SparseTensor

__all__ = ["difference", "intersection", "union", "size"]

_VALID = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")


def _groups(op_name, which, indices, values, dense_shape, validate):
    """{group index tuple: set of values}, and the group shape."""
    indices, dense_shape = np.asarray(indices), [int(d) for d in np.asarray(dense_shape)]
    if len(dense_shape) < 2:
        raise op_error(InvalidArgumentError, op_name,
                       f"{which} must have rank >= 2 (groups and a set dimension), got shape "
                       f"{dense_shape}")
    if validate:
        for i, idx in enumerate(indices):
            if any(x < 0 or x >= d for x, d in zip(idx, dense_shape)):
                raise op_error(InvalidArgumentError, op_name,
                               f"{which}: index {list(idx)} (entry {i}) is out of bounds for "
                               f"dense shape {dense_shape}")
            if i and tuple(idx) <= tuple(indices[i - 1]):
                raise op_error(InvalidArgumentError, op_name,
                               f"{which}: indices must be in row-major order and unique; entry "
                               f"{i} {list(idx)} follows {list(indices[i - 1])}")
    sets = {}
    for idx, v in zip(indices, np.asarray(values).reshape(-1)):
        sets.setdefault(tuple(int(x) for x in idx[:-1]), set()).add(
            v if isinstance(v, bytes) else v.item())
    return sets, dense_shape[:-1]


def _set_op_infer(a_indices, a_values, a_shape, b_indices, b_values, b_shape, *,
                  set_operation, validate_indices):
    rank = a_indices.shape[1]
    return (spec([None, rank], _dt.int64), spec([None], a_values.dtype),
            spec([rank], _dt.int64))


_COMBINE = {"a-b": lambda a, b: a - b, "b-a": lambda a, b: b - a,
            "intersection": lambda a, b: a & b, "union": lambda a, b: a | b}


@defop("SparseToSparseSetOperation", infer=_set_op_infer, differentiable=False, host=True,
       num_outputs=3)
def _set_operation(xp, a_indices, a_values, a_shape, b_indices, b_values, b_shape, *,
                   set_operation, validate_indices):
    name = "SparseToSparseSetOperation"
    a, a_group = _groups(name, "a", a_indices, a_values, a_shape, validate_indices)
    b, b_group = _groups(name, "b", b_indices, b_values, b_shape, validate_indices)
    if a_group != b_group:
        raise op_error(InvalidArgumentError, name,
                       f"the group shapes (all but the last dimension) of a and b must match, "
                       f"got {a_group} and {b_group}")
    combine = _COMBINE[set_operation]
    indices, values, widest = [], [], 0
    for group in sorted(set(a) | set(b)):
        result = sorted(combine(a.get(group, set()), b.get(group, set())))
        widest = max(widest, len(result))
        for j, v in enumerate(result):
            indices.append(group + (j,))
            values.append(v)
    rank = len(a_group) + 1
    dtype = np.asarray(a_values).dtype
    out_values = np.empty(len(values), dtype=object) if dtype == object else \
        np.asarray(values, dtype=dtype).reshape(-1)
    if dtype == object:
        out_values[:] = values
    return (np.asarray(indices, dtype=np.int64).reshape(-1, rank), out_values,
            np.asarray(a_group + [widest], dtype=np.int64))


def _size_infer(indices, values, dense_shape, *, validate_indices):
    return spec(None if indices.shape[1] is None else [None] * (indices.shape[1] - 1), _dt.int32)


@defop("SetSize", infer=_size_infer, differentiable=False, host=True)
def _set_size(xp, indices, values, dense_shape, *, validate_indices):
    sets, group = _groups("SetSize", "set_size input", indices, values, dense_shape,
                          validate_indices)
    out = np.zeros(group, dtype=np.int32)
    for g, s in sets.items():
        out[g] = len(s)
    return out


def _operand(x, which, op):
    if isinstance(x, SparseTensor):
        out = x
    else:
        out = convert_to_tensor(x)
    if out.dtype.name not in _VALID:
        raise TypeError(f"tl.sets.{op}: '{which}' has invalid dtype `{out.dtype.name}` not in "
                        f"supported dtypes: {', '.join(_VALID)}")
    return out


def _as_sparse(x):
    """A sparse tensor holding every entry of dense `x` (every element belongs to its set)."""
    if isinstance(x, SparseTensor):
        return x
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"tl.sets: inputs must have rank >= 2 (groups and a set dimension), "
                         f"got shape {x.shape}")
    everywhere = fill(_shape(x), True)
    return SparseTensor(where(everywhere), reshape(x, [-1]), cast(_shape(x), _dt.int64))


def _run(a, b, operation, validate_indices, op):
    a, b = _operand(a, "a", op), _operand(b, "b", op)
    if a.dtype is not b.dtype:
        raise TypeError(f"tl.sets.{op}: types don't match, {a.dtype.name} vs {b.dtype.name}")
    a, b = _as_sparse(a), _as_sparse(b)
    indices, values, dense_shape = apply(
        "SparseToSparseSetOperation", a.indices, a.values, a.dense_shape, b.indices, b.values,
        b.dense_shape, set_operation=operation, validate_indices=bool(validate_indices))
    return SparseTensor(indices, values, dense_shape)


def intersection(a, b, validate_indices=True):
    """The values in both `a` and `b`, set by set over the last dimension (a SparseTensor).

    Example:
        >>> tl.sparse.to_dense(tl.sets.intersection([[1, 2, 3]], [[3, 1, 5]])).numpy()
        array([[1, 3]], dtype=int32)
    """
    return _run(a, b, "intersection", validate_indices, "intersection")


def union(a, b, validate_indices=True):
    """The values in `a` or `b`, set by set over the last dimension (a SparseTensor)."""
    return _run(a, b, "union", validate_indices, "union")


def difference(a, b, aminusb=True, validate_indices=True):
    """The values of `a` not in `b` (`b` not in `a` with `aminusb=False`), set by set over the
    last dimension (a SparseTensor)."""
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b, aminusb = b, a, not aminusb
    return _run(a, b, "a-b" if aminusb else "b-a", validate_indices, "difference")


def size(a, validate_indices=True):
    """int32 number of distinct values in each set (the last dimension) of SparseTensor `a`."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"tl.sets.size: expected a SparseTensor, got {type(a).__name__}")
    _operand(a, "a", "size")
    return apply("SetSize", a.indices, a.values, a.dense_shape,
                 validate_indices=bool(validate_indices))


set_difference, set_intersection, set_union, set_size = difference, intersection, union, size
