"""`trainlib.keras.ops.image`: Keras 3's image ops over trainlib's ops.

Owns: resizing (TensorFlow's half-pixel bilinear, nearest and Keys-cubic sampling), crops and
pads, colour-space conversions, patch extraction (as Keras: a convolution with an identity
kernel), Gaussian blur and Sobel edges (depthwise convolutions), `map_coordinates` and
`affine_transform` (order 0 or 1 sampling). Invariants: compositions of trainlib ops only;
sampling positions and weights that depend only on static sizes are computed once in numpy
and enter the graph as constants, so gradients flow to the pixel values through gathers.
Images are channels_last unless `data_format="channels_first"`.
"""
import itertools as _itertools

import numpy as _np

from ...graph import dtypes as _dt
from ...graph.ops import array as _a
from ...graph.ops import linalg as _la
from ...graph.ops import math as _m
from ...graph.ops import stateless_random as _sr
from ...layers.image_augmentation import homography_transforms as _homography
from .._seeds import draw_seed as _draw_seed
from . import nn as _knn
from ._convert import floating as _float, tensor as _t

__all__ = ["affine_transform", "crop_images", "elastic_transform", "extract_patches",
           "extract_patches_3d",
           "gaussian_blur", "hsv_to_rgb", "map_coordinates", "pad_images", "perspective_transform",
           "resize", "rgb_to_grayscale", "rgb_to_hsv", "scale_and_translate", "sobel_edges", "ssim"]


def _nhwc(images, data_format, name):
    x = _t(images)
    if x.shape.rank not in (3, 4):
        raise ValueError(f"{name}: invalid images rank: expected rank 3 (single image) or rank 4 "
                         f"(batch of images). Received input with shape: images.shape={x.shape}")
    single = x.shape.rank == 3
    if single:
        x = _a.expand_dims(x, 0)
    if data_format == "channels_first":
        x = _a.transpose(x, [0, 2, 3, 1])
    return x, single


def _back(y, single, data_format):
    if data_format == "channels_first":
        y = _a.transpose(y, [0, 3, 1, 2])
    return _a.squeeze(y, [0]) if single else y


# ------------------------------------------------------------------ resize

def _linear_taps(n_in, n_out):
    scale = n_in / n_out
    src = (_np.arange(n_out) + 0.5) * scale - 0.5
    lo_f = _np.floor(src)
    frac = src - lo_f
    lo = _np.clip(lo_f, 0, n_in - 1).astype(_np.int32)
    hi = _np.clip(_np.ceil(src), 0, n_in - 1).astype(_np.int32)
    return [(lo, 1.0 - frac), (hi, frac)]


def _nearest_taps(n_in, n_out):
    scale = n_in / n_out
    idx = _np.minimum(_np.floor((_np.arange(n_out) + 0.5) * scale), n_in - 1).astype(_np.int32)
    return [(idx, _np.ones(n_out))]


def _cubic_taps(n_in, n_out, a=-0.5):
    scale = n_in / n_out
    src = (_np.arange(n_out) + 0.5) * scale - 0.5
    base = _np.floor(src)
    t = _np.round((src - base) * 1024) / 1024  # TensorFlow reads its weights from a 1024-step table

    def keys(d):
        d = _np.abs(d)
        return _np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                         _np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    taps = []
    weights = []
    for off in (-1, 0, 1, 2):
        idx = base + off
        w = keys(t - off)
        inside = (idx >= 0) & (idx <= n_in - 1)
        weights.append(_np.where(inside, w, 0.0))  # out-of-range taps dropped, then renormalized
        taps.append(_np.clip(idx, 0, n_in - 1).astype(_np.int32))
    total = _np.sum(weights, axis=0)
    return [(i, w / total) for i, w in zip(taps, weights)]


_TAPS = {"bilinear": _linear_taps, "nearest": _nearest_taps, "bicubic": _cubic_taps}


