"""TensorFlow's image functions over NHWC images (a single HWC image too); `tl.image` is these
with image_io.py's files and image_metrics.py's measures (trainlib/image.py).

Owns: resizing with TensorFlow's methods and antialias rule, flips, crops and pads,
dtype conversion with TensorFlow's scaling, standardization, the colour adjustments
and the RGB/grayscale/HSV conversions. Each is a composition of existing ops, so
gradients (where TensorFlow has them) follow from theirs: resizing is a product with
per-axis interpolation matrices computed once from the static sizes (TensorFlow's
`scale_and_translate` spans: a kernel centred at each output pixel's centre, scaled
by the downsampling factor when antialiasing, taps outside the image dropped and the
rest renormalized), nearest-neighbour resizing a gather (it keeps the dtype). When the
height or width is only known at run time, the host op `ResizeWeights` computes the same
matrices (or nearest indices) from the runtime size.
Invariants: images are [..., height, width, channels]; floating images hold values
in [0, 1] and integer images [0, dtype max], as TensorFlow's `convert_image_dtype`.
"""
import math as _pymath

import numpy as np   # interpolation matrices are host constants computed from static sizes

from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import is_tensor
from . import array as _array
from . import math as _math
from . import random as _random
from .image_io import decode_jpeg, encode_jpeg
from .stateless_random import stateless_uniform as _stateless_uniform

__all__ = ["ResizeMethod", "resize", "flip_left_right", "flip_up_down", "random_flip_left_right",
           "random_flip_up_down", "random_crop", "transpose", "rot90", "central_crop",
           "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad",
           "resize_with_pad", "convert_image_dtype", "per_image_standardization",
           "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue",
           "adjust_gamma", "rgb_to_grayscale", "grayscale_to_rgb", "rgb_to_hsv", "hsv_to_rgb",
           "random_brightness", "random_contrast", "random_hue", "random_saturation",
           "stateless_random_brightness", "stateless_random_contrast", "stateless_random_hue",
           "stateless_random_saturation", "stateless_random_flip_left_right",
           "stateless_random_flip_up_down", "stateless_random_crop", "adjust_jpeg_quality",
           "random_jpeg_quality", "stateless_random_jpeg_quality"]


class ResizeMethod:
    """The names `resize` accepts (TensorFlow's `tf.image.ResizeMethod`)."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


# ------------------------------------------------------------------ helpers

def _image(images, name, min_rank=3):
    x = convert_to_tensor(images)
    rank = x.shape.rank
    if rank is None or rank < min_rank:
        raise ValueError(f"{name}: expected an image of rank 3 [height, width, channels] or a "
                         f"batch of rank 4, got shape {x.shape}")
    return x


def _static(value, what, name):
    if is_tensor(value):
        try:
            value = value.numpy()
        except AttributeError:
            raise ValueError(f"{name}: {what} must be known while tracing (a Python number or "
                             f"an eager tensor), got a symbolic tensor") from None
    return value


def _dim(x, axis, name):
    d = x.shape[axis]
    if d is None:
        raise ValueError(f"{name}: the image's {'height' if axis == -3 else 'width'} must be "
                         f"known while tracing, got shape {x.shape}")
    return d


def _to_float(images):
    """TensorFlow's rule of the adjust_* functions: float16/32 stay, others become float32."""
    if images.dtype in (_dt.float16, _dt.float32):
        return images
    return convert_image_dtype(images, _dt.float32)


# ------------------------------------------------------------------ dtype conversion

