"""`tl.metrics`: stateful metrics whose state lives in Variables, updated inside the train graph.

Owns: `Metric` (state created in `__init__` with `add_variable`, eagerly, so a
traced step only reads and assigns it), the reducing metrics (Mean, Sum),
metrics wrapping a per-sample function (accuracies, errors), the confusion
metrics (Precision, Recall, AUC), and name resolution for `Model.compile`,
including Keras's choice of accuracy from the loss and output shape.
Invariant: `update_state` builds only ops on Variables; `result` reads them;
`reset_state` assigns zeros (works eagerly and in graphs).
"""
from .graph import dtypes
from .graph import op as op_lib
from .graph.ops import array as array_ops
from .graph.ops import math as math_ops
from .graph.context import eager_scope
from .graph.variables import Variable

from . import initializers, losses as _losses
from .naming import auto_name, to_snake_case



__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError",
           "RootMeanSquaredError", "Precision", "Recall", "AUC", "accuracy", "binary_accuracy",
           "categorical_accuracy", "sparse_categorical_accuracy", "get"]




class Metric:
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

    @classmethod
    def from_config(cls, config):
        return cls(**config)

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
    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc})


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


# ------------------------------------------------------------------ confusion metrics

class _Confusion(Metric):
    """Counts of true/false positives/negatives at `thresholds` (predictions > threshold)."""

    _direction = "up"

    def __init__(self, thresholds=None, name=None, dtype=None, top_k=None, class_id=None):
        super().__init__(name, dtype)
        if top_k is not None:
            raise NotImplementedError(f"{type(self).__name__}: top_k is not supported by trainlib")
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        single = thresholds is None or isinstance(thresholds, (int, float))
        self._single = single
        self.thresholds = [0.5 if thresholds is None else float(thresholds)] if single \
            else [float(t) for t in thresholds]
        n = len(self.thresholds)
        self.true_positives = self.add_variable((n,), name="true_positives")
        self.false_positives = self.add_variable((n,), name="false_positives")
        self.false_negatives = self.add_variable((n,), name="false_negatives")
        self.true_negatives = self.add_variable((n,), name="true_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _losses._pair(y_true, y_pred)
        if self.class_id is not None:  # Keras: only that class's column counts
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        y_pred = self._probabilities(y_pred)
        y_true = array_ops.reshape(math_ops.cast(y_true, dtypes.float32), [-1, 1])
        y_pred = array_ops.reshape(math_ops.cast(y_pred, dtypes.float32), [-1, 1])
        pred_pos = math_ops.cast(y_pred > array_ops.constant(self.thresholds), dtypes.float32)   # (n, T)
        w = array_ops.ones_like(y_true) if sample_weight is None else \
            array_ops.reshape(math_ops.cast(op_lib.convert_to_tensor(sample_weight), dtypes.float32) *
                       array_ops.ones_like(array_ops.reshape(y_true, [-1])), [-1, 1])
        pos, neg = y_true * w, (1.0 - y_true) * w
        self.true_positives.assign_add(math_ops.reduce_sum(pred_pos * pos, axis=0))
        self.false_positives.assign_add(math_ops.reduce_sum(pred_pos * neg, axis=0))
        self.false_negatives.assign_add(math_ops.reduce_sum((1.0 - pred_pos) * pos, axis=0))
        self.true_negatives.assign_add(math_ops.reduce_sum((1.0 - pred_pos) * neg, axis=0))

    def _probabilities(self, y_pred):
        return y_pred

    def _ratio(self, num, den):
        r = math_ops.where(den > 0, num / math_ops.maximum(den, 1e-30), array_ops.zeros_like(den))
        return r[0] if self._single else r

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_Confusion):
    """true positives / predicted positives (prediction > threshold, default 0.5).

    Args:
        thresholds: a float or a list of floats (one result per threshold); default 0.5.
        class_id: count only this column of multi-class predictions.
    """

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name, dtype, top_k, class_id)

    def result(self):
        tp = self.true_positives.read_value()
        return self._ratio(tp, tp + self.false_positives.read_value())


class Recall(_Confusion):
    """true positives / actual positives (prediction > threshold, default 0.5).

    Args: as Precision.
    """

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name, dtype, top_k, class_id)

    def result(self):
        tp = self.true_positives.read_value()
        return self._ratio(tp, tp + self.false_negatives.read_value())


