"""Convolution layers, 1-D to 3-D: Conv1D/2D/3D (with `groups`, Conv1D also `causal`),
Conv1D/2D/3DTranspose, DepthwiseConv1D/2D and SeparableConv1D/2D.

Owns: their Keras 3 constructor arguments, defaults, weight names, shapes and
order (so `set_weights` from a Keras model works), the output-shape arithmetic
of transposed convolutions (Keras's, with `output_padding`) and configs. The
math is `tl.nn`'s convolution ops (one N-d kernel per direction); depthwise
convolution is a grouped convolution with one input channel per group.
Invariant: `channels_first` data is transposed to channels last and back
around the same channels-last computation.
"""
from .. import activations, constraints, initializers, regularizers
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, nn as _nn
from ..graph.tensor import is_tensor
from .base import Layer, register
from .input_spec import InputSpec

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D",
           "SeparableConv2D"]


def standardize_tuple(value, n, name, allow_zero=False):
    """`value` (an int or n ints) as a tuple of n ints, with Keras's error for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        values = (value,) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            values = None
        if values is None or len(values) != n or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received {name}={value}")
    if any(v < (0 if allow_zero else 1) for v in values):
        req = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers {req}. "
                         f"Received {name}={value}")
    return values


def standardize_padding(value, allow_causal=False):
    """"valid", "same" (and "causal" for 1-D convolutions), case-insensitive, as Keras."""
    padding = value.lower() if isinstance(value, str) else value
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {allowed}. "
                         f"Received: {value}")
    return padding


def standardize_data_format(data_format):
    """None -> "channels_last"; otherwise "channels_last" or "channels_first"."""
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def to_channels_last(x, data_format):
    """Channels-first inputs transposed to channels last (others unchanged)."""
    if data_format != "channels_first":
        return x
    rank = x.shape.rank
    return _array.transpose(x, [0] + list(range(2, rank)) + [1])


def to_data_format(x, data_format):
    """The inverse of `to_channels_last`."""
    if data_format != "channels_first":
        return x
    rank = x.shape.rank
    return _array.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def convolve(x, kernel, strides, padding, dilation_rate):
    """Channels-last convolution of rank 1, 2 or 3 (grouped when the kernel has fewer
    in-channels than x)."""
    rank = len(strides)
    if rank == 1:
        return _nn.conv1d(x, kernel, list(strides), padding.upper(),
                            dilations=list(dilation_rate))
    conv = _nn.conv2d if rank == 2 else _nn.conv3d
    return conv(x, kernel, list(strides), padding.upper(), dilations=list(dilation_rate))


def positive(value, name):
    """`value` as an int, with Keras's error unless it is > 0."""
    if int(value) <= 0:
        raise ValueError(f"Invalid value for argument `{name}`. Expected a strictly positive "
                         f"value. Received {name}={value}.")
    return int(value)


def check_ndim(layer, ndim, rank):
    """Keras's error for an input of rank `ndim` given to a layer expecting `rank` (None: unknown)."""
    if ndim is not None and ndim != rank:
        raise ValueError(f"Input 0 of layer \"{layer.name}\" is incompatible with the layer: "
                         f"expected ndim={rank}, found ndim={ndim}.")


def channels_of(layer, input_shape):
    """The channel dim of `input_shape`, checked known and the rank checked."""
    check_ndim(layer, len(input_shape), layer.rank + 2)
    channels = input_shape[-1] if layer.data_format == "channels_last" else input_shape[1]
    if channels is None:
        raise ValueError(f"The channel dimension of the inputs to {type(layer).__name__} should be "
                         f"defined. Found None (input shape {tuple(input_shape)})")
    # as Keras: once built, every call is checked against the channels the kernel was made for
    axis = -1 if layer.data_format == "channels_last" else 1
    layer.input_spec = InputSpec(ndim=layer.rank + 2, axes={axis: int(channels)})
    return int(channels)