def _resample_axis(x, axis, n_out, method):
    n_in = x.shape[axis]
    if n_in == n_out and method != "bicubic":
        return x
    out = None
    shape = [1] * x.shape.rank
    shape[axis] = n_out
    for idx, w in _TAPS[method](n_in, n_out):
        g = _a.gather(x, _a.constant(idx), axis=axis)
        if method != "nearest":
            g = g * _a.constant(w.astype(x.dtype.np).reshape(shape))
        out = g if out is None else out + g
    return out


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """`images` resized to `size` (height, width): bilinear, nearest or bicubic sampling with
    half-pixel centres, as TensorFlow's `tf.image.resize`."""
    kernel_methods = {"lanczos3": "lanczos3", "lanczos5": "lanczos5"}
    if antialias:  # TensorFlow samples with scale_and_translate's widened kernels then
        kernel_methods.update(bilinear="linear", bicubic="cubic")
    if interpolation not in _TAPS and interpolation not in kernel_methods:
        raise NotImplementedError(f"keras.ops.image.resize: interpolation {interpolation!r} is not "
                                  f"supported by trainlib (supported: bilinear, nearest, bicubic, "
                                  f"lanczos3, lanczos5)")
    if fill_mode != "constant":
        raise ValueError(f"Invalid value for argument `fill_mode`. Only `'constant'` is supported. "
                         f"Received: fill_mode={fill_mode}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    if len(size) != 2:
        raise ValueError(f"Argument `size` must be a tuple of two elements (height, width). "
                         f"Received: size={size}")
    x, single = _nhwc(images, data_format, "resize")
    src_dtype = x.dtype
    x = _float(x)
    th, tw = int(size[0]), int(size[1])
    h, w = x.shape[1], x.shape[2]
    if crop_to_aspect_ratio:
        ch = max(min(h, int(float(w * th) / tw)), 1)
        cw = max(min(w, int(float(h * tw) / th)), 1)
        top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
        x = x[:, top:top + ch, left:left + cw, :]
    elif pad_to_aspect_ratio:
        ph = max(h, int(float(w * th) / tw))
        pw = max(w, int(float(h * tw) / th))
        top, left = int(float(ph - h) / 2), int(float(pw - w) / 2)
        if top > 0 or left > 0:
            x = _a.pad(x, [[0, 0], [top, top], [left, left], [0, 0]], constant_values=fill_value)
    if interpolation in kernel_methods:
        h, w = x.shape[1], x.shape[2]
        x = scale_and_translate(x, (x.shape[0] or 1, th, tw, x.shape[3]),
                                _a.constant([th / h, tw / w], dtype=x.dtype),
                                _a.zeros([2], x.dtype), (1, 2), kernel_methods[interpolation],
                                antialias=antialias)
    else:
        x = _resample_axis(x, 1, th, interpolation)
        x = _resample_axis(x, 2, tw, interpolation)
    if src_dtype.is_integer and interpolation == "nearest":
        x = _m.cast(x, src_dtype)
    return _back(x, single, data_format)


# ------------------------------------------------------------------ crops and pads

def _hw_of(x, data_format):
    return (x.shape[-3], x.shape[-2]) if data_format != "channels_first" else (x.shape[-2], x.shape[-1])


def _complete(a, b, plus, minus):
    """(a, b), the one of them that is None computed so that a + b == plus - minus."""
    if a is None:
        a = plus - minus - b
    if b is None:
        b = plus - minus - a
    return a, b


def _check_sizes(**sizes):
    for name, v in sizes.items():
        if v < 0:
            raise ValueError(f"{name} must be >= 0. Received: {name}={v}")


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None,
               right_padding=None, target_height=None, target_width=None, data_format=None):
    """`images` zero-padded on each side (sizes or target sizes given)."""
    x = _t(images)
    h, w = _hw_of(x, data_format)
    top_padding, bottom_padding = _complete(top_padding, bottom_padding, target_height, h)
    left_padding, right_padding = _complete(left_padding, right_padding, target_width, w)
    _check_sizes(top_padding=top_padding, left_padding=left_padding,
                 bottom_padding=bottom_padding, right_padding=right_padding)
    spatial = [[top_padding, bottom_padding], [left_padding, right_padding]]
    pads = spatial + [[0, 0]] if data_format != "channels_first" else [[0, 0]] + spatial
    if x.shape.rank == 4:
        pads = [[0, 0]] + pads
    return _a.pad(x, pads)


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None,
                right_cropping=None, target_height=None, target_width=None, data_format=None):
    """`images` cropped on each side (sizes or target sizes given)."""
    x = _t(images)
    h, w = _hw_of(x, data_format)
    top_cropping, target_height = _complete(top_cropping, target_height, h, bottom_cropping)
    left_cropping, target_width = _complete(left_cropping, target_width, w, right_cropping)
    _check_sizes(top_cropping=top_cropping, left_cropping=left_cropping,
                 target_height=target_height, target_width=target_width)
    rows = slice(top_cropping, top_cropping + target_height)
    cols = slice(left_cropping, left_cropping + target_width)
    if data_format == "channels_first":
        return x[..., rows, cols]
    return x[..., rows, cols, :]


