"""Adaptive pooling: AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D, and
`adaptive_pool`, the function they (and `keras.ops.adaptive_*_pool`) compute.

Owns: Keras 3.15's bins, as its TensorFlow backend computes them, axis by axis: output bin
i of an axis of length n pooled to m covers [floor(i n / m), ceil((i + 1) n / m)), a
window of either `small = ceil(n / m)` or `small + 1` positions. Each axis is pooled twice
with stride 1 (windows small and small + 1) and each bin gathers its start from the pool of
its size. Spatial sizes must be known; channels_first inputs are transposed to channels last
and back.
"""
import math

import numpy as np

from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, register
from .convolutional import check_ndim, standardize_data_format, to_channels_last, to_data_format

__all__ = ["AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D", "AdaptiveAveragePooling3D",
           "AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D"]


def _bin_starts(n, m):
    """(gather indices into [small pool; big pool], small, big, whether a bin is big) for n
    positions into m bins."""
    small = math.ceil(n / m)
    big = small + 1
    i = np.arange(m, dtype=np.float32)
    starts = np.floor(i * np.float32(n) / np.float32(m)).astype(np.int64)
    ends = np.ceil((i + 1) * np.float32(n) / np.float32(m)).astype(np.int64)
    ends, starts = np.minimum(ends, n), np.minimum(starts, n - 1)
    small_len = max(1, n - small + 1)
    is_big = ends - starts == big
    return np.where(is_big, starts + small_len, starts).astype(np.int32), small, big, \
        bool(is_big.any())


def _pool_axis(x, axis, m, mode):
    """Channels-last `x` pooled to `m` bins along spatial `axis` (1-based)."""
    dims = x.shape.as_list()
    n = dims[axis]
    index, small, big, uses_big = _bin_starts(n, m)
    inner = int(np.prod(dims[axis + 1:-1], dtype=np.int64))
    channels = dims[-1] if dims[-1] is not None else _array.shape(x)[-1]
    batch_dims = [d if d is not None else _array.shape(x)[k] for k, d in enumerate(dims[:axis])]
    lead = _array.reshape(x, [-1, n, inner, channels] if isinstance(channels, int) else
                          _array.stack([-1, n, inner, channels]))   # the axis pooled as a height
    pool = _nn.max_pool2d if mode == "max" else _nn.avg_pool2d
    pools = [pool(lead, [small, 1], [1, 1], "VALID")]
    if uses_big:
        pools.append(pool(lead, [big, 1], [1, 1], "VALID"))
    pooled = _array.gather(_array.concat(pools, 1) if len(pools) > 1 else pools[0],
                           _array.constant(index), axis=1)
    shape = batch_dims + [m] + dims[axis + 1:-1] + [channels]
    if all(isinstance(d, int) for d in shape[1:]):
        return _array.reshape(pooled, [-1] + shape[1:])
    return _array.reshape(pooled, _array.stack(shape))


def adaptive_pool(inputs, output_size, data_format, mode):
    """`inputs` (batch, *spatial, channels) or channels first, mean- or max-pooled
    (`mode` "average" / "max") to the spatial `output_size` (a tuple, one per axis), with
    Keras 3.15's bins. Integer inputs are pooled as float32."""
    x = inputs if inputs.dtype.is_floating else _math.cast(inputs, _dt.float32)
    rank = x.shape.rank - 2
    x = to_channels_last(x, data_format)
    for axis in range(1, rank + 1):
        if x.shape[axis] is None:
            raise ValueError("Input length must be statically known for adaptive pooling; got "
                             f"shape {inputs.shape}")
        x = _pool_axis(x, axis, int(output_size[axis - 1]), mode)
    return to_data_format(x, data_format)


_AXES = {1: "an integer or tuple of 1 integer", 2: "an integer or (height, width) tuple",
         3: "an integer or (depth, height, width) tuple"}


class _AdaptivePooling(Layer):
    """Pools each spatial axis to `output_size` bins (an int: the same for every axis)."""
    rank = 2
    mode = "average"

    def __init__(self, output_size, data_format=None, **kwargs):
        if isinstance(output_size, int) and not isinstance(output_size, bool):
            output_size = (output_size,) * self.rank
        elif isinstance(output_size, (tuple, list)) and \
                (len(output_size) == self.rank or self.rank == 1):
            if len(output_size) != self.rank:
                raise ValueError("For 1D input, `output_size` tuple must have length 1. "
                                 f"Received: {output_size}")
            output_size = tuple(output_size)
        else:
            raise TypeError(f"`output_size` must be {_AXES[self.rank]}. Received: "
                            f"{output_size} of type {type(output_size)}")
        super().__init__(**kwargs)
        self.output_size = output_size
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        check_ndim(self, inputs.shape.rank, self.rank + 2)
        return adaptive_pool(inputs, self.output_size, self.data_format, self.mode)

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self):
        return {**super().get_config(), "output_size": self.output_size,
                "data_format": self.data_format}


def _adaptive(name, rank, mode):
    what = "Mean" if mode == "average" else "Max"
    doc = (f"{what} over adaptive bins of {rank}-D inputs: each spatial axis pooled to "
           f"`output_size` bins, bin i of n positions into m covering "
           f"[floor(i n / m), ceil((i + 1) n / m)).\n\n"
           f"    Example:\n"
           f"        >>> layer = tl.keras.layers.{name}(2)\n"
           f"        >>> layer(tl.ones((1,{' 5,' * rank} 3))).shape\n"
           f"        TensorShape([1,{' 2,' * rank} 3])\n")
    return register(type(name, (_AdaptivePooling,), {"rank": rank, "mode": mode,
                                                      "__doc__": doc, "__module__": __name__}))


AdaptiveAveragePooling1D = _adaptive("AdaptiveAveragePooling1D", 1, "average")
AdaptiveAveragePooling2D = _adaptive("AdaptiveAveragePooling2D", 2, "average")
AdaptiveAveragePooling3D = _adaptive("AdaptiveAveragePooling3D", 3, "average")
AdaptiveMaxPooling1D = _adaptive("AdaptiveMaxPooling1D", 1, "max")
AdaptiveMaxPooling2D = _adaptive("AdaptiveMaxPooling2D", 2, "max")
AdaptiveMaxPooling3D = _adaptive("AdaptiveMaxPooling3D", 3, "max")
