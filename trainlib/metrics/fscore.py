"""`tl.metrics`: the F-scores (F1Score, FBetaScore) of multi-class and multi-label predictions.

Owns: the per-class (or, for average="micro", summed) weighted counts of true positives,
false positives, false negatives and positives, and the F-beta score over them, as Keras 3.
Invariant: the state is created from the shapes of the data (`build_state`), eagerly.
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from .core import Metric

__all__ = ["FBetaScore", "F1Score"]

EPSILON = 1e-7


class FBetaScore(Metric):
    """(1 + beta^2) precision recall / (beta^2 precision + recall), per class or averaged.

    Args:
        average: None (one score per class), "micro" (counts summed over classes), "macro"
            (mean of the class scores) or "weighted" (weighted by each class's positives).
        beta: the weight of recall (a float > 0).
        threshold: predictions above it are positive; None: the highest of each row is.

    Inputs are 2D: (batch, classes), labels one-hot or multi-hot.
    """

    _direction = "up"

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name, dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', "
                             f"'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float) or beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float > 0. "
                             f"Received: beta={beta!r}")
        if threshold is not None and (not isinstance(threshold, float) or
                                      not 0.0 < threshold <= 1.0):
            raise ValueError("Invalid `threshold` argument value. It should be a Python float "
                             f"with 0 < threshold <= 1. Received: threshold={threshold!r}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def build_state(self, y_true_shape, y_pred_shape):
        if self._built:
            return
        if y_pred_shape.rank != 2 or y_true_shape.rank != 2:
            raise ValueError(f"{type(self).__name__} expects 2D inputs with shape (batch_size, "
                             f"output_dim). Received input shapes: y_pred.shape={y_pred_shape} "
                             f"and y_true.shape={y_true_shape}.")
        if y_pred_shape[-1] is None or y_true_shape[-1] is None:
            raise ValueError(f"{type(self).__name__} expects the output_dim of (batch_size, "
                             f"output_dim) fully defined. Received input shapes: "
                             f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")
        shape = () if self.average == "micro" else (int(y_pred_shape[-1]),)
        for name in ("true_positives", "false_positives", "false_negatives",
                     "intermediate_weights"):
            setattr(self, name, self.add_variable(shape, name=name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's weighted counts."""
        y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(op_lib.convert_to_tensor(y_pred), self.dtype)
        self.build_state(y_true.shape, y_pred.shape)
        if self.threshold is None:
            top = math_ops.reduce_max(y_pred, axis=-1, keepdims=True)
            positive = math_ops.logical_and(y_pred >= top, math_ops.abs(y_pred) > 1e-9)
        else:
            positive = y_pred > self.threshold
        y_pred = math_ops.cast(positive, self.dtype)
        weight = None if sample_weight is None else array_ops.expand_dims(
            math_ops.cast(op_lib.convert_to_tensor(sample_weight), self.dtype), 1)

        def weighted_sum(values):
            return math_ops.reduce_sum(values if weight is None else values * weight,
                                       axis=self.axis)

        self.true_positives.assign_add(weighted_sum(y_pred * y_true))
        self.false_positives.assign_add(weighted_sum(y_pred * (1.0 - y_true)))
        self.false_negatives.assign_add(weighted_sum((1.0 - y_pred) * y_true))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    def result(self):
        if not self._built:
            return array_ops.constant(0.0)
        tp = self.true_positives.read_value()
        precision = tp / (tp + self.false_positives.read_value() + EPSILON)
        recall = tp / (tp + self.false_negatives.read_value() + EPSILON)
        b2 = self.beta ** 2
        score = (1.0 + b2) * precision * recall / (b2 * precision + recall + EPSILON)
        if self.average == "weighted":
            w = self.intermediate_weights.read_value()
            return math_ops.reduce_sum(score * w / (math_ops.reduce_sum(w) + EPSILON))
        if self.average is not None:
            return math_ops.reduce_mean(score)
        return score

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F-score with beta = 1: the harmonic mean of precision and recall. Args: as
    FBetaScore, without beta.

    Example:
        >>> m = tl.metrics.F1Score(average="macro", threshold=0.5)
        >>> m.update_state([[1., 0.], [0., 1.]], [[0.9, 0.2], [0.6, 0.3]])
        >>> round(float(m.result()), 4)
        0.3333
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
