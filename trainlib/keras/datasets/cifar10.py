"""`keras.datasets.cifar10`, re-exported from `trainlib.datasets.cifar10`."""
from ...datasets.cifar10 import load_data  # noqa: F401

__all__ = ["load_data"]
