"""Keras 3 vs trainlib: the geometric image preprocessing layers (Resizing, RandomCrop,
RandomRotation, RandomZoom, RandomTranslation): outputs with draws pinned by one-point
factor ranges (every fill mode and interpolation), inference behaviour, and configs.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(2)
IMAGES = RNG.uniform(0, 255, size=(2, 7, 9, 3)).astype(np.float32)


def _both(name, *args, **kwargs):
    return getattr(keras.layers, name)(*args, **kwargs), getattr(tl.keras.layers, name)(
        *args, **kwargs)


def _same_config(k, t):
    kc, tc = k.get_config(), t.get_config()
    for c in (kc, tc):
        c.pop("name")
    assert tc == kc
    again = type(t).from_config(t.get_config())
    assert again.get_config() == t.get_config()


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest", "bicubic", "area", "lanczos3"])
@pytest.mark.parametrize("option", [{}, {"crop_to_aspect_ratio": True},
                                    {"pad_to_aspect_ratio": True, "fill_value": 3.0},
                                    {"antialias": True}])
def test_resizing(interpolation, option):
    k, t = _both("Resizing", 4, 5, interpolation=interpolation, **option)
    close(k(IMAGES), t(IMAGES), "resized")
    close(k(IMAGES[0]), tl.function(lambda x: t(x))(IMAGES[0]), "one image, traced")
    _same_config(k, t)


def test_resizing_integer_images_round_back_to_their_dtype():
    k, t = _both("Resizing", 5, 4)
    images = IMAGES.astype(np.uint8)
    kout, tout = np.asarray(k(images)), t(images).numpy()
    assert tout.dtype == kout.dtype == np.uint8
    assert np.abs(kout.astype(int) - tout.astype(int)).max() <= 1    # float rounding at .5


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_random_warps_with_pinned_draws(fill_mode, interpolation):
    options = {"fill_mode": fill_mode, "interpolation": interpolation, "fill_value": 9.0}
    for name, args in (("RandomRotation", ((0.13, 0.13),)),
                       ("RandomZoom", ((0.3, 0.3), (-0.2, -0.2))),
                       ("RandomZoom", ((-0.25, -0.25),)),
                       ("RandomTranslation", ((0.2, 0.2), (-0.3, -0.3)))):
        k, t = _both(name, *args, **options)
        close(k(IMAGES, training=True), t(IMAGES, training=True), f"{name} {args}")
        close(k(IMAGES[0], training=True), t(IMAGES[0], training=True), f"{name} one image")
        close(k(IMAGES, training=False), t(IMAGES, training=False), f"{name} inference")
        _same_config(k, t)


def test_random_crop():
    k, t = _both("RandomCrop", 4, 5, seed=3)
    assert np.asarray(t(IMAGES, training=False)).shape == IMAGES.shape   # Keras 3: unchanged
    close(k(IMAGES, training=False), t(IMAGES, training=False), "inference")
    crop = t(IMAGES, training=True).numpy()
    assert crop.shape == (2, 4, 5, 3)
    windows = [IMAGES[:, i:i + 4, j:j + 5] for i in range(4) for j in range(5)]
    assert any(np.array_equal(crop, w) for w in windows)
    # an input no larger than the target: centre crop to the aspect ratio, then resize
    k, t = _both("RandomCrop", 8, 12, seed=3)
    close(k(IMAGES, training=True), t(IMAGES, training=True), "enlarged")
    _same_config(k, t)


def test_random_layers_in_a_model_augment_only_in_fit():
    def build(k):
        return k.Sequential([k.Input((7, 9, 3)), k.layers.RandomRotation(0.2, seed=1),
                             k.layers.RandomZoom(0.1, seed=2),
                             k.layers.RandomTranslation(0.1, 0.1, seed=3),
                             k.layers.GlobalAveragePooling2D()])
    km, tm = build(keras), build(tl.keras)
    close(km.predict(IMAGES, verbose=0), tm.predict(IMAGES, verbose=0), "predict: identity")


@pytest.mark.parametrize("size", [(4, 5), (7, 9), (8, 12), (3, 10)])
def test_center_crop_crops_or_smart_resizes(size):
    k, t = _both("CenterCrop", *size)
    close(k(IMAGES), t(IMAGES), f"center crop {size}")
    close(k(IMAGES[0]), t(IMAGES[0]), "one image")
    ints = IMAGES.astype(np.int32)
    kout, tout = k(ints), t(ints)
    assert np.asarray(kout).dtype == tout.numpy().dtype
    close(kout, tout, "integer images")
    _same_config(k, t)
