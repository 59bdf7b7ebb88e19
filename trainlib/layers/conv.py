"""Convolution and pooling layers (NHWC): Conv2D, MaxPooling2D, AveragePooling2D.

Owns: their weights, defaults and Keras argument names; the math is
`_nn.conv2d` / `_nn.max_pool2d` / `_nn.avg_pool2d`.
"""
from .. import activations, constraints, initializers, regularizers

from ..graph.ops import nn as _nn

from .base import Layer, check_unsupported, register

__all__ = ["Conv2D", "MaxPooling2D", "AveragePooling2D"]


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return value


def _padding(padding):
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding


@register
class Conv2D(Layer):
    """2-D convolution over NHWC images: `activation(conv2d(x, kernel) + bias)`.

    Args:
        filters: output channels.
        kernel_size: int or (height, width).
        strides: int or pair (default 1).
        padding: "valid" (default) or "same".
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Dense.

    Example:
        >>> tl.layers.Conv2D(4, 3)(tl.ones((1, 8, 8, 2))).shape
        TensorShape([1, 6, 6, 4])
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_unsupported(self, groups=(groups, 1))
        if data_format not in (None, "channels_last"):
            raise ValueError("Conv2D supports data_format='channels_last' (NHWC) only")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2D '{self.name}' needs NHWC inputs with known channels, got "
                             f"input shape {input_shape}")
        self.kernel = self.add_weight(name="kernel",
                                      shape=self.kernel_size + (input_shape[-1], self.filters),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        kwargs = {"dilations": self.dilation_rate} if self.dilation_rate != (1, 1) else {}
        x = _nn.conv2d(inputs, self.kernel, strides=self.strides, padding=self.padding.upper(),
                         **kwargs)
        if self.bias is not None:
            x = _nn.bias_add(x, self.bias)
        return self.activation(x)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": 1,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


class _Pooling2D(Layer):
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__} supports data_format='channels_last' (NHWC) "
                             f"only, got {data_format!r}")
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def call(self, inputs):
        return getattr(_nn, self._op)(inputs, ksize=self.pool_size, strides=self.strides,
                                        padding=self.padding.upper())

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": "channels_last"}


@register
class MaxPooling2D(_Pooling2D):
    """Max over `pool_size` windows (NHWC); strides default to pool_size."""
    _op = "max_pool2d"


@register
class AveragePooling2D(_Pooling2D):
    """Mean over `pool_size` windows (NHWC); strides default to pool_size."""
    _op = "avg_pool2d"
