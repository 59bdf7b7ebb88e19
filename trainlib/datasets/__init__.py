"""`keras.datasets`: Keras 3's small datasets, downloaded once through `get_file` into the
Keras cache (`~/.keras/datasets`, `$KERAS_HOME` respected) from Keras's own origins, checked
against Keras's hashes, and read without executing pickled code.

Each dataset is a module with `load_data()` returning `(x_train, y_train), (x_test, y_test)`
exactly as Keras 3.15's: mnist, fashion_mnist, cifar10, cifar100, imdb, reuters,
boston_housing, california_housing. A file Keras already cached is reused.
"""
from . import (boston_housing, california_housing, cifar10, cifar100,  # noqa: F401
               fashion_mnist, imdb, mnist, reuters)

__all__ = ["boston_housing", "california_housing", "cifar10", "cifar100", "fashion_mnist",
           "imdb", "mnist", "reuters"]
