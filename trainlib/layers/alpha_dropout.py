"""AlphaDropout: dropout that keeps a SELU network's self-normalizing mean and variance.

Owns: Keras 3's formula (dropped units set to -alpha*scale of SELU, then the affine
correction `a * x + b` so mean and variance are kept); identity unless training.
"""
from ..graph.ops import array as _array, math as _math, random as _random

from .base import Layer, register

__all__ = ["AlphaDropout"]

_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


@register
class AlphaDropout(Layer):
    """Sets a `rate` fraction of inputs to SELU's negative saturation and rescales so the
    mean and variance of SELU activations are kept (training only).

    Args:
        rate: the fraction dropped, in [0, 1].
        noise_shape: shape of the keep mask (None dims taken from the input).
        seed: a seed for the draws.

    Example:
        >>> tl.layers.AlphaDropout(0.5)(tl.ones((2, 3))).shape
        TensorShape([2, 3])
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError("Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        shape = inputs.shape.as_list() if self.noise_shape is None else [
            inputs.shape[i] if d is None else d for i, d in enumerate(self.noise_shape)]
        if None in shape:
            dyn = _array.shape(inputs)
            shape = _array.stack([dyn[i] if d is None else d for i, d in enumerate(shape)])
        alpha_p = -_ALPHA * _SCALE
        kept = _math.cast(_math.greater_equal(
            _random.uniform(shape, dtype=inputs.dtype, seed=self.seed), self.rate), inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}
