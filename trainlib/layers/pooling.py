"""Pooling layers, 1-D to 3-D: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and the global
ones, GlobalAveragePooling1D/2D/3D and GlobalMaxPooling1D/2D/3D.

Owns: their Keras 3 arguments (strides default to pool_size; `keepdims`;
`data_format`, channels-first data transposed to channels last and back) and
configs. The math is `tl.nn`'s pooling ops (one N-d kernel; 1-D as 2-D).
"""
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, register
from .convolutional import (check_ndim, standardize_data_format, standardize_padding,
                            standardize_tuple, to_channels_last, to_data_format)

__all__ = ["MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D",
           "AveragePooling2D", "AveragePooling3D", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D", "GlobalMaxPooling3D"]

_POOLS = {("max", 1): _nn.max_pool1d, ("max", 2): _nn.max_pool2d, ("max", 3): _nn.max_pool3d,
          ("average", 1): _nn.avg_pool1d, ("average", 2): _nn.avg_pool2d,
          ("average", 3): _nn.avg_pool3d}


class BasePooling(Layer):
    """Max or mean over `pool_size` windows moved by `strides` (default: pool_size)."""
    rank = 2
    mode = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = standardize_tuple(pool_size, self.rank, "pool_size")
        self.strides = self.pool_size if strides is None else \
            standardize_tuple(strides, self.rank, "strides")
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        check_ndim(self, inputs.shape.rank, self.rank + 2)
        x = to_channels_last(inputs, self.data_format)
        y = _POOLS[self.mode, self.rank](x, list(self.pool_size), list(self.strides),
                                         self.padding.upper())
        return to_data_format(y, self.data_format)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


def _pooling(name, rank, mode, doc):
    def __init__(self, pool_size=(2,) * rank if rank > 1 else 2, strides=None, padding="valid",
                 data_format=None, **kwargs):
        BasePooling.__init__(self, pool_size, strides, padding, data_format, **kwargs)
    return register(type(name, (BasePooling,), {"rank": rank, "mode": mode, "__doc__": doc,
                                                  "__init__": __init__, "__module__": __name__}))


MaxPooling1D = _pooling("MaxPooling1D", 1, "max",
                        "Max over windows of (batch, steps, channels); strides default to pool_size.")
MaxPooling2D = _pooling("MaxPooling2D", 2, "max",
                        "Max over `pool_size` windows of images; strides default to pool_size.")
MaxPooling3D = _pooling("MaxPooling3D", 3, "max",
                        "Max over `pool_size` windows of volumes; strides default to pool_size.")
AveragePooling1D = _pooling("AveragePooling1D", 1, "average",
                            "Mean over windows of (batch, steps, channels) (same: real positions "
                            "only).")
AveragePooling2D = _pooling("AveragePooling2D", 2, "average",
                            "Mean over `pool_size` windows of images; strides default to "
                            "pool_size.")
AveragePooling3D = _pooling("AveragePooling3D", 3, "average",
                            "Mean over `pool_size` windows of volumes; strides default to "
                            "pool_size.")


class _GlobalPooling(Layer):
    rank = 1
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        check_ndim(self, inputs.shape.rank, self.rank + 2)
        first = 1 if self.data_format == "channels_last" else 2
        return type(self)._reduce(inputs, axis=list(range(first, first + self.rank)),
                                  keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


def _global(name, rank, reduce, doc):
    # Keras's mean of integers is floating
    return register(type(name, (_GlobalPooling,), {
        "rank": rank, "_reduce": reduce, "__doc__": doc, "__module__": __name__,
        "_promotes_integer_inputs": reduce is _math.reduce_mean}))


@register
class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the time axis: (batch, steps, channels) -> (batch, channels); with a mask
    (batch, steps), the mean of the unmasked steps only (the mask ends here)."""

    rank = 1
    _reduce = staticmethod(_math.reduce_mean)
    _promotes_integer_inputs = True     # Keras's mean of integers is floating
    _supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        check_ndim(self, inputs.shape.rank, 3)
        steps = 1 if self.data_format == "channels_last" else 2
        keep = _math.cast(_array.expand_dims(mask, 2 if steps == 1 else 1), _dt.bool)
        inputs = _math.where(keep, inputs, _array.zeros_like(inputs))
        weights = _math.cast(keep, inputs.dtype)
        return _math.reduce_sum(inputs, axis=steps, keepdims=self.keepdims) / \
            _math.reduce_sum(weights, axis=steps, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None


GlobalMaxPooling1D = _global("GlobalMaxPooling1D", 1, _math.reduce_max,
                             "Max over the time axis: (batch, steps, channels) -> (batch, channels).")
GlobalAveragePooling2D = _global("GlobalAveragePooling2D", 2, _math.reduce_mean,
                                 "Mean over height and width: (batch, h, w, channels) -> "
                                 "(batch, channels).")
GlobalMaxPooling2D = _global("GlobalMaxPooling2D", 2, _math.reduce_max,
                             "Max over height and width: (batch, h, w, channels) -> "
                             "(batch, channels).")
GlobalAveragePooling3D = _global("GlobalAveragePooling3D", 3, _math.reduce_mean,
                                 "Mean over the three spatial axes of volumes.")
GlobalMaxPooling3D = _global("GlobalMaxPooling3D", 3, _math.reduce_max,
                             "Max over the three spatial axes of volumes.")
