"""`keras.datasets.mnist`: 70,000 28x28 grey digit images (uint8) and their labels."""
import numpy as np

from ..downloads import get_file
from . import _common

_FILE_HASH = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


def load_data(path="mnist.npz"):
    """`(x_train, y_train), (x_test, y_test)`: 60,000 and 10,000 images [n, 28, 28] uint8 with
    labels 0..9 uint8, from Keras's `mnist.npz` (cached as `path` under ~/.keras/datasets).

    Example:
        >>> (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    """
    path = get_file(fname=path, origin=f"{_common.ORIGIN_FOLDER}mnist.npz", file_hash=_FILE_HASH)
    with np.load(path, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
