"""Simple regularization layers: GaussianNoise, GaussianDropout, SpatialDropout1D/2D/3D,
ActivityRegularization, Identity and Masking.

Owns: Keras 3's training-only noise (inactive unless `training=True`),
SpatialDropout's whole-channel masks (noise shape (batch, 1.., channels)), and
Masking's output (timesteps whose features all equal `mask_value` zeroed).
Masks are not propagated to later layers (trainlib's layers take no mask yet).
"""
import math

from .. import regularizers
from ..graph.ops import array as _array, math as _math, nn as _nn, random as _random

from .base import Layer, register, set_keras_mask
from .convolutional import standardize_data_format

__all__ = ["GaussianNoise", "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D", "ActivityRegularization", "Identity", "Masking"]


def _check_rate(rate, name="rate"):
    if not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `{name}`. Expected a float value "
                         f"between 0 and 1. Received: {name}={rate}")
    return rate


@register
class GaussianNoise(Layer):
    """Adds N(0, stddev) noise while training (identity otherwise)."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if stddev < 0:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float "
                             f"value >= 0. Received: stddev={stddev}")
        self.stddev = stddev
        self.seed = seed

    def call(self, inputs, training=False):
        if training and self.stddev > 0:
            return inputs + _random.normal(_array.shape(inputs), stddev=self.stddev,
                                             dtype=inputs.dtype, seed=self.seed)
        return inputs

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


@register
class GaussianDropout(Layer):
    """Multiplies by N(1, sqrt(rate / (1 - rate))) noise while training."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(rate)
        self.seed = seed

    def call(self, inputs, training=False):
        if training and 0 < self.rate < 1:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            return inputs * _random.normal(_array.shape(inputs), mean=1.0, stddev=stddev,
                                             dtype=inputs.dtype, seed=self.seed)
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class _SpatialDropout(Layer):
    _supports_masking = True   # as Keras: the input's mask passes through
    rank = 1

    def __init__(self, rate, seed=None, name=None, dtype=None, data_format=None):
        super().__init__(name=name, dtype=dtype)
        self.rate = _check_rate(rate)
        self.seed = seed
        self.data_format = standardize_data_format(data_format) if self.rank > 1 else None

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        shape = _array.shape(inputs)
        ones = [1] * self.rank
        if self.data_format == "channels_first":
            noise = _array.stack([shape[0], shape[1]] + ones)
        else:
            noise = _array.stack([shape[0]] + ones + [shape[-1]])
        return _nn.dropout(inputs, self.rate, noise_shape=noise, seed=self.seed)

    def get_config(self):
        # Keras writes this family's config without `trainable` and with a plain dtype name
        config = {"rate": self.rate, "seed": self.seed, "name": self.name,
                  "dtype": self.dtype}
        if self.data_format is not None:
            config["data_format"] = self.data_format
        return config


@register
class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of (batch, steps, channels) inputs while training."""
    rank = 1

    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed, name, dtype)


@register
class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of images while training."""
    rank = 2


@register
class SpatialDropout3D(_SpatialDropout):
    """Drops whole feature maps of volumes while training."""
    rank = 3


@register
class ActivityRegularization(Layer):
    """Returns its inputs and adds l1 * sum(|x|) + l2 * sum(x**2) (over the batch size) to
    the layer's losses, as an activity regularizer."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}


@register
class Identity(Layer):
    """Returns its inputs unchanged."""

    _supports_masking = True   # as Keras: the input's mask passes through


@register
class Masking(Layer):
    """Zeroes the timesteps whose features all equal `mask_value` and masks them: the
    output's mask (batch, steps) is False there, for the layers downstream (RNNs, pooling,
    attention, losses) to skip them."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def call(self, inputs):
        keep = self.compute_mask(inputs)
        outputs = inputs * _math.cast(_array.expand_dims(keep, -1), inputs.dtype)
        set_keras_mask(outputs, keep)   # as Keras: the mask is set inside call
        return outputs

    def compute_mask(self, inputs, mask=None):
        """True at the timesteps with some feature other than `mask_value`: (batch, steps)."""
        return _math.reduce_any(_math.not_equal(inputs, _math.cast(self.mask_value,
                                                                   inputs.dtype)), axis=-1)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
