"""Keras 3's image augmentation protocol and the geometric augmentations built on it:
RandomShear, RandomPerspective, RandomErasing, RandomGaussianBlur.

Owns: `BaseImageAugmentation`, the split Keras 3's BaseImagePreprocessingLayer makes:
`get_random_transformation(images, training)` draws (seeded, per image) a dict of factors
with Keras's keys, and `transform_images(images, transformation, training)` applies one;
`call` runs the two (a single image is a batch of one; a dict's "images" and "labels" are
transformed, as Keras's); the draws happen only when `training=True`, the default outside a
model (augmentation in `Dataset.map`), as Keras's. Also the per-image projective warp
helpers (`homography_transforms`: the 8 coefficients mapping 4 end points to 4 start points)
and the Gaussian blur by a drawn sigma. Warps are `image_preprocessing.affine_transform`
(TensorFlow's ImageProjectiveTransformV3, which Keras calls); images work channels last
inside, channels_first inputs are transposed in and out.
"""
import numpy as np

from ..graph import dtypes as _dt
from ..graph.ops import array as _array, linalg as _linalg, math as _math, nn as _nn, \
    random as _random

from .base import Layer, register
from .image_preprocessing import _FILL_MODES, _INTERPOLATIONS, _check_choice, affine_transform
from .preprocessing import _data_format, _factor

__all__ = ["RandomShear", "RandomPerspective", "RandomErasing", "RandomGaussianBlur"]


class BaseImageAugmentation(Layer):
    """Keras 3's image augmentation protocol: `get_random_transformation` draws,
    `transform_images` applies (subclasses implement both, NHWC float images in), `call`
    chains them; `training=False` returns the images cast to the compute dtype."""

    _FACTOR_BOUNDS = (-1, 1)

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = _data_format(data_format)

    def _set_factor(self, factor):
        self.factor = _factor(self, factor, self._FACTOR_BOUNDS)

    # -- the public protocol (Keras's names), images as given (channels as data_format)
    def get_random_transformation(self, data, training=True, seed=None):
        """The drawn factors for a batch (dict with Keras's keys), or None when not
        training."""
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        x = self._batched(images)[0]
        return self._draw(self._nhwc(x), _array.shape(x)[0])

    def transform_images(self, images, transformation, training=True):
        """`images` (a batch) transformed by `transformation` (from
        `get_random_transformation`, or the same keys given by hand)."""
        x = self._cast(images)
        if not training or transformation is None:
            return x
        return self._from_nhwc(self._apply(self._nhwc(x), transformation))

    def transform_labels(self, labels, transformation, training=True):
        """Labels unchanged (the mixing layers override)."""
        return labels

    def call(self, inputs, training=True):
        data = dict(inputs) if isinstance(inputs, dict) else {"images": inputs}
        images, single = self._batched(data["images"])
        transformation = self.get_random_transformation(images, training=training)
        out = self.transform_images(images, transformation, training=training)
        data["images"] = _array.squeeze(out, [0]) if single else out
        if "labels" in data:
            data["labels"] = self.transform_labels(data["labels"], transformation, training)
        return data if isinstance(inputs, dict) else data["images"]

    def get_config(self):
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}

    # -- helpers
    def _cast(self, images):
        compute = _dt.as_dtype(self.compute_dtype)
        return images if images.dtype is compute else _math.cast(images, compute)

    def _batched(self, images):
        if images.shape.rank not in (3, 4):
            raise ValueError("Expected the input image to be rank 3 or 4. Received: "
                             f"inputs.shape={images.shape}")
        single = images.shape.rank == 3
        return (_array.expand_dims(images, 0) if single else images), single

    def _nhwc(self, x):
        return _array.transpose(x, [0, 2, 3, 1]) if self.data_format == "channels_first" else x

    def _from_nhwc(self, x):
        return _array.transpose(x, [0, 3, 1, 2]) if self.data_format == "channels_first" else x

    def _uniform(self, shape, low=0.0, high=1.0):
        """A seeded draw of `shape` (ints or scalar tensors) in [low, high)."""
        if any(not isinstance(d, int) for d in shape):
            shape = _array.stack(list(shape))
        return _random.uniform(shape, low, high, seed=self.seed)

    def _box_masks(self, x, batch, width_ratio, height_ratio):
        """(masks, corners): one rectangle per NHWC image, its sides `ratio` times the image's
        at a uniformly drawn position (x0 then y0), as Keras's erasing and cut-mix draw it;
        the masks (batch, h, w, channels), the corners (x0, x1, y0, y1) each (batch,)."""
        h, w = x.shape[1], x.shape[2]
        corners = []
        for length, ratio in ((w, width_ratio), (h, height_ratio)):
            size = ratio * float(length)
            start = self._uniform([batch]) * (float(length) - size)
            corners += [start, start + size]
        ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32),
                             indexing="ij")
        gx, gy = _array.constant(xs[None, :, :, None]), _array.constant(ys[None, :, :, None])
        x0, x1, y0, y1 = (_array.reshape(c, [-1, 1, 1, 1]) for c in corners)
        inside = _math.logical_and(_math.logical_and(gx >= x0, gx < x1),
                                   _math.logical_and(gy >= y0, gy < y1))
        return _array.broadcast_to(inside, _array.shape(x)), corners

    def _value_range(self, value_range):
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        return sorted(value_range)


