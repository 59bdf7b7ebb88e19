"""`keras.datasets.cifar100`: 60,000 32x32 colour images in 100 fine (20 coarse) classes."""
import os

import numpy as np

from ..downloads import get_file
from . import _common

_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
_FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode="fine"):
    """`(x_train, y_train), (x_test, y_test)`: images [n, 32, 32, 3] uint8 (channels last) and
    labels [n, 1] by `label_mode` "fine" (100 classes) or "coarse" (20)."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: '
                         f"label_mode={label_mode}.")
    path = get_file(fname="cifar-100-python-target", origin=_ORIGIN, extract=True,
                    file_hash=_FILE_HASH)
    path = os.path.join(path, "cifar-100-python")
    out = []
    for part in ("train", "test"):
        x, y = _common.load_batch(os.path.join(path, part), label_key=f"{label_mode}_labels")
        out.append((x.transpose(0, 2, 3, 1), np.reshape(y, (len(y), 1))))
    return tuple(out)
