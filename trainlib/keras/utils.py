"""`trainlib.keras.utils`: Keras 3's `keras.utils` names, re-exported from where they live."""
from ..utils import *  # noqa: F401,F403
from ..utils import __all__ as _utils_all
from ..downloads import get_file  # noqa: F401
from ..data_utils import (image_dataset_from_directory, split_dataset,  # noqa: F401
                          timeseries_dataset_from_array)
from ..image_generator import array_to_img, img_to_array, load_img, save_img  # noqa: F401

__all__ = list(_utils_all) + ["get_file", "image_dataset_from_directory", "split_dataset",
                              "timeseries_dataset_from_array", "array_to_img", "img_to_array",
                              "load_img", "save_img"]
