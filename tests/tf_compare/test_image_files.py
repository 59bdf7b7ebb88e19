"""TensorFlow vs trainlib for image files (`tf.io.decode_png` ... `encode_jpeg`): PNG, GIF, BMP and
lossless WebP decode bit for bit (every channel count and dtype), eagerly and inside a function; JPEG within a
tolerance, since Pillow's libjpeg build rounds differently from TensorFlow's (up to a few levels
on noise, mean difference below 2); errors on the same bad inputs; and the "load images"
pipeline (read_file + decode_jpeg + resize in Dataset.map).
"""
import io

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
Image = pytest.importorskip("PIL.Image")
import trainlib as tl  # noqa: E402

from .compare import Raised, check, check_kind, in_function  # noqa: E402

RNG = np.random.default_rng(5)
RGB = RNG.integers(0, 256, (9, 11, 3), dtype=np.uint8)
RGBA = RNG.integers(0, 256, (6, 5, 4), dtype=np.uint8)
GREY16 = RNG.integers(0, 65536, (4, 7), dtype=np.uint16)


def _pil_bytes(image, fmt, **options):
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _palette(transparent):
    image = Image.fromarray(RGB).quantize(7)
    return _pil_bytes(image, "PNG", **({"transparency": 2} if transparent else {}))


def _gif():
    frames = [Image.fromarray(np.roll(RGB, k, axis=1)).quantize(16) for k in range(3)]
    return _pil_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:])


FILES = {
    "rgb": _pil_bytes(Image.fromarray(RGB), "PNG"),
    "rgba": _pil_bytes(Image.fromarray(RGBA), "PNG"),
    "grey": _pil_bytes(Image.fromarray(RGB[..., 0]), "PNG"),
    "grey_alpha": _pil_bytes(Image.fromarray(RGBA[..., :2], "LA"), "PNG"),
    "palette": _palette(False),
    "palette_alpha": _palette(True),
    "grey16": _pil_bytes(Image.fromarray(GREY16), "PNG"),
    "gif": _gif(),
    "bmp": _pil_bytes(Image.fromarray(RGB), "BMP"),
    "bmp_rgba": _pil_bytes(Image.fromarray(RGBA), "BMP"),
}
JPEG = _pil_bytes(Image.fromarray(RGB), "JPEG", quality=90)
FILES["webp"] = _pil_bytes(Image.fromarray(RGB), "WEBP", lossless=True)
FILES["webp_rgba"] = _pil_bytes(Image.fromarray(RGBA), "WEBP", lossless=True)

PROGRAMS = {
    **{f"png_{kind}_{ch}": (lambda kind, ch: lambda lib: lib.io.decode_png(FILES[kind], ch))(
        kind, ch) for kind in ("rgb", "rgba", "grey", "grey_alpha", "palette", "palette_alpha",
                              "grey16") for ch in (0, 1, 3, 4)},
    **{f"png16_{kind}": (lambda kind: lambda lib: lib.io.decode_png(
        FILES[kind], dtype=lib.uint16))(kind) for kind in ("rgb", "grey", "grey16")},
    "image_float": lambda lib: lib.io.decode_image(FILES["rgba"], dtype=lib.float32),
    "image_float_grey16": lambda lib: lib.io.decode_image(FILES["grey16"], dtype=lib.float32),
    "image_float16": lambda lib: lib.io.decode_image(FILES["rgb"], 3, dtype=lib.float16),
    "image_gif": lambda lib: lib.io.decode_image(FILES["gif"]),
    "image_gif_first": lambda lib: lib.io.decode_image(FILES["gif"], expand_animations=False),
    "image_bmp": lambda lib: lib.image.decode_image(FILES["bmp"], channels=4),
    "gif": lambda lib: lib.io.decode_gif(FILES["gif"]),
    "gif_of_png": lambda lib: lib.io.decode_gif(FILES["rgb"]),
    **{f"webp_{kind}_{ch}": (lambda kind, ch: lambda lib: lib.io.decode_webp(FILES[kind], ch))(
        kind, ch) for kind in ("webp", "webp_rgba") for ch in (0, 1, 3, 4)},
    "image_webp": lambda lib: lib.io.decode_image(FILES["webp_rgba"]),
    "image_webp_first": lambda lib: lib.image.decode_image(FILES["webp"], 4,
                                                           expand_animations=False),
    "bmp": lambda lib: lib.io.decode_bmp(FILES["bmp"]),
    "bmp_rgba": lambda lib: lib.io.decode_bmp(FILES["bmp_rgba"]),
    "bmp_of_png": lambda lib: lib.io.decode_bmp(FILES["rgb"]),
    "png_channels_2": lambda lib: lib.io.decode_png(FILES["rgb"], 2),
    "image_junk": lambda lib: lib.io.decode_image(b"not an image"),
    "png_roundtrip": lambda lib: lib.io.decode_png(lib.io.encode_png(RGBA)),
    "png_roundtrip_16": lambda lib: lib.io.decode_png(
        lib.io.encode_png(GREY16[..., None], compression=9), dtype=lib.uint16),
    "is_jpeg": lambda lib: (lib.io.is_jpeg(JPEG), lib.io.is_jpeg(FILES["rgb"])),
    "jpeg_shape": lambda lib: lib.image.extract_jpeg_shape(JPEG, lib.int64),
    "jpeg_shape_of_png": lambda lib: lib.io.extract_jpeg_shape(FILES["rgb"]),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph))


