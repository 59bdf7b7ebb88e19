"""`tl.metrics`: goodness-of-fit metrics of regression: R2Score, PearsonCorrelation,
ConcordanceCorrelation (and their per-sample functions), as Keras 3.

Owns: the R^2 state (weighted sums per output column: of targets, of squared targets, of
squared residuals, and the weights), and the correlation functions over an axis.
Invariant: R2Score's column state is created from the data's shape (`build_state`), eagerly.
"""
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import math as math_ops
from ..losses.core import squeeze_or_expand_to_same_rank
from .core import Metric, MeanMetricWrapper

__all__ = ["R2Score", "PearsonCorrelation", "ConcordanceCorrelation", "pearson_correlation",
           "concordance_correlation"]

EPSILON = 1e-7


def _float_pair(y_true, y_pred):
    y_pred = op_lib.convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, "float32")
    y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def pearson_correlation(y_true, y_pred, axis=-1):
    """The Pearson correlation coefficient of `y_true` and `y_pred` along `axis`.

    Example:
        >>> round(float(tl.metrics.pearson_correlation([1., 2., 3.], [2., 4., 7.])), 4)
        0.9934
    """
    y_true, y_pred = _float_pair(y_true, y_pred)
    t = y_true - math_ops.reduce_mean(y_true, axis=axis, keepdims=True)
    p = y_pred - math_ops.reduce_mean(y_pred, axis=axis, keepdims=True)
    t = t / math_ops.reduce_std(t, axis=axis, keepdims=True)
    p = p / math_ops.reduce_std(p, axis=axis, keepdims=True)
    return math_ops.reduce_mean(t * p, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient along `axis`: 2 cov / (var_t + var_p +
    (mean_t - mean_p)^2), with Keras's covariance term (y_true - mean_p)(y_pred - mean_p)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    mean_t = math_ops.reduce_mean(y_true, axis=axis, keepdims=True)
    mean_p = math_ops.reduce_mean(y_pred, axis=axis, keepdims=True)
    var_t = math_ops.reduce_variance(y_true - mean_t, axis=axis, keepdims=True)
    var_p = math_ops.reduce_variance(y_pred - mean_p, axis=axis, keepdims=True)
    covar = (y_true - mean_p) * (y_pred - mean_p)
    norm = var_t + var_p + math_ops.square(mean_t - mean_p)
    return math_ops.reduce_mean(2.0 * covar / (norm + EPSILON), axis=axis)


class _Correlation(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name=None, dtype=None, axis=-1):
        super().__init__(self._wraps, name=name or self._wraps.__name__, dtype=dtype, axis=axis)
        self.axis = axis


class PearsonCorrelation(_Correlation):
    """The running mean of `pearson_correlation` along `axis` (per sample)."""

    _wraps = staticmethod(pearson_correlation)


class ConcordanceCorrelation(_Correlation):
    """The running mean of `concordance_correlation` along `axis` (per sample)."""

    _wraps = staticmethod(concordance_correlation)


class R2Score(Metric):
    """The coefficient of determination, 1 - residual sum of squares / total sum of squares,
    per output column.

    Args:
        class_aggregation: "uniform_average" (mean over columns), "variance_weighted_average"
            (weighted by each column's variance) or None (one score per column).
        num_regressors: > 0 gives the adjusted R^2 for that many regressors.

    Inputs are 2D: (batch, outputs).
    """

    _direction = "up"

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score",
                 dtype=None):
        super().__init__(name, dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"{valid}. Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value >= "
                             f"0. Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def build_state(self, y_true_shape, y_pred_shape):
        if self._built:
            return
        if y_pred_shape.rank != 2 or y_true_shape.rank != 2 or y_pred_shape[-1] is None:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim), "
                             "output_dim fully defined. Received input shapes: "
                             f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")
        n = int(y_pred_shape[-1])
        self.squared_sum = self.add_variable((n,), name="squared_sum")
        self.sum = self.add_variable((n,), name="sum")
        self.total_mse = self.add_variable((n,), name="residual")
        self.count = self.add_variable((n,), name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's weighted sums per column."""
        y_true = math_ops.cast(op_lib.convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(op_lib.convert_to_tensor(y_pred), self.dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        self.build_state(y_true.shape, y_pred.shape)
        w = array_ops.constant(1.0, dtype=self.dtype) if sample_weight is None else \
            math_ops.cast(op_lib.convert_to_tensor(sample_weight), self.dtype)
        if w.shape.rank == 1:
            w = array_ops.expand_dims(w, 1)
        w = array_ops.broadcast_to(w, array_ops.shape(y_true))
        weighted = y_true * w
        self.sum.assign_add(math_ops.reduce_sum(weighted, axis=0))
        self.squared_sum.assign_add(math_ops.reduce_sum(y_true * weighted, axis=0))
        self.total_mse.assign_add(math_ops.reduce_sum(math_ops.square(y_true - y_pred) * w, axis=0))
        self.count.assign_add(math_ops.reduce_sum(w, axis=0))
        # Keras counts every value here, not every row
        self.num_samples.assign_add(math_ops.cast(array_ops.size(y_true), self.dtype))

    def result(self):
        if not self._built:
            return array_ops.constant(0.0)
        total_sum, count = self.sum.read_value(), self.count.read_value()
        total = self.squared_sum.read_value() - total_sum * (total_sum / count)
        raw = 1.0 - self.total_mse.read_value() / total
        raw = math_ops.where(math_ops.is_inf(raw), array_ops.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            score = math_ops.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = math_ops.reduce_sum(total * raw) / math_ops.reduce_sum(total)
        else:
            score = raw
        if self.num_regressors:
            # with too few values for the regressors, the plain score (Keras warns eagerly)
            n, p = self.num_samples.read_value(), float(self.num_regressors)
            adjusted = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
            score = math_ops.where(p < n - 1.0, adjusted, score)
        return score

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
