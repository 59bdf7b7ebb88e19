"""`keras.datasets.boston_housing`: 506 houses, 13 features, their prices (regression)."""
import numpy as np

from ..downloads import get_file
from . import _common

_FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """`(x_train, y_train), (x_test, y_test)`: the rows shuffled with `seed` (as Keras) and the
    last `test_split` of them held out."""
    _common.check_test_split(test_split)
    path = get_file(path, origin=f"{_common.ORIGIN_FOLDER}boston_housing.npz",
                    file_hash=_FILE_HASH)
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    return _common.regression_split(x, y, test_split, seed)
