"""`tl.layers`: Keras 3's layers over trainlib ops (see base.py for the Layer contract)."""
from .base import InputLayer, Input, KerasTensor, Layer, deserialize, register, serialize  # noqa: F401
from .core import Activation, Dense, Dropout, Embedding, Flatten  # noqa: F401
from .conv import AveragePooling2D, Conv2D, MaxPooling2D  # noqa: F401
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .attention import (AdditiveAttention, Attention, EinsumDense,  # noqa: F401
                        GroupedQueryAttention, GroupQueryAttention, MultiHeadAttention)
from .alpha_dropout import AlphaDropout  # noqa: F401
from .lambda_layer import Lambda  # noqa: F401
from .normalization import GroupNormalization, UnitNormalization  # noqa: F401
from .preprocessing import (CategoryEncoding, CenterCrop, Discretization,  # noqa: F401
                            IntegerLookup, Normalization, RandomBrightness, RandomContrast,
                            RandomFlip, Rescaling)
from .pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D,  # noqa: F401
                      GlobalMaxPooling1D, GlobalMaxPooling2D)

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Dense", "Activation", "Flatten",
           "Dropout", "Embedding", "Conv2D", "MaxPooling2D", "AveragePooling2D",
           "BatchNormalization", "LayerNormalization", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "register", "serialize", "deserialize",
           "EinsumDense", "MultiHeadAttention", "GroupQueryAttention", "Attention", "AdditiveAttention", "AlphaDropout",
           "Lambda", "GroupNormalization", "UnitNormalization", "Normalization", "Rescaling",
           "CenterCrop", "RandomFlip", "RandomBrightness", "RandomContrast", "CategoryEncoding",
           "Discretization", "IntegerLookup"]
