"""Image files as string tensors: `tl.io.decode_png`, `decode_jpeg`, `decode_and_crop_jpeg`,
`decode_gif`, `decode_webp`, `decode_bmp`,
`decode_image`, `encode_png`, `encode_jpeg`, `is_jpeg` and `extract_jpeg_shape` (also under
`tl.image`, as in TensorFlow).

Owns the host ops `DecodeImage` (one op for every format; its `format` attribute says which
files the public function accepts), `EncodePng`, `EncodeJpeg` and `ExtractJpegShape`.
Decoding goes through Pillow (the `images` extra), PNG encoding through zlib.
Invariants, as TensorFlow's: decoded images are [height, width, channels] (GIFs
[frames, height, width, 3]); `channels=1` from colour PNG is libpng's fixed-point
grey (9797 R + 19234 G + 3737 B) >> 15 with alpha dropped, from JPEG the decoder's own
luma; grey to RGB repeats the grey, a missing alpha is opaque; 8-bit samples read as
uint16 are multiplied by 257 and 16-bit samples read as uint8 keep their high byte.
JPEG pixels may differ by a few levels from TensorFlow's (another libjpeg build).
"""
import io as _io
import struct
import zlib

import numpy as np  # host kernels: pixels come from and go to Pillow as numpy arrays

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import TensorShape, is_tensor
from . import array as _array
from . import math as _math
from . import strings as _strings

__all__ = ["decode_png", "decode_jpeg", "decode_and_crop_jpeg", "decode_gif", "decode_webp",
           "decode_bmp", "decode_image",
           "encode_png", "encode_jpeg", "is_jpeg", "extract_jpeg_shape"]

_PUBLIC = {"png": "decode_png", "jpeg": "decode_jpeg", "gif": "decode_gif", "bmp": "decode_bmp",
           "webp": "decode_webp", "any": "decode_image"}


def _pil(what):
    try:
        from PIL import Image  # noqa: PLC0415 -- Pillow is the optional `images` extra
    except ImportError as e:
        raise ImportError(f"{what} needs Pillow to read image files, which is not installed: "
                          f"pip install 'trainlib[images]' (or pip install pillow)") from e
    return Image


def _sniff(data):
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _gif_frames_extent(data):
    """(width, height): the largest frame's, which TensorFlow's GIF decoder sizes its output
    to (not the logical screen, which a file may declare huge around tiny frames); None for
    a stream this walk cannot follow (Pillow then says what is wrong)."""
    def table(packed):
        return 3 * (2 << (packed & 7)) if packed & 0x80 else 0
    try:
        at, width, height = 13 + table(data[10]), 0, 0
        while at < len(data):
            kind = data[at]
            if kind == 0x3B:        # trailer
                break
            if kind == 0x21:        # extension: label, then sub-blocks
                at += 2
            elif kind == 0x2C:      # image: descriptor, local table, LZW code size, sub-blocks
                w, h = struct.unpack("<HH", data[at + 5:at + 9])
                width, height = max(width, w), max(height, h)
                at += 10 + table(data[at + 9]) + 1
            else:
                return None
            while data[at]:         # sub-blocks up to the empty one
                at += data[at] + 1
            at += 1
    except (IndexError, struct.error):
        pass                        # a truncated stream: the frames seen so far
    return (width, height) if width and height else None


def _bad(op, message):
    return op_error(InvalidArgumentError, op, message)


def _grey(rgb):
    """libpng's rgb_to_gray with TensorFlow's weights (0.299, 0.587), in its fixed point."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(rgb.dtype)


def _channels(pixels, channels):
    """[h, w, c] pixels (c in 1..4) with `channels` channels, TensorFlow's conversions."""
    have = pixels.shape[-1]
    if channels == 0 or channels == have:
        return pixels
    colour = pixels[..., :3] if have >= 3 else np.repeat(pixels[..., :1], 3, axis=-1)
    full = np.iinfo(pixels.dtype).max
    alpha = pixels[..., -1:] if have in (2, 4) else np.full(pixels.shape[:-1] + (1,), full,
                                                           pixels.dtype)
    if channels == 1:
        return pixels[..., :1] if have <= 2 else _grey(colour)[..., None]
    if channels == 3:
        return colour
    return np.concatenate([colour, alpha], axis=-1)