class AUC(_Confusion):
    """Area under the ROC curve, by the trapezoidal rule over `num_thresholds` thresholds."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        for option, value, supported in (("curve", curve, "ROC"),
                                         ("summation_method", summation_method, "interpolation"),
                                         ("multi_label", multi_label, False),
                                         ("label_weights", label_weights, None)):
            if value != supported:
                raise NotImplementedError(f"AUC: {option}={value!r} is not supported by trainlib "
                                          f"(only {supported!r})")
        eps = 1e-7
        if thresholds is None:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:  # Keras adds the two end points to the given thresholds
            inner = sorted(float(t) for t in thresholds)
        thresholds = [0.0 - eps] + inner + [1.0 + eps]
        self.num_thresholds = len(thresholds)
        self.curve, self.summation_method = curve, summation_method
        self.multi_label, self.num_labels = multi_label, num_labels
        self.label_weights, self.from_logits = label_weights, from_logits
        super().__init__(list(thresholds), name, dtype)

    def _probabilities(self, y_pred):
        return math_ops.sigmoid(y_pred) if self.from_logits else y_pred

    def result(self):
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        fn, tn = self.false_negatives.read_value(), self.true_negatives.read_value()
        tpr = tp / math_ops.maximum(tp + fn, 1e-30)
        fpr = fp / math_ops.maximum(fp + tn, 1e-30)
        # thresholds ascend, so rates descend: sum the trapezoids between neighbours
        return math_ops.reduce_sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2.0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name, "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "multi_label": self.multi_label, "num_labels": self.num_labels,
                "label_weights": self.label_weights, "from_logits": self.from_logits}


# ------------------------------------------------------------------ resolution

_CLASSES = {c.__name__: c for c in (Mean, Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy,
                                     SparseCategoricalAccuracy, TopKCategoricalAccuracy,
                                     SparseTopKCategoricalAccuracy, MeanSquaredError,
                                     MeanAbsoluteError, RootMeanSquaredError, Precision, Recall,
                                     AUC)}
_BY_NAME = {"binary_accuracy": BinaryAccuracy, "categorical_accuracy": CategoricalAccuracy,
            "sparse_categorical_accuracy": SparseCategoricalAccuracy,
            "top_k_categorical_accuracy": TopKCategoricalAccuracy,
            "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
            "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
            "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
            "rmse": RootMeanSquaredError, "root_mean_squared_error": RootMeanSquaredError,
            "precision": Precision, "recall": Recall, "auc": AUC}


def get(identifier, y_true=None, y_pred=None, loss=None):
    """A Metric from a name, an instance or a per-sample function, named as Keras 3's compile does.

    "accuracy"/"acc" follows Keras 3, from the shapes alone (the loss plays no
    part): binary accuracy for a one-unit output, sparse categorical accuracy
    for integer labels (fewer dims than the predictions, or a last dim of 1
    against several units), else categorical accuracy. A string names the metric
    (the key in the logs); a function's name is snake-cased. `y_true`/`y_pred`
    are specs (shape, dtype) of a batch; `loss` is accepted for compatibility.

    Raises:
        ValueError: for an unknown name.
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        name = identifier
        if name.lower() in ("accuracy", "acc"):
            metric = _choose_accuracy(y_true, y_pred)(name=name)
        else:
            cls = _BY_NAME.get(name) or _CLASSES.get(name) or _BY_NAME.get(to_snake_case(name))
            if cls is None:
                raise ValueError(f"Unknown metric {name!r}; expected 'accuracy' or one of "
                                 f"{sorted(_BY_NAME)}")
            metric = cls()
        metric.name = name
        return metric
    if callable(identifier):
        return MeanMetricWrapper(identifier,
                                 name=to_snake_case(getattr(identifier, "__name__", "metric")))
    raise TypeError(f"Could not interpret metric {identifier!r}")


def _choose_accuracy(y_true, y_pred):
    # keras/src/trainers/compile_utils.py: is_binary_or_sparse_categorical
    if y_pred is None or y_true is None or y_pred.shape.rank is None or \
            y_true.shape.rank is None:
        return Accuracy
    if y_pred.shape[-1] == 1:
        return BinaryAccuracy
    if y_true.shape.rank < y_pred.shape.rank or (y_true.shape[-1] == 1 and y_pred.shape[-1] > 1):
        return SparseCategoricalAccuracy
    return CategoricalAccuracy
