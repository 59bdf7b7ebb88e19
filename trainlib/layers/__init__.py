"""`tl.layers`: Keras 3's layers over trainlib ops (see base.py for the Layer contract)."""
from .base import InputLayer, Input, KerasTensor, Layer, deserialize, register, serialize  # noqa: F401
from .core import Activation, Dense, Dropout, Embedding, Flatten  # noqa: F401
from .conv import AveragePooling2D, Conv2D, MaxPooling2D  # noqa: F401
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .text import StringLookup, TextVectorization  # noqa: F401
from .pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D,  # noqa: F401
                      GlobalMaxPooling1D, GlobalMaxPooling2D)

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Dense", "Activation", "Flatten",
           "Dropout", "Embedding", "Conv2D", "MaxPooling2D", "AveragePooling2D",
           "BatchNormalization", "LayerNormalization", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "StringLookup",
           "TextVectorization", "register", "serialize", "deserialize"]
