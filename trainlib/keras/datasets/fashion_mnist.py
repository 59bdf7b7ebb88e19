"""`keras.datasets.fashion_mnist`, re-exported from `trainlib.datasets.fashion_mnist`."""
from ...datasets.fashion_mnist import load_data  # noqa: F401

__all__ = ["load_data"]
