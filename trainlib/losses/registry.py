"""`tl.losses` names: the tables of loss classes and per-sample functions, and `get` /
`serialize` / `deserialize` over them (what `Model.compile(loss=...)` and the savers resolve).

Owns: `_CLASSES` (class name -> class), `_FUNCTIONS` (Keras's function names and aliases ->
function). Invariant: every loss family registers here and nowhere else.
"""
from ..object_registry import Family
from . import classification, core, embedding, segmentation, sequence

__all__ = ["get", "serialize", "deserialize"]

_CLASSES = {c.__name__: c for c in (
    core.MeanSquaredError, core.MeanAbsoluteError, core.MeanAbsolutePercentageError, core.Huber,
    core.BinaryCrossentropy, core.CategoricalCrossentropy, core.SparseCategoricalCrossentropy,
    core.MeanSquaredLogarithmicError, core.KLDivergence, core.Hinge, core.SquaredHinge,
    core.CategoricalHinge, core.LogCosh, core.Poisson, core.CosineSimilarity,
    classification.BinaryFocalCrossentropy, classification.CategoricalFocalCrossentropy,
    classification.CategoricalGeneralizedCrossEntropy, segmentation.Dice, segmentation.Tversky,
    embedding.Circle, sequence.CTC)}
_FUNCTIONS = {
    **{fn.__name__: fn for fn in (
        core.mean_squared_error, core.mean_absolute_error, core.mean_absolute_percentage_error,
        core.huber, core.binary_crossentropy, core.categorical_crossentropy,
        core.sparse_categorical_crossentropy, core.mean_squared_logarithmic_error,
        core.kl_divergence, core.hinge, core.squared_hinge, core.categorical_hinge,
        core.log_cosh, core.poisson, core.cosine_similarity,
        classification.binary_focal_crossentropy, classification.categorical_focal_crossentropy,
        classification.categorical_generalized_cross_entropy, segmentation.dice,
        segmentation.tversky, embedding.circle, sequence.ctc)},
    "mse": core.mean_squared_error, "mae": core.mean_absolute_error,
    "mape": core.mean_absolute_percentage_error, "huber_loss": core.huber,
    "msle": core.mean_squared_logarithmic_error, "kld": core.kl_divergence,
    "kullback_leibler_divergence": core.kl_divergence, "logcosh": core.log_cosh}

_FAMILY = Family("loss", "keras.losses", core.Loss, {**_FUNCTIONS, **_CLASSES})


def get(identifier):
    """A loss callable from a name ("mse", "sparse_categorical_crossentropy", ...), a class, a
    `serialize` dict, or a callable.

    Raises:
        ValueError: for an unknown name.
    """
    if identifier is None or isinstance(identifier, core.Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        if identifier not in _FUNCTIONS:
            raise ValueError(f"Unknown loss {identifier!r}; expected one of {sorted(_FUNCTIONS)}")
        return _FUNCTIONS[identifier]
    if isinstance(identifier, dict) or isinstance(identifier, type) and \
            issubclass(identifier, core.Loss) or callable(identifier):
        return _FAMILY.get(identifier)
    raise TypeError(f"Could not interpret loss {identifier!r}")


# Keras 3's form: {"module", "class_name", "config", "registered_name"}; a function's name
serialize, deserialize = _FAMILY.serialize, _FAMILY.deserialize
