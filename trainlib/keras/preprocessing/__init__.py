"""`trainlib.keras.preprocessing`: Keras 3's `keras.preprocessing` (the dataset builders) and
tf.keras 2's submodules (image generators, text, `sequence.pad_sequences`), re-exported from
where they live."""
from . import image, sequence, text  # noqa: F401
from ...data_utils import (image_dataset_from_directory, text_dataset_from_directory,  # noqa: F401
                           timeseries_dataset_from_array)