def _to_range(x, source, target):
    """Keras's `_transform_value_range`: values linearly moved from `source` to `target`."""
    if tuple(source) == tuple(target):
        return x
    scale = (float(target[1]) - float(target[0])) / (float(source[1]) - float(source[0]))
    return (x - float(source[0])) * scale + float(target[0]) if scale != 1.0 else \
        x - float(source[0]) + float(target[0])


def _pair(factor, name, bounds):
    """Keras's (lower, upper) of a named factor: a number f gives (max(-f, low), f)."""
    message = (f"The `{name}` argument should be a number (or a list of two numbers) in the "
               f"range [{bounds[0]}, {bounds[1]}]. Received: {name}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if not bounds[0] <= factor <= bounds[1]:
            raise ValueError(message)
        return (max(-abs(factor), bounds[0]), abs(factor))
    raise ValueError(message)


def _per_image(mask):
    """A (batch,) bool reshaped to broadcast over NHWC images."""
    return _array.reshape(mask, [-1, 1, 1, 1])


def homography_transforms(start_points, end_points):
    """(batch, 8) projective transforms mapping output points `end_points` to input points
    `start_points` ((batch, 4, 2) (x, y) each): the 8x8 linear system of the four
    correspondences, solved (Keras's `compute_homography_matrix`)."""
    rows, target = [], []
    zero = _array.zeros_like(start_points[:, 0, 0])
    one = _array.ones_like(zero)
    for i in range(4):
        sx, sy = start_points[:, i, 0], start_points[:, i, 1]
        ex, ey = end_points[:, i, 0], end_points[:, i, 1]
        rows.append(_array.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], -1))
        rows.append(_array.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], -1))
        target += [sx, sy]
    solved = _linalg.solve(_array.stack(rows, 1), _array.expand_dims(_array.stack(target, -1), -1))
    return _array.reshape(solved, [-1, 8])


def _shear_pair(factor, name):
    """RandomShear's (lower, upper): a number f in [0, 1] gives (-f, f); a pair, sorted (its
    numbers in [-1, 1], so that a saved config's (-f, f) loads, which Keras's refuses)."""
    message = ("The `factor` argument should be a number (or a list of two numbers) in the "
               f"range [0.0, 1.0]. Received: {name}={factor}")
    pair = isinstance(factor, (tuple, list))
    values = list(factor) if pair else [factor]
    low = -1.0 if pair else 0.0
    if (pair and len(values) != 2) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= 1.0
            for v in values):
        raise ValueError(message)
    return tuple(sorted(values)) if pair else (-abs(values[0]), abs(values[0]))


