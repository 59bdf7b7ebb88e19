"""Global pooling layers: reduce every spatial (or time) axis to one value per channel.

Owns: GlobalAveragePooling1D/2D and GlobalMaxPooling1D/2D, as Keras 3 names
them (channels last; `keepdims` keeps the reduced axes as size 1).
"""
from ..graph.ops import math as _math

from .base import Layer, register


class _GlobalPooling(Layer):
    _axes = ()
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__} supports data_format='channels_last' only, "
                             f"got {data_format!r}; transpose the input to channels last")
        self.data_format = data_format
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        expected = len(self._axes) + 2
        if inputs.shape.rank is not None and inputs.shape.rank != expected:
            raise ValueError(f"{type(self).__name__} expects inputs of rank {expected} "
                             f"(batch, ..., channels), got shape {inputs.shape}")
        return type(self)._reduce(inputs, axis=list(self._axes), keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format or "channels_last",
                "keepdims": self.keepdims}


@register
class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the time axis: (batch, steps, channels) -> (batch, channels)."""
    _axes = (1,)
    _reduce = _math.reduce_mean
    _promotes_integer_inputs = True   # Keras's mean of integers is floating


@register
class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the time axis: (batch, steps, channels) -> (batch, channels)."""
    _axes = (1,)
    _reduce = _math.reduce_max


@register
class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width: (batch, h, w, channels) -> (batch, channels)."""
    _axes = (1, 2)
    _reduce = _math.reduce_mean
    _promotes_integer_inputs = True


@register
class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width: (batch, h, w, channels) -> (batch, channels)."""
    _axes = (1, 2)
    _reduce = _math.reduce_max
