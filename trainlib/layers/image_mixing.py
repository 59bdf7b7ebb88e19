"""The mixing augmentations, as Keras 3's: MixUp (each image blended with another of the
batch) and CutMix (a rectangle pasted from another image of the batch), labels mixed in the
same proportions when given as `{"images": ..., "labels": ...}`.

Owns: their draws (a shuffled partner order and Beta-distributed weights: two seeded
Gamma draws, g1 / (g1 + g2)) and formulas, on BaseImageAugmentation's protocol.
"""
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, random as _random

from .base import register
from .image_augmentation import BaseImageAugmentation

__all__ = ["MixUp", "CutMix"]


def _beta(layer, shape, alpha):
    """Beta(alpha, alpha) draws of `shape` (a 1-D int tensor), seeded by the layer's seed
    (fresh each run)."""
    draws = _random.gamma_draws(shape, _array.stack([alpha, alpha]), seed=layer.seed)
    return draws[:, 0] / (draws[:, 0] + draws[:, 1])


def _mix_labels(labels, transformation, weight):
    partner = _array.gather(labels, _math.cast(transformation["permutation_order"], _dt.int32))
    weight = _math.cast(_array.reshape(weight, [-1, 1]), labels.dtype)
    return weight * labels + (1.0 - weight) * partner


@register
class MixUp(BaseImageAugmentation):
    """Blends each image (and label) with a partner of the batch: `w x + (1 - w) x[perm]`,
    w ~ Beta(alpha, alpha), while training.

    Example:
        >>> out = tl.keras.layers.MixUp(seed=1)({"images": tl.ones((4, 8, 8, 3)),
        ...                                      "labels": tl.one_hot([0, 1, 2, 0], 3)})
        >>> out["images"].shape, out["labels"].shape
        (TensorShape([4, 8, 8, 3]), TensorShape([4, 3]))
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.alpha = alpha

    def _draw(self, x, batch):
        order = _random.shuffle(_array.range(batch, dtype=_dt.int64), seed=self.seed)
        return {"mix_weight": _beta(self, _array.stack([batch]),
                                    _array.constant(float(self.alpha))),
                "permutation_order": order}

    def _apply(self, x, transformation):
        weight = _math.cast(_array.reshape(transformation["mix_weight"], [-1, 1, 1, 1]), x.dtype)
        partner = _array.gather(x, _math.cast(transformation["permutation_order"], _dt.int32))
        return weight * x + (1.0 - weight) * partner

    def transform_labels(self, labels, transformation, training=True):
        if not training or transformation is None:
            return labels
        return _mix_labels(labels, transformation, transformation["mix_weight"])

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


@register
class CutMix(BaseImageAugmentation):
    """Pastes into each image a rectangle of a partner image of the batch (its area a
    Beta-drawn share, alpha drawn in `factor`); labels are mixed by the area kept, while
    training. A single image passes unchanged.

    Example:
        >>> tl.keras.layers.CutMix(seed=1)(tl.ones((4, 8, 8, 3))).shape
        TensorShape([4, 8, 8, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._set_factor(factor)

    def get_random_transformation(self, data, training=True, seed=None):
        images = data["images"] if isinstance(data, dict) else data
        if images.shape.rank == 3:
            return None
        return super().get_random_transformation(data, training, seed)

    def _draw(self, x, batch):
        h, w = x.shape[1], x.shape[2]
        alpha = self._uniform([], self.factor[0], self.factor[1]) + 1e-6
        ratio = _math.sqrt(1.0 - _beta(self, _array.stack([batch]), alpha))
        masks, (x0, x1, y0, y1) = self._box_masks(x, batch, ratio, ratio)
        order = _random.shuffle(_array.range(batch, dtype=_dt.int32), seed=self.seed)
        weight = 1.0 - _array.reshape((x1 - x0) * (y1 - y0), [-1, 1, 1, 1]) / float(w * h)
        return {"permutation_order": order, "batch_masks": self._from_nhwc(masks),
                "mix_weight": weight}

    def _apply(self, x, transformation):
        partner = _array.gather(x, _math.cast(transformation["permutation_order"], _dt.int32))
        return _math.where(self._nhwc(transformation["batch_masks"]), partner, x)

    def transform_labels(self, labels, transformation, training=True):
        if not training or transformation is None:
            return labels
        return _mix_labels(labels, transformation, transformation["mix_weight"])

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
