"""`tl.metrics`: the confusion-matrix metrics, as Keras 3 (`keras.metrics.Precision`, `AUC`, ...).

Owns: `update_confusion_matrix_variables` (weighted counts of true/false positives/negatives at
each threshold, a prediction counting as positive when > threshold; `top_k`, `class_id`,
`multi_label` and `label_weights` as Keras reads them), the counts (TruePositives, ...),
Precision, Recall, the metrics at a fixed sensitivity/specificity/precision/recall, and AUC
(ROC, PR, PRGAIN curves; interpolation, minoring or majoring sums).
Invariant: every state Variable is created in `__init__` (AUC with `multi_label` and no
`num_labels`: at its first update), so a traced step only reads and assigns them.
"""
import numpy as np

from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..losses.core import squeeze_or_expand_to_same_rank
from .core import Metric

__all__ = ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "Precision",
           "Recall", "SensitivityAtSpecificity", "SpecificityAtSensitivity", "PrecisionAtRecall",
           "RecallAtPrecision", "AUC", "update_confusion_matrix_variables"]

NEG_INF = -1e10
EPSILON = 1e-7
_VARIABLE_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
                   "fn": "false_negatives"}


def _parse_thresholds(thresholds, default):
    """`thresholds` as a list of floats (the default when None); each must lie in [0, 1]."""
    if thresholds is None:
        return [default]
    listed = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    invalid = [t for t in listed if t is None or t < 0 or t > 1]
    if invalid:
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {invalid}")
    return [float(t) for t in listed]


def _evenly_distributed(thresholds):
    n = len(thresholds)
    return n >= 3 and np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1),
                                  atol=EPSILON)


def _divide_no_nan(a, b):
    return math_ops.where(b != 0, a / math_ops.where(b != 0, b, array_ops.ones_like(b)),
                          array_ops.zeros_like(a))


def _filter_top_k(x, k):
    """`x` with all but the k largest entries of the last axis set to NEG_INF."""
    _, indices = math_ops.top_k(x, k)
    keep = math_ops.reduce_sum(array_ops.one_hot(indices, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * keep + NEG_INF * (1.0 - keep)


def update_confusion_matrix_variables(variables, y_true, y_pred, thresholds, top_k=None,
                                      class_id=None, sample_weight=None, multi_label=False,
                                      label_weights=None):
    """Adds the weighted confusion counts of a batch to `variables`.

    Args:
        variables: {"tp" | "fp" | "tn" | "fn": Variable of shape [thresholds] (or
            [thresholds, labels] with `multi_label`)}.
        y_true: labels (nonzero is positive), the shape of `y_pred` (a trailing 1 may differ).
        y_pred: scores; positive at a threshold when greater than it.
        thresholds: a list of floats.
        top_k: only the k highest scores of the last axis can be positive.
        class_id: count only this column of the last axis.
        sample_weight: weights broadcastable to `y_true`.
        multi_label: keep the labels (last axis) apart instead of flattening them.
        label_weights: per-label weights when the labels are flattened.
    """
    unknown = set(variables) - set(_VARIABLE_NAMES)
    if unknown:
        raise ValueError(f"Invalid keys {sorted(unknown)}; expected some of {list(_VARIABLE_NAMES)}")
    dtype = next(iter(variables.values())).dtype
    y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), dtype)
    y_pred = math_ops.cast(op_lib.convert_to_tensor(y_pred), dtype)
    if _evenly_distributed(thresholds):
        # Keras counts evenly spread thresholds by buckets of the clipped scores
        y_pred = math_ops.clip_by_value(y_pred, 0.0, 1.0)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = array_ops.expand_dims(
            math_ops.cast(op_lib.convert_to_tensor(sample_weight), dtype), -1)
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight,
                                                          expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.shape.rank == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape "
                             f"(num_samples, num_classes), found shape: {y_pred.shape}")
        y_true = y_true[..., class_id:class_id + 1]
        y_pred = y_pred[..., class_id:class_id + 1]
    thresholds_t = array_ops.constant(np.asarray(thresholds, np.float32), dtype=dtype)
    if multi_label:   # [T, batch, labels]
        preds = array_ops.expand_dims(y_pred, 0)
        labels = array_ops.expand_dims(math_ops.not_equal(y_true, 0.0), 0)
        thresholds_t = array_ops.reshape(thresholds_t, [-1, 1, 1])
        flat = lambda w: array_ops.expand_dims(w, 0)  # noqa: E731
    else:             # [T, all values]
        preds = array_ops.reshape(y_pred, [1, -1])
        labels = array_ops.reshape(math_ops.not_equal(y_true, 0.0), [1, -1])
        thresholds_t = array_ops.reshape(thresholds_t, [-1, 1])
        flat = lambda w: array_ops.reshape(w, [1, -1])  # noqa: E731
    pred_pos = math_ops.greater(preds, thresholds_t)
    weights = None
    if sample_weight is not None:
        weights = flat(array_ops.broadcast_to(sample_weight, array_ops.shape(y_pred)))
    if label_weights is not None and not multi_label:
        lw = array_ops.broadcast_to(array_ops.expand_dims(
            math_ops.cast(op_lib.convert_to_tensor(label_weights), dtype), 0),
            array_ops.shape(y_pred))
        weights = flat(lw) if weights is None else weights * flat(lw)
    pred_neg, label_neg = math_ops.logical_not(pred_pos), math_ops.logical_not(labels)
    pairs = {"tp": (labels, pred_pos), "fp": (label_neg, pred_pos), "tn": (label_neg, pred_neg),
             "fn": (labels, pred_neg)}
    for key, variable in variables.items():
        hit = math_ops.cast(math_ops.logical_and(*pairs[key]), dtype)
        if weights is not None:
            hit = hit * weights
        variable.assign_add(math_ops.reduce_sum(hit, axis=1))