def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts `image` to `dtype`, rescaling values: floats in [0, 1], integers in
    [0, dtype max], as TensorFlow's (float to int multiplies by max + 0.5 and truncates).

    Args:
        image: an image tensor.
        dtype: the target dtype.
        saturate: clip before casting so out-of-range values do not wrap.

    Example:
        >>> tl.image.convert_image_dtype(tl.constant([255], tl.uint8), tl.float32)
        <tl.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32)>
    """
    image = convert_to_tensor(image)
    dtype = _dt.as_dtype(dtype)
    if not (image.dtype.is_floating or image.dtype.is_integer) or not (
            dtype.is_floating or dtype.is_integer):
        raise TypeError(f"convert_image_dtype converts between integer and floating dtypes, got "
                        f"{image.dtype.name} -> {dtype.name}")
    if image.dtype is dtype:
        return image
    cast = _math.saturate_cast if saturate else _math.cast
    if image.dtype.is_integer and dtype.is_integer:
        max_in = int(np.iinfo(image.dtype.as_numpy_dtype).max)
        max_out = int(np.iinfo(dtype.as_numpy_dtype).max)
        if max_in > max_out:
            scale = (max_in + 1) // (max_out + 1)
            return cast(_math.floordiv(image, _math.cast(scale, image.dtype)), dtype)
        scale = (max_out + 1) // (max_in + 1)
        return _math.multiply(cast(image, dtype), _math.cast(scale, dtype))
    if image.dtype.is_floating and dtype.is_floating:
        return _math.cast(image, dtype)
    if image.dtype.is_integer:
        max_in = float(np.iinfo(image.dtype.as_numpy_dtype).max)
        return _math.multiply(_math.cast(image, dtype), _math.cast(1.0 / max_in, dtype))
    scale = float(np.iinfo(dtype.as_numpy_dtype).max) + 0.5
    return cast(_math.multiply(image, _math.cast(scale, image.dtype)), dtype)


# ------------------------------------------------------------------ resizing

def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def _mitchell(x):
    x = np.abs(x)
    return np.where(x < 1, (7 / 6) * x ** 3 - 2 * x ** 2 + 8 / 9,
                    np.where(x < 2, -(7 / 18) * x ** 3 + 2 * x ** 2 - (10 / 3) * x + 16 / 9, 0.0))


def _lanczos(radius):
    def kernel(x):
        x = np.abs(x)
        return np.where(x < radius, np.sinc(x) * np.sinc(x / radius), 0.0)
    return kernel


def _gaussian(x):
    sigma = 1.5 / 3.0
    x = np.abs(x)
    return np.where(x < 1.5, np.exp(-x * x / (2 * sigma * sigma)), 0.0)


_KERNELS = {   # method -> (kernel, radius)
    "bilinear": (lambda x: np.maximum(0.0, 1.0 - np.abs(x)), 1.0),
    "bicubic": (_keys_cubic, 2.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (_gaussian, 1.5),
    "mitchellcubic": (_mitchell, 2.0),
}


def _span_weights(n_in, n_out, method, antialias):
    """[n_out, n_in] weights: TensorFlow's scale_and_translate spans for one axis."""
    kernel, radius = _KERNELS[method]
    f32 = np.float32   # in float32, as TensorFlow's kernel: which taps fall inside depends on it
    inv_scale = f32(1) / (f32(n_out) / f32(n_in))
    kernel_scale = max(inv_scale, f32(1)) if antialias else f32(1)
    reach = f32(radius) * kernel_scale
    weights = np.zeros((n_out, n_in))
    for o in range(n_out):
        sample = (f32(o) + f32(0.5)) * inv_scale
        start = min(max(_pymath.ceil(sample - reach - f32(0.5)), 0), n_in - 1)
        end = min(max(_pymath.floor(sample + reach - f32(0.5)), 0), n_in - 1) + 1
        source = np.arange(start, end, dtype=np.float32)
        offset = (source + f32(0.5) - sample) * (f32(1) / kernel_scale)
        if method == "bicubic" and not antialias:
            # TensorFlow's resize_bicubic reads the kernel from a table of 1024 steps
            frac = sample - f32(0.5) - np.floor(sample - f32(0.5))
            offset = offset - (np.rint(frac * 1024) / 1024 - frac)
        w = kernel(np.abs(offset))
        total = w.sum()
        weights[o, start:end] = w / total if abs(total) >= 1000 * np.finfo(np.float32).tiny else w
    return weights


