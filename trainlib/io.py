"""`tl.io`: reading and writing whole files as string tensors (`read_file`, `write_file`),
parsing CSV records (`decode_csv`), TFRecord files (`TFRecordWriter`, `TFRecordOptions`),
parsing tf.train.Examples (`parse_example`, `parse_single_example` and the feature
configurations), bytes (`decode_raw`, `encode_base64`, `decode_base64`), tensors
(`serialize_tensor`, `parse_tensor`) and image files (`decode_png`, `decode_jpeg`,
`decode_gif`, `decode_bmp`, `decode_image`, `encode_png`, `encode_jpeg`, `is_jpeg`,
`extract_jpeg_shape`).

Owns nothing but names: the ops live in trainlib/graph/ops/io.py, strings.py, parsing.py and
image_io.py, the TFRecord format in trainlib/tfrecord.py.
"""
from .graph.ops.io import read_file, write_file  # noqa: F401
from .graph.ops.strings import decode_csv  # noqa: F401
from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter  # noqa: F401
from .graph.ops.parsing import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,  # noqa: F401
                                decode_base64, decode_raw, encode_base64, parse_example,
                                parse_single_example, parse_tensor, serialize_tensor)
from .graph.ops.image_io import (decode_and_crop_jpeg, decode_bmp, decode_gif,  # noqa: F401
                                 decode_image, decode_jpeg, decode_png, decode_webp, encode_jpeg,
                                 encode_png, extract_jpeg_shape, is_jpeg)
