"""`keras.applications.efficientnet` (re-exports `trainlib.applications.efficientnet`)."""
from ...applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2,  # noqa: F401
                                         EfficientNetB3, EfficientNetB4, EfficientNetB5,
                                         EfficientNetB6, EfficientNetB7, decode_predictions,
                                         preprocess_input)
