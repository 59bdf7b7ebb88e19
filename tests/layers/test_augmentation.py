"""The augmentation layers (geometric, colour, mixing) against numpy formulas applied to the
factors they draw (`get_random_transformation` then `transform_images`), finite differences
in float64, inactivity when training=False, seeding, the train graph and Dataset.map."""
import colorsys

import numpy as np
import pytest

import trainlib as tl

from ._reference import check_layer_gradients

L = tl.keras.layers
RNG = np.random.default_rng(11)
IMAGES = RNG.uniform(0, 255, size=(4, 6, 5, 3)).astype(np.float32)
GRAY = np.array([0.2989, 0.5870, 0.1140], np.float32)


def _draw(layer, x=IMAGES):
    drawn = layer.get_random_transformation(tl.constant(x))
    if isinstance(drawn, dict):
        return {k: np.asarray(v) for k, v in drawn.items()}
    return np.asarray(drawn)


def _apply(layer, drawn, x=IMAGES):
    return layer.transform_images(tl.constant(x), drawn).numpy()


def _gray(x):
    return (x * GRAY).sum(-1, keepdims=True)


def _conv_same(x, kernel):
    """Zero-padded 'same' correlation of NHWC images with a 2-D kernel, per channel."""
    kh, kw = kernel.shape
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = np.pad(x, [(0, 0), (top, kh - 1 - top), (left, kw - 1 - left), (0, 0)])
    out = np.zeros_like(x, dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            out += kernel[i, j] * padded[:, i:i + x.shape[1], j:j + x.shape[2]]
    return out


def test_color_formulas_with_the_drawn_factors():
    layer = L.RandomInvert(0.7, seed=1)
    d = _draw(layer)
    np.testing.assert_allclose(_apply(layer, d), np.where(d["apply_inversion"][:, None, None,
                                                                             None],
                                                          255 - IMAGES, IMAGES))
    layer = L.RandomGrayscale(0.5, seed=2)
    d = _draw(layer)
    assert d.shape == (4, 1, 1, 1) and d.dtype == bool
    np.testing.assert_allclose(_apply(layer, d), np.where(d, _gray(IMAGES), IMAGES), rtol=1e-5)
    one = IMAGES[..., :1]      # a single channel is its own grey
    np.testing.assert_array_equal(L.RandomGrayscale(1.0)(one).numpy(), one)
    layer = L.RandomColorDegeneration(0.8, seed=3)
    d = _draw(layer)
    want = np.clip(IMAGES + d["factor"] * (_gray(IMAGES) - IMAGES), 0, 255)
    np.testing.assert_allclose(_apply(layer, d), want, rtol=1e-5, atol=1e-4)
    layer = L.RandomPosterization((2, 7), seed=4)
    d = _draw(layer)
    shift = d["shift_factor"].reshape(-1, 1, 1, 1)
    assert set(np.unique(shift)) <= {1, 2, 3, 4, 5, 6}
    want = (IMAGES.astype(np.uint8) >> shift) << shift
    np.testing.assert_array_equal(_apply(layer, d), want.astype(np.float32))
    layer = L.Solarization(0.2, (0.3, 0.6), seed=5)
    d = _draw(layer)
    summed = np.clip(IMAGES + d["additions"], 0, 255)
    np.testing.assert_allclose(_apply(layer, d),
                               np.where(summed < d["thresholds"], summed, 255 - summed),
                               rtol=1e-6)
    layer = L.RandomSharpness(0.9, seed=6)
    d = _draw(layer)
    a, b = 1 / 13, 5 / 13
    smooth = _conv_same(IMAGES, np.array([[a, a, a], [a, b, a], [a, a, a]]))
    factor = (2 * d["factor"]).reshape(-1, 1, 1, 1)
    want = np.clip(IMAGES + (1 - factor) * (smooth - IMAGES), 0, 255)
    np.testing.assert_allclose(_apply(layer, d), want, rtol=1e-4, atol=1e-3)


def test_hue_and_saturation_against_colorsys():
    x = IMAGES[:2, :3, :2] / 255.0
    hue = L.RandomHue(0.9, value_range=(0, 1), seed=7)
    d = _draw(hue, x)
    saturation = L.RandomSaturation(0.7, value_range=(0, 1), seed=8)
    ds = _draw(saturation, x)
    want_h, want_s = np.zeros_like(x), np.zeros_like(x)
    for n in range(2):
        for i in range(3):
            for j in range(2):
                h, s, v = colorsys.rgb_to_hsv(*x[n, i, j])
                shifted = h + d["factor"][n]
                shifted = shifted - 1 if shifted > 1 else shifted + 1 if shifted < 0 else shifted
                want_h[n, i, j] = colorsys.hsv_to_rgb(shifted, s, v)
                want_s[n, i, j] = colorsys.hsv_to_rgb(h, np.clip(s * ds["factor"][n], 0, 1), v)
    np.testing.assert_allclose(_apply(hue, d, x), np.clip(want_h, 0, 1), atol=2e-5)
    np.testing.assert_allclose(_apply(saturation, ds, x), want_s, atol=2e-5)


def test_color_jitter_chains_brightness_saturation_and_hue():
    jitter = L.RandomColorJitter(value_range=(0, 1), brightness_factor=(0.1, 0.1),
                                 saturation_factor=(0.5, 0.5))
    x = IMAGES / 255.0
    brighter = np.clip(x + 0.1, 0, 1)
    hsv = np.array([[[colorsys.rgb_to_hsv(*p) for p in row] for row in img] for img in brighter])
    hsv[..., 1] = np.clip(hsv[..., 1] * (0.5 / (1 - 0.5 + 1e-7)), 0, 1)
    want = np.array([[[colorsys.hsv_to_rgb(*p) for p in row] for row in img] for img in hsv])
    np.testing.assert_allclose(jitter(x).numpy(), want, atol=3e-5)
    assert [type(s).__name__ for s in jitter._steps] == ["RandomBrightness", "RandomSaturation"]


def test_autocontrast_and_equalization_formulas():
    out = L.AutoContrast()(IMAGES, training=False).numpy()     # applied at inference too
    low = IMAGES.min(axis=(1, 2), keepdims=True)
    high = IMAGES.max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out, (IMAGES - low) * 255 / (high - low), rtol=1e-4, atol=1e-3)
    flat = np.full((1, 2, 2, 3), 9.0, np.float32)
    np.testing.assert_array_equal(L.AutoContrast()(flat).numpy(), flat)   # NaN -> unchanged
    bins = 32
    ints = np.floor(IMAGES).astype(np.float32)
    want = np.empty_like(ints)
    for c in range(3):
        channel = ints[..., c]
        index = np.clip((channel * (bins - 1) / 255).astype(int), 0, bins - 1)
        cdf = np.cumsum(np.bincount(index.ravel(), minlength=bins))
        cdf_min = cdf[np.nonzero(cdf)[0][0]]
        table = np.clip(np.round((cdf - cdf_min) * 255 / (cdf[-1] - cdf_min)), 0, 255)
        want[..., c] = table[np.clip(channel / 255 * (bins - 1), 0, bins - 1).astype(int)]
    np.testing.assert_allclose(L.Equalization(bins=bins)(ints).numpy(), want)
    np.testing.assert_array_equal(L.Equalization()(ints, training=False).numpy(), ints)


