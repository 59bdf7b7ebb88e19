"""`keras.datasets.cifar10`: 60,000 32x32 colour images in 10 classes."""
import os

import numpy as np

from ..downloads import get_file
from . import _common

_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


def load_data():
    """`(x_train, y_train), (x_test, y_test)`: 50,000 and 10,000 images [n, 32, 32, 3] uint8
    (channels last) with labels [n, 1] uint8, from the CIFAR-10 python archive (extracted under
    ~/.keras/datasets/cifar-10-batches-py-target)."""
    path = get_file(fname="cifar-10-batches-py-target", origin=_ORIGIN, extract=True,
                    file_hash=_FILE_HASH)
    path = os.path.join(path, "cifar-10-batches-py")
    xs, ys = zip(*(_common.load_batch(os.path.join(path, f"data_batch_{i}"))
                   for i in range(1, 6)))
    x_train = np.concatenate(xs).astype("uint8")
    y_train = np.concatenate([np.asarray(y) for y in ys]).astype("uint8")
    x_test, y_test = _common.load_batch(os.path.join(path, "test_batch"))
    y_train = y_train.reshape(len(y_train), 1)
    y_test = np.asarray(y_test).reshape(len(y_test), 1).astype(y_train.dtype)
    return ((x_train.transpose(0, 2, 3, 1), y_train),
            (x_test.astype(x_train.dtype).transpose(0, 2, 3, 1), y_test))
