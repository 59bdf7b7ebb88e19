"""`tl.losses` core: Keras 3's losses as classes (with reduction) and as per-sample functions.

Owns: the per-sample formulas (`mean_squared_error`, ... : one value per
sample, averaged over the last axis as Keras does), `Loss.__call__`
(sample weighting and the reduction: "sum_over_batch_size" (default, the mean
of the weighted per-sample values) and its Keras 3 alias "mean", "sum",
"mean_with_sample_weight" (divided by the sum of the weights) or "none"), and
the base of the other loss families.
Invariant: probabilities are clipped to [epsilon, 1 - epsilon] with Keras's
epsilon 1e-7 before the log, so no loss is ever infinite.
"""
import sys

from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..graph.ops import nn as nn_ops
from ..graph import tensor as tensor_lib
from .. import activations
from ..naming import auto_name
from ..object_registry import Configurable

__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "Huber",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
           "LossFunctionWrapper", "mean_squared_error", "mean_absolute_error",
           "mean_absolute_percentage_error", "huber", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "mse", "mae", "mape",
           "reduce_weighted_values", "squeeze_or_expand_to_same_rank", "apply_mask",
           "MeanSquaredLogarithmicError", "KLDivergence", "Hinge", "SquaredHinge",
           "CategoricalHinge", "LogCosh", "Poisson", "CosineSimilarity",
           "mean_squared_logarithmic_error", "kl_divergence", "hinge", "squared_hinge",
           "categorical_hinge", "log_cosh", "poisson", "cosine_similarity",
           # tf.keras 2's other names of the same functions
           "msle", "kld", "kullback_leibler_divergence", "logcosh", "MSE", "MAE", "MAPE", "MSLE",
           "KLD"]

EPSILON = 1e-7
_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def _pair(y_true, y_pred):
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, dtypes.float32)
    y_true = op_lib.convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = math_ops.cast(y_true, y_pred.dtype)
    # Keras squeezes or expands a trailing 1 so that (n,) labels fit (n, 1) predictions
    rt, rp = y_true.shape.rank, y_pred.shape.rank
    if rt is not None and rp is not None:
        if rt == rp + 1 and y_true.shape[-1] == 1:
            y_true = array_ops.squeeze(y_true, axis=-1)
        elif rp == rt + 1 and y_pred.shape[-1] == 1:
            y_true = array_ops.expand_dims(y_true, -1)
    return y_true, y_pred


def _check_shapes(name, y_true, y_pred):
    t, p = y_true.shape, y_pred.shape
    if t.rank is not None and p.rank is not None and t.rank == p.rank and \
            not t.is_compatible_with(p):
        raise ValueError(f"{name}: y_true has shape {t} and y_pred has shape {p}; they must match "
                         "(labels of one value per output unit)")


# ------------------------------------------------------------------ per-sample functions

