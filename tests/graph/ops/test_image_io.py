"""tl.io's image files against Pillow and numpy (no TensorFlow needed): PNG written by us reads
back in Pillow and vice versa, channel conversions follow libpng's rules, the ops work eagerly,
traced and in Dataset.map, resize takes images whose size is only known at run time, and bad
input or a missing Pillow give clear errors."""
import io
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import trainlib as tl

Image = pytest.importorskip("PIL.Image")


def _png(array, mode=None):
    buffer = io.BytesIO()
    Image.fromarray(array, mode).save(buffer, "PNG")
    return buffer.getvalue()


images = hnp.arrays(np.uint8, st.tuples(st.integers(1, 6), st.integers(1, 6),
                                        st.sampled_from([1, 2, 3, 4])))


@settings(max_examples=20, deadline=None)
@given(images, st.sampled_from([-1, 0, 9]))
def test_encode_png_reads_back_in_pillow_and_in_decode_png(image, compression):
    data = tl.io.encode_png(image, compression=compression)
    pil = np.asarray(Image.open(io.BytesIO(data.numpy())))
    np.testing.assert_array_equal(pil.reshape(image.shape), image)
    np.testing.assert_array_equal(tl.io.decode_png(data).numpy(), image)
    np.testing.assert_array_equal(tl.io.decode_png(data, dtype=tl.uint16).numpy(),
                                  image.astype(np.uint16) * 257)


def test_channel_conversions_follow_libpng():
    rgba = np.arange(4 * 5 * 4, dtype=np.uint8).reshape(4, 5, 4) * 3
    data = _png(rgba)
    r, g, b = (rgba[..., i].astype(np.int64) for i in range(3))
    grey = (9797 * r + 19234 * g + 3737 * b) >> 15
    np.testing.assert_array_equal(tl.io.decode_png(data, channels=1).numpy()[..., 0], grey)
    np.testing.assert_array_equal(tl.io.decode_png(data, channels=3).numpy(), rgba[..., :3])
    grey_file = _png(rgba[..., 0])
    four = tl.io.decode_png(grey_file, channels=4).numpy()
    np.testing.assert_array_equal(four[..., :3], np.repeat(rgba[..., :1], 3, axis=-1))
    assert (four[..., 3] == 255).all()


def test_decode_image_float_and_animations():
    frames = [Image.fromarray(np.full((3, 4, 3), 40 * k, np.uint8)) for k in range(1, 4)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    gif = buffer.getvalue()
    assert tl.io.decode_gif(gif).shape == (3, 3, 4, 3)
    assert tl.io.decode_image(gif).shape == (3, 3, 4, 3)
    assert tl.image.decode_image(gif, expand_animations=False).shape == (3, 4, 3)
    value = tl.io.decode_image(_png(np.array([[[0, 51, 255]]], np.uint8)), dtype=tl.float32)
    np.testing.assert_array_equal(value.numpy(), np.float32([[[0, 51, 255]]]) / np.float32(255))
    with pytest.raises(tl.errors.InvalidArgumentError, match="decode_png.*3 frames"):
        tl.io.decode_png(gif)


def test_jpeg_helpers_and_tracing():
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((6, 10, 3), np.uint8)).save(buffer, "JPEG")
    jpeg = buffer.getvalue()
    assert tl.io.is_jpeg(jpeg).numpy() and not tl.io.is_jpeg(_png(np.zeros((1, 1), np.uint8)))
    np.testing.assert_array_equal(tl.io.extract_jpeg_shape(jpeg).numpy(), [6, 10, 3])
    traced = tl.function(lambda x: tl.io.decode_jpeg(x, channels=1))
    assert traced.get_concrete_function(tl.TensorSpec([], tl.string)).structured_outputs.shape \
        .as_list() == [None, None, 1]
    assert traced(jpeg).shape == (6, 10, 1)
    ds = tl.data.Dataset.from_tensor_slices([jpeg, jpeg]).map(
        lambda x: tl.image.resize(tl.io.decode_jpeg(x, channels=3), [3, 5]))
    assert [tuple(e.shape) for e in ds] == [(3, 5, 3), (3, 5, 3)]


