"""Colour augmentation layers, as Keras 3's: RandomGrayscale, RandomHue, RandomSaturation,
RandomColorDegeneration, RandomInvert, RandomPosterization, RandomSharpness, Solarization,
AutoContrast, Equalization and RandomColorJitter (the brightness, contrast, saturation and hue
layers in a row).

Owns: each layer's draws (`get_random_transformation`, Keras's dict keys) and formula
(`transform_images`), on BaseImageAugmentation's protocol (image_augmentation.py): drawn
only while training, seeded, public ops only (models, tl.function, Dataset.map). Keras's
own conventions are kept where they surprise: RandomSaturation converts to HSV without
rescaling `value_range` and clips the saturation to `value_range`; AutoContrast always
applies (training or not) and takes its extremes over axes 1 and 2; Equalization's
histogram of a channel is over the whole batch.
"""
import numpy as np

from ..graph import dtypes as _dt
from ..graph.ops import array as _array, bitwise as _bitwise, image as _image, math as _math, \
    nn as _nn, random as _random

from .base import register
from .image_augmentation import BaseImageAugmentation, _per_image, _to_range
from .preprocessing import RandomBrightness, RandomContrast

__all__ = ["RandomGrayscale", "RandomHue", "RandomSaturation", "RandomColorDegeneration",
           "RandomInvert", "RandomPosterization", "RandomSharpness", "Solarization",
           "AutoContrast", "Equalization", "RandomColorJitter"]

_EPSILON = 1e-7   # Keras's backend.epsilon()


def _grayscale(x):
    """NHWC luma, one channel; single-channel images are their own (as Keras's)."""
    return x if x.shape[-1] == 1 else _image.rgb_to_grayscale(x)


class _ValueRangeAugmentation(BaseImageAugmentation):
    """A colour augmentation with a `factor` and a `value_range`."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = self._value_range(value_range)

    def _clip(self, x):
        return _math.clip_by_value(x, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


@register
class RandomGrayscale(BaseImageAugmentation):
    """Turns each image grey (luma 0.2989 R + 0.5870 G + 0.1140 B in every channel) with
    probability `factor` while training. Its transformation is the (batch, 1, 1, 1) boolean
    of the images turned, as Keras 3's.

    Example:
        >>> tl.keras.layers.RandomGrayscale(1.0)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor

    def _draw(self, x, batch):
        return _per_image(self._uniform([batch]) < self.factor)

    def _apply(self, x, transformation):
        return _math.where(transformation, _grayscale(x), x)

    def get_config(self):
        config = super().get_config()
        config.pop("seed")      # as Keras's config
        return {**config, "factor": self.factor}


