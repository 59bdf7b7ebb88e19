"""`keras.datasets.fashion_mnist`: 70,000 28x28 grey images of 10 kinds of clothing."""
import gzip
import os

import numpy as np

from ..downloads import get_file
from . import _common

_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _read(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load_data():
    """`(x_train, y_train), (x_test, y_test)`: 60,000 and 10,000 images [n, 28, 28] uint8 with
    labels 0..9 uint8, from Keras's four IDX files (cached under
    ~/.keras/datasets/fashion-mnist)."""
    dirname = os.path.join("datasets", "fashion-mnist")
    paths = [get_file(name, origin=_common.ORIGIN_FOLDER + name, cache_subdir=dirname)
             for name in _FILES]
    y_train, y_test = _read(paths[0], 8), _read(paths[2], 8)
    x_train = _read(paths[1], 16).reshape(len(y_train), 28, 28)
    x_test = _read(paths[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