@register
class RandomShear(BaseImageAugmentation):
    """Shears each image by random factors along x and y while training (Keras 3's: the
    source point of (x, y) is (x + sx y, sy x + y), each factor's sign flipped with
    probability 1/2 (one flip for both)).

    Args:
        x_factor, y_factor: a number f in [0, 1] (draws in [-f, f]) or a pair.
        interpolation: "bilinear" (default) or "nearest".
        fill_mode: "reflect" (default), "wrap", "constant" or "nearest".
        fill_value: the value outside the image with fill_mode="constant".

    Example:
        >>> tl.keras.layers.RandomShear(0.3, seed=1)(tl.ones((2, 8, 8, 3))).shape
        TensorShape([2, 8, 8, 3])
    """

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.x_factor = _shear_pair(x_factor, "x_factor")
        self.y_factor = _shear_pair(y_factor, "y_factor")
        self.fill_mode = _check_choice(fill_mode, _FILL_MODES, "fill_mode")
        self.interpolation = _check_choice(interpolation, _INTERPOLATIONS, "interpolation")
        self.fill_value = fill_value

    def _draw(self, x, batch):
        invert = self._uniform([batch, 1])
        invert = _math.where(invert > 0.5, -_array.ones_like(invert), _array.ones_like(invert))
        shear_y = self._uniform([batch, 1], self.y_factor[0], self.y_factor[1])
        shear_x = self._uniform([batch, 1], self.x_factor[0], self.x_factor[1])
        return {"shear_factor": _array.concat([shear_x, shear_y], 1) * invert,
                "input_shape": _array.shape(x)}

    def _apply(self, x, transformation):
        shear = _math.cast(transformation["shear_factor"], _dt.float32)
        ones, zeros = _array.ones_like(shear[:, 0]), _array.zeros_like(shear[:, 0])
        matrix = _array.stack([ones, shear[:, 0], zeros, shear[:, 1], ones, zeros, zeros, zeros],
                              1)
        return self._cast(affine_transform(x, matrix, self.interpolation, self.fill_mode,
                                           self.fill_value))

    def get_config(self):
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value}