def _area_weights(n_in, n_out):
    """[n_out, n_in]: each output averages the inputs its interval covers, by overlap."""
    scale = n_in / n_out
    weights = np.zeros((n_out, n_in))
    for o in range(n_out):
        lo, hi = o * scale, (o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            weights[o, min(i, n_in - 1)] += (min(i + 1, hi) - max(i, lo)) / scale
    return weights


def _nearest_indices(n_in, n_out):
    scale = n_in / n_out
    return np.minimum(np.floor((np.arange(n_out) + 0.5) * np.float32(scale)).astype(np.int64),
                      n_in - 1).astype(np.int32)


def _axis_weights(n_in, n_out, method, antialias):
    if method == "area":
        return _area_weights(n_in, n_out)
    return _span_weights(n_in, n_out, method, antialias)


def _resize_weights_infer(n_in, n_out, method, antialias):
    if method == "nearest":
        return spec([n_out], _dt.int32)
    return spec([n_out, None], _dt.float32)


@defop("ResizeWeights", infer=_resize_weights_infer, differentiable=False, host=True)
def _resize_weights(xp, n_in, n_out, method, antialias):
    n = int(n_in)
    if method == "nearest":
        return _nearest_indices(n, n_out)
    return _axis_weights(n, n_out, method, antialias).astype(np.float32)


def _resize_dynamic(x, new_h, new_w, method, antialias):
    """resize for images whose height or width is only known when the graph runs (decoded
    files): the per-axis weights (or nearest indices) come from the `ResizeWeights` host op."""
    rank = x.shape.rank
    shape = _array.shape(x)
    rows = apply("ResizeWeights", shape[rank - 3], n_out=new_h, method=method,
                 antialias=bool(antialias))
    cols = apply("ResizeWeights", shape[rank - 2], n_out=new_w, method=method,
                 antialias=bool(antialias))
    if method == "nearest":
        x = _array.gather(x, rows, axis=rank - 3)
        return _array.gather(x, cols, axis=rank - 2)
    x = _math.cast(x, _dt.float32) if x.dtype is not _dt.float32 else x
    perm = list(range(rank - 3)) + [rank - 2, rank - 3, rank - 1]
    x = _array.transpose(_math.matmul(rows, _array.transpose(x, perm)), perm)  # [.., new_h, w, c]
    return _math.matmul(cols, x)


def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False,
           name=None):
    """Resizes images to `size` = [new_height, new_width] with TensorFlow 2's methods.

    Args:
        images: [batch, height, width, channels] or [height, width, channels]; a height or
            width unknown while tracing (a decoded file's) gets its weights at run time.
        size: two Python ints (or an eager tensor).
        method: "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
            "gaussian" or "mitchellcubic" (`tl.image.ResizeMethod`).
        preserve_aspect_ratio: scale to fit inside `size`, keeping the aspect ratio.
        antialias: widen the kernel by the downsampling factor (not for "nearest"/"area").

    Returns:
        float32 images (the input dtype for "nearest").

    Raises:
        ValueError: for an unknown method, a size that is not two positive ints, or
            preserve_aspect_ratio with a height or width unknown while tracing.

    Example:
        >>> tl.image.resize(tl.ones((1, 4, 4, 3)), [2, 2]).shape
        TensorShape([1, 2, 2, 3])
    """
    x = _image(images, "resize")
    method = getattr(method, "value", method)
    if method not in _KERNELS and method not in ("nearest", "area"):
        raise ValueError(f"resize: unknown method {method!r}; expected one of "
                         f"{sorted(list(_KERNELS) + ['nearest', 'area'])}")
    size = np.asarray(_static(size, "size", "resize"))
    if size.shape != (2,) or size.dtype.kind not in "iu" or (size <= 0).any():
        raise ValueError(f"resize: size must be two positive ints [height, width], got {size!r}")
    new_h, new_w = int(size[0]), int(size[1])
    if x.shape[-3] is None or x.shape[-2] is None:
        if preserve_aspect_ratio:
            raise ValueError(f"resize: preserve_aspect_ratio needs the image's height and width "
                             f"known while tracing, got shape {x.shape}")
        return _resize_dynamic(x, new_h, new_w, method, antialias)
    h, w = _dim(x, -3, "resize"), _dim(x, -2, "resize")
    if preserve_aspect_ratio:
        scale = min(np.float32(new_h) / np.float32(h), np.float32(new_w) / np.float32(w))
        new_h = int(np.round(np.float32(h) * scale))
        new_w = int(np.round(np.float32(w) * scale))
    if method == "nearest" and not (new_h == h and new_w == w):
        x = _array.gather(x, _nearest_indices(h, new_h), axis=x.shape.rank - 3)
        return _array.gather(x, _nearest_indices(w, new_w), axis=x.shape.rank - 2)
    if method == "nearest":
        return x
    x = _math.cast(x, _dt.float32) if x.dtype is not _dt.float32 else x
    if method == "area":
        wh, ww = _area_weights(h, new_h), _area_weights(w, new_w)
    else:
        wh = _span_weights(h, new_h, method, antialias)
        ww = _span_weights(w, new_w, method, antialias)
    rank = x.shape.rank
    # rows: [..., h, w*c] -> [..., new_h, w*c] (skipped when the weights are the identity)
    if not (new_h == h and np.array_equal(wh, np.eye(h))):
        lead = [-1] if rank > 3 else []
        c = x.shape[-1] if x.shape[-1] is not None else -1
        rows = _math.matmul(convert_to_tensor(wh.astype(np.float32)),
                            _array.reshape(x, lead + [h, w * c if c != -1 else -1]))
        x = _array.reshape(rows, (list(x.shape[:-3]) if rank > 3 and None not in x.shape[:-3]
                                  else lead) + [new_h, w, c])
    # columns: [..., new_h, w, c] -> [..., new_h, new_w, c], batched over the leading dims
    return _math.matmul(convert_to_tensor(ww.astype(np.float32)), x)


