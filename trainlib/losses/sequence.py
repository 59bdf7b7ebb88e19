"""`tl.losses`: the CTC loss of unsegmented sequences, as a per-sample function and a Loss.

Owns: `ctc`, `CTC`, built on the one CTC op (`tl.nn.ctc_loss`, as `keras.ops.ctc_loss` is).
Invariant: label 0 is both the padding of `y_true` and the blank class, as Keras 3.
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..graph.ops import nn as nn_ops
from .core import _wrapper

__all__ = ["ctc", "CTC"]


def ctc(y_true, y_pred):
    """-log p(labels | logits) per sample: `y_true` [batch, max_label_length] integer labels
    padded with 0, `y_pred` [batch, time, classes] logits whose class 0 is the blank.

    Raises:
        ValueError: when `y_true` is not rank 2 or `y_pred` not rank 3.
    """
    y_true, y_pred = op_lib.convert_to_tensor(y_true), op_lib.convert_to_tensor(y_pred)
    if y_true.shape.rank != 2:
        raise ValueError("ctc: targets `y_true` must be integer labels of shape (batch_size, "
                         f"max_length); got shape {y_true.shape}")
    if y_pred.shape.rank != 3:
        raise ValueError("ctc: logits `y_pred` must have shape (batch_size, max_length, "
                         f"num_classes); got shape {y_pred.shape}")
    if not y_pred.dtype.is_floating or y_pred.dtype is dtypes.float16:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    labels = math_ops.cast(y_true, dtypes.int32)
    shape = array_ops.shape(y_pred)
    logit_length = array_ops.fill([shape[0]], shape[1])
    label_length = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(labels, 0), dtypes.int32),
                                       axis=-1)
    return nn_ops.ctc_loss(labels, y_pred, label_length, logit_length, logits_time_major=False,
                           blank_index=0)


CTC = _wrapper("CTC", ctc, "ctc", "The CTC loss of padded integer labels and logits, reduced.")
