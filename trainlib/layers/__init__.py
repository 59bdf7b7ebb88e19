"""`tl.layers`: Keras 3's layers over trainlib ops (see base.py for the Layer contract)."""
from . import activations as _activations
from . import convolutional as _convolutional
from . import merging as _merging
from . import operators as _operators  # noqa: F401 -- installs KerasTensor's operators
from . import pooling as _pooling
from . import regularization as _regularization
from . import reshaping as _reshaping
from .activations import *  # noqa: F401,F403
from .base import InputLayer, Input, KerasTensor, Layer, deserialize, register  # noqa: F401
from ..saving.serialization_lib import serialize_keras_object as serialize  # noqa: F401 -- keras.layers.serialize
from .convolutional import *  # noqa: F401,F403
from .core import Activation, Dense, Dropout, Embedding, Flatten  # noqa: F401
from .merging import *  # noqa: F401,F403
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .attention import (AdditiveAttention, Attention, EinsumDense,  # noqa: F401
                        GroupedQueryAttention, GroupQueryAttention, MultiHeadAttention)
from .alpha_dropout import AlphaDropout  # noqa: F401
from .lambda_layer import Lambda  # noqa: F401
from .normalization import GroupNormalization, UnitNormalization  # noqa: F401
from .preprocessing import (CategoryEncoding, CenterCrop, Discretization,  # noqa: F401
                            IntegerLookup, Normalization, RandomBrightness, RandomContrast,
                            RandomFlip, Rescaling)
from .text import StringLookup, TextVectorization  # noqa: F401
from .recurrent import (GRU, LSTM, RNN, Bidirectional, SimpleRNN,  # noqa: F401
                        TimeDistributed)
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells  # noqa: F401
from .pooling import *  # noqa: F401,F403
from .regularization import *  # noqa: F401,F403
from .reshaping import *  # noqa: F401,F403

__all__ = ["Layer", "InputLayer", "Input", "KerasTensor", "Dense", "Activation", "Flatten",
           "Dropout", "Embedding", "BatchNormalization", "LayerNormalization", "RNN", "SimpleRNN",
           "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells",
           "Bidirectional", "TimeDistributed", "EinsumDense", "MultiHeadAttention",
           "GroupQueryAttention", "Attention", "AdditiveAttention", "AlphaDropout", "Lambda",
           "GroupNormalization", "UnitNormalization", "Normalization", "Rescaling", "CenterCrop",
           "RandomFlip", "RandomBrightness", "RandomContrast", "CategoryEncoding",
           "Discretization", "IntegerLookup", "StringLookup", "TextVectorization", "register", "serialize", "deserialize"] + \
    _convolutional.__all__ + _pooling.__all__ + _reshaping.__all__ + _merging.__all__ + \
    _activations.__all__ + _regularization.__all__