# ------------------------------------------------------------------ flips, crops, pads

def flip_left_right(image):
    """Reverses the width axis."""
    x = _image(image, "flip_left_right")
    return _array.reverse(x, [x.shape.rank - 2])


def flip_up_down(image):
    """Reverses the height axis."""
    x = _image(image, "flip_up_down")
    return _array.reverse(x, [x.shape.rank - 3])


def _stateful(seed):
    """Draws of the stateful generator with op seed `seed`: draw(shape) -> float32 in [0, 1)."""
    return lambda shape: _random.uniform(shape, seed=seed)


def _stateless(seed, name):
    """Draws determined by the [2] integer `seed` (TensorFlow's `stateless_random_*`)."""
    if seed is None:
        raise ValueError(f"{name}: needs a seed, a [2] integer tensor (like (1, 2)), got None")

    def draw(shape):
        if is_tensor(shape) or any(d is None for d in shape):
            raise ValueError(f"{name}: the batch size must be known while tracing, got a "
                             f"shape {shape}")
        return _stateless_uniform(list(shape), seed)
    return draw


def _random_flip(image, draw, axis_from_end, name):
    """TensorFlow's random flips: a 3-D image flips with probability 1/2; in a 4-D batch each
    image flips on its own coin (`round(u) * flipped + (1 - round(u)) * image`, as TF)."""
    x = _image(image, name)
    flipped = _array.reverse(x, [x.shape.rank - axis_from_end])
    if x.shape.rank == 3:
        return _math.where(_math.less(draw([]), 0.5), flipped, x)
    batch = x.shape[0]
    coins = _math.round(draw([batch] if batch is not None else _array.shape(x)[:1]))
    flips = _math.cast(_array.reshape(coins, [-1] + [1] * (x.shape.rank - 1)), x.dtype)
    return flips * flipped + (1 - flips) * x


