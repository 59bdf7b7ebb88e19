"""`tl.io`: reading and writing whole files as string tensors (`read_file`, `write_file`).

Owns nothing but names: the ops live in trainlib/graph/ops/io.py.
"""
from .graph.ops.io import read_file, write_file  # noqa: F401
