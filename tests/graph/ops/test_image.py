"""tl.image against numpy references written from the definitions (half-pixel bilinear with
clamped taps, nearest, area by overlap, HSV formulas, TensorFlow's dtype scaling), eager ==
traced, and float64 finite-difference gradients of the compositions."""
import colorsys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl


rng = np.random.default_rng(0)
IMG = rng.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)


def _bilinear_reference(x, new_h, new_w):
    """TensorFlow 2's ResizeBilinear(half_pixel_centers=True), loop by loop."""
    h, w = x.shape[-3:-1]
    out = np.zeros(x.shape[:-3] + (new_h, new_w, x.shape[-1]))
    for i in range(new_h):
        fy = (i + 0.5) * h / new_h - 0.5
        y0, dy = int(np.floor(fy)), fy - np.floor(fy)
        ya, yb = min(max(y0, 0), h - 1), min(max(y0 + 1, 0), h - 1)
        for j in range(new_w):
            fx = (j + 0.5) * w / new_w - 0.5
            x0, dx = int(np.floor(fx)), fx - np.floor(fx)
            xa, xb = min(max(x0, 0), w - 1), min(max(x0 + 1, 0), w - 1)
            top = x[..., ya, xa, :] * (1 - dx) + x[..., ya, xb, :] * dx
            bottom = x[..., yb, xa, :] * (1 - dx) + x[..., yb, xb, :] * dx
            out[..., i, j, :] = top * (1 - dy) + bottom * dy
    return out


def _area_reference(x, new_h, new_w):
    h, w = x.shape[-3:-1]
    out = np.zeros(x.shape[:-3] + (new_h, new_w, x.shape[-1]))
    sy, sx = h / new_h, w / new_w
    for i in range(new_h):
        for j in range(new_w):
            total = 0
            for yy in range(int(np.floor(i * sy)), int(np.ceil((i + 1) * sy))):
                wy = min(yy + 1, (i + 1) * sy) - max(yy, i * sy)
                for xx in range(int(np.floor(j * sx)), int(np.ceil((j + 1) * sx))):
                    wx = min(xx + 1, (j + 1) * sx) - max(xx, j * sx)
                    total = total + wy * wx * x[..., min(yy, h - 1), min(xx, w - 1), :]
            out[..., i, j, :] = total / (sy * sx)
    return out


@settings(max_examples=12, deadline=None)
@given(new_h=st.integers(1, 9), new_w=st.integers(1, 9), single=st.booleans())
def test_resize_bilinear_nearest_area_against_loops(new_h, new_w, single):
    x = IMG[0] if single else IMG
    got = tl.image.resize(x, [new_h, new_w]).numpy()
    np.testing.assert_allclose(got, _bilinear_reference(x, new_h, new_w), rtol=1e-5, atol=1e-6)
    got = tl.image.resize(x, [new_h, new_w], method="area").numpy()
    np.testing.assert_allclose(got, _area_reference(x, new_h, new_w), rtol=1e-5, atol=1e-6)
    rows = np.minimum(np.floor((np.arange(new_h) + 0.5) * 5 / new_h), 4).astype(int)
    cols = np.minimum(np.floor((np.arange(new_w) + 0.5) * 7 / new_w), 6).astype(int)
    u8 = (x * 255).astype(np.uint8)
    nearest = tl.image.resize(u8, [new_h, new_w], method="nearest")
    assert nearest.dtype is tl.uint8
    np.testing.assert_array_equal(nearest.numpy(), u8[..., rows, :, :][..., cols, :])


@pytest.mark.parametrize("method", ["bicubic", "lanczos3", "lanczos5", "gaussian",
                                    "mitchellcubic"])
def test_other_kernels_keep_constants_and_sizes(method):
    flat = np.full((1, 6, 4, 2), 0.25, np.float32)
    for antialias in (False, True):
        out = tl.image.resize(flat, [3, 9], method=method, antialias=antialias)
        assert out.dtype is tl.float32 and tuple(out.shape) == (1, 3, 9, 2)
        np.testing.assert_allclose(out.numpy(), 0.25, rtol=1e-5)   # weights sum to one


