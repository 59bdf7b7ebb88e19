"""`keras.datasets.mnist`, re-exported from `trainlib.datasets.mnist`."""
from ...datasets.mnist import load_data  # noqa: F401

__all__ = ["load_data"]
