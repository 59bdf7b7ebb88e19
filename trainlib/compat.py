"""`tl.compat`: TensorFlow's text/bytes conversions and type tuples for code ported from it.

Owns: `as_bytes`, `as_text` (`as_str`), `as_str_any`, `path_to_str`, the numeric type
tuples (`integral_types`, ...), `dimension_value` / `dimension_at_index`, the
forward-compatibility date check, and `v2` (trainlib itself: `tf.compat.v2` code runs
unchanged). `tl.compat.v1` is TensorFlow 1's graph-and-session API, which trainlib does not
have: using it raises an error that says so.
"""
import datetime
import numbers
import os
import sys

import numpy as np

from .graph.tensor import as_shape

__all__ = ["as_bytes", "as_text", "as_str", "as_str_any", "path_to_str", "bytes_or_text_types",
           "integral_types", "real_types", "complex_types", "dimension_value", "dimension_at_index",
           "forward_compatible", "forward_compatibility_horizon", "v2"]

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """`bytes_or_text` as bytes (text is encoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """`bytes_or_text` as str (bytes are decoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """`as_str` for bytes, `str(value)` for anything else."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object as a str (other values unchanged)."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def dimension_value(dimension):
    """The int (or None) of a dim, whatever form it comes in."""
    return dimension if dimension is None else int(dimension)


def dimension_at_index(shape, index):
    """Dim `index` of `shape` (None when the rank is unknown)."""
    shape = as_shape(shape)
    if shape.rank is None:
        return None
    return shape[index]


_HORIZON = datetime.date(2026, 12, 1)


def forward_compatible(year, month, day):
    """True when the given date is before this release's forward-compatibility horizon."""
    return _HORIZON > datetime.date(year, month, day)


class forward_compatibility_horizon:  # noqa: N801 -- TensorFlow's spelling
    """Moves the horizon `forward_compatible` compares with, for the `with` block."""

    def __init__(self, year, month, day):
        self.date, self.saved = datetime.date(year, month, day), None

    def __enter__(self):
        global _HORIZON
        self.saved, _HORIZON = _HORIZON, self.date

    def __exit__(self, *exc):
        global _HORIZON
        _HORIZON = self.saved
        return False


class _V1Missing:
    def __getattr__(self, name):
        raise AttributeError(
            f"tl.compat.v1.{name}: trainlib has no TensorFlow 1 API (graphs and sessions, "
            "placeholders, tf.compat.v1 layers). Write it in TensorFlow 2's style: eager code, "
            "tl.function for graphs, tl.keras for layers.")


v1 = _V1Missing()


def __getattr__(name):
    if name == "v2":
        return sys.modules[__name__.rpartition(".")[0]]   # the trainlib package itself
    raise AttributeError(f"module 'trainlib.compat' has no attribute {name!r}")


