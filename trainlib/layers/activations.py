"""Activation layers: ReLU (max_value, negative_slope, threshold), LeakyReLU, PReLU, ELU and
Softmax (with a mask).

Owns: Keras 3's formulas, term for term (ReLU's thresholded and clipped
form, PReLU's `relu(x) - alpha * relu(-x)`, Softmax's -1e9 fill of masked
positions and zeroed fully-masked rows), arguments and configs.
"""
import warnings

from .. import constraints, initializers, regularizers
from ..graph import dtypes as _dt
from ..graph.op import convert_to_tensor
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, register

__all__ = ["ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax"]


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's relu: x above `threshold` (else 0), clipped at `max_value`, minus
    negative_slope * relu(threshold - x)."""
    if negative_slope != 0.0 and max_value is None and threshold == 0:
        return _nn.leaky_relu(x, alpha=negative_slope)
    negative = _nn.relu(threshold - x if threshold != 0 else -x) if negative_slope != 0.0 else None
    if threshold != 0:
        y = _math.where(x > threshold, x, _array.zeros_like(x))
    elif max_value == 6:
        y, max_value = _nn.relu6(x), None
    else:
        y = _nn.relu(x)
    if max_value is not None:
        y = _math.clip_by_value(y, 0.0, float(max_value))
    if negative is not None:
        y = y - negative_slope * negative
    return y


@register
class ReLU(Layer):
    """Rectified linear unit with Keras's options.

    Args:
        max_value: clip the output at this value (None: no clip).
        negative_slope: slope below the threshold (default 0).
        threshold: values below it are damped (default 0).

    Example:
        >>> tl.layers.ReLU(max_value=1.0)(tl.constant([-1.0, 0.5, 3.0])).numpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. "
                             f"Received: max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be a negative value. "
                             f"Received: negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError("threshold of a ReLU layer cannot be a negative value. "
                             f"Received: threshold={threshold}")
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold

    def call(self, inputs):
        return relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


@register
class LeakyReLU(Layer):
    """x where positive, negative_slope * x elsewhere (Keras 3 default slope 0.3; `alpha` is
    accepted with Keras's deprecation warning)."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or "
                             f"negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = negative_slope

    def call(self, inputs):
        return _nn.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


@register
class PReLU(Layer):
    """Leaky ReLU with a learned slope per position: relu(x) - alpha * relu(-x); `alpha` has the
    input's per-sample shape, with size 1 along `shared_axes`."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self._weight_options("alpha", alpha_initializer, alpha_regularizer, alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            shape[axis - 1] = 1
        if None in shape:
            raise ValueError(f"PReLU needs known non-batch dims (or shared_axes over the unknown "
                             f"ones), got input shape {tuple(input_shape)}")
        self.alpha = self.add_weight(name="alpha", shape=tuple(shape),
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)

    def call(self, inputs):
        return _nn.relu(inputs) - self.alpha * _nn.relu(-inputs)

    def get_config(self):
        return {**super().get_config(),
                "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}


@register
class ELU(Layer):
    """x where positive, alpha * (exp(x) - 1) elsewhere."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        y = _nn.elu(inputs)
        if self.alpha == 1.0:
            return y
        return _math.where(inputs > 0, y, self.alpha * y)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


@register
class Softmax(Layer):
    """Softmax along `axis` (an int or a list of axes); with `mask` (True or > 0.5 keeps a
    position), masked positions get -1e9 before and 0 after, as Keras."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = convert_to_tensor(mask)
            if mask.shape.rank is not None and inputs.shape.rank is not None and \
                    mask.shape.rank > inputs.shape.rank:
                raise ValueError("The `mask` must be broadcastable to `inputs` and must not have "
                                 f"more dimensions. Received: inputs.shape={inputs.shape}, "
                                 f"mask.shape={mask.shape}")
            if mask.dtype != _dt.bool:
                mask = mask > _math.cast(0.5, mask.dtype)
            inputs = _math.where(mask, inputs, _array.fill(_array.shape(inputs), _math.cast(
                -3e4 if inputs.dtype == _dt.float16 else -1e9, inputs.dtype)))
        if isinstance(self.axis, (list, tuple)) and len(self.axis) > 1:
            lse = _math.reduce_logsumexp(inputs, axis=list(self.axis), keepdims=True)
            outputs = _math.exp(inputs - lse)
        else:
            axis = self.axis[0] if isinstance(self.axis, (list, tuple)) else self.axis
            outputs = _nn.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = _math.where(mask, outputs, _array.zeros_like(outputs))
        return outputs

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
