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
from .normalization import GroupNormalization, RMSNormalization, UnitNormalization  # noqa: F401
from .input_spec import InputSpec  # noqa: F401
from .spectral_normalization import SpectralNormalization  # noqa: F401
from .wrapper import Wrapper  # noqa: F401
from . import image_augmentation as _image_augmentation
from .image_augmentation import *  # noqa: F401,F403
from . import color_augmentation as _color_augmentation
from .color_augmentation import *  # noqa: F401,F403
from .image_mixing import CutMix, MixUp  # noqa: F401
from .pipeline import Pipeline  # noqa: F401
from .reversible_embedding import ReversibleEmbedding  # noqa: F401
from . import adaptive_pooling as _adaptive_pooling
from .adaptive_pooling import *  # noqa: F401,F403
from .preprocessing import (CategoryEncoding, Discretization,  # noqa: F401
                            IntegerLookup, Normalization, RandomBrightness, RandomContrast,
                            RandomFlip, Rescaling)
from .image_preprocessing import (CenterCrop, RandomCrop, RandomRotation, RandomTranslation,  # noqa: F401
                                  RandomZoom, Resizing)
from .hashing import HashedCrossing, Hashing  # noqa: F401
from .conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
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
           "Discretization", "IntegerLookup", "Hashing", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "Resizing", "RandomCrop", "RandomRotation",
           "RandomZoom", "RandomTranslation", "StringLookup", "TextVectorization", "RMSNormalization", "InputSpec",
           "SpectralNormalization", "Wrapper", "HashedCrossing", "Pipeline", "MixUp", "CutMix",
           "ReversibleEmbedding", "register", "serialize", "deserialize"] + \
    _convolutional.__all__ + _adaptive_pooling.__all__ + _pooling.__all__ + _reshaping.__all__ + _merging.__all__ + \
    _activations.__all__ + _regularization.__all__ + _image_augmentation.__all__ + \
    _color_augmentation.__all__

# Keras 3's second names for the same classes (keras.layers.MaxPool2D is MaxPooling2D)
_ALIASES = {"AvgPool1D": "AveragePooling1D", "AvgPool2D": "AveragePooling2D",
            "AvgPool3D": "AveragePooling3D", "MaxPool1D": "MaxPooling1D",
            "MaxPool2D": "MaxPooling2D", "MaxPool3D": "MaxPooling3D",
            "GlobalAvgPool1D": "GlobalAveragePooling1D", "GlobalAvgPool2D": "GlobalAveragePooling2D",
            "GlobalAvgPool3D": "GlobalAveragePooling3D", "GlobalMaxPool1D": "GlobalMaxPooling1D",
            "GlobalMaxPool2D": "GlobalMaxPooling2D", "GlobalMaxPool3D": "GlobalMaxPooling3D",
            "Convolution1D": "Conv1D", "Convolution2D": "Conv2D", "Convolution3D": "Conv3D",
            "Convolution1DTranspose": "Conv1DTranspose",
            "Convolution2DTranspose": "Conv2DTranspose",
            "Convolution3DTranspose": "Conv3DTranspose",
            "SeparableConvolution1D": "SeparableConv1D",
            "SeparableConvolution2D": "SeparableConv2D"}
globals().update({alias: globals()[name] for alias, name in _ALIASES.items()})
__all__ += sorted(_ALIASES)

