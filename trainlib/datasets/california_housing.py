"""`keras.datasets.california_housing`: 20,640 California block groups of the 1990 census,
8 features each (median income, house age, average rooms and bedrooms, population, average
occupancy, latitude, longitude), and their median house value in dollars (regression)."""
import numpy as np

from ..downloads import get_file
from . import _common

_FILE_HASH = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """`(x_train, y_train), (x_test, y_test)`, as Keras's loader gives them.

    Args:
        version: "large" (all 20,640 rows) or "small" (the first 600, a stand-in for the
            deprecated boston_housing).
        path: the file's name in the cache (`~/.keras/datasets`).
        test_split: the fraction held out for testing, in [0, 1).
        seed: the seed of the shuffle before the split.

    Returns:
        x arrays of shape (n, 8), y arrays of shape (n,).

    Raises:
        ValueError: for a `test_split` outside [0, 1) or an unknown `version`.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = keras.datasets.california_housing.load_data()
        >>> x_train.shape
        (16512, 8)
    """
    _common.check_test_split(test_split)
    path = get_file(path, origin=f"{_common.ORIGIN_FOLDER}california_housing.npz",
                    file_hash=_FILE_HASH)
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError("Argument `version` must be one of 'small', 'large'. Received: "
                         f"version={version}")
    return _common.regression_split(x, y, test_split, seed)