class _ConfusionCounts(Metric):
    """A metric over some confusion counts (`_counts`: keys of "tp", "fp", "tn", "fn") at
    `thresholds`; `_one_or_all` gives a scalar for one threshold, else one value each."""

    _counts = ()
    _direction = "up"

    def __init__(self, thresholds=None, name=None, dtype=None, top_k=None, class_id=None):
        super().__init__(name, dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = _parse_thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        for key in self._counts:
            setattr(self, _VARIABLE_NAMES[key], self.add_variable(
                (len(self.thresholds),), name=_VARIABLE_NAMES[key]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's weighted counts."""
        update_confusion_matrix_variables(
            {key: getattr(self, _VARIABLE_NAMES[key]) for key in self._counts}, y_true, y_pred,
            self.thresholds, top_k=self.top_k, class_id=self.class_id,
            sample_weight=sample_weight)

    def _count(self, key):
        return getattr(self, _VARIABLE_NAMES[key]).read_value()

    def _one_or_all(self, values):
        return values[0] if len(self.thresholds) == 1 else values

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


def _count_metric(cls_name, key, doc):
    """A metric that sums one confusion count, as Keras's TruePositives & co."""

    def __init__(self, thresholds=None, name=None, dtype=None):
        _ConfusionCounts.__init__(self, thresholds, name, dtype)
        self.accumulator = getattr(self, _VARIABLE_NAMES[key])

    def result(self):
        return self._one_or_all(self._count(key))

    def get_config(self):
        return {**Metric.get_config(self), "thresholds": self.init_thresholds}

    return type(cls_name, (_ConfusionCounts,), {"__init__": __init__, "result": result,
                                                "get_config": get_config, "_counts": (key,),
                                                "__doc__": doc})


TruePositives = _count_metric("TruePositives", "tp",
                              "The weighted count of positives predicted positive.")
FalsePositives = _count_metric("FalsePositives", "fp",
                               "The weighted count of negatives predicted positive.")
TrueNegatives = _count_metric("TrueNegatives", "tn",
                              "The weighted count of negatives predicted negative.")
FalseNegatives = _count_metric("FalseNegatives", "fn",
                               "The weighted count of positives predicted negative.")


class _Ratio(_ConfusionCounts):
    """tp / (tp + the other count): `_counts` = ("tp", other)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name, dtype, top_k, class_id)

    def result(self):
        tp = self._count("tp")
        return self._one_or_all(_divide_no_nan(tp, tp + self._count(self._counts[1])))


class Precision(_Ratio):
    """true positives / predicted positives (score > threshold, default 0.5).

    Args:
        thresholds: a float or a list of floats in [0, 1] (one result per threshold).
        top_k: only the k highest scores of a sample count as predicted positive
            (the default threshold then is -inf).
        class_id: count only this column of multi-class predictions.
    """

    _counts = ("tp", "fp")


class Recall(_Ratio):
    """true positives / actual positives (score > threshold, default 0.5). Args: as Precision."""

    _counts = ("tp", "fn")


class _AtFixedValue(_ConfusionCounts):
    """The best of one rate where another (the constraint) reaches `value`, over
    `num_thresholds` thresholds evenly spread on [0, 1]."""

    _counts = ("tp", "fp", "tn", "fn")
    _value_name = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._value_name}` must be in the range [0, 1]. "
                             f"Received: {self._value_name}={value}")
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        thresholds = [0.5] if num_thresholds == 1 else \
            [0.0] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1.0]
        super().__init__(thresholds, name, dtype, class_id=class_id)
        self.value, self.num_thresholds = value, num_thresholds
        setattr(self, self._value_name, value)

    def _rates(self):
        tp, fp, tn, fn = (self._count(k) for k in ("tp", "fp", "tn", "fn"))
        return {"sensitivity": _divide_no_nan(tp, tp + fn), "recall": _divide_no_nan(tp, tp + fn),
                "specificity": _divide_no_nan(tn, tn + fp),
                "precision": _divide_no_nan(tp, tp + fp)}

    def result(self):
        rates = self._rates()
        feasible = rates[self._value_name] >= self.value
        best = math_ops.where(feasible, rates[self._result_name],
                              array_ops.zeros_like(rates[self._result_name]))
        return math_ops.maximum(math_ops.reduce_max(best), 0.0)

    def get_config(self):
        return {**Metric.get_config(self), "class_id": self.class_id,
                "num_thresholds": self.num_thresholds, self._value_name: self.value}


def _at_fixed_value(cls_name, value_name, result_name, doc):
    def __init__(self, *args, **kwargs):
        if args:
            kwargs[value_name] = args[0]
            args = args[1:]
        _AtFixedValue.__init__(self, kwargs.pop(value_name), *args, **kwargs)
    return type(cls_name, (_AtFixedValue,), {"__init__": __init__, "_value_name": value_name,
                                             "_result_name": result_name, "__doc__": doc})


# class name: (the constrained rate, the rate maximized, doc)
_FIXED_VALUE = {
    "SensitivityAtSpecificity": (
        "specificity", "sensitivity",
        "The best sensitivity (recall) at thresholds where the specificity is >= `specificity`."),
    "SpecificityAtSensitivity": (
        "sensitivity", "specificity",
        "The best specificity at thresholds where the sensitivity is >= `sensitivity`."),
    "PrecisionAtRecall": ("recall", "precision",
                          "The best precision at thresholds where the recall is >= `recall`."),
    "RecallAtPrecision": ("precision", "recall",
                          "The best recall at thresholds where the precision is >= `precision`."),
}
SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision = (
    _at_fixed_value(cls_name, *spec) for cls_name, spec in _FIXED_VALUE.items())


_CURVES = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}
_SUMMATIONS = ("interpolation", "majoring", "minoring")


class AUC(Metric):
    """The area under the ROC (or precision-recall) curve, from confusion counts at
    `num_thresholds` thresholds.

    Args:
        num_thresholds: how many thresholds (evenly spread on [0, 1], plus -eps and 1+eps).
        curve: "ROC" (default), "PR" or "PRGAIN".
        summation_method: "interpolation" (trapezoids; for PR, Davis & Goadrich's
            interpolation), "minoring" or "majoring" (lower/upper Riemann sums).
        thresholds: explicit thresholds instead of `num_thresholds`.
        multi_label: one curve per label (last axis), averaged (weighted by `label_weights`).
        num_labels: the number of labels, to create the state before the first batch.
        label_weights: per-label weights.
        from_logits: the scores are logits (a sigmoid is applied first).

    Example:
        >>> m = tl.metrics.AUC(curve="PR")
        >>> m.update_state([0, 0, 1, 1], [0.1, 0.6, 0.35, 0.8])
        >>> 0.0 < float(m.result()) < 1.0
        True
    """

    _direction = "up"

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        curve_key = str(curve).lower() if isinstance(curve, str) else curve
        if curve_key not in _CURVES:
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             '["PR", "ROC", "PRGAIN"]')
        if summation_method not in _SUMMATIONS and summation_method not in \
                tuple(s.capitalize() for s in _SUMMATIONS):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             'Expected values are ["interpolation", "majoring", "minoring"]')
        super().__init__(name, dtype)
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            self.num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self._thresholds = [0.0 - EPSILON] + inner + [1.0 + EPSILON]
        self.curve, self.summation_method = _CURVES[curve_key], summation_method.lower()
        self.multi_label, self.num_labels = multi_label, num_labels
        self.label_weights = None if label_weights is None else \
            [float(w) for w in np.asarray(label_weights, np.float32).reshape(-1)]
        self.from_logits = from_logits
        self._built = False
        if not multi_label and num_labels:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        if not multi_label or num_labels:
            self._build(num_labels)

    @property
    def thresholds(self):
        """The thresholds, the two end points (-eps, 1 + eps) included."""
        return list(self._thresholds)

    def _build(self, num_labels):
        shape = (self.num_thresholds, num_labels) if self.multi_label else (self.num_thresholds,)
        self._num_labels = num_labels
        for name in _VARIABLE_NAMES.values():
            setattr(self, name, self.add_variable(shape, name=name))
        self._built = True

    def build_state(self, y_true_shape, y_pred_shape):
        if self._built:   # multi_label without num_labels: the labels come with the data
            return
        if y_pred_shape.rank != 2 or y_pred_shape[-1] is None:
            raise ValueError("`y_pred` must have rank 2 when `multi_label=True`. Found shape "
                             f"{y_pred_shape}")
        self._build(int(y_pred_shape[-1]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's weighted counts at every threshold."""
        y_pred = op_lib.convert_to_tensor(y_pred)
        self.build_state(None, y_pred.shape)
        if self.from_logits:
            y_pred = math_ops.sigmoid(y_pred)
        update_confusion_matrix_variables(
            {k: getattr(self, v) for k, v in _VARIABLE_NAMES.items()}, y_true, y_pred,
            self._thresholds, sample_weight=sample_weight, multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights)

    def _interpolate_pr_auc(self, tp, fp, fn):
        # Davis & Goadrich 2006: precision interpolated along the positives between thresholds
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _divide_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = math_ops.logical_and(p[:-1] > 0, p[1:] > 0)
        ratio = math_ops.where(both, _divide_no_nan(p[:-1], math_ops.maximum(p[1:], 0.0)),
                               array_ops.ones_like(p[1:]))
        return _divide_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                              math_ops.maximum(tp[1:] + fn[1:], 0.0))

    def result(self):
        if not self._built:
            return array_ops.constant(0.0)
        tp, fp, tn, fn = (getattr(self, v).read_value() for v in _VARIABLE_NAMES.values())
        if self.curve == "PR" and self.summation_method == "interpolation":
            terms = self._interpolate_pr_auc(tp, fp, fn)
        else:
            recall = _divide_no_nan(tp, tp + fn)
            if self.curve == "ROC":
                x, y = _divide_no_nan(fp, fp + tn), recall
            elif self.curve == "PR":
                x, y = recall, _divide_no_nan(tp, tp + fp)
            else:   # PRGAIN
                scale = _divide_no_nan(tp + fn, tn + fp)
                no_tp = math_ops.equal(tp, 0.0)
                x = math_ops.maximum(math_ops.where(
                    no_tp, array_ops.zeros_like(tp), 1.0 - scale * _divide_no_nan(fn, tp)), 0.0)
                y = math_ops.where(no_tp, array_ops.ones_like(tp),
                                   1.0 - scale * _divide_no_nan(fp, tp))
            if self.summation_method == "interpolation":
                heights = (y[:-1] + y[1:]) / 2.0
            elif self.summation_method == "minoring":
                heights = math_ops.minimum(y[:-1], y[1:])
            else:
                heights = math_ops.maximum(y[:-1], y[1:])
            terms = (x[:-1] - x[1:]) * heights
        if not self.multi_label:
            return math_ops.reduce_sum(terms)
        by_label = math_ops.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return math_ops.reduce_mean(by_label)
        weights = array_ops.constant(self.label_weights, dtype=by_label.dtype)
        return _divide_no_nan(math_ops.reduce_sum(by_label * weights), math_ops.reduce_sum(weights))

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds,
                  "curve": self.curve, "summation_method": self.summation_method,
                  "multi_label": self.multi_label, "num_labels": self.num_labels,
                  "label_weights": self.label_weights, "from_logits": self.from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config
