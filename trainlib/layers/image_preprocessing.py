"""Geometric image preprocessing layers: Resizing, CenterCrop, RandomCrop, RandomRotation,
RandomZoom, RandomTranslation.

Owns: Keras 3's arguments, defaults, draws and transforms for these layers, and the
batched projective warp they share (`affine_transform`: TensorFlow's
ImageProjectiveTransformV3 sampling, which Keras 3 calls on the TensorFlow backend: the
source coordinate is first mapped into the image by `fill_mode` (reflect, wrap,
nearest; constant leaves it), then sampled bilinearly or by nearest neighbour, taps
outside the image reading `fill_value`).
Invariants: `call` is public ops only, so the layers work in models, inside
`tl.function` and in `Dataset.map`; the random layers draw (seeded) only when
`training=True` (their default outside a model, as Keras: augmentation in
`Dataset.map`), and the identity (cast to the compute dtype) otherwise.
"""
import math
import random as _pyrandom

import numpy as np

from ..graph import dtypes as _dt
from ..graph.ops import array as _array, image as _image, math as _math, random as _random

from .base import Layer, register
from .preprocessing import _data_format, _factor

__all__ = ["Resizing", "CenterCrop", "RandomCrop", "RandomRotation", "RandomZoom", "RandomTranslation",
           "affine_transform"]

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _to_nhwc(layer, images):
    """(NHWC images, whether the input was one image): a batch of channels-last images."""
    rank = images.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"{type(layer).__name__} expects images of rank 3 (one image) or 4 "
                         f"(a batch), got shape {images.shape}")
    x = images if rank == 4 else _array.expand_dims(images, 0)
    if layer.data_format == "channels_first":
        x = _array.transpose(x, [0, 2, 3, 1])
    return x, rank == 3


def _from_nhwc(layer, x, single):
    if layer.data_format == "channels_first":
        x = _array.transpose(x, [0, 3, 1, 2])
    return _array.squeeze(x, [0]) if single else x


def _static_hw(layer, x):
    h, w = x.shape[1], x.shape[2]
    if h is None or w is None:
        raise ValueError(f"{type(layer).__name__} needs images of known height and width, got "
                         f"shape {x.shape} (channels last)")
    return int(h), int(w)


def _map_coordinate(c, size, fill_mode):
    """TensorFlow's MapCoordinate: a source coordinate brought into [0, size - 1] as
    `fill_mode` says (constant: unchanged)."""
    if fill_mode == "constant":
        return c
    top = float(size - 1)
    if size <= 1 or fill_mode == "nearest":
        return _math.clip_by_value(c, 0.0, top)
    n = float(size)
    if fill_mode == "reflect":      # (d c b a | a b c d | d c b a)
        period = 2.0 * n
        low = c + period * _math.floor(-c / period)     # into (-2n, 0]
        low = _math.where(low < -n, low + period, -low - 1.0)
        high = c - period * _math.floor(c / period)     # into [0, 2n)
        high = _math.where(high >= n, period - high - 1.0, high)
    else:                           # wrap: (a b c d | a b c d | a b c d)
        low = c + n * (_math.floor(-c / top) + 1.0)
        high = c - n * _math.floor(c / top)
    c = _math.where(c < 0.0, low, _math.where(c > top, high, c))
    return _math.clip_by_value(c, 0.0, top)


