"""`trainlib.keras.preprocessing.sequence`: tf.keras 2's `pad_sequences`, re-exported from where
it lives."""
from ...utils import pad_sequences  # noqa: F401

__all__ = ["pad_sequences"]