def test_geometric_formulas_with_the_drawn_factors():
    layer = L.RandomShear(0.5, 0.4, interpolation="nearest", fill_mode="constant",
                          fill_value=-1.0, seed=9)
    d = _draw(layer)
    got = _apply(layer, d)
    h, w = IMAGES.shape[1:3]
    want = np.full_like(IMAGES, -1.0)
    for n, (sx, sy) in enumerate(d["shear_factor"]):
        for y in range(h):
            for x in range(w):
                # the source point, rounded half away from zero (TensorFlow's nearest)
                src_x, src_y = x + sx * y, sy * x + y
                ix, iy = (int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in (src_x, src_y))
                if 0 <= ix < w and 0 <= iy < h:
                    want[n, y, x] = IMAGES[n, iy, ix]
    np.testing.assert_array_equal(got, want)
    erase = L.RandomErasing(0.9, fill_value=3.0, seed=10)
    d = _draw(erase)
    got = _apply(erase, d)
    for n in range(4):
        mask = d["batch_masks"][n, ..., 0]
        rows, cols = np.nonzero(mask.any(1))[0], np.nonzero(mask.any(0))[0]
        if rows.size:   # one full rectangle
            assert mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].all() and mask.sum() == \
                rows.size * cols.size
        want = np.where(mask[..., None] & d["apply_erasing"][n], 3.0, IMAGES[n])
        np.testing.assert_array_equal(got[n], want)
    blur = L.RandomGaussianBlur(kernel_size=5, sigma=(0.3, 1.0), seed=11)
    d = _draw(blur)
    t = np.arange(5) - 2.0
    k = [np.exp(-0.5 * (t / s) ** 2) / np.exp(-0.5 * (t / s) ** 2).sum() for s in d["blur_factor"]]
    blurred = _conv_same(IMAGES, np.outer(k[1], k[0]))
    want = np.clip(np.where(d["should_apply_blur"][:, None, None, None], blurred, IMAGES), 0, 255)
    np.testing.assert_allclose(_apply(blur, d), want, rtol=1e-4, atol=1e-3)


