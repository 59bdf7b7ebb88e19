"""tl.image against tf.image: every method of resize (with and without antialias, up and
down, uint8 and float), flips, crops and pads, dtype conversion, standardization, the
colour adjustments and conversions; values, dtypes and shapes, eagerly and in a function,
and gradients where TensorFlow has them (it has none for area resizing, adjust_contrast and
hsv_to_rgb; trainlib's compositions have them, checked in tests/graph/ops/test_image.py)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check, in_function  # noqa: E402

rng = np.random.default_rng(0)
IMG = rng.uniform(0, 1, (2, 5, 7, 3)).astype("float32")
ONE = IMG[0]
U8 = (IMG * 255).astype("uint8")
METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
           "mitchellcubic"]


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("size", [(3, 4), (9, 11), (5, 3), (5, 7)])
@pytest.mark.parametrize("method", METHODS)
def test_resize(method, size, antialias):
    check(lambda lib: lib.image.resize(IMG, size, method=method, antialias=antialias), rtol=1e-5,
          atol=2e-6)


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area"])
def test_resize_uint8_single_image_and_aspect(method):
    check(lambda lib: [lib.image.resize(U8, (4, 9), method=method),
                       lib.image.resize(ONE, (4, 4), method=method, preserve_aspect_ratio=True)],
          rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "lanczos3", "mitchellcubic"])
def test_resize_gradient(method):
    def program(lib):
        x = lib.constant(IMG)
        with lib.GradientTape() as tape:
            tape.watch(x)
            y = lib.reduce_sum(lib.image.resize(x, (3, 9), method=method) ** 2)
        return tape.gradient(y, x)
    check(program, rtol=1e-5, atol=1e-5)


PROGRAMS = {
 "flip_left_right": lambda lib: lib.image.flip_left_right(IMG),
 "flip_up_down": lambda lib: lib.image.flip_up_down(ONE),
 "transpose": lambda lib: lib.image.transpose(IMG),
 "rot90": lambda lib: [lib.image.rot90(ONE, k) for k in range(4)],
 "central_crop": lambda lib: [lib.image.central_crop(IMG, f) for f in (0.5, 0.33, 0.9, 1.0)],
 "crop_to_bounding_box": lambda lib: lib.image.crop_to_bounding_box(IMG, 1, 2, 3, 4),
 "crop out of the image": lambda lib: lib.image.crop_to_bounding_box(IMG, 3, 2, 3, 4),
 "pad_to_bounding_box": lambda lib: lib.image.pad_to_bounding_box(ONE, 1, 2, 8, 10),
 "pad too small": lambda lib: lib.image.pad_to_bounding_box(ONE, 1, 2, 5, 10),
 "resize_with_crop_or_pad": lambda lib: [lib.image.resize_with_crop_or_pad(IMG, h, w)
                                         for h, w in ((3, 3), (8, 9), (2, 10), (5, 7))],
 "resize_with_pad": lambda lib: lib.image.resize_with_pad(IMG, 8, 6),
 "convert u8->f32": lambda lib: lib.image.convert_image_dtype(U8, lib.float32),
 "convert f32->u8": lambda lib: lib.image.convert_image_dtype(IMG, lib.uint8),
 "convert f32->u8 saturate": lambda lib: lib.image.convert_image_dtype(IMG * 1.5 - 0.2, lib.uint8,
                                                                       saturate=True),
 "convert u8->i32": lambda lib: lib.image.convert_image_dtype(U8, lib.int32),
 "convert i32->u8": lambda lib: lib.image.convert_image_dtype(
     lib.image.convert_image_dtype(U8, lib.int32), lib.uint8),
 "convert f32->f64": lambda lib: lib.image.convert_image_dtype(IMG, lib.float64),
 "convert u8->i16": lambda lib: lib.image.convert_image_dtype(U8, lib.int16),
 "per_image_standardization": lambda lib: lib.image.per_image_standardization(IMG),
 "per_image_standardization u8": lambda lib: lib.image.per_image_standardization(U8),
 "per_image_standardization flat": lambda lib: lib.image.per_image_standardization(
     np.ones((3, 3, 1), "float32")),
 "adjust_brightness": lambda lib: lib.image.adjust_brightness(IMG, 0.2),
 "adjust_brightness u8": lambda lib: lib.image.adjust_brightness(U8, 0.3),
 "adjust_contrast": lambda lib: lib.image.adjust_contrast(IMG, 1.7),
 "adjust_contrast u8": lambda lib: lib.image.adjust_contrast(U8, 0.4),
 "adjust_gamma": lambda lib: lib.image.adjust_gamma(IMG, 0.5, 1.2),
 "adjust_gamma u8": lambda lib: lib.image.adjust_gamma(U8, 2.0),
 "adjust_saturation": lambda lib: lib.image.adjust_saturation(IMG, 1.8),
 "adjust_saturation u8": lambda lib: lib.image.adjust_saturation(U8, 0.3),
 "adjust_hue": lambda lib: [lib.image.adjust_hue(IMG, d) for d in (0.2, -0.45, 0.9)],
 "adjust_hue u8": lambda lib: lib.image.adjust_hue(U8, 0.3),
 "rgb_to_grayscale": lambda lib: lib.image.rgb_to_grayscale(IMG),
 "rgb_to_grayscale u8": lambda lib: lib.image.rgb_to_grayscale(U8),
 "grayscale_to_rgb": lambda lib: lib.image.grayscale_to_rgb(lib.constant(IMG[..., :1])),
 "rgb_to_hsv": lambda lib: lib.image.rgb_to_hsv(IMG),
 "rgb_to_hsv grey and black": lambda lib: lib.image.rgb_to_hsv(
     np.array([[0.5, 0.5, 0.5], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], "float32")),
 "hsv_to_rgb": lambda lib: lib.image.hsv_to_rgb(IMG),
 "hsv round trip": lambda lib: lib.image.hsv_to_rgb(lib.image.rgb_to_hsv(IMG)),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_functions(name, graph):
    program = PROGRAMS[name]
    check(in_function(program, graph), rtol=1e-5, atol=1e-5)


GRADIENTS = {
 "per_image_standardization": lambda lib, x: lib.image.per_image_standardization(x),
 "adjust_brightness": lambda lib, x: lib.image.adjust_brightness(x, 0.1),
 "adjust_gamma": lambda lib, x: lib.image.adjust_gamma(x, 0.7),
 "rgb_to_grayscale": lambda lib, x: lib.image.rgb_to_grayscale(x),
 "rgb_to_hsv": lambda lib, x: lib.image.rgb_to_hsv(x),
 "central_crop": lambda lib, x: lib.image.central_crop(x, 0.5),
 "flip": lambda lib, x: lib.image.flip_left_right(x) * x,
 "resize_with_crop_or_pad": lambda lib, x: lib.image.resize_with_crop_or_pad(x, 3, 9),
 "psnr": lambda lib, x: lib.image.psnr(x, IMG[::-1], 1.0),
 "ssim": lambda lib, x: lib.image.ssim(x, IMG[::-1], 1.0, filter_size=3),
 "ssim_multiscale": lambda lib, x: lib.image.ssim_multiscale(   # similar: cs stays > 0
     x, IMG * 0.8 + 0.1, 1.0, (0.5, 0.5), filter_size=2),
 "total_variation": lambda lib, x: lib.image.total_variation(x),
 "sobel_edges": lambda lib, x: lib.image.sobel_edges(x),
 "image_gradients": lambda lib, x: lib.image.image_gradients(x)[1],
 "rgb_to_yuv": lambda lib, x: lib.image.rgb_to_yuv(x),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients(name):
    def program(lib):
        x = lib.constant(IMG)
        with lib.GradientTape() as tape:
            tape.watch(x)
            y = lib.reduce_sum(GRADIENTS[name](lib, x) ** 2)
        return tape.gradient(y, x)
    check(program, rtol=1e-4, atol=1e-5)