def _pil_pixels(image, op):
    """A decoded Pillow frame as [h, w, c] uint8 or uint16 (c = the file's own channels)."""
    mode = image.mode
    if mode == "P" or mode == "PA":
        image = image.convert("RGBA" if "transparency" in image.info or mode == "PA" else "RGB")
    elif mode in ("1", "CMYK", "YCbCr", "LAB", "HSV", "RGBX", "La", "RGBa"):
        image = image.convert("L" if mode == "1" else "RGBA" if mode in ("La", "RGBa") else "RGB")
    elif mode.startswith("I;16") or mode == "I":
        array = np.asarray(image).astype(np.uint16)
        return array[..., None]
    elif mode not in ("L", "LA", "RGB", "RGBA"):
        raise _bad(op, f"cannot decode an image of Pillow mode {mode!r}")
    array = np.asarray(image)
    return array[..., None] if array.ndim == 2 else array


def _depth(pixels, dtype):
    if dtype == "uint16" and pixels.dtype == np.uint8:
        return pixels.astype(np.uint16) * np.uint16(257)
    if dtype == "uint8" and pixels.dtype == np.uint16:
        return (pixels >> 8).astype(np.uint8)
    return pixels


def _bmp32(data):
    """An uncompressed 32-bit BMP as [h, w, 4] RGBA (rows bottom-up unless the height is < 0)."""
    offset, = struct.unpack("<I", data[10:14])
    w, h = struct.unpack("<ii", data[18:26])
    rows = np.frombuffer(data, np.uint8, abs(h) * w * 4, offset).reshape(abs(h), w, 4)
    return np.ascontiguousarray((rows if h < 0 else rows[::-1])[..., [2, 1, 0, 3]])