def test_perspective_homography_maps_end_points_to_start_points():
    from trainlib.layers.image_augmentation import homography_transforms
    layer = L.RandomPerspective(1.0, 0.6, seed=12)
    d = _draw(layer)
    coefficients = homography_transforms(tl.constant(d["start_points"]),
                                         tl.constant(d["end_points"])).numpy()
    for n in range(4):
        a0, a1, a2, b0, b1, b2, c0, c1 = coefficients[n]
        for (sx, sy), (ex, ey) in zip(d["start_points"][n], d["end_points"][n]):
            k = c0 * ex + c1 * ey + 1
            np.testing.assert_allclose([(a0 * ex + a1 * ey + a2) / k, (b0 * ex + b1 * ey + b2) / k],
                                       [sx, sy], atol=1e-3)
    still = dict(d, end_points=d["start_points"])     # no displacement: the identity warp
    np.testing.assert_allclose(_apply(layer, still), IMAGES, rtol=1e-5, atol=1e-3)
    skipped = dict(d, apply_perspective=np.zeros(4, bool))
    np.testing.assert_array_equal(_apply(layer, skipped), IMAGES)


def test_mixing_formulas_and_labels():
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]
    mix = L.MixUp(0.5, seed=13)
    d = _draw(mix)
    assert sorted(d["permutation_order"]) == [0, 1, 2, 3]
    assert ((d["mix_weight"] >= 0) & (d["mix_weight"] <= 1)).all()
    w, p = d["mix_weight"].reshape(-1, 1, 1, 1), d["permutation_order"]
    np.testing.assert_allclose(_apply(mix, d), w * IMAGES + (1 - w) * IMAGES[p], rtol=1e-5)
    np.testing.assert_allclose(mix.transform_labels(tl.constant(labels), d).numpy(),
                               w[:, :, 0, 0] * labels + (1 - w[:, :, 0, 0]) * labels[p],
                               rtol=1e-6)
    cut = L.CutMix(seed=14)
    d = _draw(cut)
    p = d["permutation_order"]
    np.testing.assert_array_equal(_apply(cut, d), np.where(d["batch_masks"], IMAGES[p], IMAGES))
    weight = d["mix_weight"].reshape(-1, 1)
    np.testing.assert_allclose(cut.transform_labels(tl.constant(labels), d).numpy(),
                               weight * labels + (1 - weight) * labels[p], rtol=1e-6)
    out = cut({"images": IMAGES, "labels": labels})
    assert out["labels"].shape == (4, 3)
    np.testing.assert_allclose(out["labels"].numpy().sum(1), 1.0, rtol=1e-6)
    assert cut.get_random_transformation(tl.constant(IMAGES[0])) is None   # one image