# ------------------------------------------------------------------ colour

def rgb_to_grayscale(images, data_format=None):
    """Luma of RGB images (ITU-R 601 weights), one channel kept."""
    x = _t(images)
    axis = -3 if data_format == "channels_first" else -1
    xf = _float(x)
    w = _np.array([0.2989, 0.5870, 0.1140])
    shape = [1] * x.shape.rank
    shape[axis] = 3
    gray = _m.reduce_sum(xf * _a.constant(w.astype(xf.dtype.np).reshape(shape)), axis, keepdims=True)
    return _m.cast(gray, x.dtype) if not x.dtype.is_floating else gray


def _channels(x, data_format):
    axis = -3 if data_format == "channels_first" else -1
    return [_a.squeeze(c, [axis]) for c in _a.split(x, 3, axis=axis)], axis


def rgb_to_hsv(images, data_format=None):
    """RGB images (floats in [0, 1]) converted to HSV."""
    x = _float(images)
    (r, g, b), axis = _channels(x, data_format)
    v = _m.maximum(_m.maximum(r, g), b)
    mn = _m.minimum(_m.minimum(r, g), b)
    rng = v - mn
    s = _m.divide_no_nan(rng, v)
    safe = _m.where(_m.greater(rng, 0), rng, _a.ones_like(rng))
    hr = (g - b) / safe
    hg = (b - r) / safe + 2.0
    hb = (r - g) / safe + 4.0
    h = _m.where(_m.equal(v, r), hr, _m.where(_m.equal(v, g), hg, hb)) / 6.0
    h = _m.where(_m.greater(rng, 0), h, _a.zeros_like(h))
    h = h - _m.floor(h)
    return _a.stack([h, s, v], axis)


def hsv_to_rgb(images, data_format=None):
    """HSV images (floats in [0, 1]) converted to RGB."""
    x = _float(images)
    (h, s, v), axis = _channels(x, data_format)
    dh = h * 6.0

    def channel(shift):
        t = _m.abs(_m.floormod(dh + shift, _m.cast(6.0, x.dtype)) - 3.0) - 1.0
        t = _m.minimum(_m.maximum(t, _a.zeros_like(t)), _a.ones_like(t))
        return ((t - 1.0) * s + 1.0) * v
    return _a.stack([channel(0.0), channel(4.0), channel(2.0)], axis)


# ------------------------------------------------------------------ filters and patches

def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """2-D patches of `size`, flattened into the channel axis (a convolution with an identity
    kernel, as Keras)."""
    x = _float(images)
    ph, pw = (size, size) if isinstance(size, int) else tuple(size)
    if not isinstance(size, int) and len(size) != 2:
        raise NotImplementedError("keras.ops.image.extract_patches: trainlib supports 2-D patches")
    channels = x.shape[-1] if data_format != "channels_first" else x.shape[-3]
    out = ph * pw * channels
    kernel = _a.reshape(_a.eye(out, dtype=x.dtype), [ph, pw, channels, out])
    single = x.shape.rank == 3
    if single:
        x = _a.expand_dims(x, 0)
    y = _knn.conv(x, kernel, strides or (ph, pw), padding, data_format, dilation_rate)
    return _a.squeeze(y, [0]) if single else y


