"""`tl.losses`: the overlap losses of segmentation (Dice, Tversky), as per-sample functions
and Loss classes.

Owns: `dice`, `tversky`, `Dice`, `Tversky`. Invariant: with `axis=None` (Keras's default) the
overlap is taken over the whole batch, one value; an axis (tuple) gives one value per sample.
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import math as math_ops
from .core import EPSILON, _wrapper

__all__ = ["dice", "tversky", "Dice", "Tversky"]


def _overlap(y_true, y_pred, axis):
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), y_pred.dtype)
    return y_true, y_pred, math_ops.reduce_sum(y_true * y_pred, axis=axis)


def dice(y_true, y_pred, axis=None):
    """1 - 2 |y_true * y_pred| / (|y_true| + |y_pred| + epsilon), sums over `axis`.

    Example:
        >>> round(float(tl.losses.dice([1., 1., 0.], [1., 0., 0.])), 4)
        0.3333
    """
    y_true, y_pred, intersection = _overlap(y_true, y_pred, axis)
    total = math_ops.reduce_sum(y_true, axis=axis) + math_ops.reduce_sum(y_pred, axis=axis)
    return 1.0 - 2.0 * intersection / (total + EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - TP / (TP + alpha FP + beta FN + epsilon), soft counts summed over `axis` (Keras's
    reading: FP = sum((1 - y_pred) y_true), FN = sum(y_pred (1 - y_true)))."""
    y_true, y_pred, intersection = _overlap(y_true, y_pred, axis)
    fp = math_ops.reduce_sum((1.0 - y_pred) * y_true, axis=axis)
    fn = math_ops.reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + EPSILON)


Dice = _wrapper("Dice", dice, "dice", "The Dice loss (1 - the Dice coefficient), reduced.",
                positional=(), axis=None)
Tversky = _wrapper("Tversky", tversky, "tversky",
                   "The Tversky loss (alpha weighs false positives, beta false negatives).",
                   positional=("alpha", "beta"), alpha=0.5, beta=0.5, axis=None)
