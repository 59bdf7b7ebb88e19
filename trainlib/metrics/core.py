"""`tl.metrics` core: stateful metrics whose state lives in Variables, updated inside the train graph.

Owns: `Metric` (state created in `__init__` with `add_variable`, eagerly, so a
traced step only reads and assigns it), the reducing metrics (Mean, Sum),
metrics wrapping a per-sample function (accuracies, errors, cross-entropies).
Invariant: `update_state` builds only ops on Variables; `result` reads them;
`reset_state` assigns zeros (works eagerly and in graphs).
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..graph.context import eager_scope
from ..graph.variables import Variable

from .. import initializers
from ..losses import core as _losses
from ..object_registry import Configurable
from ..naming import auto_name, to_snake_case



__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError",
           "RootMeanSquaredError", "accuracy", "binary_accuracy",
           "categorical_accuracy", "sparse_categorical_accuracy",
           "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "KLDivergence", "Hinge",
           "SquaredHinge", "CategoricalHinge", "LogCoshError", "Poisson", "CosineSimilarity",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
           "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "kl_divergence", "hinge", "squared_hinge",
           "categorical_hinge", "log_cosh", "poisson", "huber", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy",
           # tf.keras 2's other names
           "mse", "mae", "mape", "msle", "kld", "kullback_leibler_divergence", "logcosh", "MSE",
           "MAE", "MAPE", "MSLE", "KLD"]




class Metric(Configurable):
    """Base class: state Variables, `update_state(...)`, `result()`, `reset_state()`.

    Args:
        name: the metric's name (the key in `fit`'s logs).
        dtype: dtype of the state (default float32).
    """

    def __init__(self, name=None, dtype=None):
        # unnamed metrics are numbered per class name (precision, precision_1, ...), as Keras 3
        self.name = name or auto_name(type(self).__name__)
        self.dtype = dtypes.as_dtype(dtype or "float32")
        self._variables = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, name=None):
        """A state Variable (non-trainable, created eagerly)."""
        init = initializers.get(initializer)
        dtype = dtypes.as_dtype(dtype or self.dtype)
        shape = tuple(shape)
        with eager_scope():
            v = Variable(lambda: init(shape, dtype=dtype), trainable=False, name=name or "state",
                         dtype=dtype)
        self._variables.append(v)
        return v

    def build_state(self, y_true_shape, y_pred_shape):
        """Creates state whose shape comes from the data (F1Score's per-class counts, ...),
        eagerly, before a traced step updates it; `compile` calls it with the first batch's
        shapes. Most metrics have none: the default does nothing."""

    @property
    def variables(self):
        return list(self._variables)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        """Sets every state Variable back to zero."""
        for v in self._variables:
            v.assign(array_ops.zeros_like(v.read_value()))

    def __call__(self, *args, **kwargs):
        """update_state, then result."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _weights(values, sample_weight):
    """(weighted values, weights broadcast like values), both of values' dtype."""
    if sample_weight is None:
        return values, None
    w = math_ops.cast(op_lib.convert_to_tensor(sample_weight), values.dtype)
    if w.shape.rank is not None and values.shape.rank is not None:
        while w.shape.rank > values.shape.rank and w.shape[-1] == 1:
            w = array_ops.squeeze(w, axis=-1)
        while w.shape.rank < values.shape.rank:
            w = array_ops.expand_dims(w, -1)
    w = w * array_ops.ones_like(values)
    return values * w, w


class Sum(Metric):
    """The running (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(op_lib.convert_to_tensor(values), self.dtype)
        values, _ = _weights(values, sample_weight)
        self.total.assign_add(math_ops.reduce_sum(values))

    def result(self):
        return self.total.read_value()


class Mean(Metric):
    """The running (weighted) mean of the values: total / count.

    Example:
        >>> m = tl.metrics.Mean()
        >>> m.update_state([1.0, 3.0])
        >>> float(m.result())
        2.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(op_lib.convert_to_tensor(values), self.dtype)
        weighted, w = _weights(values, sample_weight)
        self.total.assign_add(math_ops.reduce_sum(weighted))
        count = math_ops.cast(array_ops.size(values), self.dtype) if w is None else math_ops.reduce_sum(w)
        self.count.assign_add(count)

    def result(self):
        count = self.count.read_value()
        # divide_no_nan: an empty metric reads 0
        return math_ops.where(count > 0, self.total.read_value() / math_ops.maximum(count, 1e-30),
                        array_ops.zeros_like(count))


class MeanMetricWrapper(Mean):
    """The running mean of a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or fn.__name__, dtype)
        self._fn, self._fn_kwargs = fn, kwargs
        # a wrapped loss is minimized (what "auto" mode of EarlyStopping & co. reads)
        if fn in _LOSS_FUNCTIONS or isinstance(fn, _losses.Loss):
            self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds `fn`'s values; a mask on `y_pred` (`_keras_mask`) leaves masked entries out."""
        mask = getattr(y_pred, "_keras_mask", None)
        if mask is not None:
            sample_weight = _losses.apply_mask(sample_weight, mask, self.dtype, "sum")
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# ------------------------------------------------------------------ per-sample functions

_LOSS_FUNCTIONS = frozenset((_losses.mean_squared_error, _losses.mean_absolute_error,
                             _losses.mean_absolute_percentage_error, _losses.huber,
                             _losses.binary_crossentropy, _losses.categorical_crossentropy,
                             _losses.sparse_categorical_crossentropy))

def _squeeze_pair(y_true, y_pred):
    y_true, y_pred = op_lib.convert_to_tensor(y_true), op_lib.convert_to_tensor(y_pred)
    rt, rp = y_true.shape.rank, y_pred.shape.rank
    if rt is not None and rp is not None:
        if rt == rp + 1 and y_true.shape[-1] == 1:
            y_true = array_ops.squeeze(y_true, axis=-1)
        elif rp == rt + 1 and y_pred.shape[-1] == 1:
            y_pred = array_ops.squeeze(y_pred, axis=-1)
    return y_true, y_pred


def accuracy(y_true, y_pred):
    """1.0 where y_true == y_pred, else 0.0."""
    y_true, y_pred = _squeeze_pair(y_true, y_pred)
    if y_true.dtype is not y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), dtypes.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where (y_pred > threshold) equals y_true, else 0.0, averaged over the last axis."""
    y_true, y_pred = _squeeze_pair(y_true, y_pred)
    y_pred = math_ops.cast(op_lib.convert_to_tensor(y_pred) > threshold, dtypes.float32)
    y_true = math_ops.cast(y_true, dtypes.float32)
    return math_ops.reduce_mean(math_ops.cast(math_ops.equal(y_true, y_pred), dtypes.float32), axis=-1) \
        if y_pred.shape.rank and y_pred.shape.rank > 1 else math_ops.cast(math_ops.equal(y_true, y_pred),
                                                                     dtypes.float32)


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_true) == argmax(y_pred) along the last axis."""
    return math_ops.cast(math_ops.equal(math_ops.argmax(y_true, axis=-1), math_ops.argmax(y_pred, axis=-1)), dtypes.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the integer label equals argmax(y_pred) along the last axis."""
    y_true, y_pred = op_lib.convert_to_tensor(y_true), op_lib.convert_to_tensor(y_pred)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and \
            y_true.shape.rank == y_pred.shape.rank and y_true.shape[-1] == 1:
        y_true = array_ops.squeeze(y_true, axis=-1)
    pred = math_ops.argmax(y_pred, axis=-1)
    return math_ops.cast(math_ops.equal(math_ops.cast(y_true, pred.dtype), pred), dtypes.float32)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the true class (argmax of y_true) is among the k highest predictions."""
    return sparse_top_k_categorical_accuracy(math_ops.argmax(y_true, axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the integer label's prediction is among the k highest (ties count as in)."""
    y_true, y_pred = op_lib.convert_to_tensor(y_true), op_lib.convert_to_tensor(y_pred)
    if y_true.shape.rank == y_pred.shape.rank:
        y_true = array_ops.squeeze(y_true, axis=-1)
    depth = y_pred.shape[-1]
    target = math_ops.reduce_sum(y_pred * array_ops.one_hot(math_ops.cast(y_true, dtypes.int32), depth,
                                               dtype=y_pred.dtype), axis=-1, keepdims=True)
    above = math_ops.reduce_sum(math_ops.cast(y_pred > target, dtypes.float32), axis=-1)
    return math_ops.cast(above < float(k), dtypes.float32)


def _mean_wrapper(cls_name, fn, default_name, doc, direction=None, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **{**defaults, **kwargs})
        if direction is not None:
            self._direction = direction
    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc,
                                                 "_wraps": fn})


Accuracy = _mean_wrapper("Accuracy", accuracy, "accuracy", "How often predictions equal labels.",
                          direction="up")
BinaryAccuracy = _mean_wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                               "How often (y_pred > threshold) matches binary labels.",
                               direction="up", threshold=0.5)