class BaseConv(Layer):
    """Shared by every convolution layer: geometry arguments, bias, activation, data format."""

    rank = 2
    _allow_causal = False

    def __init__(self, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, bias_initializer="zeros",
                 bias_regularizer=None, activity_regularizer=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.kernel_size = standardize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = standardize_tuple(strides, self.rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = standardize_padding(padding, allow_causal=self._allow_causal)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self._weight_options("bias", bias_initializer, bias_regularizer, bias_constraint)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                             f"Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")

    def _add_bias(self, size):
        self.bias = self.add_weight(name="bias", shape=(size,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def _finish(self, x):
        if self.bias is not None:
            x = _nn.bias_add(x, self.bias)
        return self.activation(to_data_format(x, self.data_format))

    def _base_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias}

    def _tail_config(self):
        return {"bias_initializer": initializers.serialize(self.bias_initializer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


class BaseConvolution(BaseConv):
    """`activation(conv(x, kernel) + bias)`, kernel [*kernel_size, in_channels / groups, filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, activity_regularizer,
                         bias_constraint, **kwargs)
        self.filters = positive(filters, "filters")
        self.groups = int(groups)
        self._weight_options("kernel", kernel_initializer, kernel_regularizer, kernel_constraint)
        if self.groups <= 0:
            raise ValueError("The number of groups must be a positive integer. "
                             f"Received: groups={groups}.")
        if self.filters % self.groups:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={self.groups}, filters={self.filters}.")

    def build(self, input_shape):
        channels = channels_of(self, input_shape)
        if channels % self.groups:
            raise ValueError("The number of input channels must be evenly divisible by the number "
                             f"of groups. Received groups={self.groups}, but the input has "
                             f"{channels} channels (full input shape is {tuple(input_shape)}).")
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (channels // self.groups, self.filters),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self._add_bias(self.filters)

    def call(self, inputs):
        x = to_channels_last(inputs, self.data_format)
        padding = self.padding
        if padding == "causal":   # pad the past only, then a valid convolution
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            x = _array.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        return self._finish(convolve(x, self.kernel, self.strides, padding, self.dilation_rate))

    def get_config(self):
        return {**self._base_config(), "groups": self.groups, "filters": self.filters,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                **self._tail_config()}


@register
class Conv1D(BaseConvolution):
    """1-D convolution over (batch, steps, channels); padding "valid", "same" or "causal".

    Example:
        >>> tl.layers.Conv1D(4, 3, padding="causal")(tl.ones((2, 7, 3))).shape
        TensorShape([2, 7, 4])
    """
    rank = 1
    _allow_causal = True


@register
class Conv2D(BaseConvolution):
    """2-D convolution over images (NHWC; `data_format="channels_first"` for NCHW):
    `activation(conv2d(x, kernel) + bias)`; `groups` splits the channels into groups.

    Args:
        filters: output channels.
        kernel_size: int or (height, width).
        strides: int or pair (default 1).
        padding: "valid" (default) or "same".
        dilation_rate: int or pair (default 1).
        groups: channel groups, each convolved with its own filters (default 1).
        activation, use_bias, kernel_initializer, bias_initializer: as Dense.

    Example:
        >>> tl.layers.Conv2D(4, 3)(tl.ones((1, 8, 8, 2))).shape
        TensorShape([1, 6, 6, 4])
    """
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, **kwargs)


@register
class Conv3D(BaseConvolution):
    """3-D convolution over volumes (batch, depth, height, width, channels).

    Example:
        >>> tl.layers.Conv3D(2, 2)(tl.ones((1, 4, 4, 4, 1))).shape
        TensorShape([1, 3, 3, 3, 2])
    """
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), groups=1, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, **kwargs)


def transpose_output_size(size, kernel, stride, padding, output_padding, dilation):
    """One spatial dim of a transposed convolution's output, Keras's arithmetic (`padding`
    "valid" or "same", either case; None for an unknown `size`)."""
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if padding.lower() == "valid":
        extra = max(kernel, stride) - kernel if output_padding is None else output_padding
        return (size - 1) * stride + kernel + extra
    if output_padding is None:
        return size * stride
    return (size - 1) * stride + kernel % 2 + output_padding


class BaseConvTranspose(BaseConv):
    """The transpose of a convolution: kernel [*kernel_size, filters, in_channels]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, activity_regularizer,
                         bias_constraint, **kwargs)
        self.filters = positive(filters, "filters")
        self.output_padding = None if output_padding is None else standardize_tuple(
            output_padding, self.rank, "output_padding", allow_zero=True)
        if self.output_padding is not None:
            for i, (p, s) in enumerate(zip(self.output_padding, self.strides)):
                if p >= s:
                    raise ValueError("`output_padding` must be strictly less than `strides` for "
                                     f"all dimensions. At dimension {i}, `output_padding` is {p} "
                                     f"but `strides` is {s}. Received: output_padding="
                                     f"{self.output_padding}, strides={self.strides}")
        self._weight_options("kernel", kernel_initializer, kernel_regularizer, kernel_constraint)

    def build(self, input_shape):
        channels = channels_of(self, input_shape)
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (self.filters, channels),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self._add_bias(self.filters)

    def _spatial_out(self, spatial):
        pads = self.output_padding or (None,) * self.rank
        return [transpose_output_size(n, k, s, self.padding, p, d) for n, k, s, p, d in
                zip(spatial, self.kernel_size, self.strides, pads, self.dilation_rate)]

    def call(self, inputs):
        x = to_channels_last(inputs, self.data_format)
        spatial = self._spatial_out(list(x.shape)[1:-1])
        if None in spatial:
            dynamic = _array.shape(x)
            spatial = [dynamic[1 + i] * s if n is None else n
                       for i, (n, s) in enumerate(zip(spatial, self.strides))]
        static = [None if is_tensor(n) else n for n in spatial]
        batch = x.shape[0]
        if batch is None or None in static:
            out_shape = _array.stack([_array.shape(x)[0] if batch is None else batch] +
                                 [_math.cast(n, _dt.int32) for n in spatial] + [self.filters])
        else:
            out_shape = [batch] + spatial + [self.filters]
        y = _nn.conv_transpose(x, self.kernel, out_shape, list(self.strides),
                                 self.padding.upper(), dilations=list(self.dilation_rate))
        if not isinstance(out_shape, list):   # a shape computed at run time: keep what is known
            y = _array.ensure_shape(y, [batch] + static + [self.filters])
        return self._finish(y)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        if self.data_format == "channels_first":
            return tuple([shape[0], self.filters] + self._spatial_out(shape[2:]))
        return tuple([shape[0]] + self._spatial_out(shape[1:-1]) + [self.filters])

    def get_config(self):
        config = {**self._base_config(), "filters": self.filters,
                  "output_padding": self.output_padding,
                  "kernel_initializer": initializers.serialize(self.kernel_initializer),
                  "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                  "kernel_constraint": constraints.serialize(self.kernel_constraint),
                  **self._tail_config()}
        return config


@register
class Conv1DTranspose(BaseConvTranspose):
    """Transposed 1-D convolution (batch, steps, channels) -> (batch, new_steps, filters).

    Example:
        >>> tl.layers.Conv1DTranspose(3, 3, strides=2)(tl.ones((1, 4, 2))).shape
        TensorShape([1, 9, 3])
    """
    rank = 1


@register
class Conv2DTranspose(BaseConvTranspose):
    """Transposed 2-D convolution ("deconvolution"): upsamples images by `strides`.

    Example:
        >>> tl.layers.Conv2DTranspose(3, 3, strides=2, padding="same")(tl.ones((1, 4, 4, 2))).shape
        TensorShape([1, 8, 8, 3])
    """
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, **kwargs)


@register
class Conv3DTranspose(BaseConvTranspose):
    """Transposed 3-D convolution over volumes."""
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, **kwargs)


class BaseDepthwiseConv(BaseConv):
    """Each input channel convolved with its own `depth_multiplier` filters: kernel
    [*kernel_size, in_channels, depth_multiplier], output channel c * depth_multiplier + j."""

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, activity_regularizer,
                         bias_constraint, **kwargs)
        self.depth_multiplier = positive(depth_multiplier, "depth_multiplier")
        self._weight_options("depthwise", depthwise_initializer, depthwise_regularizer,
                             depthwise_constraint)

    def _depthwise_weight(self, name, channels):
        return self.add_weight(
            name=name, shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)

    def _depthwise(self, x, kernel):
        """The depthwise convolution of channels-last x: a grouped one, one channel a group."""
        grouped = _array.reshape(kernel, self.kernel_size + (1, kernel.shape[-2] * kernel.shape[-1]))
        return convolve(x, grouped, self.strides, self.padding, self.dilation_rate)

    def build(self, input_shape):
        channels = channels_of(self, input_shape)
        self.kernel = self._depthwise_weight("kernel", channels)
        self._add_bias(channels * self.depth_multiplier)

    def call(self, inputs):
        x = to_channels_last(inputs, self.data_format)
        return self._finish(self._depthwise(x, self.kernel))

    def get_config(self):
        return {**self._base_config(), "depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
                "depthwise_constraint": constraints.serialize(self.depthwise_constraint),
                **self._tail_config()}


