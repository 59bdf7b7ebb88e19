"""`keras.datasets.reuters`, re-exported from `trainlib.datasets.reuters`."""
from ...datasets.reuters import get_label_names, get_word_index, load_data  # noqa: F401

__all__ = ["load_data", "get_word_index", "get_label_names"]