CategoricalAccuracy = _mean_wrapper("CategoricalAccuracy", categorical_accuracy,
                                    "categorical_accuracy",
                                    "How often argmax of predictions matches one-hot labels.",
                                    direction="up")
SparseCategoricalAccuracy = _mean_wrapper(
    "SparseCategoricalAccuracy", sparse_categorical_accuracy, "sparse_categorical_accuracy",
    "How often argmax of predictions matches integer labels.", direction="up")
TopKCategoricalAccuracy = _mean_wrapper(
    "TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy",
    "How often the one-hot label is among the k (default 5) top predictions.", direction="up",
    k=5)
SparseTopKCategoricalAccuracy = _mean_wrapper(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "How often the integer label is among the k (default 5) top predictions.", direction="up",
    k=5)
MeanSquaredError = _mean_wrapper("MeanSquaredError", _losses.mean_squared_error,
                                 "mean_squared_error", "Running mean of squared errors.")
MeanAbsoluteError = _mean_wrapper("MeanAbsoluteError", _losses.mean_absolute_error,
                                  "mean_absolute_error", "Running mean of absolute errors.")
# the running means of the loss functions Keras also lists as metrics
MeanAbsolutePercentageError = _mean_wrapper(
    "MeanAbsolutePercentageError", _losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "Running mean of absolute percentage errors.")
