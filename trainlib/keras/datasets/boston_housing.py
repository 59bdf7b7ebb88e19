"""`keras.datasets.boston_housing`, re-exported from `trainlib.datasets.boston_housing`."""
from ...datasets.boston_housing import load_data  # noqa: F401

__all__ = ["load_data"]
