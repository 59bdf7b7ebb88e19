"""TensorFlow vs trainlib for `tf.image.psnr`, `ssim` (also the index map), `ssim_multiscale`,
`total_variation`, `image_gradients`, `sobel_edges` and the YIQ/YUV conversions: values,
shapes and dtypes eagerly and inside a function, and the same failures on bad shapes
(their gradients are checked in test_image.py)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check, in_function  # noqa: E402

RNG = np.random.default_rng(11)
A = RNG.uniform(size=(2, 23, 21, 3)).astype(np.float32)
B = np.clip(A * 0.7 + RNG.normal(0, 0.1, A.shape), 0, 1).astype(np.float32)
BIG_A = RNG.uniform(size=(1, 45, 51, 2)).astype(np.float32)
BIG_B = np.clip(BIG_A + RNG.normal(0, 0.2, BIG_A.shape), 0, 1).astype(np.float32)
U8_A = (A * 255).astype(np.uint8)
U8_B = (B * 255).astype(np.uint8)
FACTORS = (0.3, 0.4, 0.3)

PROGRAMS = {
    "psnr": lambda lib: lib.image.psnr(A, B, 1.0),
    "psnr_uint8": lambda lib: lib.image.psnr(U8_A, U8_B, 255),
    "psnr_broadcast": lambda lib: lib.image.psnr(A[:1], B, 1.0),
    "psnr_mismatch": lambda lib: lib.image.psnr(A, B[:, :-1], 1.0),
    "ssim": lambda lib: lib.image.ssim(A, B, 1.0),
    "ssim_uint8": lambda lib: lib.image.ssim(U8_A, U8_B, 255, filter_size=7),
    "ssim_small_filter": lambda lib: lib.image.ssim(A[0], B[0], 1.0, filter_size=3,
                                                    filter_sigma=0.8, k1=0.02, k2=0.05),
    "ssim_index_map": lambda lib: lib.image.ssim(A, B, 1.0, return_index_map=True),
    "ssim_too_small": lambda lib: lib.image.ssim(A[:, :9], B[:, :9], 1.0),
    "ssim_multiscale": lambda lib: lib.image.ssim_multiscale(BIG_A, BIG_B, 1.0, FACTORS,
                                                             filter_size=7),
    "ssim_multiscale_default": lambda lib: lib.image.ssim_multiscale(
        np.tile(BIG_A, [1, 4, 4, 1]), np.tile(BIG_B, [1, 4, 4, 1]), 1.0),
    "total_variation": lambda lib: lib.image.total_variation(lib.constant(A)),
    "total_variation_single": lambda lib: lib.image.total_variation(lib.constant(A[0])),
    "total_variation_rank_2": lambda lib: lib.image.total_variation(lib.constant(A[0, 0])),
    "image_gradients": lambda lib: lib.image.image_gradients(lib.constant(A)),
    "image_gradients_rank_3": lambda lib: lib.image.image_gradients(lib.constant(A[0])),
    "sobel_edges": lambda lib: lib.image.sobel_edges(lib.constant(A)),
    "rgb_to_yiq": lambda lib: lib.image.rgb_to_yiq(A),
    "yiq_to_rgb": lambda lib: lib.image.yiq_to_rgb(lib.image.rgb_to_yiq(A)),
    "rgb_to_yuv": lambda lib: lib.image.rgb_to_yuv(A[0]),
    "yuv_to_rgb": lambda lib: lib.image.yuv_to_rgb(A.astype(np.float64)),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph), rtol=2e-5, atol=2e-6)