MeanSquaredLogarithmicError = _mean_wrapper(
    "MeanSquaredLogarithmicError", _losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "Running mean of squared logarithmic errors.")
KLDivergence = _mean_wrapper("KLDivergence", _losses.kl_divergence, "kl_divergence",
                             "Running mean of the Kullback-Leibler divergence.")
Hinge = _mean_wrapper("Hinge", _losses.hinge, "hinge", "Running mean of the hinge loss.")
SquaredHinge = _mean_wrapper("SquaredHinge", _losses.squared_hinge, "squared_hinge",
                             "Running mean of the squared hinge loss.")
CategoricalHinge = _mean_wrapper("CategoricalHinge", _losses.categorical_hinge,
                                 "categorical_hinge", "Running mean of the categorical hinge loss.")
LogCoshError = _mean_wrapper("LogCoshError", _losses.log_cosh, "logcosh",
                             "Running mean of log(cosh(error)).")
Poisson = _mean_wrapper("Poisson", _losses.poisson, "poisson", "Running mean of the Poisson loss.")
CosineSimilarity = _mean_wrapper(
    "CosineSimilarity", lambda y_true, y_pred, axis=-1: -_losses.cosine_similarity(
        y_true, y_pred, axis), "cosine_similarity",
    "Running mean of the cosine similarity (1 for parallel vectors).", direction="up", axis=-1)
BinaryCrossentropy = _mean_wrapper(
    "BinaryCrossentropy", _losses.binary_crossentropy, "binary_crossentropy",
    "Running mean of the binary cross-entropy.", from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _mean_wrapper(
    "CategoricalCrossentropy", _losses.categorical_crossentropy, "categorical_crossentropy",
    "Running mean of the categorical cross-entropy.", from_logits=False, label_smoothing=0.0)
SparseCategoricalCrossentropy = _mean_wrapper(
    "SparseCategoricalCrossentropy", _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "Running mean of the sparse categorical cross-entropy.",
    from_logits=False)

# Keras lists these per-sample functions under keras.metrics too (the same functions)
mean_squared_error = mse = MSE = _losses.mean_squared_error
mean_absolute_error = mae = MAE = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = MAPE = _losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = MSLE = _losses.mean_squared_logarithmic_error
kl_divergence = kld = KLD = kullback_leibler_divergence = _losses.kl_divergence
hinge, squared_hinge, categorical_hinge = _losses.hinge, _losses.squared_hinge, \
    _losses.categorical_hinge
log_cosh = logcosh = _losses.log_cosh
poisson, huber = _losses.poisson, _losses.huber
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy


class RootMeanSquaredError(Mean):
    """sqrt of the running mean of squared errors."""

    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _losses._pair(y_true, y_pred)
        super().update_state(math_ops.square(y_pred - y_true), sample_weight)

    def result(self):
        return math_ops.sqrt(super().result())