def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred)^2, axis=-1).

    Example:
        >>> float(tl.losses.mean_squared_error([[0., 1.]], [[1., 1.]])[0])
        0.5
    """
    y_true, y_pred = _pair(y_true, y_pred)
    _check_shapes("mean_squared_error", y_true, y_pred)
    return math_ops.reduce_mean(math_ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|, axis=-1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    _check_shapes("mean_absolute_error", y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|(y_true - y_pred) / max(|y_true|, epsilon)|, axis=-1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), EPSILON))
    return 100.0 * math_ops.reduce_mean(diff, axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """mean over the last axis of 0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta)."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = math_ops.abs(error)
    return math_ops.reduce_mean(math_ops.where(abs_error <= delta, 0.5 * math_ops.square(error),
                                   delta * abs_error - 0.5 * delta * delta), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))^2, axis=-1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, EPSILON) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, EPSILON) + 1.0)
    return math_ops.reduce_mean(math_ops.square(first - second), axis=-1)


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [epsilon, 1].

    Example:
        >>> round(float(tl.losses.kl_divergence([[0.5, 0.5]], [[0.25, 0.75]])[0]), 5)
        0.14384
    """
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = math_ops.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = math_ops.clip_by_value(y_pred, EPSILON, 1.0)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def _hinge_labels(y_true):
    """Binary 0/1 labels become -1/1 (other labels stay), as Keras's hinge losses read them."""
    binary = math_ops.reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0),
                                                     math_ops.equal(y_true, 1.0)))
    return math_ops.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0), axis=-1), labels -1/1 (or 0/1, converted)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0),
                                axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0)^2, axis=-1), labels -1/1 (or 0/1, converted)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(
        math_ops.square(math_ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    pos = math_ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = math_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(neg - pos + 1.0, 0.0)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1), computed stably."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return math_ops.reduce_mean(x + nn_ops.softplus(-2.0 * x) - 0.6931471805599453, axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + epsilon), axis=-1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(y_pred - y_true * math_ops.log(y_pred + EPSILON), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for parallel vectors."""
    y_true, y_pred = _pair(y_true, y_pred)
    return -math_ops.reduce_sum(nn_ops.l2_normalize(y_true, axis) *
                                nn_ops.l2_normalize(y_pred, axis), axis=axis)


def _from_activation(y_pred, from_logits, op_type):
    """(y_pred or the logits behind it, from_logits), as Keras 3's TensorFlow backend decides.

    When `y_pred` came out of a sigmoid/softmax, the loss uses its logits (stable,
    no clipping), whatever `from_logits` says.
    """
    logits = activations.logits_of(y_pred, op_type)
    if logits is None:
        return y_pred, from_logits
    return logits, True


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean over `axis` of -(y log p + (1 - y) log(1 - p)); p = sigmoid(y_pred) with from_logits."""
    y_pred, from_logits = _from_activation(y_pred, from_logits, "Sigmoid")
    y_true, y_pred = _pair(y_true, y_pred)
    _check_shapes("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return math_ops.reduce_mean(_binary_crossentropy_terms(y_true, y_pred, from_logits), axis=axis)


def _binary_crossentropy_terms(y_true, y_pred, from_logits):
    """Elementwise -(y log p + (1 - y) log(1 - p)), p clipped (or from logits, stably)."""
    if from_logits:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    p = math_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    return -(y_true * math_ops.log(p) + (1.0 - y_true) * math_ops.log(1.0 - p))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(p), axis); p = y_pred normalized to sum 1, or softmax with from_logits."""
    y_pred, from_logits = _from_activation(y_pred, from_logits, "Softmax")
    y_true, y_pred = _pair(y_true, y_pred)
    _check_shapes("categorical_crossentropy", y_true, y_pred)
    if label_smoothing:
        n = math_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:
        log_p = nn_ops.log_softmax(y_pred, axis=axis)
    else:
        p = y_pred / math_ops.reduce_sum(y_pred, axis=axis, keepdims=True)
        log_p = math_ops.log(math_ops.clip_by_value(p, EPSILON, 1.0 - EPSILON))
    return -math_ops.reduce_sum(y_true * log_p, axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """-log p[label] with integer labels (shape of y_pred without the class axis, or with a 1 there)."""
    y_pred, from_logits = _from_activation(y_pred, from_logits, "Softmax")
    y_pred = op_lib.convert_to_tensor(y_pred)
    y_true = op_lib.convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and \
            y_true.shape.rank == y_pred.shape.rank and y_true.shape[-1] == 1:
        y_true = array_ops.squeeze(y_true, axis=-1)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and \
            y_true.shape.rank != y_pred.shape.rank - 1:
        raise ValueError(f"sparse_categorical_crossentropy: integer labels of shape {y_true.shape} "
                         f"do not fit predictions of shape {y_pred.shape}; labels need the "
                         "predictions' shape without the class axis")
    if not y_true.dtype.is_integer:
        y_true = math_ops.cast(y_true, dtypes.int32)
    if ignore_class is not None:
        valid = math_ops.not_equal(y_true, ignore_class)
        y_true = math_ops.where(valid, y_true, array_ops.zeros_like(y_true))
    if not from_logits:
        # Keras: clip, log, then softmax cross-entropy of those "logits" (renormalizes)
        y_pred = math_ops.log(math_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    loss = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    if ignore_class is not None:
        loss = loss * math_ops.cast(valid, loss.dtype)
    return loss


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# ------------------------------------------------------------------ classes

def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """`x1` and `x2` with a trailing 1 squeezed (or, for rank 1, the other expanded) so their
    ranks agree where they differ by one, as Keras 3 pairs values with weights."""
    r1, r2 = x1.shape.rank, x2.shape.rank
    if r1 is None or r2 is None:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = array_ops.expand_dims(x2, -1)
        else:
            x1 = array_ops.squeeze(x1, axis=-1)
    elif r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = array_ops.expand_dims(x1, -1)
        else:
            x2 = array_ops.squeeze(x2, axis=-1)
    return x1, x2


def _divide_no_nan(a, b):
    return math_ops.where(b != 0, a / math_ops.where(b != 0, b, array_ops.ones_like(b)),
                          array_ops.zeros_like(a))


def apply_mask(sample_weight, mask, dtype, reduction):
    """`sample_weight` times a mask's weights, as Keras 3: for the averaging reductions a kept
    entry weighs (entries / kept entries), so the mean runs over the kept entries only."""
    if mask is None:
        return sample_weight
    mask = op_lib.convert_to_tensor(mask)
    if reduction in ("mean", "sum_over_batch_size"):
        total = math_ops.cast(array_ops.size(mask), dtype)
        kept = math_ops.reduce_sum(math_ops.cast(mask, dtype))
        ones = array_ops.ones_like(mask, dtype=dtype)
        float_mask = math_ops.where(math_ops.cast(mask, dtypes.bool),
                                    _divide_no_nan(total, kept) * ones, ones * 0.0)
    else:
        float_mask = math_ops.cast(mask, dtype)
    if sample_weight is None:
        return float_mask
    sample_weight = math_ops.cast(op_lib.convert_to_tensor(sample_weight), dtype)
    float_mask, sample_weight = squeeze_or_expand_to_same_rank(float_mask, sample_weight)
    return sample_weight * float_mask


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size",
                           mask=None):
    """Applies `sample_weight` (broadcast) and `mask` to per-sample `values` and reduces
    them, as Keras 3.

    "sum_over_batch_size" and "mean" divide the weighted sum by the number of
    values, "mean_with_sample_weight" by the sum of the weights, "sum" does not
    divide; "none"/None, and scalar or empty values, are returned as they are. A
    boolean `mask` (the `_keras_mask` of the predictions) becomes weights first (`apply_mask`).
    """
    sample_weight = apply_mask(sample_weight, mask, values.dtype, reduction)
    if sample_weight is not None:
        sample_weight = math_ops.cast(op_lib.convert_to_tensor(sample_weight), values.dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction in ("none", None) or values.shape.rank == 0 or tuple(values.shape) == (0,):
        return values
    total = math_ops.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = math_ops.reduce_sum(sample_weight)
    else:
        divisor = math_ops.cast(array_ops.size(values), values.dtype)
    return _divide_no_nan(total, divisor)


class Loss(Configurable):
    """Base class: `loss(y_true, y_pred, sample_weight=None)` = reduce(weighted `call` values).

    Args:
        reduction: "sum_over_batch_size" (default), "sum", "mean" (the same as
            "sum_over_batch_size" in Keras 3), "mean_with_sample_weight" or "none".
        name: the loss's name.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid reduction {reduction!r}; expected one of "
                             "'sum_over_batch_size', 'sum', 'mean', 'mean_with_sample_weight', "
                             "'none'")
        if name is None:
            name = auto_name(type(self).__name__)
        self.name = name
        self.reduction = reduction
        self.dtype = dtype

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def __call__(self, y_true, y_pred, sample_weight=None):
        # a mask on the predictions (a masking layer's `_keras_mask`) weighs the values, as Keras 3
        in_mask = getattr(y_pred, "_keras_mask", None)
        # as Keras 3, losses compute in their dtype (float32): float16 outputs of a
        # mixed-precision model are cast up first
        dtype = dtypes.as_dtype(self.dtype or "float32")
        y_pred, y_true = (math_ops.cast(v, dtype) if tensor_lib.is_tensor(v) and v.dtype.is_floating and
                          v.dtype.size < dtype.size else v for v in (y_pred, y_true))
        values = self.call(y_true, y_pred)
        out_mask = getattr(values, "_keras_mask", None)
        mask = in_mask if out_mask is None else out_mask if in_mask is None else \
            math_ops.logical_and(in_mask, out_mask)
        return reduce_weighted_values(values, sample_weight, self.reduction, mask=mask)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


class LossFunctionWrapper(Loss):
    """A Loss around a per-sample function `fn(y_true, y_pred, **kwargs)`.

    As Keras 3, a trailing 1 is squeezed (or added) first so the two ranks agree.
    """

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or fn.__name__, reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        if tensor_lib.is_tensor(y_true) and tensor_lib.is_tensor(y_pred):
            y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(cls_name, fn, default_name, doc, positional=(), **defaults):
    """A LossFunctionWrapper class around `fn`: its options `defaults` (keyword arguments,
    those in `positional` also by position first, then reduction and name, as Keras orders them)."""
    order = tuple(positional) + ("reduction", "name")

    def __init__(self, *args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{cls_name} takes at most {len(order)} positional arguments "
                            f"({', '.join(order)}), got {len(args)}")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"{cls_name} got multiple values for argument {key!r}")
            kwargs[key] = value
        reduction = kwargs.pop("reduction", "sum_over_batch_size")
        name, dtype = kwargs.pop("name", default_name), kwargs.pop("dtype", None)
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{cls_name} got unexpected keyword arguments {sorted(unknown)}")
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype,
                                     **{**defaults, **kwargs})

    # the class belongs to the module that asked for it (as namedtuple does)
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    return type(cls_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc,
                                                  "__module__": module})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error",
                            "Mean of squared errors (per sample over the last axis), reduced.")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error",
                             "Mean of absolute errors (per sample over the last axis), reduced.")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "100 * mean |error / y_true|, reduced.")
Huber = _wrapper("Huber", huber, "huber_loss",
                 "Quadratic for |error| <= delta (default 1.0), linear beyond.", delta=1.0)
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
    "Binary cross-entropy of probabilities (or logits with from_logits=True).",
    from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
    "Cross-entropy of one-hot labels and probabilities (or logits with from_logits=True).",
    from_logits=False, label_smoothing=0.0, axis=-1)
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "Mean of squared log(1 + x) differences, reduced.")
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence",
                        "Kullback-Leibler divergence of y_true from y_pred, reduced.")
Hinge = _wrapper("Hinge", hinge, "hinge", "Hinge loss of -1/1 (or 0/1) labels, reduced.")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge",
                        "Squared hinge loss of -1/1 (or 0/1) labels, reduced.")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge",
                            "Categorical hinge loss of one-hot labels, reduced.")
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh", "Mean of log(cosh(error)), reduced.")
Poisson = _wrapper("Poisson", poisson, "poisson", "Poisson loss (y_pred a rate), reduced.")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            "Negative cosine similarity along `axis`, reduced.", axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "Cross-entropy of integer labels and probabilities (or logits with from_logits=True).",
    from_logits=False, ignore_class=None)