@register
class RandomPerspective(BaseImageAugmentation):
    """Warps each image (with probability drawn in `factor`) so that its corners move by up
    to `scale` / 2 of their coordinates, as Keras 3's (outside: `fill_value`).

    Args:
        factor: the probability of warping an image, a number in [0, 1] or a pair.
        scale: the corners' largest relative displacement, in [0, 1].
        interpolation: "bilinear" (default) or "nearest".
        fill_value: the value outside the image.

    Example:
        >>> tl.keras.layers.RandomPerspective(seed=1)(tl.ones((2, 8, 8, 3))).shape
        TensorShape([2, 8, 8, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0,
                 seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._set_factor(factor)
        if scale < 0.0 or scale > 1.0:
            raise ValueError("The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        self.scale, self.fill_value = scale, fill_value
        self.interpolation = _check_choice(interpolation, _INTERPOLATIONS, "interpolation")

    def _draw(self, x, batch):
        h, w = x.shape[1], x.shape[2]
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        threshold = self._uniform([batch])
        displacement = self._uniform([batch, 4, 2], -0.5 * self.scale, 0.5 * self.scale)
        start = _array.constant(np.array([[[0.0, 0.0], [w - 1, 0.0], [0.0, h - 1],
                                           [w - 1, h - 1]]], np.float32))
        start = _array.tile(start, _array.stack([batch, 1, 1]))
        return {"apply_perspective": threshold < probability, "start_points": start,
                "end_points": start + start * displacement, "input_shape": _array.shape(x)}

    def _apply(self, x, transformation):
        start = _math.cast(transformation["start_points"], _dt.float32)
        end = _math.cast(transformation["end_points"], _dt.float32)
        warped = affine_transform(x, homography_transforms(start, end), self.interpolation,
                                  "constant", self.fill_value)
        return _math.where(_per_image(transformation["apply_perspective"]), self._cast(warped), x)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


@register
class RandomErasing(BaseImageAugmentation):
    """Erases one random rectangle per image (with probability drawn in `factor`), filling it
    with `fill_value` (default: Gaussian noise times value_range[1], clipped to the range),
    as Keras 3's. The rectangle's sides are sqrt(s) of the image's, s drawn in `scale`.

    Example:
        >>> tl.keras.layers.RandomErasing(seed=1)(tl.ones((2, 8, 8, 3))).shape
        TensorShape([2, 8, 8, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = _pair(scale, "scale", self._FACTOR_BOUNDS)
        if fill_value is not None and not isinstance(fill_value, (int, float)) and \
                not (isinstance(fill_value, (tuple, list)) and len(fill_value) == 3):
            raise ValueError("The `fill_value` argument should be a number (or a list of three "
                             f"numbers). Received: fill_value={fill_value}")
        self.fill_value, self.value_range = fill_value, value_range

    def _draw(self, x, batch):
        weight = _math.sqrt(self._uniform([batch, 2], self.scale[0], self.scale[1]))
        masks = self._box_masks(x, batch, weight[:, 0], weight[:, 1])[0]
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        apply = self._uniform([batch]) < probability
        if self.fill_value is None:
            fill = _random.normal(_array.shape(x), seed=self.seed) * float(self.value_range[1])
        else:
            fill = _array.zeros_like(x) + _array.constant(
                np.asarray(self.fill_value, np.float32))
        fill = _math.clip_by_value(fill, float(self.value_range[0]), float(self.value_range[1]))
        return {"apply_erasing": apply, "batch_masks": self._from_nhwc(masks),
                "fill_value": self._from_nhwc(fill)}

    def _apply(self, x, transformation):
        masks = self._nhwc(transformation["batch_masks"])
        fill = self._nhwc(_math.cast(transformation["fill_value"], x.dtype))
        erased = _math.where(masks, fill, x)
        return _math.where(_per_image(transformation["apply_erasing"]), erased, x)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "fill_value": self.fill_value, "value_range": self.value_range}


def gaussian_blur(x, kernel_size, sigma):
    """NHWC images blurred by Keras's Gaussian kernel of `kernel_size` (k0, k1) and a (2,)
    `sigma` tensor (k0, sigma[0] along the kernel's columns; k1, sigma[1] along its rows, laid
    out as Keras's TensorFlow backend does), zero "same" padding."""
    def kernel_1d(size, s):
        t = _array.constant((np.arange(size) - (size - 1) / 2.0).astype(s.dtype.np))
        k = _math.exp(-0.5 * _math.square(t / s))
        return k / _math.reduce_sum(k)
    k0, k1 = kernel_size
    kx, ky = kernel_1d(k0, sigma[0]), kernel_1d(k1, sigma[1])
    kernel = _array.reshape(_array.expand_dims(ky, 1) * _array.expand_dims(kx, 0), [k0, k1, 1, 1])
    channels = x.shape[-1]
    kernel = _array.tile(kernel, [1, 1, channels, 1])
    return _nn.depthwise_conv2d(x, kernel, [1, 1, 1, 1], "SAME")


@register
class RandomGaussianBlur(BaseImageAugmentation):
    """Blurs images (each with probability drawn in `factor`) by a Gaussian of sigma drawn in
    `sigma` (one pair per batch, as Keras 3's), then clips to `value_range`.

    Example:
        >>> tl.keras.layers.RandomGaussianBlur(seed=1)(tl.ones((2, 8, 8, 3))).shape
        TensorShape([2, 8, 8, 3])
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._set_factor(factor)
        sizes = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else \
            (kernel_size, kernel_size)
        if len(sizes) != 2 or any(int(k) % 2 == 0 for k in sizes):
            raise ValueError("The `kernel_size` argument should be an odd number (or a list of "
                             f"two odd numbers). Received: kernel_size={kernel_size}")
        self.kernel_size = tuple(int(k) for k in sizes)
        self.sigma = _pair(sigma, "sigma", self._FACTOR_BOUNDS)
        self.value_range = value_range

    def _draw(self, x, batch):
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        apply = self._uniform([batch]) < probability
        return {"should_apply_blur": apply,
                "blur_factor": self._uniform([2], self.sigma[0], self.sigma[1]) + 1e-6}

    def _apply(self, x, transformation):
        blurred = gaussian_blur(x, self.kernel_size,
                                _math.cast(transformation["blur_factor"], x.dtype))
        out = _math.where(_per_image(transformation["should_apply_blur"]), blurred, x)
        return _math.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "kernel_size": self.kernel_size,
                "sigma": self.sigma, "value_range": self.value_range}
