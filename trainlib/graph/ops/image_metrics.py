"""`tl.image`'s image-quality measures and linear colour spaces: `psnr`, `ssim`,
`ssim_multiscale`, `total_variation`, `image_gradients`, `sobel_edges`, `rgb_to_yiq`,
`yiq_to_rgb`, `rgb_to_yuv`, `yuv_to_rgb`.

Owns nothing but compositions of existing ops (so their gradients follow from theirs), with
TensorFlow's semantics: SSIM filters with an 11x11 Gaussian (softmax of -x^2/(2 sigma^2))
as a VALID depthwise convolution, MS-SSIM halves the images with 2x2 average pooling after a
symmetric pad of odd sizes, PSNR/SSIM convert images with `convert_image_dtype` to float32
and `max_val` likewise (so uint8 images with max_val=255 compare in [0, 1]).
Invariants: images are [..., height, width, channels]; two images' last three dims must
agree and their leading dims broadcast.
"""
import numpy as np  # filter taps and colour matrices are host constants

from .. import dtypes as _dt
from ..op import convert_to_tensor
from . import array as _array
from . import math as _math
from . import nn as _nn
from .image import _image, convert_image_dtype

__all__ = ["psnr", "ssim", "ssim_multiscale", "total_variation", "image_gradients",
           "sobel_edges", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"]


def _pair(img1, img2, name):
    a, b = _image(img1, name), _image(img2, name)
    s1, s2 = a.shape, b.shape
    if not s1[-3:].is_compatible_with(s2[-3:]):
        raise ValueError(f"{name}: the two images' [height, width, channels] must agree, got "
                         f"shapes {s1} and {s2}")
    for d1, d2 in zip(reversed(list(s1)[:-3]), reversed(list(s2)[:-3])):
        if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
            raise ValueError(f"{name}: the two images' batch dimensions do not broadcast, got "
                             f"shapes {s1} and {s2}")
    return a, b


def _as_float(img1, img2, max_val):
    max_val = convert_image_dtype(_math.cast(max_val, img1.dtype), _dt.float32)
    return (convert_image_dtype(img1, _dt.float32), convert_image_dtype(img2, _dt.float32),
            max_val)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio in dB per image: 20 log10(max_val) - 10 log10(MSE).

    Example:
        >>> round(float(tl.image.psnr(tl.zeros([4, 4, 1]), tl.fill([4, 4, 1], 0.1), 1.0)), 3)
        20.0
    """
    a, b = _pair(a, b, "psnr")
    a, b, max_val = _as_float(a, b, max_val)
    mse = _math.reduce_mean(_math.squared_difference(a, b), [-3, -2, -1])
    peak = _math.divide(_math.multiply(_math.log(max_val), 20.0), _math.log(10.0))
    return _math.subtract(peak, _math.multiply(_math.log(mse), np.float32(10 / np.log(10))))


def _unflatten(out, like):
    """`out` [n, h', w', c'] reshaped to `like`'s leading dims, static where they are known."""
    lead = list(like.shape[:-3])
    if lead.count(None) <= 1 and None not in out.shape[1:]:
        return _array.reshape(out, [-1 if d is None else d for d in lead] + list(out.shape[1:]))
    return _array.reshape(out, _array.concat([_array.shape(like)[:-3], _array.shape(out)[1:]], 0))


def _gaussian_taps(size, sigma):
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).astype(np.float64)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2, index_map=False):
    for img in (x, y):
        for axis in (-3, -2):
            d = img.shape[axis]
            if d is not None and d < filter_size:
                raise ValueError(f"ssim: the images' height and width must be at least "
                                 f"filter_size={filter_size}, got shape {img.shape}")
    channels = x.shape[-1]
    if channels is None:
        raise ValueError(f"ssim: the number of channels must be known while tracing, got "
                         f"shape {x.shape}")
    taps = np.tile(_gaussian_taps(filter_size, filter_sigma)[:, :, None, None],
                   [1, 1, channels, 1])
    kernel = convert_to_tensor(taps)

    def reducer(z):
        flat = _array.reshape(z, [-1] + [-1 if d is None else d for d in z.shape[-3:]]
                              if list(z.shape[-3:]).count(None) <= 1
                              else _array.concat([[-1], _array.shape(z)[-3:]], 0))
        return _unflatten(_nn.depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID"), z)

    c1 = _math.square(_math.multiply(max_val, k1))
    c2 = _math.square(_math.multiply(max_val, k2))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = _math.multiply(_math.multiply(mean0, mean1), 2.0)
    den0 = _math.add(_math.square(mean0), _math.square(mean1))
    luminance = _math.divide(_math.add(num0, c1), _math.add(den0, c1))
    num1 = _math.multiply(reducer(_math.multiply(x, y)), 2.0)
    den1 = reducer(_math.add(_math.square(x), _math.square(y)))
    cs = _math.divide(_math.add(_math.subtract(num1, num0), c2),
                      _math.add(_math.subtract(den1, den0), c2))
    value = _math.multiply(luminance, cs)
    if index_map:
        return value, cs
    return _math.reduce_mean(value, [-3, -2]), _math.reduce_mean(cs, [-3, -2])


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity per image (mean over the Gaussian-filtered map and channels), or
    the per-pixel map [..., h - filter_size + 1, w - filter_size + 1] with
    `return_index_map=True`. Images must be at least `filter_size` high and wide."""
    a, b = _pair(img1, img2, "ssim")
    a, b, max_val = _as_float(a, b, max_val)
    per_channel, _ = _ssim_per_channel(a, b, max_val, int(filter_size), filter_sigma, k1, k2,
                                       return_index_map)
    return _math.reduce_mean(per_channel, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: the contrast-structure terms of len(power_factors) - 1 scales and the
    SSIM of the last, each halved by 2x2 average pooling, combined as a weighted geometric
    product (TensorFlow's default weights). Height and width must be known while tracing and
    stay >= filter_size at the coarsest scale."""
    a, b = _pair(img1, img2, "ssim_multiscale")
    for axis in (-3, -2):
        if a.shape[axis] is None:
            raise ValueError(f"ssim_multiscale: the images' height and width must be known while "
                             f"tracing, got shape {a.shape}")
    a, b, max_val = _as_float(a, b, max_val)
    imgs = [a, b]
    mcs = []
    for k in range(len(power_factors)):
        if k > 0:
            h, w = imgs[0].shape[-3], imgs[0].shape[-2]
            flat = [_array.reshape(x, [-1] + list(x.shape[-3:])) for x in imgs]
            if h % 2 or w % 2:
                pad = [[0, 0], [0, h % 2], [0, w % 2], [0, 0]]
                flat = [_array.pad(x, pad, mode="SYMMETRIC") for x in flat]
            down = [_nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for x in flat]
            imgs = [_unflatten(d, x) for d, x in zip(down, imgs)]
        per_channel, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, int(filter_size),
                                            filter_sigma, k1, k2)
        mcs.append(_nn.relu(cs))
    mcs.pop()
    stacked = _array.stack(mcs + [_nn.relu(per_channel)], axis=-1)
    weights = convert_to_tensor(np.asarray(power_factors, np.float32))
    return _math.reduce_mean(_math.reduce_prod(_math.pow(stacked, weights), [-1]), [-1])


def total_variation(images, name=None):
    """Sum of absolute differences between vertical and horizontal neighbours: a scalar for
    one [h, w, c] image, one value per image for a batch."""
    x = convert_to_tensor(images)
    rank = x.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"total_variation: images must be 3-D [h, w, c] or 4-D [batch, h, w, c], "
                         f"got shape {x.shape}")
    lead = [slice(None)] * (rank - 3)
    down = _math.subtract(x[tuple(lead + [slice(1, None)])], x[tuple(lead + [slice(None, -1)])])
    right = _math.subtract(x[tuple(lead + [slice(None), slice(1, None)])],
                           x[tuple(lead + [slice(None), slice(None, -1)])])
    axis = None if rank == 3 else [1, 2, 3]
    return _math.add(_math.reduce_sum(_math.abs(down), axis),
                     _math.reduce_sum(_math.abs(right), axis))


def image_gradients(image):
    """(dy, dx): forward differences of a [batch, h, w, d] image, zero in the last row (dy) and
    the last column (dx), each shaped as the image."""
    x = convert_to_tensor(image)
    if x.shape.rank != 4:
        raise ValueError(f"image_gradients: expected a 4-D tensor [batch, h, w, d], got shape "
                         f"{x.shape}")
    dy = _math.subtract(x[:, 1:], x[:, :-1])
    dx = _math.subtract(x[:, :, 1:], x[:, :, :-1])
    dy = _array.concat([dy, _array.zeros_like(x[:, :1])], 1)
    dx = _array.concat([dx, _array.zeros_like(x[:, :, :1])], 2)
    return dy, dx


_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                   [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]).transpose(1, 2, 0)[:, :, None, :]


def sobel_edges(image):
    """Sobel responses of a [batch, h, w, d] image (reflect-padded): [batch, h, w, d, 2],
    the vertical (dy) kernel first, the horizontal (dx) second."""
    x = convert_to_tensor(image)
    if x.shape.rank != 4 or x.shape[-1] is None:
        raise ValueError(f"sobel_edges: expected a 4-D tensor [batch, h, w, d] with d known, got "
                         f"shape {x.shape}")
    kernel = convert_to_tensor(np.tile(_SOBEL, [1, 1, x.shape[-1], 1]).astype(
        x.dtype.as_numpy_dtype))
    padded = _array.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = _nn.depthwise_conv2d(padded, kernel, [1, 1, 1, 1], "VALID")
    return _array.reshape(out, _array.concat([_array.shape(x), [2]], 0))


def _linear_colour(matrix):
    def convert(images):
        x = convert_to_tensor(images)
        if x.shape.rank is None or x.shape[-1] not in (3, None):
            raise ValueError(f"expected images with 3 channels in the last dimension, got shape "
                             f"{x.shape}")
        kernel = convert_to_tensor(np.asarray(matrix), dtype=x.dtype)
        return _math.tensordot(x, kernel, [[x.shape.rank - 1], [0]])
    return convert


def _colour_api(name, matrix, doc):
    fn = _linear_colour(matrix)

    def api(images):
        try:
            return fn(images)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    api.__name__ = api.__qualname__ = name
    api.__doc__ = doc
    return api


rgb_to_yiq = _colour_api("rgb_to_yiq", [[0.299, 0.59590059, 0.2115],
                                        [0.587, -0.27455667, -0.52273617],
                                        [0.114, -0.32134392, 0.31119955]],
                         "RGB images in [0, 1] to YIQ (a 3x3 matrix on the last axis).")
yiq_to_rgb = _colour_api("yiq_to_rgb", [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
                                        [0.6208248, -0.64720424, 1.70423049]],
                         "YIQ images back to RGB (the inverse of `rgb_to_yiq`).")
rgb_to_yuv = _colour_api("rgb_to_yuv", [[0.299, -0.14714119, 0.61497538],
                                        [0.587, -0.28886916, -0.51496512],
                                        [0.114, 0.43601035, -0.10001026]],
                         "RGB images in [0, 1] to YUV (a 3x3 matrix on the last axis).")
yuv_to_rgb = _colour_api("yuv_to_rgb", [[1, 1, 1], [0, -0.394642334, 2.03206185],
                                        [1.13988303, -0.58062185, 0]],
                         "YUV images back to RGB (the inverse of `rgb_to_yuv`).")