@register
class DepthwiseConv1D(BaseDepthwiseConv):
    """Depthwise 1-D convolution: each channel convolved separately (see BaseDepthwiseConv)."""
    rank = 1


@register
class DepthwiseConv2D(BaseDepthwiseConv):
    """Depthwise 2-D convolution: each channel convolved separately.

    Example:
        >>> tl.layers.DepthwiseConv2D(3, depth_multiplier=2)(tl.ones((1, 5, 5, 3))).shape
        TensorShape([1, 3, 3, 6])
    """
    rank = 2

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, **kwargs)


class BaseSeparableConv(BaseDepthwiseConv):
    """A depthwise convolution then a pointwise (1x1) one: weights depthwise_kernel
    [*kernel_size, in, depth_multiplier], pointwise_kernel [1.., in * depth_multiplier, filters],
    bias [filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
        self.filters = positive(filters, "filters")
        self._weight_options("pointwise", pointwise_initializer, pointwise_regularizer,
                             pointwise_constraint)

    def build(self, input_shape):
        channels = channels_of(self, input_shape)
        self.depthwise_kernel = self._depthwise_weight("depthwise_kernel", channels)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias(self.filters)

    def call(self, inputs):
        y = self._depthwise(to_channels_last(inputs, self.data_format), self.depthwise_kernel)
        y = convolve(y, self.pointwise_kernel, (1,) * self.rank, "valid", (1,) * self.rank)
        return self._finish(y)

    def get_config(self):
        config = super().get_config()
        return {**config, "filters": self.filters,
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "pointwise_constraint": constraints.serialize(self.pointwise_constraint)}


@register
class SeparableConv1D(BaseSeparableConv):
    """Depthwise 1-D convolution followed by a pointwise one (see BaseSeparableConv)."""
    rank = 1


@register
class SeparableConv2D(BaseSeparableConv):
    """Depthwise 2-D convolution followed by a pointwise one.

    Example:
        >>> tl.layers.SeparableConv2D(4, 3)(tl.ones((1, 5, 5, 2))).shape
        TensorShape([1, 3, 3, 4])
    """
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         **kwargs)
