"""`tl.metrics` names: the table of metric classes, `get` (what `Model.compile(metrics=...)`
resolves, with Keras 3's choice of accuracy from the shapes), `serialize` and `deserialize`.

Owns: `_CLASSES` (class name -> class) and `_BY_NAME` (Keras's snake-case names and aliases ->
class). The aliases of the running means of losses ("mse", "kld", ...) come from the losses'
own table, so a name means the same function as a loss and as a metric.
Invariant: every metric family registers here and nowhere else.
"""
from ..losses import registry as _loss_registry
from ..naming import to_snake_case
from ..object_registry import Family
from . import confusion, core, fscore, iou, regression

__all__ = ["get", "serialize", "deserialize"]

_CLASSES = {c.__name__: c for c in (
    core.Mean, core.Sum, core.Accuracy, core.BinaryAccuracy, core.CategoricalAccuracy,
    core.SparseCategoricalAccuracy, core.TopKCategoricalAccuracy,
    core.SparseTopKCategoricalAccuracy, core.MeanSquaredError, core.MeanAbsoluteError,
    core.RootMeanSquaredError, core.MeanAbsolutePercentageError,
    core.MeanSquaredLogarithmicError, core.KLDivergence, core.Hinge, core.SquaredHinge,
    core.CategoricalHinge, core.LogCoshError, core.Poisson, core.CosineSimilarity,
    core.BinaryCrossentropy, core.CategoricalCrossentropy, core.SparseCategoricalCrossentropy,
    *(getattr(confusion, n) for n in confusion.__all__ if n[0].isupper()),
    fscore.FBetaScore, fscore.F1Score, iou.IoU, iou.MeanIoU, iou.BinaryIoU, iou.OneHotIoU,
    iou.OneHotMeanIoU, regression.R2Score, regression.PearsonCorrelation,
    regression.ConcordanceCorrelation)}
# the running mean of a loss function answers to every name the loss has
_OF_LOSS = {cls._wraps: cls for cls in _CLASSES.values() if callable(getattr(cls, "_wraps", None))}
_BY_NAME = {**{to_snake_case(name): cls for name, cls in _CLASSES.items()},
            **{alias: _OF_LOSS[fn] for alias, fn in _loss_registry._FUNCTIONS.items()
               if fn in _OF_LOSS},
            "rmse": core.RootMeanSquaredError, "auc": confusion.AUC,
            "logcosh": core.LogCoshError, "cosine_similarity": core.CosineSimilarity}

_FAMILY = Family("metric", "keras.metrics", core.Metric, {**_BY_NAME, **_CLASSES})


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
    if isinstance(identifier, core.Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, core.Metric):
        return identifier()
    if isinstance(identifier, dict):
        return deserialize(identifier)
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
        return core.MeanMetricWrapper(
            identifier, name=to_snake_case(getattr(identifier, "__name__", "metric")))
    raise TypeError(f"Could not interpret metric {identifier!r}")


def _choose_accuracy(y_true, y_pred):
    # keras/src/trainers/compile_utils.py: is_binary_or_sparse_categorical
    if y_pred is None or y_true is None or y_pred.shape.rank is None or \
            y_true.shape.rank is None:
        return core.Accuracy
    if y_pred.shape[-1] == 1:
        return core.BinaryAccuracy
    if y_true.shape.rank < y_pred.shape.rank or (y_true.shape[-1] == 1 and y_pred.shape[-1] > 1):
        return core.SparseCategoricalAccuracy
    return core.CategoricalAccuracy


# Keras 3's form: {"module", "class_name", "config", "registered_name"}; a function's name
serialize, deserialize = _FAMILY.serialize, _FAMILY.deserialize