def test_gradients_through_the_formulas_float64():
    x = IMAGES[:2, :4, :4].astype(np.float64)
    for layer in (L.MixUp(seed=1, dtype="float64"), L.RandomSharpness(0.7, dtype="float64"),
                  L.RandomGaussianBlur(sigma=0.8, dtype="float64")):
        drawn = layer.get_random_transformation(tl.constant(x))
        check_layer_gradients(lambda lay, xs: lay.transform_images(xs[0], drawn), layer, [x],
                              rtol=1e-5, atol=1e-6)


ALL = [lambda: L.RandomShear(0.3), lambda: L.RandomPerspective(), lambda: L.RandomErasing(),
       lambda: L.RandomGaussianBlur(), lambda: L.RandomGrayscale(),
       lambda: L.RandomHue(0.5), lambda: L.RandomSaturation(0.5),
       lambda: L.RandomColorDegeneration(0.5), lambda: L.RandomInvert(),
       lambda: L.RandomPosterization(4), lambda: L.RandomSharpness(0.5),
       lambda: L.Solarization(0.5, 0.5), lambda: L.Equalization(), lambda: L.MixUp(),
       lambda: L.CutMix(), lambda: L.RandomColorJitter(contrast_factor=0.5, hue_factor=0.2)]


@pytest.mark.parametrize("make", ALL)
def test_inactive_at_inference_seeded_in_graphs_and_datasets(make):
    layer = make()
    ints = IMAGES.astype(np.uint8)
    np.testing.assert_array_equal(layer(ints, training=False).numpy(), ints.astype(np.float32))
    tl.random.set_seed(5)
    first = make()(IMAGES).numpy()
    tl.random.set_seed(5)
    np.testing.assert_array_equal(make()(IMAGES).numpy(), first)   # seeded draws repeat
    step = tl.function(lambda t: layer(t, training=True))
    a, b = step(IMAGES).numpy(), step(IMAGES).numpy()
    assert a.shape == IMAGES.shape
    if not isinstance(layer, L.Equalization):     # (it draws nothing)
        assert not np.array_equal(a, b), "fresh draws per run"
    mapped = tl.data.Dataset.from_tensor_slices(IMAGES).batch(2).map(layer)
    assert [e.shape for e in mapped] == [(2, 6, 5, 3)] * 2
    one = layer(IMAGES[0])
    assert one.shape == IMAGES[0].shape


def test_augmentation_inside_a_training_model():
    model = tl.keras.Sequential([tl.keras.Input((6, 5, 3)), L.Rescaling(1 / 255.0),
                                 L.RandomShear(0.2, seed=1), L.RandomHue(0.2, value_range=(0, 1)),
                                 L.RandomErasing(0.5, value_range=(0, 1)),
                                 L.GlobalAveragePooling2D(), L.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(IMAGES, np.ones((4, 2), np.float32), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    first, second = model.predict(IMAGES, verbose=0), model.predict(IMAGES, verbose=0)
    np.testing.assert_array_equal(first, second)      # inference: no augmentation


@pytest.mark.parametrize("make, message", [
    (lambda: L.RandomShear(1.5), "x_factor"), (lambda: L.RandomPerspective(scale=2), "scale"),
    (lambda: L.RandomGaussianBlur(kernel_size=4), "kernel_size"),
    (lambda: L.RandomGrayscale(1.5), "factor"), (lambda: L.RandomPosterization(9), "factor"),
    (lambda: L.Solarization(threshold_factor=2), "threshold_factor"),
    (lambda: L.AutoContrast(value_range=5), "value_range"),
    (lambda: L.RandomErasing(fill_value=(1, 2)), "fill_value")])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()
