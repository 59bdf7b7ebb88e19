"""`trainlib.keras.datasets`: Keras 3's `keras.datasets` loaders, re-exported from where they live
(`keras.datasets.mnist.load_data()`, ...)."""
from ...datasets import (boston_housing, cifar10, fashion_mnist, imdb, mnist,  # noqa: F401
                         reuters)
from ...datasets import __all__  # noqa: F401