def affine_transform(images, transforms, interpolation="bilinear", fill_mode="constant",
                     fill_value=0.0):
    """Channels-last image batches warped by projective transforms.

    Args:
        images: (batch, height, width, channels), height and width known.
        transforms: (batch, 8) float32 [a0, a1, a2, b0, b1, b2, c0, c1]: output pixel (x, y)
            reads input point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),
            k = c0 x + c1 y + 1.
        interpolation: "bilinear" or "nearest".
        fill_mode: "reflect", "wrap", "nearest" or "constant" (points outside the image).
        fill_value: the value read outside the image (constant mode, and the far taps).

    Returns:
        float32 images of the input's shape.
    """
    x = _math.cast(images, _dt.float32) if images.dtype is not _dt.float32 else images
    h, w = int(x.shape[1]), int(x.shape[2])
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32),
                         indexing="ij")
    xs, ys = _array.constant(xs.reshape(1, -1)), _array.constant(ys.reshape(1, -1))
    t = [transforms[:, i:i + 1] for i in range(8)]
    k = t[6] * xs + t[7] * ys + 1.0
    src_x = _map_coordinate((t[0] * xs + t[1] * ys + t[2]) / k, w, fill_mode)
    src_y = _map_coordinate((t[3] * xs + t[4] * ys + t[5]) / k, h, fill_mode)
    batch = _array.shape(x)[0]
    channels = x.shape[3] if x.shape[3] is not None else _array.shape(x)[3]
    flat = _array.reshape(x, _array.stack([-1, channels]))
    offsets = _array.expand_dims(_array.range(batch) * (h * w), 1)     # (batch, 1)
    fill = _array.constant(float(fill_value), _dt.float32)

    def read(yi, xi):
        """Pixels at integer float coordinates (batch, h*w); fill_value outside."""
        inside = _math.logical_and(_math.logical_and(yi >= 0.0, yi <= h - 1.0),
                                   _math.logical_and(xi >= 0.0, xi <= w - 1.0))
        yc = _math.cast(_math.clip_by_value(yi, 0.0, h - 1.0), _dt.int32)
        xc = _math.cast(_math.clip_by_value(xi, 0.0, w - 1.0), _dt.int32)
        values = _array.gather(flat, offsets + yc * w + xc)           # (batch, h*w, c)
        return _math.where(_array.expand_dims(inside, -1), values, fill)

    if interpolation == "nearest":   # std::round: halves away from zero
        def rounded(c):
            return _math.sign(c) * _math.floor(_math.abs(c) + 0.5)
        out = read(rounded(src_y), rounded(src_x))
    else:
        y0, x0 = _math.floor(src_y), _math.floor(src_x)
        y1, x1 = y0 + 1.0, x0 + 1.0
        wx0, wx1 = _array.expand_dims(x1 - src_x, -1), _array.expand_dims(src_x - x0, -1)
        wy0, wy1 = _array.expand_dims(y1 - src_y, -1), _array.expand_dims(src_y - y0, -1)
        top = wx0 * read(y0, x0) + wx1 * read(y0, x1)
        bottom = wx0 * read(y1, x0) + wx1 * read(y1, x1)
        out = wy0 * top + wy1 * bottom
    if isinstance(channels, int):    # static sizes keep the output's shape known
        return _array.reshape(out, [-1, h, w, channels])
    return _array.reshape(out, _array.stack([batch, h, w, channels]))


def _check_choice(value, choices, what):
    if value not in choices:
        raise NotImplementedError(f"Unknown `{what}` {value}. Expected of one {choices}.")
    return value


def _default_seed(seed):
    return seed if seed is not None else _pyrandom.randint(1, int(1e9))


def _aspect_crop(x, h, w, height, width):
    """The largest central window of (h, w) NHWC images with the aspect ratio height:width
    (Keras's crop_to_aspect_ratio / smart_resize window)."""
    ch = max(min(h, int(float(w * height) / width)), 1)
    cw = max(min(w, int(float(h * width) / height)), 1)
    top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
    return x[:, top:top + ch, left:left + cw, :]


@register
class CenterCrop(Layer):
    """Crops the central `height` x `width` window of images (rank 3 or 4); an image smaller
    than that is cropped to the target's aspect ratio and resized (bilinear), as Keras 3's
    `smart_resize` does.

    Example:
        >>> tl.layers.CenterCrop(2, 3)(tl.ones((1, 4, 6, 3))).shape
        TensorShape([1, 2, 3, 3])
    """

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        compute = _dt.as_dtype(self.compute_dtype)
        x, single = _to_nhwc(self, _math.cast(inputs, compute) if inputs.dtype is not compute
                             else inputs)
        h, w = _static_hw(self, x)
        if h >= self.height and w >= self.width:
            top, left = (h - self.height) // 2, (w - self.width) // 2
            x = x[:, top:top + self.height, left:left + self.width, :]
        else:
            x = _image.resize(_aspect_crop(x, h, w, self.height, self.width),
                              [self.height, self.width])
            x = _math.cast(x, compute) if x.dtype is not compute else x
        return _from_nhwc(self, x, single)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "data_format": self.data_format}


