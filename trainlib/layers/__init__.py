"""`tl.layers`: Keras 3's layers over trainlib ops (see base.py for the Layer contract)."""
from .base import InputLayer, Input, KerasTensor, Layer, deserialize, register, serialize  # noqa: F401
from .core import Activation, Dense, Dropout, Embedding, Flatten  # noqa: F401
from .conv import AveragePooling2D, Conv2D, MaxPooling2D  # noqa: F401
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .recurrent import (GRU, LSTM, RNN, Bidirectional, SimpleRNN,  # noqa: F401
                        TimeDistributed)
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells  # noqa: F401
from .pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D,  # noqa: F401
                      GlobalMaxPooling1D, GlobalMaxPooling2D)

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Dense", "Activation", "Flatten",
           "Dropout", "Embedding", "Conv2D", "MaxPooling2D", "AveragePooling2D",
           "BatchNormalization", "LayerNormalization", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "RNN", "SimpleRNN",
           "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells",
           "Bidirectional", "TimeDistributed", "register", "serialize", "deserialize"]
