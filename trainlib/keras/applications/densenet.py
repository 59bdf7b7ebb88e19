"""`keras.applications.densenet` (re-exports `trainlib.applications.densenet`)."""
from ...applications.densenet import (DenseNet121, DenseNet169, DenseNet201,  # noqa: F401
                                     decode_predictions, preprocess_input)