@register
class Resizing(Layer):
    """Resizes images to `height` x `width` (TensorFlow's `tf.image.resize` methods).

    Args:
        height, width: the output size.
        interpolation: "bilinear" (default), "nearest", "bicubic", "area", "lanczos3",
            "lanczos5", "gaussian" or "mitchellcubic".
        crop_to_aspect_ratio: first crop the central window of the target aspect ratio.
        pad_to_aspect_ratio: first pad (with `fill_value`) to the target aspect ratio.
        antialias: an antialiasing kernel when downsampling.
        data_format: "channels_last" (default) or "channels_first".

    Integer images are rounded and saturated back to their dtype, as Keras does.

    Example:
        >>> tl.layers.Resizing(2, 3)(tl.ones((1, 4, 6, 3))).shape
        TensorShape([1, 2, 3, 3])
    """

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                             "`True`.")
        if fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                             f"supported. Received: fill_mode={fill_mode}")
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = bool(antialias)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        x, single = _to_nhwc(self, inputs)
        h, w = _static_hw(self, x)
        source_dtype = x.dtype
        if self.crop_to_aspect_ratio:
            x = _aspect_crop(x, h, w, self.height, self.width)
        elif self.pad_to_aspect_ratio:
            ph = max(h, int(float(w * self.height) / self.width))
            pw = max(w, int(float(h * self.width) / self.height))
            top, left = int(float(ph - h) / 2), int(float(pw - w) / 2)
            if top > 0 or left > 0:
                x = _array.pad(x, [[0, 0], [top, top], [left, left], [0, 0]],
                               constant_values=_math.cast(self.fill_value, x.dtype))
        out = _image.resize(x, [self.height, self.width], method=self.interpolation,
                            antialias=self.antialias)
        if out.dtype is not source_dtype:
            if source_dtype.is_integer:
                info = np.iinfo(source_dtype.np)
                out = _math.clip_by_value(_math.round(out), float(info.min), float(info.max))
            out = _math.cast(out, source_dtype)
        return _from_nhwc(self, out, single)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias,
                "data_format": self.data_format}


@register
class RandomCrop(Layer):
    """Crops a random `height` x `width` window of the batch while training (one window for
    the whole batch, as Keras); an input no larger than the target is centre-cropped to
    its aspect ratio and resized. At inference the images pass unchanged (Keras 3's
    behaviour).

    Example:
        >>> tl.layers.RandomCrop(2, 2, seed=1)(tl.ones((1, 4, 4, 3)), training=True).shape
        TensorShape([1, 2, 2, 3])
    """

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.height, self.width = int(height), int(width)
        self.seed = _default_seed(seed)
        self.data_format = _data_format(data_format)

    def call(self, inputs, training=True):
        if not training:
            return inputs
        x, single = _to_nhwc(self, inputs)
        h, w = _static_hw(self, x)
        x = _math.cast(x, self.compute_dtype) if x.dtype.name != self.compute_dtype else x
        if h > self.height and w > self.width:
            top = _math.cast(_random.uniform([], 0.0, float(h - self.height + 1),
                                             seed=self.seed), _dt.int32)
            left = _math.cast(_random.uniform([], 0.0, float(w - self.width + 1),
                                              seed=self.seed), _dt.int32)
            window = _array.slice(x, _array.stack([0, top, left, 0]),
                                  [-1, self.height, self.width, -1])
            # the offsets are drawn, the window's size is not
            x = _array.ensure_shape(window, [x.shape[0], self.height, self.width, x.shape[3]])
        else:
            ch = max(min(h, int(float(w * self.height) / self.width)), 1)
            cw = max(min(w, int(float(h * self.width) / self.height)), 1)
            top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
            # as Keras 3: the window starts where the aspect-ratio crop would, but keeps the
            # target's size (clipped by the image), then is resized
            x = x[:, top:top + self.height, left:left + self.width, :]
            if (x.shape[1], x.shape[2]) != (self.height, self.width):
                x = _math.cast(_image.resize(x, [self.height, self.width]), self.compute_dtype)
        return _from_nhwc(self, x, single)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "height": self.height,
                "width": self.width, "seed": self.seed}


