"""Reshaping layers: Reshape, Permute, RepeatVector, UpSampling1D/2D/3D (nearest; 2-D also
bilinear), ZeroPadding1D/2D/3D and Cropping1D/2D/3D.

Owns: Keras 3's argument forms (ints, pairs, pairs of pairs, normalized as
Keras stores them in configs) and the per-sample shapes (the batch dim is
never touched). Bilinear upsampling is Keras's (TensorFlow's resize with half
pixel centers), computed as two small interpolation matrices applied by
einsum, so its gradient is the transposed matrices.
"""
import numpy as np

from ..graph.ops import array as _array, math as _math

from .base import Layer, register
from .convolutional import (check_ndim, standardize_data_format, standardize_tuple,
                            to_channels_last, to_data_format)

__all__ = ["Reshape", "Permute", "RepeatVector", "UpSampling1D", "UpSampling2D", "UpSampling3D",
           "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "Cropping1D", "Cropping2D",
           "Cropping3D"]


@register
class Reshape(Layer):
    """Reshapes each sample to `target_shape` (one entry may be -1).

    Example:
        >>> tl.layers.Reshape((3, 2))(tl.ones((4, 6))).shape
        TensorShape([4, 3, 2])
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1 or any(
                d < -1 or d == 0 for d in self.target_shape):
            raise ValueError("There must be at most one unknown dimension (-1) in target_shape "
                             f"and the others positive. Received: target_shape={target_shape}")

    def _resolved(self, sample_shape):
        target = list(self.target_shape)
        if -1 in target and None not in sample_shape:
            known = int(np.prod([d for d in target if d != -1]))
            total = int(np.prod(sample_shape))
            if total % known:
                raise ValueError(f"The total size of the tensor must be unchanged. Received: "
                                 f"input_shape={tuple(sample_shape)}, target_shape="
                                 f"{self.target_shape}")
            target[target.index(-1)] = total // known
        elif -1 not in target and None not in sample_shape and \
                int(np.prod(target)) != int(np.prod(sample_shape)):
            raise ValueError(f"The total size of the tensor must be unchanged. Received: "
                             f"input_shape={tuple(sample_shape)}, target_shape={self.target_shape}")
        return target

    def call(self, inputs):
        target = self._resolved(list(inputs.shape)[1:])
        batch = inputs.shape[0]
        if batch is not None:
            return _array.reshape(inputs, [batch] + target)
        if -1 not in target:
            return _array.reshape(inputs, [-1] + target)
        return _array.reshape(inputs, _array.concat([_array.shape(inputs)[:1], _array.constant(target)], 0))

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(None if d == -1 else d
                                         for d in self._resolved(list(input_shape)[1:]))

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


@register
class Permute(Layer):
    """Permutes the non-batch dims: `dims` is 1-indexed, e.g. (2, 1) swaps them."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be `{1, 2, ..., len(dims)}`. Received: "
                             f"dims={dims}")

    def call(self, inputs):
        return _array.transpose(inputs, (0,) + self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


@register
class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features)."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n

    def call(self, inputs):
        if inputs.shape.rank != 2:
            raise ValueError(f"RepeatVector expects 2-D inputs (batch, features), got shape "
                             f"{inputs.shape}")
        return _array.tile(_array.expand_dims(inputs, 1), [1, self.n, 1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


def _interpolation_matrix(size, factor):
    """(size * factor, size) rows of bilinear weights, half-pixel centers, edges clamped."""
    out = size * factor
    src = np.clip((np.arange(out) + 0.5) / factor - 0.5, 0, size - 1)
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, size - 1)
    frac = src - lo
    m = np.zeros((out, size))
    m[np.arange(out), lo] += 1 - frac
    m[np.arange(out), hi] += frac
    return m


class _UpSampling(Layer):
    rank = 2

    def __init__(self, size=2, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.size = standardize_tuple(size, self.rank, "size")
        self.data_format = standardize_data_format(data_format)

    def _upsample(self, x):
        for axis, factor in enumerate(self.size, start=1):
            if factor != 1:
                x = _array.repeat(x, factor, axis=axis)
        return x

    def call(self, inputs):
        x = to_channels_last(inputs, self.data_format)
        return to_data_format(self._upsample(x), self.data_format)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


@register
class UpSampling1D(_UpSampling):
    """Repeats each time step `size` times: (batch, steps, f) -> (batch, steps * size, f)."""
    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size, None, **kwargs)
        self.size = int(size)

    def _upsample(self, x):
        return _array.repeat(x, self.size, axis=1)

    def get_config(self):
        return {**Layer.get_config(self), "size": self.size}


@register
class UpSampling2D(_UpSampling):
    """Upsamples images by `size` (rows, cols), "nearest" (repeat) or "bilinear".

    Example:
        >>> tl.layers.UpSampling2D(2)(tl.ones((1, 3, 3, 2))).shape
        TensorShape([1, 6, 6, 2])
    """
    rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(size, data_format, **kwargs)
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError("`interpolation` argument should be one of: \"nearest\", "
                             f"\"bilinear\" (trainlib). Received: \"{interpolation}\".")
        self.interpolation = interpolation

    def _upsample(self, x):
        if self.interpolation == "nearest":
            return super()._upsample(x)
        h, w = x.shape[1], x.shape[2]
        if h is None or w is None:
            raise ValueError(f"bilinear UpSampling2D needs known spatial dims, got {x.shape}")
        mh = _array.constant(_interpolation_matrix(h, self.size[0]), dtype=x.dtype)
        mw = _array.constant(_interpolation_matrix(w, self.size[1]), dtype=x.dtype)
        return _math.einsum("ph,bhwc,qw->bpqc", mh, x, mw)

    def get_config(self):
        return {**super().get_config(), "interpolation": self.interpolation}


@register
class UpSampling3D(_UpSampling):
    """Repeats each voxel `size` (d, h, w) times."""
    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size, data_format, **kwargs)


