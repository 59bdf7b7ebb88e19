"""`keras.datasets.imdb`, re-exported from `trainlib.datasets.imdb`."""
from ...datasets.imdb import get_word_index, load_data  # noqa: F401

__all__ = ["load_data", "get_word_index"]
