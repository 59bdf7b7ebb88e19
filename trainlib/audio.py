"""`tl.audio`: 16-bit PCM WAV files as string tensors (`decode_wav`, `encode_wav`).

Owns nothing but names: the ops live in trainlib/graph/ops/audio.py.
"""
from .graph.ops.audio import decode_wav, encode_wav  # noqa: F401
