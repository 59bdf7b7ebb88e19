"""`trainlib.keras.datasets`: Keras 3's `keras.datasets` modules, each re-exporting its loader
from `trainlib.datasets`."""
from . import (boston_housing, california_housing, cifar10, cifar100,  # noqa: F401
               fashion_mnist, imdb, mnist, reuters)

__all__ = ["boston_housing", "california_housing", "cifar10", "cifar100", "fashion_mnist",
           "imdb", "mnist", "reuters"]