def test_resize_traced_equals_eager_and_errors():
    f = tl.function(lambda x: tl.image.resize(x, [3, 4], method="bicubic", antialias=True),
                    input_signature=[tl.TensorSpec([None, 5, 7, 3], tl.float32)])
    np.testing.assert_allclose(f(IMG).numpy(), tl.image.resize(IMG, [3, 4], method="bicubic",
                                                               antialias=True).numpy(),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="unknown method"):
        tl.image.resize(IMG, [2, 2], method="cubic")
    with pytest.raises(ValueError, match="two positive ints"):
        tl.image.resize(IMG, [0, 2])
    with pytest.raises(ValueError, match="rank 3"):
        tl.image.resize(IMG[0, 0], [2, 2])
    g = tl.function(lambda x: tl.image.resize(x, [2, 2]),
                    input_signature=[tl.TensorSpec([1, None, None, 3], tl.float32)])
    np.testing.assert_allclose(g(IMG[:1]).numpy(), tl.image.resize(IMG[:1], [2, 2]).numpy(),
                               atol=1e-6)   # a size known only at run time (decoded files)


def test_crops_pads_flips():
    x = IMG
    np.testing.assert_array_equal(tl.image.flip_left_right(x).numpy(), x[:, :, ::-1])
    np.testing.assert_array_equal(tl.image.flip_up_down(x).numpy(), x[:, ::-1])
    np.testing.assert_array_equal(tl.image.rot90(x[0], 1).numpy(), np.rot90(x[0], 1))
    np.testing.assert_array_equal(tl.image.transpose(x).numpy(), x.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(tl.image.crop_to_bounding_box(x, 1, 2, 3, 4).numpy(),
                                  x[:, 1:4, 2:6])
    padded = tl.image.pad_to_bounding_box(x, 1, 2, 8, 10).numpy()
    assert padded.shape == (2, 8, 10, 3) and padded.sum() == pytest.approx(x.sum(), rel=1e-5)
    np.testing.assert_array_equal(padded[:, 1:6, 2:9], x)
    np.testing.assert_array_equal(tl.image.central_crop(x, 0.5).numpy(), x[:, 1:4, 1:6])
    np.testing.assert_array_equal(tl.image.resize_with_crop_or_pad(x, 3, 9).numpy()[:, :, 1:8],
                                  x[:, 1:4])
    with pytest.raises(ValueError, match="does not fit"):
        tl.image.crop_to_bounding_box(x, 3, 0, 3, 2)
    with pytest.raises(ValueError, match="central_fraction"):
        tl.image.central_crop(x, 1.5)


def test_convert_image_dtype_scaling():
    u8 = np.array([0, 1, 128, 255], np.uint8)
    np.testing.assert_allclose(tl.image.convert_image_dtype(u8, tl.float32).numpy(), u8 / 255,
                               rtol=1e-6)
    f = np.array([0.0, 0.5, 0.999, 1.2], np.float32)
    np.testing.assert_array_equal(tl.image.convert_image_dtype(f[:3], tl.uint8).numpy(),
                                  (f[:3] * 255.5).astype(np.uint8))
    np.testing.assert_array_equal(
        tl.image.convert_image_dtype(f, tl.uint8, saturate=True).numpy()[-1], 255)
    np.testing.assert_array_equal(tl.image.convert_image_dtype(u8, tl.int16).numpy(),
                                  u8.astype(np.int16) * 128)
    np.testing.assert_array_equal(
        tl.image.convert_image_dtype(np.array([32767, 128], np.int16), tl.uint8).numpy(), [255, 1])


def test_standardization_and_adjustments_against_numpy():
    x = IMG
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(x.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(5 * 7 * 3))
    np.testing.assert_allclose(tl.image.per_image_standardization(x).numpy(), (x - mean) / std,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tl.image.adjust_brightness(x, 0.1).numpy(), x + 0.1, rtol=1e-6)
    m = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(tl.image.adjust_contrast(x, 2.0).numpy(), (x - m) * 2 + m,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tl.image.adjust_gamma(x, 2.0, 0.5).numpy(), 0.5 * x ** 2,
                               rtol=1e-6)
    np.testing.assert_allclose(tl.image.rgb_to_grayscale(x).numpy()[..., 0],
                               x @ np.array([0.2989, 0.5870, 0.1140], np.float32), rtol=1e-5)
    np.testing.assert_array_equal(tl.image.grayscale_to_rgb(x[..., :1]).numpy(),
                                  np.repeat(x[..., :1], 3, -1))


def test_hsv_against_colorsys():
    pixels = IMG.reshape(-1, 3).astype(np.float64)
    hsv = tl.image.rgb_to_hsv(pixels).numpy()
    np.testing.assert_allclose(hsv, [colorsys.rgb_to_hsv(*p) for p in pixels], atol=1e-12)
    np.testing.assert_allclose(tl.image.hsv_to_rgb(hsv).numpy(), pixels, atol=1e-12)
    shifted = tl.image.adjust_hue(pixels[:4], 0.25).numpy()
    want = [colorsys.hsv_to_rgb((h + 0.25) % 1, s, v) for h, s, v in hsv[:4]]
    np.testing.assert_allclose(shifted, want, atol=1e-6)   # adjust_* work in float32
    sat = tl.image.adjust_saturation(pixels[:4], 0.5).numpy()
    np.testing.assert_allclose(sat, [colorsys.hsv_to_rgb(h, s * 0.5, v) for h, s, v in hsv[:4]],
                               atol=1e-6)


# float32 as TensorFlow; rgb_to_hsv is checked against TensorFlow (1/range is too steep here)
GRADIENT_CASES = {
    "resize_bilinear": lambda x: tl.image.resize(x, [3, 5]),
    "resize_area": lambda x: tl.image.resize(x, [3, 2], method="area"),
    "resize_lanczos_antialias": lambda x: tl.image.resize(x, [2, 3], method="lanczos3",
                                                          antialias=True),
    "per_image_standardization": tl.image.per_image_standardization,
    "adjust_contrast": lambda x: tl.image.adjust_contrast(x, 1.5),
    "hsv_to_rgb": tl.image.hsv_to_rgb,
    "rgb_to_grayscale": tl.image.rgb_to_grayscale,
    "resize_with_pad": lambda x: tl.image.resize_with_pad(x, 6, 3),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_against_finite_differences(name):
    fn = GRADIENT_CASES[name]
    x = np.random.default_rng(4).uniform(0.05, 0.95, (1, 4, 4, 3)).astype(np.float32)
    weights = np.random.default_rng(5).uniform(0.5, 1.5, tuple(fn(tl.constant(x)).shape))
    xt = tl.constant(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        total = tl.reduce_sum(fn(xt) * tl.constant(weights.astype(np.float32)))
    got = tape.gradient(total, xt).numpy()
    eps, want = 1e-3, np.zeros(x.size)
    for i in range(x.size):
        plus, minus = x.copy().reshape(-1), x.copy().reshape(-1)
        plus[i] += eps
        minus[i] -= eps
        f = [float(np.sum(fn(tl.constant(v.reshape(x.shape))).numpy() * weights))
             for v in (plus, minus)]
        want[i] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=2e-2, atol=2e-3)


def test_random_flips_flip_each_image_or_leave_it():
    batch = tl.reshape(tl.range(64.0), [16, 2, 2, 1])
    out = tl.image.random_flip_left_right(batch, seed=5).numpy()
    x = batch.numpy()
    flipped = [np.array_equal(o, i[:, ::-1]) for o, i in zip(out, x)]
    kept = [np.array_equal(o, i) for o, i in zip(out, x)]
    assert all(f or k for f, k in zip(flipped, kept)) and 0 < sum(flipped) < 16
    up = tl.image.random_flip_up_down(x[0]).numpy()
    assert np.array_equal(up, x[0]) or np.array_equal(up, x[0][::-1])


def test_random_crop_takes_a_window_of_the_size_asked_and_checks_it():
    value = np.arange(60).reshape(5, 4, 3)
    seen = set()
    for seed in range(12):
        crop = tl.image.random_crop(value, [2, 3, 3], seed=seed).numpy()
        i, j = np.argwhere(value[..., 0] == crop[0, 0, 0])[0]
        np.testing.assert_array_equal(crop, value[i:i + 2, j:j + 3])
        seen.add((i, j))
    assert len(seen) > 1
    traced = tl.function(lambda v: tl.image.random_crop(v, [2, 2, 3]))(tl.constant(value))
    assert traced.shape == (2, 2, 3)
    with pytest.raises(tl.errors.InvalidArgumentError, match="random_crop"):
        tl.image.random_crop(value, [6, 1, 3])
