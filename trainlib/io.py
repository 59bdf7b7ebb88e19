"""`tl.io`: reading and writing whole files as string tensors (`read_file`, `write_file`) and
parsing CSV records (`decode_csv`), image files (`decode_png`, `decode_jpeg`, `decode_gif`,
`decode_bmp`, `decode_image`, `encode_png`, `encode_jpeg`, `is_jpeg`, `extract_jpeg_shape`).

Owns nothing but names: the ops live in trainlib/graph/ops/io.py, strings.py and image_io.py.
"""
from .graph.ops.io import read_file, write_file  # noqa: F401
from .graph.ops.strings import decode_csv  # noqa: F401
from .graph.ops.image_io import (decode_and_crop_jpeg, decode_bmp, decode_gif,  # noqa: F401
                                 decode_image, decode_jpeg, decode_png, decode_webp, encode_jpeg,
                                 encode_png, extract_jpeg_shape, is_jpeg)
