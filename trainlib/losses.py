"""`tl.losses`: Keras 3's losses as classes (with reduction) and as per-sample functions.

Owns: the per-sample formulas (`mean_squared_error`, ... : one value per
sample, averaged over the last axis as Keras does), `Loss.__call__`
(sample weighting and the reduction: "sum_over_batch_size" (default, the mean
of the weighted per-sample values) and its Keras 3 alias "mean", "sum",
"mean_with_sample_weight" (divided by the sum of the weights) or "none"), and
name resolution for `Model.compile`.
Invariant: probabilities are clipped to [epsilon, 1 - epsilon] with Keras's
epsilon 1e-7 before the log, so no loss is ever infinite.
"""
from .graph import dtypes
from .graph import op as op_lib
from .graph.ops import array as array_ops
from .graph.ops import math as math_ops
from .graph.ops import nn as nn_ops
from .graph import tensor as tensor_lib
from . import activations
from .naming import auto_name

__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError", "Huber",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
           "LossFunctionWrapper", "mean_squared_error", "mean_absolute_error",
           "mean_absolute_percentage_error", "huber", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "mse", "mae", "mape",
           "get", "serialize", "deserialize"]

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
    if from_logits:
        per = nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = math_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        per = -(y_true * math_ops.log(p) + (1.0 - y_true) * math_ops.log(1.0 - p))
    return math_ops.reduce_mean(per, axis=axis)


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


# ------------------------------------------------------------------ classes

def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Applies `sample_weight` (broadcast) to per-sample `values` and reduces them, as Keras 3.

    "sum_over_batch_size" and "mean" divide the weighted sum by the number of
    values, "mean_with_sample_weight" by the sum of the weights, "sum" does not
    divide; "none"/None, and scalar or empty values, are returned as they are.
    """
    if sample_weight is not None:
        sample_weight = math_ops.cast(op_lib.convert_to_tensor(sample_weight), values.dtype)
        rv, rw = values.shape.rank, sample_weight.shape.rank
        # keras squeeze_or_expand_to_same_rank(values, sample_weight)
        if rv is not None and rw is not None:
            if rv == rw + 1 and values.shape[-1] == 1:
                if rw == 1:
                    sample_weight = array_ops.expand_dims(sample_weight, -1)
                else:
                    values = array_ops.squeeze(values, axis=-1)
            elif rw == rv + 1 and sample_weight.shape[-1] == 1:
                if rv == 1:
                    values = array_ops.expand_dims(values, -1)
                else:
                    sample_weight = array_ops.squeeze(sample_weight, axis=-1)
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
    # divide_no_nan
    return math_ops.where(divisor != 0, total / math_ops.where(divisor != 0, divisor, array_ops.ones_like(divisor)),
                    array_ops.zeros_like(total))


class Loss:
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
        # as Keras 3, losses compute in their dtype (float32): float16 outputs of a
        # mixed-precision model are cast up first
        dtype = dtypes.as_dtype(self.dtype or "float32")
        y_pred, y_true = (math_ops.cast(v, dtype) if tensor_lib.is_tensor(v) and v.dtype.is_floating and
                          v.dtype.size < dtype.size else v for v in (y_pred, y_true))
        return reduce_weighted_values(self.call(y_true, y_pred), sample_weight, self.reduction)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss around a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(name=name or fn.__name__, reduction=reduction)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(cls_name, fn, default_name, doc, **defaults):
    def __init__(self, reduction="sum_over_batch_size", name=default_name, **kwargs):
        options = {**defaults, **kwargs}
        unknown = set(options) - set(defaults)
        if unknown:
            raise TypeError(f"{cls_name} got unexpected keyword arguments {sorted(unknown)}")
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **options)

    def from_config(cls, config):
        return cls(**config)

    return type(cls_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc,
                                                  "from_config": classmethod(from_config)})


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
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "Cross-entropy of integer labels and probabilities (or logits with from_logits=True).",
    from_logits=False, ignore_class=None)




_CLASSES = {c.__name__: c for c in (MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
                                     Huber, BinaryCrossentropy, CategoricalCrossentropy,
                                     SparseCategoricalCrossentropy)}
_FUNCTIONS = {"mean_squared_error": mean_squared_error, "mse": mean_squared_error,
              "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error,
              "mean_absolute_percentage_error": mean_absolute_percentage_error,
              "mape": mean_absolute_percentage_error, "huber": huber, "huber_loss": huber,
              "binary_crossentropy": binary_crossentropy,
              "categorical_crossentropy": categorical_crossentropy,
              "sparse_categorical_crossentropy": sparse_categorical_crossentropy}


def get(identifier):
    """A loss callable from a name ("mse", "sparse_categorical_crossentropy", ...), class, or callable.

    Raises:
        ValueError: for an unknown name.
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if isinstance(identifier, str):
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        fn = _FUNCTIONS.get(identifier)
        if fn is None:
            raise ValueError(f"Unknown loss {identifier!r}; expected one of {sorted(_FUNCTIONS)}")
        return fn
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret loss {identifier!r}")


def serialize(loss):
    """A JSON-able description of a loss: `{"class_name", "config"}`, or a function's name."""
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return getattr(loss, "__name__", None)


def deserialize(config):
    """The loss described by `serialize`'s output (or by a name such as "mse")."""
    if isinstance(config, str):
        return get(config)
    cls = _CLASSES.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown loss class {config['class_name']!r}")
    return cls.from_config(config["config"])