def _pair(factor, what, low_ok):
    """Keras's (lower, upper) of a zoom/translation factor: a number f gives (-|f|, |f|)."""
    message = (f"The `{what}` argument should be a number (or a list of two numbers) in the "
               f"range [-1.0, 1.0]. Received: {what}={factor}")

    def check(v):
        if v > 1.0 or (v <= -1.0 if not low_ok else v < -1.0):
            raise ValueError(message)

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(message)
        check(factor[0])
        check(factor[1])
        return tuple(sorted(float(f) for f in factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        return (-abs(float(factor)), abs(float(factor)))
    raise ValueError(message)


class _RandomAffine(Layer):
    """What the random warps share: fill mode, interpolation, seed, the training switch and
    the warp of a batch by one transform per image."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.fill_mode = _check_choice(fill_mode, _FILL_MODES, "fill_mode")
        self.interpolation = _check_choice(interpolation, _INTERPOLATIONS, "interpolation")
        self.seed, self.fill_value = seed, fill_value
        self.data_format = _data_format(data_format)

    def call(self, inputs, training=True):
        compute = _dt.as_dtype(self.compute_dtype)
        images = _math.cast(inputs, compute) if inputs.dtype is not compute else inputs
        if not training:
            return images
        x, single = _to_nhwc(self, images)
        h, w = _static_hw(self, x)
        batch = _array.shape(x)[0]
        out = affine_transform(x, self._transforms(batch, h, w), self.interpolation,
                               self.fill_mode, self.fill_value)
        out = _math.cast(out, compute) if out.dtype is not compute else out
        return _from_nhwc(self, out, single)

    def _uniform(self, batch, low, high):
        return _random.uniform(_array.stack([batch, 1]), low, high, seed=self.seed)

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


def _rows(batch, *columns):
    """(batch, 8) transforms from (batch, 1) columns (Python floats broadcast), c0 = c1 = 0."""
    zeros = _array.zeros(_array.stack([batch, 1]), _dt.float32)
    full = [zeros + c for c in columns] + [zeros, zeros]
    return _array.concat(full, 1)


@register
class RandomRotation(_RandomAffine):
    """Rotates each image by a random angle in `factor` * 2 pi (a number f: [-f, f]) about
    its centre while training.

    Args:
        factor: a fraction of a full turn, or a pair (lower, upper).
        fill_mode: "reflect" (default), "wrap", "constant" or "nearest".
        interpolation: "bilinear" (default) or "nearest".
        seed: a seed for the draws.
        fill_value: the value outside the image with fill_mode="constant".

    Example:
        >>> tl.layers.RandomRotation(0.1, seed=1)(tl.ones((2, 8, 8, 1)), training=True).shape
        TensorShape([2, 8, 8, 1])
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self._factor_arg = factor
        self.factor = _factor(self, factor, (-1.0, 1.0))

    def _transforms(self, batch, h, w):
        angle = self._uniform(batch, self.factor[0] * 360.0, self.factor[1] * 360.0)
        return rotation_transforms(angle * (math.pi / 180.0), h, w)

    def get_config(self):
        return {**super().get_config(), "factor": self._factor_arg}


def rotation_transforms(angle, h, w):
    """(batch, 8) transforms rotating about the image centre by `angle` radians ((batch, 1)),
    as Keras's `_compute_affine_matrix` without shear, scale or translation."""
    cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
    cos, sin = _math.cos(angle), _math.sin(angle)
    return _array.concat([cos, -sin, cx - cx * cos + cy * sin,
                          sin, cos, cy - cx * sin - cy * cos,
                          _array.zeros_like(angle), _array.zeros_like(angle)], 1)


@register
class RandomZoom(_RandomAffine):
    """Zooms each image by a random factor while training: a height factor f draws the
    sampling scale from [1 + lower, 1 + upper] (positive: zoom out, negative: zoom in);
    `width_factor=None` keeps the aspect ratio.

    Example:
        >>> tl.layers.RandomZoom(0.2, seed=1)(tl.ones((2, 8, 8, 1)), training=True).shape
        TensorShape([2, 8, 8, 1])
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _pair(height_factor, "height_factor", False)
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = _pair(width_factor, "width_factor", False)

    def _transforms(self, batch, h, w):
        zoom_h = self._uniform(batch, 1.0 + self.height_lower, 1.0 + self.height_upper)
        zoom_w = zoom_h if self.width_factor is None else \
            self._uniform(batch, 1.0 + self.width_lower, 1.0 + self.width_upper)
        return _rows(batch, zoom_w, 0.0, (w - 1.0) / 2.0 * (1.0 - zoom_w),
                     0.0, zoom_h, (h - 1.0) / 2.0 * (1.0 - zoom_h))

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


@register
class RandomTranslation(_RandomAffine):
    """Shifts each image by random fractions of its height and width while training
    (a factor f: [-f, f]; a pair: (lower, upper)).

    Example:
        >>> layer = tl.layers.RandomTranslation(0.1, 0.2, seed=1)
        >>> layer(tl.ones((2, 8, 8, 1)), training=True).shape
        TensorShape([2, 8, 8, 1])
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _pair(height_factor, "height_factor", True)
        self.width_lower, self.width_upper = _pair(width_factor, "width_factor", True)

    def _transforms(self, batch, h, w):
        dy = self._uniform(batch, self.height_lower, self.height_upper) * float(h)
        dx = self._uniform(batch, self.width_lower, self.width_upper) * float(w)
        return _rows(batch, 1.0, 0.0, -dx, 0.0, 1.0, -dy)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}