def random_flip_left_right(image, seed=None):
    """Flips an image (each image of a batch) left to right with probability 1/2.

    Example:
        >>> tl.image.random_flip_left_right(tl.ones([4, 4, 3]), seed=1).shape
        TensorShape([4, 4, 3])
    """
    return _random_flip(image, _stateful(seed), 2, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Flips an image (each image of a batch) upside down with probability 1/2."""
    return _random_flip(image, _stateful(seed), 3, "random_flip_up_down")


def stateless_random_flip_left_right(image, seed):
    """`random_flip_left_right` with coins determined by `seed` ([2] ints): the same seed flips
    the same way every call."""
    name = "stateless_random_flip_left_right"
    return _random_flip(image, _stateless(seed, name), 2, name)


def stateless_random_flip_up_down(image, seed):
    """`random_flip_up_down` with coins determined by `seed` ([2] ints)."""
    name = "stateless_random_flip_up_down"
    return _random_flip(image, _stateless(seed, name), 3, name)


def random_crop(value, size, seed=None, name=None, stateless=False):
    """A `size` slice of `value` at a uniformly random offset (every dim), as TensorFlow's.

    Raises:
        InvalidArgumentError: if `size` is larger than `value` in some dim.

    Example:
        >>> tl.image.random_crop(tl.reshape(tl.range(16), [4, 4]), [2, 2], seed=3).shape
        TensorShape([2, 2])
    """
    from ..errors import InvalidArgumentError
    x = convert_to_tensor(value)
    if not is_tensor(size):   # a static size: checked now, as TensorFlow's shape check
        wanted = [int(v) for v in np.asarray(size).reshape(-1)]
        known = x.shape.as_list() if x.shape.rank is not None else None
        if known is not None and (len(wanted) != len(known) or any(
                d is not None and w > d for w, d in zip(wanted, known))):
            raise InvalidArgumentError(f"random_crop: need size <= value's shape in every dim, "
                                       f"got size {wanted} for shape {x.shape}")
    size = convert_to_tensor(size, dtype=_dt.int32)
    shape = _array.shape(x)
    limit = shape - size + 1
    if stateless:
        draws = _stateless_uniform([x.shape.rank], seed, 0, 2 ** 31 - 1, _dt.int32)
    else:
        draws = _random.uniform(_array.shape(shape), maxval=2 ** 31 - 1, dtype=_dt.int32,
                                seed=seed)
    return _array.slice(x, _math.floormod(draws, limit), size)


def stateless_random_crop(value, size, seed, name=None):
    """`random_crop` with the offset determined by `seed` ([2] ints); `value`'s rank must be
    known while tracing."""
    if convert_to_tensor(value).shape.rank is None:
        raise ValueError("stateless_random_crop: the value's rank must be known while tracing")
    return random_crop(value, size, seed, name, stateless=True)


def transpose(image, name=None):
    """Swaps height and width."""
    x = _image(image, "transpose")
    perm = list(range(x.shape.rank))
    perm[-3], perm[-2] = perm[-2], perm[-3]
    return _array.transpose(x, perm)


def rot90(image, k=1, name=None):
    """Rotates by 90 degrees counter-clockwise, `k` times."""
    x = _image(image, "rot90")
    for _ in range(int(_static(k, "k", "rot90")) % 4):
        x = flip_up_down(transpose(x))
    return x


def _crop(x, top, left, height, width):
    begin = [0] * x.shape.rank
    size = [-1] * x.shape.rank
    begin[-3], begin[-2], size[-3], size[-2] = top, left, height, width
    return _array.slice(x, begin, size)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The window [offset_height : +target_height, offset_width : +target_width].

    Raises:
        ValueError: when the window does not fit inside the image.
    """
    x = _image(image, "crop_to_bounding_box")
    top, left, th, tw = (int(_static(v, n, "crop_to_bounding_box")) for v, n in (
        (offset_height, "offset_height"), (offset_width, "offset_width"),
        (target_height, "target_height"), (target_width, "target_width")))
    h, w = x.shape[-3], x.shape[-2]
    if top < 0 or left < 0 or th <= 0 or tw <= 0:
        raise ValueError("crop_to_bounding_box: offsets must be >= 0 and target sizes > 0")
    if (h is not None and top + th > h) or (w is not None and left + tw > w):
        raise ValueError(f"crop_to_bounding_box: the box [{top}:{top + th}, {left}:{left + tw}] "
                         f"does not fit an image of height {h} and width {w}")
    return _crop(x, top, left, th, tw)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads with zeros to [target_height, target_width], the image at the offsets.

    Raises:
        ValueError: when the image does not fit in the target at those offsets.
    """
    x = _image(image, "pad_to_bounding_box")
    top, left, th, tw = (int(_static(v, n, "pad_to_bounding_box")) for v, n in (
        (offset_height, "offset_height"), (offset_width, "offset_width"),
        (target_height, "target_height"), (target_width, "target_width")))
    h, w = _dim(x, -3, "pad_to_bounding_box"), _dim(x, -2, "pad_to_bounding_box")
    bottom, right = th - top - h, tw - left - w
    if top < 0 or left < 0 or bottom < 0 or right < 0:
        raise ValueError(f"pad_to_bounding_box: an image of height {h} and width {w} at offset "
                         f"({top}, {left}) does not fit in ({th}, {tw})")
    paddings = [[0, 0]] * (x.shape.rank - 3) + [[top, bottom], [left, right], [0, 0]]
    return _array.pad(x, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centre-crops and/or zero-pads to [target_height, target_width], as TensorFlow."""
    x = _image(image, "resize_with_crop_or_pad")
    th = int(_static(target_height, "target_height", "resize_with_crop_or_pad"))
    tw = int(_static(target_width, "target_width", "resize_with_crop_or_pad"))
    if th <= 0 or tw <= 0:
        raise ValueError("resize_with_crop_or_pad: target sizes must be > 0")
    h, w = _dim(x, -3, "resize_with_crop_or_pad"), _dim(x, -2, "resize_with_crop_or_pad")
    x = _crop(x, max((h - th) // 2, 0), max((w - tw) // 2, 0), min(th, h), min(tw, w))
    return pad_to_bounding_box(x, max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw)


def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """Resizes keeping the aspect ratio, then zero-pads to the target, as TensorFlow."""
    x = _image(image, "resize_with_pad")
    th, tw = int(target_height), int(target_width)
    h, w = _dim(x, -3, "resize_with_pad"), _dim(x, -2, "resize_with_pad")
    f32 = np.float32   # TensorFlow computes the sizes in float32
    ratio = max(f32(w) / f32(tw), f32(h) / f32(th))
    rh_f, rw_f = f32(h) / ratio, f32(w) / ratio
    resized = resize(x, [int(np.floor(rh_f)), int(np.floor(rw_f))], method=method,
                     antialias=antialias)
    top = max(int(np.floor((f32(th) - rh_f) / f32(2))), 0)
    left = max(int(np.floor((f32(tw) - rw_f) / f32(2))), 0)
    return pad_to_bounding_box(resized, top, left, th, tw)


def central_crop(image, central_fraction):
    """Keeps the central `central_fraction` of height and width, as TensorFlow.

    Raises:
        ValueError: for a fraction outside (0, 1].
    """
    x = _image(image, "central_crop")
    fraction = float(_static(central_fraction, "central_fraction", "central_crop"))
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"central_fraction must be within (0, 1], got {fraction}")
    if fraction == 1.0:
        return x
    if x.shape.rank not in (3, 4):
        raise ValueError(f"central_crop: expected rank 3 or 4, got shape {x.shape}")
    h, w = _dim(x, -3, "central_crop"), _dim(x, -2, "central_crop")
    top = int((h - h * fraction) / 2)
    left = int((w - w * fraction) / 2)
    return _crop(x, top, left, h - 2 * top, w - 2 * left)


# ------------------------------------------------------------------ values

def per_image_standardization(image):
    """(x - mean) / max(stddev, 1/sqrt(pixels)) over each image's height, width and
    channels, in float32 (as TensorFlow)."""
    x = _math.cast(_image(image, "per_image_standardization"), _dt.float32)
    pixels = x.shape[-3:].num_elements()
    if pixels is None:
        pixels = _math.reduce_prod(_array.shape(x)[-3:])
    mean = _math.reduce_mean(x, axis=[-1, -2, -3], keepdims=True)
    std = _math.reduce_std(x, axis=[-1, -2, -3], keepdims=True)
    floor = _math.rsqrt(_math.cast(pixels, _dt.float32))
    return _math.divide(x - mean, _math.maximum(std, floor))


def adjust_brightness(image, delta):
    """Adds `delta` in float, then converts back to the image's dtype (saturating)."""
    x = convert_to_tensor(image)
    flt = _to_float(x)
    out = flt + _math.cast(delta, flt.dtype)
    return convert_image_dtype(out, x.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean per channel of each image (mean over height and
    width), in float, converted back saturating."""
    x = _image(images, "adjust_contrast")
    flt = _to_float(x)
    mean = _math.reduce_mean(flt, axis=[-3, -2], keepdims=True)
    out = (flt - mean) * _math.cast(contrast_factor, flt.dtype) + mean
    return convert_image_dtype(out, x.dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * x ** gamma in float, converted back saturating.

    Raises:
        ValueError: for a negative gamma.
    """
    x = convert_to_tensor(image)
    if not is_tensor(gamma) and gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    flt = _to_float(x)
    out = _math.cast(gain, flt.dtype) * flt ** _math.cast(gamma, flt.dtype)
    return convert_image_dtype(out, x.dtype, saturate=True)


def rgb_to_grayscale(images, name=None):
    """Luma 0.2989 R + 0.5870 G + 0.1140 B, keeping a channel axis of size 1."""
    x = _image(images, "rgb_to_grayscale", min_rank=1)
    flt = convert_image_dtype(x, _dt.float32)
    gray = _math.tensordot(flt, convert_to_tensor([0.2989, 0.5870, 0.1140]), [[-1], [-1]])
    return convert_image_dtype(_array.expand_dims(gray, -1), x.dtype)


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel three times.

    Raises:
        ValueError: when the last axis is not of size 1.
    """
    x = _image(images, "grayscale_to_rgb", min_rank=2)
    if x.shape[-1] not in (1, None):
        raise ValueError(f"grayscale_to_rgb: the last dimension must be 1, got shape {x.shape}")
    return _array.tile(x, [1] * (x.shape.rank - 1) + [3])


def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] to hue, saturation, value in [0, 1], as TensorFlow's kernel."""
    x = _image(images, "rgb_to_hsv", min_rank=1)
    if not x.dtype.is_floating:
        raise TypeError(f"rgb_to_hsv expects floating images, got {x.dtype.name}")
    r, g, b = _array.unstack(x, axis=-1)
    value = _math.reduce_max(x, axis=-1)
    range_ = value - _math.reduce_min(x, axis=-1)
    zero = _array.zeros_like(value)
    safe_value = _math.where(value > 0, value, _array.ones_like(value))
    saturation = _math.where(value > 0, range_ / safe_value, zero)
    safe_range = _math.where(range_ > 0, range_, _array.ones_like(range_))
    norm = 1.0 / (6.0 * safe_range)
    hue = _math.where(r == value, norm * (g - b),
                       _math.where(g == value, norm * (b - r) + 2.0 / 6.0,
                                    norm * (r - g) + 4.0 / 6.0))
    hue = _math.where(range_ > 0, hue, zero)
    hue = _math.where(hue < 0, hue + 1.0, hue)
    return _array.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name=None):
    """Hue, saturation, value in [0, 1] to RGB, as TensorFlow's kernel."""
    x = _image(images, "hsv_to_rgb", min_rank=1)
    if not x.dtype.is_floating:
        raise TypeError(f"hsv_to_rgb expects floating images, got {x.dtype.name}")
    h, s, v = _array.unstack(x, axis=-1)
    dh = h * 6.0
    dr = _math.clip_by_value(_math.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = _math.clip_by_value(2.0 - _math.abs(dh - 2.0), 0.0, 1.0)
    db = _math.clip_by_value(2.0 - _math.abs(dh - 4.0), 0.0, 1.0)
    one_minus_s = 1.0 - s
    return _array.stack([v * (one_minus_s + s * dr), v * (one_minus_s + s * dg),
                         v * (one_minus_s + s * db)], axis=-1)


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the HSV saturation by `saturation_factor` (clipped to [0, 1])."""
    x = _image(image, "adjust_saturation", min_rank=1)
    flt = _to_float(x)
    h, s, v = _array.unstack(rgb_to_hsv(flt), axis=-1)
    s = _math.clip_by_value(s * _math.cast(saturation_factor, flt.dtype), 0.0, 1.0)
    return convert_image_dtype(hsv_to_rgb(_array.stack([h, s, v], axis=-1)), x.dtype)


def adjust_hue(image, delta, name=None):
    """Rotates the HSV hue by `delta` (in [-1, 1], a fraction of the colour circle).

    Raises:
        ValueError: for a delta outside [-1, 1].
    """
    if not is_tensor(delta) and not -1 <= delta <= 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    x = _image(image, "adjust_hue", min_rank=1)
    flt = _to_float(x)
    h, s, v = _array.unstack(rgb_to_hsv(flt), axis=-1)
    h = _math.floormod(h + _math.cast(delta, flt.dtype), _math.cast(1.0, flt.dtype))
    return convert_image_dtype(hsv_to_rgb(_array.stack([h, s, v], axis=-1)), x.dtype)


# ------------------------------------------------------------------ random colour adjustments

def _factor_range(lower, upper, name):
    if upper <= lower:
        raise ValueError(f"{name}: upper must be > lower, got lower={lower}, upper={upper}")
    if lower < 0:
        raise ValueError(f"{name}: lower must be non-negative, got {lower}")


def _delta_range(max_delta, name, at_most=None):
    if max_delta < 0:
        raise ValueError(f"{name}: max_delta must be non-negative, got {max_delta}")
    if at_most is not None and max_delta > at_most:
        raise ValueError(f"{name}: max_delta must be <= {at_most}, got {max_delta}")


def _draw_between(draw, lower, upper):
    return _math.add(_math.multiply(draw([]), float(upper) - float(lower)), float(lower))


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by a delta drawn uniformly from [-max_delta, max_delta)."""
    _delta_range(max_delta, "random_brightness")
    return adjust_brightness(image, _draw_between(_stateful(seed), -max_delta, max_delta))


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn uniformly from [lower, upper)."""
    _factor_range(lower, upper, "random_contrast")
    return adjust_contrast(image, _draw_between(_stateful(seed), lower, upper))


def random_hue(image, max_delta, seed=None):
    """`adjust_hue` by a delta drawn uniformly from [-max_delta, max_delta), max_delta <= 0.5."""
    _delta_range(max_delta, "random_hue", 0.5)
    return adjust_hue(image, _draw_between(_stateful(seed), -max_delta, max_delta))


def random_saturation(image, lower, upper, seed=None):
    """`adjust_saturation` by a factor drawn uniformly from [lower, upper)."""
    _factor_range(lower, upper, "random_saturation")
    return adjust_saturation(image, _draw_between(_stateful(seed), lower, upper))


def stateless_random_brightness(image, max_delta, seed):
    """`random_brightness` with the delta determined by `seed` ([2] ints)."""
    name = "stateless_random_brightness"
    _delta_range(max_delta, name)
    return adjust_brightness(image, _draw_between(_stateless(seed, name), -max_delta, max_delta))


def stateless_random_contrast(image, lower, upper, seed):
    """`random_contrast` with the factor determined by `seed` ([2] ints)."""
    name = "stateless_random_contrast"
    _factor_range(lower, upper, name)
    return adjust_contrast(image, _draw_between(_stateless(seed, name), lower, upper))


def stateless_random_hue(image, max_delta, seed):
    """`random_hue` with the delta determined by `seed` ([2] ints)."""
    name = "stateless_random_hue"
    _delta_range(max_delta, name, 0.5)
    return adjust_hue(image, _draw_between(_stateless(seed, name), -max_delta, max_delta))


def stateless_random_saturation(image, lower, upper, seed=None):
    """`random_saturation` with the factor determined by `seed` ([2] ints)."""
    name = "stateless_random_saturation"
    _factor_range(lower, upper, name)
    return adjust_saturation(image, _draw_between(_stateless(seed, name), lower, upper))


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """The image after a JPEG round trip at `jpeg_quality` (0 to 100, an int or an int32
    tensor): converted to uint8 (saturating), encoded, decoded, converted back to its dtype.
    Pillow's libjpeg encodes, so pixels differ slightly from TensorFlow's."""
    x = _image(image, "adjust_jpeg_quality")
    if x.shape.rank != 3 or x.shape[-1] not in (1, 3):
        raise ValueError(f"adjust_jpeg_quality: expected one image [height, width, 1 or 3], "
                         f"got shape {x.shape}")
    pixels = convert_image_dtype(x, _dt.uint8, saturate=True)
    data = encode_jpeg(pixels, quality=jpeg_quality)
    return convert_image_dtype(decode_jpeg(data, channels=x.shape[-1]), x.dtype, saturate=True)


def _jpeg_range(low, high, name):
    if not (0 <= low <= 100 and 0 <= high <= 100):
        raise ValueError(f"{name}: the JPEG quality range must be within 0 to 100, got "
                         f"[{low}, {high})")
    if low >= high:
        raise ValueError(f"{name}: min_jpeg_quality must be less than max_jpeg_quality, got "
                         f"{low} and {high}")


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` at a quality drawn uniformly from [min, max)."""
    _jpeg_range(min_jpeg_quality, max_jpeg_quality, "random_jpeg_quality")
    quality = _random.uniform([], min_jpeg_quality, max_jpeg_quality, dtype=_dt.int32, seed=seed)
    return adjust_jpeg_quality(image, quality)


def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed):
    """`random_jpeg_quality` with the quality determined by `seed` ([2] ints)."""
    name = "stateless_random_jpeg_quality"
    _jpeg_range(min_jpeg_quality, max_jpeg_quality, name)
    if seed is None:
        raise ValueError(f"{name}: needs a seed, a [2] integer tensor (like (1, 2)), got None")
    quality = _stateless_uniform([], seed, min_jpeg_quality, max_jpeg_quality, _dt.int32)
    return adjust_jpeg_quality(image, quality)