def test_our_png_decodes_the_same_in_tensorflow():
    for image in (RGB, RGBA, RGB[..., :1], RGBA[..., :2], GREY16[..., None]):
        ours = tl.io.encode_png(image).numpy()
        dtype = tf.uint16 if image.dtype == np.uint16 else tf.uint8
        np.testing.assert_array_equal(tf.io.decode_png(ours, dtype=dtype).numpy(), image)


@pytest.mark.parametrize("channels", [0, 1, 3])
def test_jpeg_decodes_within_libjpeg_rounding(channels):
    theirs = tf.io.decode_jpeg(JPEG, channels=channels).numpy().astype(int)
    ours = tl.io.decode_jpeg(JPEG, channels=channels).numpy().astype(int)
    assert ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() <= 12 and np.abs(ours - theirs).mean() < 2


def test_jpeg_ratio_and_encode_quality():
    assert tl.io.decode_jpeg(JPEG, ratio=2).shape == tf.io.decode_jpeg(JPEG, ratio=2).shape
    smooth = np.broadcast_to(np.linspace(0, 255, 16).astype(np.uint8)[None, :, None], (16, 16, 3))
    errors, sizes = [], []
    for quality in (20, 95):
        ours = tl.io.encode_jpeg(smooth, quality=quality).numpy()
        back = tl.io.decode_jpeg(ours).numpy().astype(int)
        theirs = tf.io.decode_jpeg(ours).numpy().astype(int)   # TensorFlow reads our files
        assert np.abs(theirs - back).max() <= 12
        errors.append(np.abs(back - smooth).mean())
        sizes.append(len(ours))
    assert errors[1] < errors[0] < 20 and sizes[1] > sizes[0]
    grey = tl.io.encode_jpeg(smooth[..., :1], format="grayscale")
    assert tf.io.decode_jpeg(grey.numpy()).shape == (16, 16, 1)


def test_load_images_tutorial_pipeline(tmp_path):
    paths = []
    for i in range(3):
        path = tmp_path / f"{i}.jpg"
        path.write_bytes(_pil_bytes(Image.fromarray(np.roll(RGB, i, axis=0)), "JPEG"))
        paths.append(str(path))

    def load(lib):
        def decode(path):
            image = lib.io.decode_jpeg(lib.io.read_file(path), channels=3)
            return lib.image.resize(image, [4, 6]) / 255.0
        ds = lib.data.Dataset.from_tensor_slices(paths).map(decode).batch(3)
        return next(iter(ds))

    theirs, ours = load(tf), load(tl)
    assert ours.shape == theirs.shape == (3, 4, 6, 3)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=0.05)


CROPS = {
    "crop": lambda lib: lib.io.decode_and_crop_jpeg(JPEG, [2, 3, 4, 5], channels=3),
    "crop_grey": lambda lib: lib.image.decode_and_crop_jpeg(JPEG, lib.constant([0, 0, 9, 1]),
                                                            channels=1),
    "crop_outside": lambda lib: lib.io.decode_and_crop_jpeg(JPEG, [5, 3, 5, 5]),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(CROPS))
def test_decode_and_crop_jpeg(name, graph):
    theirs, ours = check_kind(in_function(CROPS[name], graph))
    if not isinstance(theirs, Raised):
        # JPEG: within libjpeg rounding; TensorFlow's partial decode also upsamples the chroma
        # at the window's edges without the pixels beyond, so its border differs a bit more
        difference = np.abs(ours.numpy().astype(int) - theirs.numpy())
        assert difference.max() <= 24 and difference.mean() < 3
