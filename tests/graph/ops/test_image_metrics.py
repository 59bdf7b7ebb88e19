"""tl.image's quality measures and colour spaces against numpy (no TensorFlow needed): psnr,
total_variation, image_gradients and sobel_edges by their definitions, ssim against a direct
numpy SSIM, the colour conversions as inverse pairs, and clear errors on bad shapes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import trainlib as tl

RNG = np.random.default_rng(2)
X = RNG.uniform(size=(2, 13, 12, 3)).astype(np.float32)
Y = np.clip(X + RNG.normal(0, 0.1, X.shape), 0, 1).astype(np.float32)

images = hnp.arrays(np.float32, st.tuples(st.integers(1, 2), st.integers(2, 6),
                                          st.integers(2, 6), st.integers(1, 3)),
                    elements=st.floats(0, 1, width=32))


@settings(max_examples=20, deadline=None)
@given(images)
def test_total_variation_and_image_gradients_by_definition(x):
    x64 = x.astype(np.float64)
    expected = (np.abs(np.diff(x64, axis=1)).sum((1, 2, 3))
                + np.abs(np.diff(x64, axis=2)).sum((1, 2, 3)))
    np.testing.assert_allclose(tl.image.total_variation(x).numpy(), expected, rtol=1e-5,
                               atol=1e-5)
    dy, dx = tl.image.image_gradients(tl.constant(x))
    np.testing.assert_array_equal(dy.numpy()[:, :-1], x[:, 1:] - x[:, :-1])
    np.testing.assert_array_equal(dx.numpy()[:, :, :-1], x[:, :, 1:] - x[:, :, :-1])
    assert not dy.numpy()[:, -1].any() and not dx.numpy()[:, :, -1].any()


def test_sobel_edges_by_definition():
    padded = np.pad(X.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]])
    expected = np.zeros(X.shape + (2,))
    for i in range(3):
        for j in range(3):
            window = padded[:, i:i + X.shape[1], j:j + X.shape[2]]
            expected[..., 0] += ky[i, j] * window
            expected[..., 1] += ky.T[i, j] * window
    np.testing.assert_allclose(tl.image.sobel_edges(tl.constant(X)).numpy(), expected, atol=1e-5)


def _numpy_ssim(x, y, size=11, sigma=1.5, c1=0.01 ** 2, c2=0.03 ** 2):
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()

    def filt(z):
        h, w = z.shape[1] - size + 1, z.shape[2] - size + 1
        return sum(g[i, j] * z[:, i:i + h, j:j + w] for i in range(size) for j in range(size))
    x, y = x.astype(np.float64), y.astype(np.float64)
    mx, my = filt(x), filt(y)
    lum = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * filt(x * y) - 2 * mx * my + c2) / (filt(x * x + y * y) - mx ** 2 - my ** 2 + c2)
    return (lum * cs).mean((1, 2, 3))


def test_ssim_and_psnr_by_definition():
    np.testing.assert_allclose(tl.image.ssim(X, Y, 1.0).numpy(), _numpy_ssim(X, Y), rtol=1e-5)
    np.testing.assert_allclose(tl.image.ssim(X, X, 1.0).numpy(), [1, 1], rtol=1e-6)
    mse = ((X.astype(np.float64) - Y) ** 2).mean((1, 2, 3))
    np.testing.assert_allclose(tl.image.psnr(X, Y, 1.0).numpy(), -10 * np.log10(mse), rtol=1e-5)
    score = tl.image.ssim_multiscale(np.tile(X, [1, 3, 3, 1]), np.tile(Y, [1, 3, 3, 1]), 1.0,
                                     (0.5, 0.5), filter_size=7)
    assert score.shape == (2,) and ((0 < score.numpy()) & (score.numpy() < 1)).all()


def test_colour_spaces_are_inverse_pairs_and_keep_luma():
    for there, back in ((tl.image.rgb_to_yiq, tl.image.yiq_to_rgb),
                        (tl.image.rgb_to_yuv, tl.image.yuv_to_rgb)):
        converted = there(X)
        np.testing.assert_allclose(converted.numpy()[..., 0],
                                   X @ np.float32([0.299, 0.587, 0.114]), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(back(converted).numpy(), X, atol=1e-4)  # 8-digit matrices


def test_bad_shapes_name_the_function():
    with pytest.raises(ValueError, match="ssim: the images' height and width must be at least"):
        tl.image.ssim(X[:, :5], Y[:, :5], 1.0)
    with pytest.raises(ValueError, match=r"psnr: the two images' \[height, width, channels\]"):
        tl.image.psnr(X, Y[..., :2], 1.0)
    with pytest.raises(ValueError, match="total_variation: images must be 3-D"):
        tl.image.total_variation(X[0, 0])
    with pytest.raises(ValueError, match="image_gradients: expected a 4-D"):
        tl.image.image_gradients(X[0])
    with pytest.raises(ValueError, match="rgb_to_yiq: expected images with 3 channels"):
        tl.image.rgb_to_yiq(X[..., :2])
