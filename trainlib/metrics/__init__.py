"""`tl.metrics` (Keras 3's `keras.metrics`): gathers the metric families.

`core` (`Metric`, Mean/Sum, accuracies and the running means of losses), `confusion`
(Precision, Recall, AUC, TruePositives, ...), `fscore` (F1Score, FBetaScore), `iou` (IoU,
MeanIoU, ...), `regression` (R2Score, correlations), and `registry` (names, `get`,
`serialize`). Keras also lists the focal cross-entropies here.
"""
from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all
from .confusion import *  # noqa: F401,F403
from .confusion import __all__ as _confusion_all
from .fscore import *  # noqa: F401,F403
from .fscore import __all__ as _fscore_all
from .iou import *  # noqa: F401,F403
from .iou import __all__ as _iou_all
from .regression import *  # noqa: F401,F403
from .regression import __all__ as _regression_all
from .registry import *  # noqa: F401,F403
from .registry import __all__ as _registry_all
from .registry import _CLASSES, _BY_NAME  # noqa: F401
from ..losses.classification import binary_focal_crossentropy, categorical_focal_crossentropy  # noqa: F401

__all__ = [*_core_all, *[n for n in _confusion_all if n != "update_confusion_matrix_variables"],
           *_fscore_all, *_iou_all, *_regression_all, *_registry_all,
           "binary_focal_crossentropy", "categorical_focal_crossentropy"]