@pytest.mark.parametrize("method", ["bilinear", "nearest", "area", "bicubic"])
def test_resize_of_a_run_time_size_equals_the_static_resize(method):
    image = np.random.default_rng(0).uniform(size=(2, 7, 5, 3)).astype(np.float32)
    dynamic = tl.function(lambda x: tl.image.resize(x, [4, 9], method=method),
                          input_signature=[tl.TensorSpec([None, None, None, 3], tl.float32)])
    np.testing.assert_allclose(dynamic(image).numpy(),
                               tl.image.resize(image, [4, 9], method=method).numpy(), atol=1e-6)


def test_resize_gradient_with_a_run_time_size():
    image = np.random.default_rng(1).uniform(size=(5, 6, 2)).astype(np.float32)
    weight = np.arange(24, dtype=np.float32).reshape(3, 4, 2)

    @tl.function(input_signature=[tl.TensorSpec([None, None, 2], tl.float32)])
    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(tl.image.resize(x, [3, 4]) * weight)
        return tape.gradient(y, x)

    x = tl.constant(image)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.reduce_sum(tl.image.resize(x, [3, 4]) * weight)
    np.testing.assert_allclose(grad(image).numpy(), tape.gradient(y, x).numpy(), atol=1e-5)


def test_bad_input_names_the_op():
    with pytest.raises(tl.errors.InvalidArgumentError, match="decode_image.*JPEG, PNG, GIF"):
        tl.io.decode_image(b"plain text")
    with pytest.raises(tl.errors.InvalidArgumentError, match="decode_bmp"):
        tl.io.decode_bmp(_png(np.zeros((1, 1), np.uint8)))
    with pytest.raises(ValueError, match="decode_png: channels must be one of"):
        tl.io.decode_png(b"", channels=2)
    with pytest.raises(ValueError, match="encode_png: expected a uint8 or uint16 image, got float32"):
        tl.io.encode_png(np.zeros((1, 1, 1), np.float32))
    with pytest.raises(ValueError, match="encode_jpeg: quality"):
        tl.io.encode_jpeg(np.zeros((1, 1, 3), np.uint8), quality=101)
    with pytest.raises(ValueError, match="decode_png: expected a scalar string"):
        tl.io.decode_png([b"", b""])


def test_without_pillow_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"decode_jpeg needs Pillow.*trainlib\[images\]"):
        tl.io.decode_jpeg(b"\xff\xd8\xff")


def test_jpeg_quality_is_a_run_time_tensor():
    image = np.random.default_rng(3).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    traced = tl.function(lambda x, q: tl.io.encode_jpeg(x, quality=q))
    small, large = (len(traced(image, tl.constant(q)).numpy()) for q in (5, 95))
    assert small < large
    with pytest.raises(tl.errors.InvalidArgumentError, match="encode_jpeg: quality must be 0 to 100"):
        traced(image, tl.constant(101))
    adjusted = tl.image.adjust_jpeg_quality(image, 60).numpy()
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=60)
    np.testing.assert_array_equal(adjusted, np.asarray(Image.open(buffer)))


def test_png_declaring_ten_gigapixels_is_an_invalid_argument_naming_the_limit():
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)   # 10^10 pixels
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + \
        chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    with pytest.raises(tl.errors.InvalidArgumentError, match="MAX_IMAGE_PIXELS"):
        tl.io.decode_png(data)
    with pytest.raises(tl.errors.InvalidArgumentError, match="MAX_IMAGE_PIXELS"):
        tl.io.decode_image(data)


def test_gif_with_a_huge_logical_screen_decodes_at_its_frames_size():
    import struct
    import time
    import tracemalloc
    frames = [Image.fromarray(np.full((1, 1, 3), 5 * i, np.uint8)) for i in range(40)]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    data = bytearray(buf.getvalue())
    data[6:10] = struct.pack("<HH", 60000, 60000)   # the logical screen TensorFlow ignores
    tracemalloc.start()
    start = time.monotonic()
    out = tl.io.decode_gif(bytes(data))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.shape == (40, 1, 1, 3)                # TensorFlow's shape for this file
    np.testing.assert_array_equal(out.numpy()[:, 0, 0, 0], 5 * np.arange(40))
    assert peak < 50 * 2 ** 20 and time.monotonic() - start < 5
