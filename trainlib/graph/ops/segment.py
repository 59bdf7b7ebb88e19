"""Segment reductions beyond sum/max/min (those live in `math`): the product by segment id.

Owns the OpDef `UnsortedSegmentProd` and `unsorted_segment_prod` (`tf.math.unsorted_segment_prod`,
`keras.ops.segment_prod`). Invariants: ids in any order, negative ids dropped, empty segments
give 1 (as TensorFlow); the gradient is exact with zeros in a segment (the product of the other
entries, as TensorFlow's `_UnsortedSegmentProdGrad`).
"""
from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop
from . import array as _array
from . import math as _math

__all__ = ["unsorted_segment_prod"]


def _prod_grad(op, dy):
    data, ids = op.inputs
    n = op.attrs["num_segments"]
    is_zero = _math.equal(data, _math.cast(0, data.dtype))
    zeros = _math.unsorted_segment_sum(_math.cast(is_zero, _dt.int32), ids, n)
    nonzero_prod = unsorted_segment_prod(_math.where(is_zero, _array.ones_like(data), data), ids, n)
    at = _math._gather_segments  # noqa: SLF001 -- math's helper: rows of negative ids get 0
    others = _math.where(is_zero,
                         _math.where(_math.equal(at(zeros, ids), 1), at(nonzero_prod, ids),
                                     _array.zeros_like(data)),
                         _math.divide_no_nan(at(op.outputs[0], ids), data))
    return at(dy, ids) * others, None


@defop("UnsortedSegmentProd", infer=_math._segment_infer("UnsortedSegmentProd", False),  # noqa: SLF001
       grad=_prod_grad)
def _unsorted_segment_prod(xp, data, segment_ids, num_segments=None):
    values, ids, n, rest = _math._segment_layout(xp, data, segment_ids, num_segments, False,  # noqa: SLF001
                                                 "UnsortedSegmentProd")
    keep = ids >= 0
    out = xp.ones((n,) + rest, dtype=data.dtype)
    xp.multiply.at(out, ids[keep].astype(xp.int64), values[keep])
    return out


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the entries of `data` by segment id (ids in any order; empty segments 1).

    Example:
        >>> from trainlib.graph.ops.segment import unsorted_segment_prod
        >>> unsorted_segment_prod(tl.constant([2, 3, 4]), [1, 0, 1], 3).numpy()
        array([3, 8, 1], dtype=int32)
    """
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    if ids.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"unsorted_segment_prod: segment_ids must be int32 or int64, got "
                        f"{ids.dtype.name}")
    return apply("UnsortedSegmentProd", data, ids,
                 num_segments=_math._num_segments(num_segments))  # noqa: SLF001
