"""`tl.metrics`: intersection-over-union metrics of segmentation and classification, as Keras 3.

Owns: the confusion matrix state [num_classes, num_classes] (integer counts by default, as
Keras: float sample weights are truncated to ints), and IoU, MeanIoU, BinaryIoU, OneHotIoU,
OneHotMeanIoU over it. Invariant: labels outside [0, num_classes) and `ignore_class` do not
count; a class absent from both labels and predictions is left out of the mean.
"""
from ..graph import dtypes
from ..graph import op as op_lib
from ..graph.ops import array as array_ops
from ..graph.ops import linalg as linalg_ops
from ..graph.ops import math as math_ops
from .core import Metric

__all__ = ["IoU", "MeanIoU", "BinaryIoU", "OneHotIoU", "OneHotMeanIoU"]

EPSILON = 1e-7


class IoU(Metric):
    """The mean, over `target_class_ids`, of TP / (TP + FP + FN) per class.

    Args:
        num_classes: the number of classes (the confusion matrix is that square).
        target_class_ids: the classes whose IoU is averaged.
        ignore_class: a label that does not count (e.g. a "void" class).
        sparse_y_true, sparse_y_pred: False for one-hot/scores (argmax along `axis` first).
        axis: the class axis of non-sparse inputs.

    Example:
        >>> m = tl.metrics.IoU(num_classes=2, target_class_ids=[0])
        >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
        >>> round(float(m.result()), 4)   # class 0: 1 / (1 + 1 + 1)
        0.3333
    """

    _direction = "up"

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name, "int64" if dtype in (None, "int") else dtype)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[0, {num_classes}).")
        self.num_classes, self.target_class_ids = num_classes, list(target_class_ids)
        self.ignore_class, self.axis = ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.total_cm = self.add_variable((num_classes, num_classes),
                                          name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's (weighted) confusion matrix: rows true classes, columns predicted."""
        y_true, y_pred = op_lib.convert_to_tensor(y_true), op_lib.convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = math_ops.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = math_ops.argmax(y_pred, axis=self.axis)
        y_true = array_ops.reshape(math_ops.cast(y_true, dtypes.int32), [-1])
        y_pred = array_ops.reshape(math_ops.cast(y_pred, dtypes.int32), [-1])
        n = self.num_classes
        keep = math_ops.logical_and(
            math_ops.logical_and(y_true >= 0, y_true < n),
            math_ops.logical_and(y_pred >= 0, y_pred < n))
        if self.ignore_class is not None:
            keep = math_ops.logical_and(keep, math_ops.not_equal(y_true, self.ignore_class))
        weights = array_ops.ones_like(y_true, dtype=dtypes.float32) if sample_weight is None else \
            array_ops.broadcast_to(array_ops.reshape(math_ops.cast(math_ops.cast(
                op_lib.convert_to_tensor(sample_weight), self.dtype), dtypes.float32), [-1]),
                array_ops.shape(y_true))
        weights = weights * math_ops.cast(keep, dtypes.float32)
        cells = math_ops.where(keep, y_true * n + y_pred, array_ops.zeros_like(y_true))
        cm = math_ops.unsorted_segment_sum(weights, cells, n * n)
        self.total_cm.assign_add(math_ops.cast(array_ops.reshape(cm, [n, n]), self.dtype))

    def result(self):
        cm = math_ops.cast(self.total_cm.read_value(), dtypes.float32)
        true_positives = linalg_ops.diag_part(cm)
        denominator = math_ops.reduce_sum(cm, axis=0) + math_ops.reduce_sum(cm, axis=1) - \
            true_positives
        ids = array_ops.constant(self.target_class_ids, dtype=dtypes.int32)
        true_positives = array_ops.gather(true_positives, ids)
        denominator = array_ops.gather(denominator, ids)
        valid = denominator > 1e-9
        iou = math_ops.where(valid, true_positives / (denominator + EPSILON),
                             array_ops.zeros_like(denominator))
        return math_ops.reduce_sum(iou) / (math_ops.reduce_sum(math_ops.cast(valid, dtypes.float32))
                                          + EPSILON)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}

    def _config(self, *keys):
        """The config Keras writes for this subclass: name, dtype and `keys`."""
        full = IoU.get_config(self)
        return {k: full[k] for k in ("name", "dtype", *keys)}


class BinaryIoU(IoU):
    """IoU of binary labels against scores thresholded at `threshold` (>= is positive)."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Thresholds the scores, then adds the confusion matrix."""
        y_pred = math_ops.cast(op_lib.convert_to_tensor(y_pred), dtypes.float32) >= self.threshold
        super().update_state(y_true, math_ops.cast(y_pred, dtypes.int32), sample_weight)

    def get_config(self):
        return {**self._config("target_class_ids"), "threshold": self.threshold}


class MeanIoU(IoU):
    """IoU averaged over all `num_classes` classes. Args: as IoU, without target_class_ids."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return self._config("num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis")


class OneHotIoU(IoU):
    """IoU of one-hot labels and class scores (argmax along `axis`)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return self._config("num_classes", "target_class_ids", "ignore_class", "sparse_y_pred",
                            "axis")


class OneHotMeanIoU(MeanIoU):
    """MeanIoU of one-hot labels and class scores (argmax along `axis`)."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return self._config("num_classes", "ignore_class", "sparse_y_pred", "axis")