def _pairs(value, rank, what):
    """Keras's ((before, after), ...) form of an int, rank ints, or rank pairs."""
    if isinstance(value, int):
        return ((value, value),) * rank
    if not hasattr(value, "__len__") or len(value) != rank:
        raise ValueError(f"`{what}` should be either an int, a tuple of {rank} ints or a tuple "
                         f"of {rank} tuples of 2 ints. Received: {what}={value}.")
    ordinals = ("1st", "2nd", "3rd")
    return tuple(standardize_tuple(v, 2, f"{ordinals[i]} entry of {what}", allow_zero=True)
                 for i, v in enumerate(value))


class _SpatialEdit(Layer):
    rank = 2
    _arg = "padding"

    def __init__(self, value, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._edges = _pairs(value, self.rank, self._arg)   # ((before, after), ...)
        setattr(self, self._arg, self._edges)
        self.data_format = standardize_data_format(data_format)

    def get_config(self):
        return {**super().get_config(), self._arg: getattr(self, self._arg),
                "data_format": self.data_format}


class _ZeroPadding(_SpatialEdit):
    _arg = "padding"

    def call(self, inputs):
        check_ndim(self, inputs.shape.rank, self.rank + 2)
        pads = [list(p) for p in self._edges]
        if self.data_format == "channels_first":
            return _array.pad(inputs, [[0, 0], [0, 0]] + pads)
        return _array.pad(inputs, [[0, 0]] + pads + [[0, 0]])


class _Cropping(_SpatialEdit):
    _arg = "cropping"

    def call(self, inputs):
        check_ndim(self, inputs.shape.rank, self.rank + 2)
        first = 2 if self.data_format == "channels_first" else 1
        index = [slice(None)] * inputs.shape.rank
        for i, (before, after) in enumerate(self._edges):
            size = inputs.shape[first + i]
            if size is not None and before + after >= size:
                raise ValueError(f"Values in `cropping` argument should be smaller than the "
                                 f"corresponding spatial dimension of the input. Received: "
                                 f"input_shape={tuple(inputs.shape)}, cropping={self.cropping}")
            index[first + i] = slice(before, -after if after else None)
        return inputs[tuple(index)]


@register
class ZeroPadding1D(_ZeroPadding):
    """Pads the time axis with zeros: `padding` an int or (before, after)."""
    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__([padding], data_format, **kwargs)
        self.padding = self.padding[0]


@register
class ZeroPadding2D(_ZeroPadding):
    """Pads rows and columns with zeros: an int, (rows, cols), or ((top, bottom), (left, right))."""
    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


@register
class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial dims with zeros."""
    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


@register
class Cropping1D(_Cropping):
    """Crops the time axis: `cropping` an int or (before, after)."""
    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__([cropping], None, **kwargs)
        self.cropping = self.cropping[0]

    def get_config(self):
        return {**Layer.get_config(self), "cropping": self.cropping}


@register
class Cropping2D(_Cropping):
    """Crops rows and columns: an int, (rows, cols), or ((top, bottom), (left, right))."""
    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


@register
class Cropping3D(_Cropping):
    """Crops the three spatial dims."""
    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)