def _depthwise(x, kernel2d, data_format, padding="reflect"):
    x, single = _nhwc(x, data_format, "filter")
    c = x.shape[-1]
    kh, kw = kernel2d.shape
    k = _np.tile(kernel2d.reshape(kh, kw, 1, 1), (1, 1, c, 1)).astype(x.dtype.np)
    if padding == "reflect":
        ph, pw = (kh - 1) // 2, (kw - 1) // 2
        x = _a.pad(x, [[0, 0], [ph, kh - 1 - ph], [pw, kw - 1 - pw], [0, 0]], mode="REFLECT")
    y = _knn.depthwise_conv(x, _a.constant(k), 1, "valid" if padding == "reflect" else "same")
    return _back(y, single, data_format)


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Images blurred by a normalized Gaussian kernel (zero padding, "same" size, as Keras)."""
    x = _float(images)
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    sh, sw = (sigma, sigma) if isinstance(sigma, (int, float)) else sigma

    def g(n, s):
        t = _np.arange(n) - (n - 1) / 2.0
        k = _np.exp(-(t ** 2) / (2.0 * s * s))
        return k / k.sum()
    # Keras builds the 2-D kernel as outer(g(kw, sw), g(kh, sh)) laid out as [kh, kw]
    return _depthwise(x, _np.outer(g(kw, sw), g(kh, sh)).reshape(kh, kw), data_format, "same")


def sobel_edges(images, data_format=None):
    """(dy, dx) Sobel responses stacked on a new last axis (reflect padding, as TensorFlow)."""
    x = _float(images)
    ky = _np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], dtype=_np.float64)
    kx = ky.T
    y = _depthwise(x, ky, data_format)
    xx = _depthwise(x, kx, data_format)
    return _a.stack([y, xx], -1)


# ------------------------------------------------------------------ sampling at coordinates

def _fix_index(idx, size, fill_mode):
    if fill_mode == "nearest":
        return _m.minimum(_m.maximum(idx, 0), size - 1)
    if fill_mode == "wrap":
        return _m.floormod(idx, size)
    if fill_mode in ("reflect", "mirror"):
        if fill_mode == "mirror":
            period = 2 * (size - 1) if size > 1 else 1
            i = _m.abs(_m.floormod(idx, period))
            return _m.where(_m.greater_equal(i, size), period - i, i)
        period = 2 * size
        i = _m.floormod(idx, period)
        return _m.where(_m.greater_equal(i, size), period - 1 - i, i)
    return idx  # constant: out-of-range taps are masked by the caller


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0.0):
    """`inputs` sampled at `coordinates` (one array per input dim) with order 0 (nearest) or 1
    (linear) interpolation; points outside follow `fill_mode`."""
    x = _t(inputs)
    coords = [_float(c) for c in coordinates]
    if len(coords) != x.shape.rank:
        raise ValueError(f"map_coordinates needs {x.shape.rank} coordinate arrays, got {len(coords)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates supports order 0 and 1, got {order}")
    dtype = coords[0].dtype
    xf = _m.cast(x, dtype) if not x.dtype.is_floating else x
    per_dim = []
    for c, n in zip(coords, x.shape):
        if order == 0:
            idx = _m.cast(_m.round(c), _dt.int32)
            per_dim.append([(idx, None)])
        else:
            lo = _m.floor(c)
            w = c - lo
            lo_i = _m.cast(lo, _dt.int32)
            per_dim.append([(lo_i, 1.0 - w), (lo_i + 1, w)])
    out = None
    flat = _a.reshape(xf, [-1])
    strides = _np.cumprod([1] + list(x.shape)[::-1])[:-1][::-1]
    for combo in _itertools.product(*per_dim):
        valid = None
        lin = None
        weight = None
        for (idx, w), n, st in zip(combo, x.shape, strides):
            inside = _m.logical_and(_m.greater_equal(idx, 0), _m.less(idx, n))
            fixed = _fix_index(idx, n, fill_mode)
            if fill_mode == "constant":
                fixed = _m.minimum(_m.maximum(fixed, 0), n - 1)
                valid = inside if valid is None else _m.logical_and(valid, inside)
            term = fixed * int(st)
            lin = term if lin is None else lin + term
            if w is not None:
                weight = w if weight is None else weight * w
        v = _a.gather(flat, lin)
        if valid is not None:
            v = _m.where(valid, v, _a.fill(_a.shape(v), _m.cast(fill_value, dtype)))
        v = v if weight is None else v * weight
        out = v if out is None else out + v
    return _m.cast(out, x.dtype) if not x.dtype.is_floating else out


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0, data_format=None):
    """Images warped by projective transforms [a0, a1, a2, b0, b1, b2, c0, c1] mapping output
    points (x, y) to input points ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),
    k = c0 x + c1 y + 1 (TensorFlow's ImageProjectiveTransform)."""
    x, single = _nhwc(images, data_format, "affine_transform")
    order = {"nearest": 0, "bilinear": 1}.get(interpolation)
    if order is None:
        raise NotImplementedError(f"affine_transform supports nearest and bilinear, got "
                                  f"{interpolation!r}")
    t = _float(transform)
    n, h, w, c = x.shape
    xf = _float(x)
    if t.dtype is not xf.dtype:
        t = _m.cast(t, xf.dtype)
    if t.shape.rank == 1:
        t = _a.expand_dims(t, 0)
    ys, xs = _np.meshgrid(_np.arange(h), _np.arange(w), indexing="ij")
    xs_t = _a.constant(xs.astype(xf.dtype.np))
    ys_t = _a.constant(ys.astype(xf.dtype.np))
    outs = []
    for i in range(n):
        ti = t[i] if t.shape[0] != 1 else t[0]
        k = ti[6] * xs_t + ti[7] * ys_t + 1.0
        src_x = (ti[0] * xs_t + ti[1] * ys_t + ti[2]) / k
        src_y = (ti[3] * xs_t + ti[4] * ys_t + ti[5]) / k
        chans = []
        for ch in range(c):
            chans.append(map_coordinates(xf[i, :, :, ch], [src_y, src_x], order, fill_mode,
                                         fill_value))
        outs.append(_a.stack(chans, -1))
    y = _a.stack(outs, 0)
    if not x.dtype.is_floating:
        y = _m.cast(y, x.dtype)
    return _back(y, single, data_format)


# ------------------------------------------------------------------ perspective, 3-D patches, SSIM

def perspective_transform(images, start_points, end_points, interpolation="bilinear",
                          fill_value=0, data_format=None):
    """Images warped so that `start_points` ([4, 2] or [N, 4, 2], (x, y)) move to `end_points`."""
    start = _t(start_points, _dt.float32)
    end = _t(end_points, _dt.float32)
    for name, p in (("start_points", start), ("end_points", end)):
        if p.shape.rank not in (2, 3) or tuple(p.shape)[-2:] != (4, 2):
            raise ValueError(f"Invalid {name} shape: expected (4,2) for a single image or (N,4,2) "
                             f"for a batch. Received shape: {p.shape}")
    if start.shape.rank == 2:
        start, end = _a.expand_dims(start, 0), _a.expand_dims(end, 0)
    return affine_transform(images, _homography(start, end), interpolation, "constant", fill_value,
                            data_format)


def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid",
                       data_format=None):
    """3-D patches of `size` (depth, height, width) flattened into the channel axis, in the order
    of Keras's identity-kernel convolution (patch depth, row, column, then channel)."""
    x = _t(volumes)
    single = x.shape.rank == 4
    if single:
        x = _a.expand_dims(x, 0)
    if data_format == "channels_first":
        x = _a.transpose(x, [0, 2, 3, 4, 1])
    sz = (size,) * 3 if isinstance(size, int) else tuple(size)
    st = sz if not strides else ((strides,) * 3 if isinstance(strides, int) else tuple(strides))
    dl = (dilation_rate,) * 3 if isinstance(dilation_rate, int) else tuple(dilation_rate)
    dims = list(x.shape[1:4])
    if padding.lower() == "same":
        pads = []
        for n, k, s, d in zip(dims, sz, st, dl):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            pads.append([total // 2, total - total // 2])
        x = _a.pad(x, [[0, 0]] + pads + [[0, 0]])
        dims = [n + p[0] + p[1] for n, p in zip(dims, pads)]
    elif padding.lower() != "valid":
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    for i, (n, k, s, d) in enumerate(zip(dims, sz, st, dl)):
        axis = 1 + 2 * i  # each dim done so far became (count, k)
        count = (n - (k - 1) * d - 1) // s + 1
        idx = (_np.arange(count)[:, None] * s + _np.arange(k)[None, :] * d).reshape(-1)
        x = _a.gather(x, _a.constant(idx.astype(_np.int32)), axis=axis)
        shape = list(x.shape)
        x = _a.reshape(x, [-1] + shape[1:axis] + [count, k] + shape[axis + 1:])
    # now [N, od, pd, oh, ph, ow, pw, C] -> [N, od, oh, ow, pd, ph, pw, C]
    x = _a.transpose(x, [0, 1, 3, 5, 2, 4, 6, 7])
    s = list(x.shape)
    x = _a.reshape(x, [-1, s[1], s[2], s[3], s[4] * s[5] * s[6] * s[7]])
    if data_format == "channels_first":
        x = _a.transpose(x, [0, 4, 1, 2, 3])
    return _a.squeeze(x, [0]) if single else x


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         data_format=None):
    """The structural similarity of two images (Gaussian windows, "valid" borders), averaged
    over positions and channels: one value per image."""
    a, single = _nhwc(image1, data_format, "ssim")
    b, _ = _nhwc(image2, data_format, "ssim")
    original = a.dtype
    a, b = _float(a), _m.cast(_float(b), _float(a).dtype)
    n, h, w, c = a.shape
    t = _np.arange(filter_size) - (filter_size - 1) / 2.0
    g = _np.exp(-(t ** 2) / (2.0 * filter_sigma ** 2))
    g = g / g.sum()
    kernel = _a.constant(_np.outer(g, g).reshape(filter_size, filter_size, 1, 1).astype(a.dtype.np))

    def per_channel(x):
        return _a.reshape(_a.transpose(x, [0, 3, 1, 2]), [-1, h, w, 1])

    def blur(x):
        return _knn.conv(x, kernel, 1, "valid")
    x, y = per_channel(a), per_channel(b)
    mu1, mu2 = blur(x), blur(y)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    s11 = blur(x * x) - mu1 * mu1
    s22 = blur(y * y) - mu2 * mu2
    s12 = blur(x * y) - mu1 * mu2
    ssim_map = ((2.0 * mu1 * mu2 + c1) * (2.0 * s12 + c2)) / \
        ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
    per_image = _m.reduce_mean(_a.reshape(_m.reduce_mean(ssim_map, [1, 2, 3]), [-1, c]), -1)
    out = _a.squeeze(per_image, [0]) if single else per_image
    return _m.cast(out, original) if original.is_floating else out


# ------------------------------------------------------------------ scale and translate

def _triangle(x):
    return _m.maximum(1.0 - _m.abs(x), _a.zeros_like(x))


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = _m.where(_m.greater_equal(x, 1.0), ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return _m.where(_m.greater_equal(x, 2.0), _a.zeros_like(x), out)


def _lanczos(radius):
    def kernel(x):
        safe = _m.where(_m.not_equal(x, 0.0), x, _a.ones_like(x))
        y = radius * _m.sin(_np.pi * safe) * _m.sin(_np.pi * safe / radius) / (_np.pi ** 2 * safe * safe)
        out = _m.where(_m.greater(x, 1e-3), y, _a.ones_like(x))
        return _m.where(_m.greater(x, radius), _a.zeros_like(x), out)
    return kernel


_SCALE_KERNELS = {"linear": _triangle, "cubic": _keys_cubic, "lanczos3": _lanczos(3.0),
                  "lanczos5": _lanczos(5.0)}
_METHOD_NAMES = {"linear": "linear", "bilinear": "linear", "trilinear": "linear",
                 "triangle": "linear", "cubic": "cubic", "bicubic": "cubic", "tricubic": "cubic",
                 "lanczos3": "lanczos3", "lanczos5": "lanczos5"}


def _weight_matrix(n_in, n_out, scale, translation, kernel, antialias):
    """[n_in, n_out] resampling weights: the kernel at each input sample around each output
    sample's source position, normalized per output, zero for outputs sampling outside."""
    dtype = scale.dtype
    inv = 1.0 / scale
    kernel_scale = _m.maximum(inv, _m.cast(1.0, dtype)) if antialias else _m.cast(1.0, dtype)
    sample = (_m.cast(_a.range(n_out), dtype) + 0.5) * inv - translation * inv - 0.5
    x = _m.abs(_a.expand_dims(sample, 0) - _a.expand_dims(_m.cast(_a.range(n_in), dtype), 1)) / \
        kernel_scale
    w = kernel(x)
    total = _m.reduce_sum(w, 0, keepdims=True)
    tiny = 1000.0 * float(_np.finfo(_np.float32).eps)
    w = _m.where(_m.greater(_m.abs(total), tiny),
                 w / _m.where(_m.not_equal(total, 0.0), total, _a.ones_like(total)), _a.zeros_like(w))
    inside = _m.logical_and(_m.greater_equal(sample, -0.5), _m.less_equal(sample, n_in - 0.5))
    return _m.where(_a.expand_dims(inside, 0), w, _a.zeros_like(w))


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):
    """`images` resampled to `output_shape` along `spatial_dims` with per-dim `scale` and
    `translation` (JAX's scale_and_translate: linear, cubic, lanczos3 or lanczos5 kernels,
    widened when downscaling with antialias)."""
    if method not in _METHOD_NAMES:
        raise ValueError(f"Invalid value for argument `method`. Expected of one "
                         f"{sorted(_METHOD_NAMES)}. Received: method={method}")
    kernel = _SCALE_KERNELS[_METHOD_NAMES[method]]
    x = _t(images)
    scale, translation = _float(scale), _float(translation)
    if scale.dtype is not translation.dtype:
        d = _dt.float64 if _dt.float64 in (scale.dtype, translation.dtype) else _dt.float32
        scale, translation = _m.cast(scale, d), _m.cast(translation, d)
    rounding = not x.dtype.is_floating
    out = _m.cast(x, _dt.float32) if rounding else x
    rank = x.shape.rank
    for i, d in enumerate(spatial_dims):
        d %= rank
        w = _m.cast(_weight_matrix(x.shape[d], int(output_shape[d]), scale[i], translation[i],
                                   kernel, antialias), out.dtype)
        out = _m.tensordot(out, w, [[d], [0]])
        perm = list(range(rank - 1))
        perm.insert(d, rank - 1)
        out = _a.transpose(out, perm)
    if rounding:
        out = _m.minimum(_m.maximum(_m.round(out), _m.cast(_m.reduce_min(x), out.dtype)),
                         _m.cast(_m.reduce_max(x), out.dtype))
        out = _m.cast(out, x.dtype)
    return out


# ------------------------------------------------------------------ elastic transform

def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect",
                      fill_value=0.0, seed=None, data_format=None):
    """Images displaced by a random smooth field: normal noise blurred by a Gaussian of `sigma`
    (kernel 6 sigma + 1), scaled by `alpha`, then sampled with `map_coordinates`; `seed` follows
    `keras.random`'s rules. As Keras, the x and y displacements come from one draw."""
    x, single = _nhwc(images, data_format, "elastic_transform")
    dtype = x.dtype if x.dtype.is_floating else _dt.float32
    n, h, w, c = x.shape
    k = int(sigma) * 6 | 1
    noise = _sr.stateless_normal([n, h, w], _draw_seed(seed), dtype=dtype) * sigma
    field = _a.squeeze(gaussian_blur(_a.expand_dims(noise, -1), (k, k), (sigma, sigma)), [-1])
    rows, cols = _np.meshgrid(_np.arange(h), _np.arange(w), indexing="ij")
    src_y = _a.constant(rows.astype(dtype.np)) + alpha * field
    src_x = _a.constant(cols.astype(dtype.np)) + alpha * field
    order = {"nearest": 0, "bilinear": 1}[interpolation]
    xf = _m.cast(x, dtype) if x.dtype is not dtype else x
    out = _a.stack([_a.stack([map_coordinates(xf[b, :, :, ch], [src_y[b], src_x[b]], order,
                                              fill_mode, fill_value) for ch in range(c)], -1)
                    for b in range(n)], 0)
    out = _m.cast(out, x.dtype) if x.dtype is not dtype else out
    return _back(out, single, data_format)
