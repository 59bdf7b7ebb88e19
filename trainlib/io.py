"""`tl.io`: reading and writing whole files as string tensors (`read_file`, `write_file`) and
parsing CSV records (`decode_csv`).

Owns nothing but names: the ops live in trainlib/graph/ops/io.py and strings.py.
"""
from .graph.ops.io import read_file, write_file  # noqa: F401
from .graph.ops.strings import decode_csv  # noqa: F401
from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter  # noqa: F401
from .graph.ops.parsing import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,  # noqa: F401
                                parse_example, parse_single_example)
