"""`tl.losses`: the focal and generalized cross-entropies (Keras 3's losses for imbalanced or
noisy labels), as per-sample functions and Loss classes.

Owns: `binary_focal_crossentropy`, `categorical_focal_crossentropy`,
`categorical_generalized_cross_entropy` and their classes. Invariant: as the plain
cross-entropies in `core`, probabilities are clipped to [epsilon, 1 - epsilon] before the log
(or, for a sigmoid output, the logits behind it are used).
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..graph.ops import nn as nn_ops
from .core import EPSILON, _binary_crossentropy_terms, _from_activation, _wrapper

__all__ = ["binary_focal_crossentropy", "categorical_focal_crossentropy",
           "categorical_generalized_cross_entropy", "BinaryFocalCrossentropy",
           "CategoricalFocalCrossentropy", "CategoricalGeneralizedCrossEntropy"]


def _float_pair(y_true, y_pred):
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    return math_ops.cast(op_lib.convert_to_tensor(y_true), y_pred.dtype), y_pred


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """mean over `axis` of (1 - p_t)^gamma * binary cross-entropy, p_t the probability of the
    true class; with `apply_class_balancing` positives weigh `alpha`, negatives 1 - alpha.

    Example:
        >>> loss = tl.losses.binary_focal_crossentropy([[0., 1.]], [[0.4, 0.6]], gamma=2.0)
        >>> round(float(loss[0]), 4)
        0.0817
    """
    y_true, y_pred = _float_pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = math_ops.sigmoid(y_pred)
    # a sigmoid's output: the cross-entropy reads its logits (stable), as Keras's backend does
    logits, use_logits = _from_activation(y_pred, False, "Sigmoid")
    bce = _binary_crossentropy_terms(y_true, logits, use_logits)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = math_ops.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return math_ops.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """sum over `axis` of alpha * (1 - p)^gamma * -y_true log p, p = y_pred normalized to sum
    1 (softmax with from_logits) and clipped to [epsilon, 1 - epsilon]."""
    if isinstance(axis, bool):
        raise ValueError(f"categorical_focal_crossentropy: `axis` must be an int, got {axis!r}")
    y_true, y_pred = _float_pair(y_true, y_pred)
    if label_smoothing:
        n = math_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:
        y_pred = nn_ops.softmax(y_pred, axis=axis)
    p = y_pred / math_ops.reduce_sum(y_pred, axis=axis, keepdims=True)
    p = math_ops.clip_by_value(p, EPSILON, 1.0 - EPSILON)
    focal = alpha * math_ops.pow(1.0 - p, gamma) * (-y_true * math_ops.log(p))
    return math_ops.reduce_sum(focal, axis=axis)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """(1 - p[label]^q) / q for integer labels: between cross-entropy (q -> 0) and MAE (q = 1),
    robust to noisy labels."""
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    labels = math_ops.cast(op_lib.convert_to_tensor(y_true), dtypes.int32)
    one_hot = array_ops.one_hot(labels, y_pred.shape[-1], dtype=y_pred.dtype)
    p = math_ops.reduce_sum(y_pred * one_hot, axis=-1)
    return (1.0 - math_ops.pow(p, q)) / q


BinaryFocalCrossentropy = _wrapper(
    "BinaryFocalCrossentropy", binary_focal_crossentropy, "binary_focal_crossentropy",
    "Binary focal cross-entropy (down-weights easy examples by (1 - p_t)^gamma), reduced.",
    positional=("apply_class_balancing", "alpha", "gamma", "from_logits", "label_smoothing",
                "axis"),
    apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
    axis=-1)
CategoricalFocalCrossentropy = _wrapper(
    "CategoricalFocalCrossentropy", categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    "Categorical focal cross-entropy of one-hot labels, reduced.",
    positional=("alpha", "gamma", "from_logits", "label_smoothing", "axis"),
    alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
_GeneralizedBase = _wrapper(
    "CategoricalGeneralizedCrossEntropy", categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy", "", positional=("q",), q=0.5)


class CategoricalGeneralizedCrossEntropy(_GeneralizedBase):
    """Generalized cross-entropy of integer labels (`q` in (0, 1)), reduced.

    Raises:
        ValueError: for q outside (0, 1).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not 0 < self._fn_kwargs["q"] < 1:
            raise ValueError(f"CategoricalGeneralizedCrossEntropy: q must be in the interval "
                             f"(0, 1), got {self._fn_kwargs['q']}")