def _decode_one(data, format, channels, dtype, expand_animations, ratio=1):
    op = _PUBLIC[format]
    kind = _sniff(data)
    if kind is None:
        raise _bad(op, f"unknown image file format: expected JPEG, PNG, GIF, BMP or WebP data, got "
                       f"{len(data)} bytes starting {data[:8]!r}")
    if format == "bmp" and kind != "bmp":
        raise _bad(op, f"trying to decode {kind.upper()} data with decode_bmp: use "
                       f"decode_{kind} or decode_image")
    if kind == "png" and data[24:25] == b"\x10" and data[25:26] in (b"\x02", b"\x06") \
            and dtype == "uint16":
        raise _bad(op, "16-bit colour PNGs are read at 8 bits by Pillow; decode with "
                       "dtype=uint8 or store the image as 16-bit grey")
    if kind == "bmp" and len(data) >= 34 and struct.unpack("<HI", data[28:34]) == (32, 0):
        pixels = _bmp32(data)   # Pillow reads the fourth byte as padding, TensorFlow as alpha
        return _depth(_channels(pixels, channels), dtype)
    Image = _pil(f"tl.io.{op}")
    extent = _gif_frames_extent(data) if kind == "gif" else None
    if extent is not None:   # Pillow composes on the logical screen: make it the frames' size
        data = data[:6] + struct.pack("<HH", *extent) + data[10:]
    try:
        image = Image.open(_io.BytesIO(data))
        if kind == "jpeg":
            if channels == 1 or ratio != 1:
                w, h = image.size
                image.draft("L" if channels == 1 else image.mode,
                            (max(w // ratio, 1), max(h // ratio, 1)))
            image.load()
        if kind in ("gif", "webp"):
            mode = "RGBA" if kind == "webp" and "A" in image.getbands() else "RGB"
            frames = []
            for i in range(getattr(image, "n_frames", 1)):
                image.seek(i)
                frame = np.asarray(image.convert(mode))
                # Pillow widens the screen for a frame placed past it; TensorFlow clips
                frames.append(frame if extent is None else frame[:extent[1], :extent[0]])
            pixels = np.stack(frames)
        else:
            pixels = _pil_pixels(image, op)
            if kind == "png" and channels == 4 and pixels.shape[-1] in (1, 3) and data[24] < 8:
                # libpng's filler as TensorFlow sets it: the file's bit depth at full scale
                alpha = np.full(pixels.shape[:-1] + (1,), (1 << data[24]) - 1, pixels.dtype)
                pixels = np.concatenate([_channels(pixels, 3), alpha], axis=-1)
    except Image.DecompressionBombError as e:   # Pillow's limit: refused before decoding
        raise _bad(op, f"the {kind.upper()} image declares more pixels than the "
                       f"{2 * Image.MAX_IMAGE_PIXELS} allowed (PIL.Image.MAX_IMAGE_PIXELS "
                       f"x 2): {e}") from None
    except (OSError, SyntaxError, ValueError) as e:
        raise _bad(op, f"could not decode the {kind.upper()} data: {e}") from None
    if kind == "webp":
        if channels not in (0, pixels.shape[-1]):   # TensorFlow's WebP decoder converts nothing
            raise _bad(op, f"the WebP image has {pixels.shape[-1]} channels, got "
                           f"channels={channels}")
        return _frames(op, pixels, "WebP", ("webp", "gif"), format, expand_animations, dtype)
    if kind == "gif":
        if channels not in (0, 3):
            raise _bad(op, f"a GIF decodes to 3 channels, got channels={channels}")
        return _frames(op, pixels, "GIF", ("gif",), format, expand_animations, dtype)
    if format == "gif":
        pixels = _channels(pixels, 3)[None]
        return _depth(pixels, dtype)
    return _depth(_channels(pixels, channels), dtype)


def _frames(op, pixels, kind, whole, format, expand_animations, dtype):
    """An animated file's frames: all of them for the decoders in `whole` (and decode_image
    with expand_animations), else its one frame (more than one is an error)."""
    if format in whole or (format == "any" and expand_animations):
        return _depth(pixels, dtype)
    if format != "any" and len(pixels) > 1:
        raise _bad(op, f"got a {kind} with {len(pixels)} frames where one image was expected; "
                       f"use decode_{kind.lower()} or decode_image")
    return _depth(pixels[0], dtype)


def _decode_infer(contents, format, channels, dtype, expand_animations, ratio=1):
    out = _dt.as_dtype(dtype)
    if format == "gif":
        return spec([None, None, None, 3], out)
    if format == "webp":
        return spec([None, None, None, channels or None], out)
    if format == "any" and expand_animations:
        return spec(TensorShape(None), out)
    return spec([None, None, channels or None], out)


@defop("DecodeImage", infer=_decode_infer, differentiable=False, host=True)
def _decode(xp, contents, format, channels, dtype, expand_animations, ratio=1):
    if dtype == "float32":   # TensorFlow's kernel: the file's samples divided by their maximum
        out = _decode_one(bytes(contents[()]), format, channels, None, expand_animations, ratio)
        return out.astype(np.float32) / np.float32(np.iinfo(out.dtype).max)
    if dtype in ("float16", "float64"):   # TensorFlow: 16-bit samples, convert_image_dtype's scale
        out = _decode_one(bytes(contents[()]), format, channels, "uint16", expand_animations,
                          ratio)
        return out.astype(dtype) * np.dtype(dtype).type(1.0 / 65535)
    out = _decode_one(bytes(contents[()]), format, channels, dtype, expand_animations, ratio)
    return np.ascontiguousarray(out)


def _decode_call(contents, format, channels, dtype, expand_animations=True, ratio=1):
    op = _PUBLIC[format]
    contents = convert_to_tensor(contents, dtype=_dt.string)
    if contents.shape.rank not in (0, None):
        raise ValueError(f"{op}: expected a scalar string (one file's contents), got shape "
                         f"{contents.shape}")
    if format == "gif":
        allowed = (0, 3)
    elif format in ("bmp", "webp"):
        allowed = (0, 3, 4)
    else:
        allowed = (0, 1, 3, 4)
    channels = int(channels or 0)
    if channels not in allowed:
        raise ValueError(f"{op}: channels must be one of {allowed}, got {channels}")
    _pil(f"tl.io.{op}")
    return apply("DecodeImage", contents, format=format, channels=channels, dtype=dtype,
                 expand_animations=bool(expand_animations), ratio=int(ratio))


def _uint_dtype(dtype, op, allowed=("uint8", "uint16")):
    """The dtype's name, checked against `allowed`."""
    name = _dt.as_dtype(dtype).name
    if name not in allowed:
        raise ValueError(f"{op}: dtype must be one of {', '.join(allowed)}, got {name}")
    return name


def decode_png(contents, channels=0, dtype=_dt.uint8, name=None):
    """A PNG file's pixels as [height, width, channels] uint8 or uint16 (also reads JPEG and
    one-frame GIF data, as TensorFlow's). `channels`: 0 keeps the file's, 1 grey, 3 RGB,
    4 RGBA.

    Example:
        >>> png = tl.io.encode_png(tl.zeros([2, 3, 3], tl.uint8))
        >>> tl.io.decode_png(png).shape
        TensorShape([2, 3, 3])
    """
    return _decode_call(contents, "png", channels, _uint_dtype(dtype, "decode_png"))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG file's pixels as [height, width, channels] uint8; `ratio` (1, 2, 4, 8) downscales
    while decoding. The other arguments are accepted for TensorFlow's signature; Pillow's
    decoder uses its defaults (pixels may differ from TensorFlow's by a few levels)."""
    if ratio not in (1, 2, 4, 8):
        raise ValueError(f"decode_jpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    return _decode_call(contents, "jpeg", channels, "uint8", ratio=ratio)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """`decode_jpeg` then the window `crop_window` = [y, x, height, width] (int32) of it."""
    image = decode_jpeg(contents, channels, ratio)
    window = convert_to_tensor(crop_window, dtype=_dt.int32)
    if window.shape.rank is not None and list(window.shape) not in ([4], [None]):
        raise ValueError(f"decode_and_crop_jpeg: crop_window must be [y, x, height, width], got "
                         f"shape {window.shape}")
    begin = _array.concat([window[:2], [0]], 0)
    size = _array.concat([window[2:], [-1]], 0)
    return _array.slice(image, begin, size)


def decode_gif(contents, name=None):
    """A GIF's frames as [frames, height, width, 3] uint8 (each frame fully composed)."""
    return _decode_call(contents, "gif", 0, "uint8")


def decode_webp(contents, channels=0, dtype=_dt.uint8, name=None):
    """A WebP file's frames as [frames, height, width, channels] uint8, still images as one
    frame; `channels` is 0 or the file's own 3 or 4 (no conversion, as TensorFlow's)."""
    return _decode_call(contents, "webp", channels, _uint_dtype(dtype, "decode_webp", ("uint8",)))


def decode_bmp(contents, channels=0, name=None):
    """A BMP file's pixels as [height, width, channels] uint8 (channels 0, 3 or 4)."""
    return _decode_call(contents, "bmp", channels, "uint8")


def decode_image(contents, channels=None, dtype=_dt.uint8, name=None, expand_animations=True):
    """Any of PNG, JPEG, GIF, BMP or WebP, detected from the data. uint8/uint16 give the samples,
    float32 the samples over their maximum, float16/float64 `convert_image_dtype` of the
    16-bit samples. GIFs are
    (and WebPs) [frames, h, w, c] unless `expand_animations=False` (then the first frame), so the
    static rank is unknown unless `expand_animations=False`."""
    out = _uint_dtype(dtype, "decode_image", ("uint8", "uint16", "float16", "float32", "float64"))
    return _decode_call(contents, "any", channels, out, expand_animations)


# ------------------------------------------------------------------ encoding

def _encode_infer(image, *quality, **attrs):
    return spec([], _dt.string)


def _chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


@defop("EncodePng", infer=_encode_infer, differentiable=False, host=True)
def _encode_png(xp, image, compression=-1):
    h, w, c = image.shape
    depth = image.dtype.itemsize * 8
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    rows = np.ascontiguousarray(image.astype(">u2") if depth == 16 else image).reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows.view(np.uint8).reshape(h, -1)],
                         axis=1).tobytes()
    data = (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(raw, compression))
            + _chunk(b"IEND", b""))
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def encode_png(image, compression=-1, name=None):
    """PNG bytes of a uint8 or uint16 [height, width, channels] image (channels 1 to 4);
    `compression` -1 (zlib's default) or 0 to 9.

    Example:
        >>> tl.io.encode_png(tl.zeros([1, 1, 1], tl.uint8)).numpy()[:4]
        b'\\x89PNG'
    """
    image = convert_to_tensor(image)
    if image.dtype.name not in ("uint8", "uint16"):
        raise ValueError(f"encode_png: expected a uint8 or uint16 image, got {image.dtype.name}")
    if image.shape.rank != 3 or image.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"encode_png: expected an image of shape [height, width, channels] with "
                         f"1 to 4 channels, got shape {image.shape}")
    if not -1 <= int(compression) <= 9:
        raise ValueError(f"encode_png: compression must be -1 to 9, got {compression}")
    return apply("EncodePng", image, compression=int(compression))


@defop("EncodeJpeg", infer=_encode_infer, differentiable=False, host=True)
def _encode_jpeg(xp, image, quality, format, progressive, optimize_size, chroma_downsampling,
                 density_unit, x_density, y_density, xmp_metadata):
    Image = _pil("tl.io.encode_jpeg")
    quality = int(quality)
    if not 0 <= quality <= 100:
        raise _bad("encode_jpeg", f"quality must be 0 to 100, got {quality}")
    pixels = np.asarray(image)
    if format == "grayscale" or (format == "" and pixels.shape[-1] == 1):
        picture = Image.fromarray(pixels[..., 0], "L")
    else:
        picture = Image.fromarray(np.ascontiguousarray(pixels), "RGB")
    buffer = _io.BytesIO()
    scale = 2.54 if density_unit == "cm" else 1.0
    options = dict(quality=quality, progressive=progressive, optimize=optimize_size,
                   subsampling=2 if chroma_downsampling else 0,
                   dpi=(x_density * scale, y_density * scale))
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode("utf-8")
    picture.save(buffer, "JPEG", **options)
    out = np.empty((), dtype=object)
    out[()] = buffer.getvalue()
    return out


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """JPEG bytes of a uint8 [height, width, 1 or 3] image; `quality` 0 to 100 (an int or an
    int32 tensor), `format` '' (from the channels), 'grayscale' or 'rgb'. Encoded with Pillow's libjpeg, so the bytes
    differ from TensorFlow's; the decoded pixels agree within JPEG's own error."""
    image = convert_to_tensor(image)
    if image.dtype.name != "uint8":
        raise ValueError(f"encode_jpeg: expected a uint8 image, got {image.dtype.name}")
    if image.shape.rank != 3 or image.shape[-1] not in (1, 3):
        raise ValueError(f"encode_jpeg: expected an image of shape [height, width, 1 or 3], got "
                         f"shape {image.shape}")
    need = {"": image.shape[-1], "grayscale": 1, "rgb": 3}
    if format not in need or need[format] != image.shape[-1]:
        raise ValueError(f"encode_jpeg: format must be '', 'grayscale' (1 channel) or 'rgb' "
                         f"(3 channels), got {format!r} for {image.shape[-1]} channels")
    if not is_tensor(quality) and not 0 <= int(quality) <= 100:
        raise ValueError(f"encode_jpeg: quality must be 0 to 100, got {quality}")
    if density_unit not in ("in", "cm"):
        raise ValueError(f"encode_jpeg: density_unit must be 'in' or 'cm', got {density_unit!r}")
    _pil("tl.io.encode_jpeg")
    quality = convert_to_tensor(quality, dtype=_dt.int32)   # a tensor: drawn per call
    return apply("EncodeJpeg", image, quality, format=format,
                 progressive=bool(progressive), optimize_size=bool(optimize_size),
                 chroma_downsampling=bool(chroma_downsampling), density_unit=density_unit,
                 x_density=int(x_density), y_density=int(y_density), xmp_metadata=xmp_metadata)


def _jpeg_shape_infer(contents, output_type):
    return spec([3], _dt.as_dtype(output_type))


@defop("ExtractJpegShape", infer=_jpeg_shape_infer, differentiable=False, host=True)
def _extract_jpeg_shape(xp, contents, output_type):
    data = bytes(contents[()])
    if _sniff(data) != "jpeg":
        raise _bad("extract_jpeg_shape", f"expected JPEG data, got {len(data)} bytes starting "
                                         f"{data[:8]!r}")
    Image = _pil("tl.io.extract_jpeg_shape")
    try:
        image = Image.open(_io.BytesIO(data))   # reads the header only
    except (OSError, Image.DecompressionBombError) as e:
        raise _bad("extract_jpeg_shape", f"could not read the JPEG header: {e}") from None
    w, h = image.size
    c = {"L": 1, "RGB": 3, "CMYK": 4}.get(image.mode, len(image.getbands()))
    return np.array([h, w, c], dtype=output_type)


def extract_jpeg_shape(contents, output_type=_dt.int32, name=None):
    """[height, width, channels] of a JPEG, read from its header without decoding."""
    out = _dt.as_dtype(output_type)
    if out.name not in ("int32", "int64"):
        raise ValueError(f"extract_jpeg_shape: output_type must be int32 or int64, got {out.name}")
    _pil("tl.io.extract_jpeg_shape")
    return apply("ExtractJpegShape", convert_to_tensor(contents, dtype=_dt.string),
                 output_type=out.name)


def is_jpeg(contents, name=None):
    """Whether the string starts with JPEG's signature (bytes FF D8 FF), as a bool tensor."""
    contents = convert_to_tensor(contents, dtype=_dt.string)
    return _math.equal(_strings.substr(contents, 0, 3), _array.constant(b"\xff\xd8\xff"))