@register
class RandomHue(_ValueRangeAugmentation):
    """Shifts each image's hue by a drawn fraction of a turn (factor f: up to f / 2 either
    way) while training, through HSV in [0, 1].

    Example:
        >>> tl.keras.layers.RandomHue(0.5, seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(factor, value_range, data_format, seed, **kwargs)
        self.value_range = value_range      # as given (Keras's RandomHue keeps it)

    def _draw(self, x, batch):
        invert = self._uniform([batch])
        invert = _math.where(invert > 0.5, -_array.ones_like(invert), _array.ones_like(invert))
        return {"factor": invert * self._uniform([batch], self.factor[0], self.factor[1]) * 0.5}

    def _apply(self, x, transformation):
        hsv = _image.rgb_to_hsv(_to_range(x, self.value_range, (0, 1)))
        shift = _array.reshape(_math.cast(transformation["factor"], x.dtype), [-1, 1, 1])
        hue = hsv[..., 0] + shift
        hue = _math.where(hue > 1.0, hue - 1.0, hue)
        hue = _math.where(hue < 0.0, hue + 1.0, hue)
        rgb = _image.hsv_to_rgb(_array.stack([hue, hsv[..., 1], hsv[..., 2]], -1))
        return _to_range(_math.clip_by_value(rgb, 0.0, 1.0), (0, 1), self.value_range)


@register
class RandomSaturation(_ValueRangeAugmentation):
    """Scales each image's HSV saturation by f / (1 - f + 1e-7), f drawn in `factor`, while
    training (Keras 3's formula, with its clip of the saturation to `value_range`).

    Example:
        >>> tl.keras.layers.RandomSaturation(0.5, seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    def _draw(self, x, batch):
        factor = self._uniform([batch], self.factor[0], self.factor[1])
        return {"factor": factor / (1.0 - factor + _EPSILON)}

    def _apply(self, x, transformation):
        hsv = _image.rgb_to_hsv(x)
        scale = _array.reshape(_math.cast(transformation["factor"], x.dtype), [-1, 1, 1])
        saturation = self._clip(hsv[..., 1] * scale)
        return _image.hsv_to_rgb(_array.stack([hsv[..., 0], saturation, hsv[..., 2]], -1))


@register
class RandomColorDegeneration(_ValueRangeAugmentation):
    """Blends each image towards its greyscale version by a factor drawn in `factor`, clipped
    to `value_range`, while training.

    Example:
        >>> tl.keras.layers.RandomColorDegeneration(0.5, seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    def _draw(self, x, batch):
        return {"factor": self._uniform([batch, 1, 1, 1], self.factor[0], self.factor[1])}

    def _apply(self, x, transformation):
        factor = _math.cast(transformation["factor"], x.dtype)
        return self._clip(x + factor * (_grayscale(x) - x))


@register
class RandomInvert(_ValueRangeAugmentation):
    """Replaces images by `value_range[1] - image` with a probability drawn in `factor`, while
    training.

    Example:
        >>> tl.keras.layers.RandomInvert(seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(factor, value_range, data_format, seed, **kwargs)
        self.value_range = value_range

    def _draw(self, x, batch):
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        return {"apply_inversion": self._uniform([batch]) < probability}

    def _apply(self, x, transformation):
        return _math.where(_per_image(transformation["apply_inversion"]),
                           float(self.value_range[1]) - x, x)


@register
class RandomPosterization(_ValueRangeAugmentation):
    """Keeps only the `bits` high bits of each 8-bit channel value, bits drawn in `factor`
    (1 to 8), while training.

    Example:
        >>> tl.keras.layers.RandomPosterization(4, seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    _FACTOR_BOUNDS = (1, 8)
    _MAX_FACTOR = 8

    def _draw(self, x, batch):
        low, high = int(self.factor[0]), int(self.factor[1])
        if low != high:
            bits = _random_int([batch], low, high, self.seed)
        else:
            bits = _array.ones(_array.stack([batch]), _dt.int32) * low
        return {"shift_factor": _math.cast(self._MAX_FACTOR - bits, _dt.uint8)}

    def _apply(self, x, transformation):
        shift = _array.reshape(_math.cast(transformation["shift_factor"], _dt.uint8),
                               [-1, 1, 1, 1])
        values = _math.cast(_to_range(x, self.value_range, (0, 255)), _dt.uint8)
        values = _bitwise.left_shift(_bitwise.right_shift(values, shift), shift)
        return _to_range(_math.cast(values, x.dtype), (0, 255), self.value_range)


def _random_int(shape, low, high, seed):
    return _random.uniform(_array.stack(shape), low, high, dtype=_dt.int32, seed=seed)


@register
class RandomSharpness(_ValueRangeAugmentation):
    """Sharpens (or blurs) each image: `image + (1 - 2 f) (smooth(image) - image)`, f drawn in
    `factor`, smooth the 3x3 kernel [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 (zero padding),
    clipped to `value_range`, while training.

    Example:
        >>> tl.keras.layers.RandomSharpness(0.5, seed=1)(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def _draw(self, x, batch):
        return {"factor": self._uniform([batch], self.factor[0], self.factor[1])}

    def _apply(self, x, transformation):
        factor = _array.reshape(_math.cast(transformation["factor"] * 2, x.dtype), [-1, 1, 1, 1])
        a, b = 1.0 / 13.0, 5.0 / 13.0
        kernel = np.array([[a, a, a], [a, b, a], [a, a, a]], np.float32).reshape(3, 3, 1, 1)
        kernel = _math.cast(_array.constant(np.tile(kernel, (1, 1, x.shape[-1], 1))), x.dtype)
        smoothed = _nn.depthwise_conv2d(x, kernel, [1, 1, 1, 1], "SAME")
        return self._clip(x + (1.0 - factor) * (smoothed - x))


def _from_zero(factor, name):
    """Solarization's (lower, upper): a number f in [0, 1] gives (0, f)."""
    message = ("The `factor` argument should be a number (or a list of two numbers) in the "
               f"range [0.0, 1.0]. Received: {name}={factor}")
    values = list(factor) if isinstance(factor, (tuple, list)) else [factor]
    if (isinstance(factor, (tuple, list)) and len(values) != 2) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1.0
            for v in values):
        raise ValueError(message)
    return tuple(sorted(values)) if len(values) == 2 else (0, values[0])


@register
class Solarization(BaseImageAugmentation):
    """Adds a drawn value to each image (in 0-255 units, clipped), then inverts (255 - v) the
    values at or above a drawn threshold, while training, as Keras 3's.

    Args:
        addition_factor: draws in [lower, upper * 255) (a number f: [0, f * 255)).
        threshold_factor: the same for the threshold.
        value_range: the images' range.

    Example:
        >>> layer = tl.keras.layers.Solarization(threshold_factor=(0.5, 0.5), value_range=(0, 1))
        >>> layer(tl.constant([[[[0.2], [0.9]]]])).numpy().ravel().round(4).tolist()
        [0.2, 0.1]
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
                 seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = _from_zero(addition_factor, "addition_factor")
        self.threshold_factor = _from_zero(threshold_factor, "threshold_factor")
        self.value_range = self._value_range(value_range)

    def _draw(self, x, batch):
        shape = [batch, 1, 1, 1]
        return {"additions": self._uniform(shape, self.addition_factor[0],
                                           self.addition_factor[1] * 255),
                "thresholds": self._uniform(shape, self.threshold_factor[0],
                                            self.threshold_factor[1] * 255)}

    def _apply(self, x, transformation):
        values = _to_range(x, self.value_range, (0, 255))
        values = _math.clip_by_value(values + _math.cast(transformation["additions"], x.dtype),
                                     0.0, 255.0)
        values = _math.where(values < _math.cast(transformation["thresholds"], x.dtype),
                             values, 255.0 - values)
        return _to_range(values, (0, 255), self.value_range)

    def get_config(self):
        return {**super().get_config(), "addition_factor": self.addition_factor,
                "threshold_factor": self.threshold_factor, "value_range": self.value_range}


@register
class AutoContrast(BaseImageAugmentation):
    """Stretches each image's channels so that their minimum (over axes 1 and 2) maps to the
    bottom of `value_range` and their maximum to the top; constant channels pass unchanged.
    Applied in training and inference alike, as Keras 3's.

    Example:
        >>> layer = tl.keras.layers.AutoContrast(value_range=(0, 1))
        >>> layer(tl.constant([[[[0.25], [0.5]]]])).numpy().ravel().tolist()
        [0.0, 1.0]
    """

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = self._value_range(value_range)

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        original = images
        x = self._cast(_to_range(self._cast(images), self.value_range, (0, 255)))
        low = _math.reduce_min(x, axis=[1, 2], keepdims=True)
        high = _math.reduce_max(x, axis=[1, 2], keepdims=True)
        scale = 255.0 / (high - low)
        out = _math.clip_by_value(x * scale - low * scale, 0.0, 255.0)
        out = _to_range(out, (0, 255), self.value_range)
        return _math.where(_math.is_nan(out), self._cast(original), out)

    def get_config(self):
        config = super().get_config()
        config.pop("seed")
        return {**config, "value_range": self.value_range}


@register
class Equalization(BaseImageAugmentation):
    """Histogram equalization of each channel (its histogram over the whole batch, `bins`
    bins over 0-255), while training, as Keras 3's.

    Example:
        >>> tl.keras.layers.Equalization()(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = bins
        self.value_range = self._value_range(value_range)

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        if not training:
            return images
        x = self._nhwc(self._cast(images))
        channels = [self._equalize(x[..., i]) for i in range(x.shape[-1])]
        return self._from_nhwc(self._cast(_array.stack(channels, -1)))

    def _equalize(self, channel):
        channel = _to_range(channel, self.value_range, (0, 255)) \
            if tuple(self.value_range) != (0, 255) else channel * 1.0 + 0.0
        bins = self.bins
        scaled = _math.cast(channel, _dt.float32) * (bins - 1) / 255.0
        index = _math.clip_by_value(_math.cast(scaled, _dt.int32), 0, bins - 1)
        hist = _math.bincount(_array.reshape(index, [-1]), minlength=bins)
        cdf = _math.cumsum(hist)
        nonzero = _math.cast(cdf > 0, _dt.int32)
        first = _math.argmax(nonzero, output_type=_dt.int32)
        cdf_min = _array.gather(cdf, first)
        denominator = cdf[-1] - cdf_min
        denominator = _math.where(denominator == 0, _array.ones_like(denominator), denominator)
        table = _math.cast((cdf - cdf_min) * 255, _dt.float32) / \
            _math.cast(denominator, _dt.float32)
        table = _math.clip_by_value(_math.round(table), 0.0, 255.0)
        lookup = _math.cast(_math.clip_by_value(channel / 255.0 * (bins - 1), 0.0, bins - 1.0),
                            _dt.int32)
        equalized = _math.cast(_array.gather(table, lookup), channel.dtype)
        several = _math.count_nonzero(hist) > 1
        out = _math.where(several, equalized, channel)
        return _to_range(out, (0, 255), self.value_range) \
            if tuple(self.value_range) != (0, 255) else out

    def get_config(self):
        config = super().get_config()
        config.pop("seed")
        return {**config, "bins": self.bins, "value_range": self.value_range}


@register
class RandomColorJitter(BaseImageAugmentation):
    """Applies, in order, RandomBrightness, RandomContrast, RandomSaturation and RandomHue
    (each only if its factor is given, all on `value_range`) while training, as Keras 3's:
    each sub-layer draws its own factors (the given transformation is not used).

    Example:
        >>> layer = tl.keras.layers.RandomColorJitter(brightness_factor=0.2, hue_factor=0.1)
        >>> layer(tl.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
    """

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        self._steps = [make(factor, value_range=value_range, seed=seed)
                       for make, factor in ((RandomBrightness, brightness_factor),
                                            (RandomContrast, contrast_factor),
                                            (RandomSaturation, saturation_factor),
                                            (RandomHue, hue_factor)) if factor is not None]

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        x = self._cast(images)
        if not training:
            return x
        for step in self._steps:   # NHWC in: the sub-layers keep their channels_last default
            x = self._from_nhwc(step(self._nhwc(x), training=True))
        return self._cast(x)

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range,
                "brightness_factor": self.brightness_factor,
                "contrast_factor": self.contrast_factor,
                "saturation_factor": self.saturation_factor, "hue_factor": self.hue_factor}
