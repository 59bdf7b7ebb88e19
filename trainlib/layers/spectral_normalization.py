"""`SpectralNormalization`: a wrapper keeping the spectral norm of a layer's kernel near 1
(Miyato et al. 2018), as Keras 3's.

Owns: the power-iteration estimate of the kernel's largest singular value and the
training-time update. Invariants (Keras's): the wrapper owns one non-trainable weight
`vector_u` (1, kernel.shape[-1]) ~ TruncatedNormal(0.02); while `training=True` each call
runs `power_iterations` steps v = normalize(u W^T), u = normalize(v W) over the kernel
reshaped to (-1, out), then assigns `u` and `W / (v W u^T)` to the variables (unless the
kernel is all zeros), so gradients reach the kernel as read by the wrapped layer, not
through the normalization. At inference the wrapped layer runs on the kernel as it is.
"""
from .. import initializers
from ..graph.ops import array as _array, math as _math

from .base import register
from .input_spec import InputSpec
from .wrapper import Wrapper

__all__ = ["SpectralNormalization"]

_EPSILON = 1e-7   # Keras's backend.epsilon(): the floor of the norm in `normalize`


def _l2_normalize(x):
    """x over its L2 norm (all entries), the inverse norm capped at 1/epsilon (Keras's
    `ops.normalize(x, axis=None)`)."""
    inv = _math.rsqrt(_math.reduce_sum(_math.square(x)))
    return x * _math.minimum(inv, _array.constant(1.0 / _EPSILON, x.dtype))


@register
class SpectralNormalization(Wrapper):
    """Divides the wrapped layer's `kernel` (or `embeddings`) by its spectral norm, estimated
    by power iteration, at each training call.

    Args:
        layer: a layer with a `kernel` (Dense, Conv2D, ...) or `embeddings` (Embedding).
        power_iterations: power-iteration steps per call (> 0).

    Example:
        >>> sn = tl.keras.layers.SpectralNormalization(tl.layers.Dense(4))
        >>> sn(tl.ones((2, 3)), training=True).shape
        TensorShape([2, 4])
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        if hasattr(self.layer, "kernel"):
            self.kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            self.kernel = self.layer.embeddings
        else:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        self.kernel_shape = tuple(self.kernel.shape)
        self.vector_u = self.add_weight(shape=(1, self.kernel_shape[-1]),
                                        initializer=initializers.TruncatedNormal(stddev=0.02),
                                        trainable=False, name="vector_u",
                                        dtype=self.kernel.dtype)

    def call(self, inputs, training=False):
        if training:
            kernel = self.kernel.value()
            new_u, new_kernel = self.normalized_weights()
            untouched = _math.reduce_all(_math.equal(kernel, _array.zeros_like(kernel)))
            self.vector_u.assign(_math.where(untouched, self.vector_u.value(), new_u))
            self.kernel.assign(_math.where(untouched, kernel, new_kernel))
        output = self.layer(inputs)
        return _math.cast(output, inputs.dtype) if output.dtype is not inputs.dtype else output

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def normalized_weights(self):
        """(u, kernel / sigma): the updated `vector_u` and the spectrally normalized kernel."""
        kernel = self.kernel.value()
        weights = _array.reshape(kernel, [-1, self.kernel_shape[-1]])
        u = self.vector_u.value()
        for _ in range(self.power_iterations):
            v = _l2_normalize(_math.matmul(u, weights, transpose_b=True))
            u = _l2_normalize(_math.matmul(v, weights))
        u, v = _array.stop_gradient(u), _array.stop_gradient(v)
        sigma = _math.matmul(_math.matmul(v, weights), u, transpose_b=True)
        return u, _array.reshape(kernel / sigma, self.kernel_shape)

    def get_config(self):
        return {**super().get_config(), "power_iterations": self.power_iterations}
