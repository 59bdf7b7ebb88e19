"""Segment reductions beyond sum/max/min/mean (those live in `math`): the product by segment
id, and the sum scaled by 1/sqrt(count).

Owns the OpDefs `SegmentProd` (sorted ids) and `UnsortedSegmentProd` and the functions
`segment_prod`, `unsorted_segment_prod` (`tf.math.*`, `keras.ops.segment_prod`) and
`unsorted_segment_sqrt_n` (a composition). Invariants: unsorted ids in any order, negative ids
dropped; sorted ids non-negative and increasing; empty segments give 1 (as TensorFlow); the
gradient is exact with zeros in a segment (the product of the other entries, as TensorFlow's
`_UnsortedSegmentProdGrad`), one rule for both ops.
"""
from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop
from . import array as _array
from . import math as _math

__all__ = ["segment_prod", "unsorted_segment_prod", "unsorted_segment_sqrt_n"]


def _prod_grad(op, dy):
    data, ids = op.inputs
    if op.type == "SegmentProd":
        sums, prods = (lambda v: _math.segment_sum(v, ids)), (lambda v: segment_prod(v, ids))
    else:
        n = op.attrs["num_segments"]
        sums = lambda v: _math.unsorted_segment_sum(v, ids, n)  # noqa: E731
        prods = lambda v: unsorted_segment_prod(v, ids, n)  # noqa: E731
    is_zero = _math.equal(data, _math.cast(0, data.dtype))
    zeros = sums(_math.cast(is_zero, _dt.int32))
    nonzero_prod = prods(_math.where(is_zero, _array.ones_like(data), data))
    at = _math._gather_segments  # noqa: SLF001 -- math's helper: rows of negative ids get 0
    others = _math.where(is_zero,
                         _math.where(_math.equal(at(zeros, ids), 1), at(nonzero_prod, ids),
                                     _array.zeros_like(data)),
                         _math.divide_no_nan(at(op.outputs[0], ids), data))
    return at(dy, ids) * others, None


def _prod_kernel(name, sorted_ids):
    def kernel(xp, data, segment_ids, num_segments=None):
        values, ids, n, rest = _math._segment_layout(xp, data, segment_ids, num_segments,  # noqa: SLF001
                                                     sorted_ids, name)
        keep = ids >= 0
        out = xp.ones((n,) + rest, dtype=data.dtype)
        xp.multiply.at(out, ids[keep].astype(xp.int64), values[keep])
        return out
    return kernel


for _name, _sorted in (("SegmentProd", True), ("UnsortedSegmentProd", False)):
    defop(_name, infer=_math._segment_infer(_name, _sorted), grad=_prod_grad)(  # noqa: SLF001
        _prod_kernel(_name, _sorted))
del _name, _sorted


def _ids(fn_name, segment_ids):
    ids = convert_to_tensor(segment_ids)
    if ids.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"{fn_name}: segment_ids must be int32 or int64, got {ids.dtype.name}")
    return ids


def segment_prod(data, segment_ids, name=None):
    """The product of the rows of `data` sharing a (sorted, non-negative) segment id; empty
    segments give 1.

    Example:
        >>> tl.math.segment_prod(tl.constant([2, 3, 4]), [0, 0, 2]).numpy()
        array([6, 1, 4], dtype=int32)
    """
    return apply("SegmentProd", convert_to_tensor(data), _ids("segment_prod", segment_ids))


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the entries of `data` by segment id (ids in any order; empty segments 1).

    Example:
        >>> from trainlib.graph.ops.segment import unsorted_segment_prod
        >>> unsorted_segment_prod(tl.constant([2, 3, 4]), [1, 0, 1], 3).numpy()
        array([3, 8, 1], dtype=int32)
    """
    return apply("UnsortedSegmentProd", convert_to_tensor(data),
                 _ids("unsorted_segment_prod", segment_ids),
                 num_segments=_math._num_segments(num_segments))  # noqa: SLF001


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of the entries of `data` by segment id divided by sqrt(the entry count) (empty
    segments 0), as `tf.math.unsorted_segment_sqrt_n`.

    Example:
        >>> tl.math.unsorted_segment_sqrt_n(tl.constant([3.0, 1.0, 4.0, 9.0]), [0, 1, 0, 0], 2).numpy()
        array([9.237604, 1.      ], dtype=float32)
    """
    data = convert_to_tensor(data, dtype_hint=_dt.float32)
    if not data.dtype.is_floating:
        raise TypeError(f"unsorted_segment_sqrt_n needs a floating tensor, got {data.dtype.name}")
    ids = _ids("unsorted_segment_sqrt_n", segment_ids)
    total = _math.unsorted_segment_sum(data, ids, num_segments)
    count = _math.unsorted_segment_sum(_math.cast(_array.ones_like(ids), data.dtype), ids,
                                       num_segments)  # [num_segments]: entries per segment
    shape = [-1] + [1] * (total.shape.rank - 1)
    return total / _array.reshape(_math.sqrt(_math.maximum(count, 1)), shape)
