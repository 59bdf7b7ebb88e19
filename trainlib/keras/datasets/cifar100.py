"""`keras.datasets.cifar100`, re-exported from `trainlib.datasets.cifar100`."""
from ...datasets.cifar100 import load_data  # noqa: F401

__all__ = ["load_data"]
