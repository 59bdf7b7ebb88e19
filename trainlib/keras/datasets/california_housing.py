"""`keras.datasets.california_housing`, re-exported from `trainlib.datasets.california_housing`."""
from ...datasets.california_housing import load_data  # noqa: F401

__all__ = ["load_data"]
