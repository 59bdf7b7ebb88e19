"""`tl.losses`: the Circle loss of metric learning (embeddings of the same label pulled
together, others pushed apart), as a per-sample function and a Loss class.

Owns: `circle`, `Circle`. Invariant: the per-sample values carry a mask (value > 0) as their
`_keras_mask`, so the reduction averages over the samples that have a loss, as Keras 3.
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from .core import _wrapper

__all__ = ["circle", "Circle"]


def _pos_neg_masks(query_labels, key_labels, remove_diagonal):
    query = array_ops.reshape(query_labels, [-1, 1])
    key = array_ops.reshape(key_labels, [1, -1])
    positive = math_ops.equal(query, key)
    negative = math_ops.logical_not(positive)
    if remove_diagonal:
        n, m = query.shape[0], key.shape[1]
        if n is None or m is None:
            eye = math_ops.equal(array_ops.expand_dims(array_ops.range(array_ops.shape(query)[0]), 1),
                                 array_ops.expand_dims(array_ops.range(array_ops.shape(key)[1]), 0))
        else:
            eye = math_ops.cast(array_ops.eye(n, m), dtypes.bool)
        positive = math_ops.logical_and(positive, math_ops.logical_not(eye))
    return positive, negative


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80,
           margin=0.4):
    """The Circle loss of L2-normalized embeddings `y_pred` [batch, dim] with integer labels
    `y_true` [batch], against `ref_embeddings`/`ref_labels` (default: the batch itself).

    Each positive pair's cosine distance d weighs max(margin + d, 0), each negative's
    max(1 + margin - d, 0); the loss is softplus(logsumexp(positive terms) + logsumexp(negative
    terms)) per sample.
    """
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), dtypes.int32)
    ref_embeddings = y_pred if ref_embeddings is None else \
        math_ops.cast(op_lib.convert_to_tensor(ref_embeddings), y_pred.dtype)
    ref_labels = y_true if ref_labels is None else \
        math_ops.cast(op_lib.convert_to_tensor(ref_labels), dtypes.int32)
    distances = math_ops.maximum(
        1.0 - math_ops.matmul(y_pred, array_ops.transpose(ref_embeddings)), 0.0)
    positive, negative = _pos_neg_masks(y_true, ref_labels, remove_diagonal)
    pos_weights = math_ops.maximum((margin + distances) * math_ops.cast(positive, distances.dtype),
                                   0.0)
    neg_weights = math_ops.maximum((1.0 + margin - distances) *
                                   math_ops.cast(negative, distances.dtype), 0.0)
    pos_terms = -gamma * pos_weights * (margin - distances)
    neg_terms = gamma * neg_weights * ((1.0 - margin) - distances)
    minus_inf = array_ops.fill(array_ops.shape(distances), float("-inf"))
    p_loss = math_ops.reduce_logsumexp(math_ops.where(positive, pos_terms, minus_inf), axis=1)
    n_loss = math_ops.reduce_logsumexp(math_ops.where(negative, neg_terms, minus_inf), axis=1)
    loss = math_ops.softplus(p_loss + n_loss)
    loss._keras_mask = loss > 0
    return loss


Circle = _wrapper("Circle", circle, "circle",
                  "The Circle loss of embeddings and their integer labels, reduced.",
                  positional=("gamma", "margin", "remove_diagonal"), gamma=80.0, margin=0.4,
                  remove_diagonal=True)
