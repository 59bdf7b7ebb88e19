"""Convolutional LSTMs: ConvLSTM1D, ConvLSTM2D, ConvLSTM3D and their cell.

Owns: Keras 3's ConvLSTMCell math (gates i, f, c, o from `conv(x, kernel) + bias +
conv(h, recurrent_kernel, "same")`, recurrent activation sigmoid, c = f c' + i tanh(.),
h = o tanh(c)), weights and their order (kernel, recurrent_kernel, bias, in the cell
"conv_lstm_cell") and configs. As for the other built-in cells, the input convolution of
every step is hoisted out of the time loop (one convolution over time x batch), so a
step is one recurrent convolution plus the gates.
Invariant: the cell works on channels-last values; a channels-first layer transposes its
inputs, initial states and outputs around the loop.
"""
from .. import activations, constraints, initializers, regularizers
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, register
from .convolutional import (convolve, standardize_data_format, standardize_padding,
                            standardize_tuple, to_channels_last, to_data_format)
from .recurrent import RNN, _CellLayer, cell_layer_config
from .rnn_cells import lstm_bias_initializer, lstm_gates

__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]


def _conv_length(size, kernel, padding, stride, dilation):
    if size is None:
        return None
    span = (kernel - 1) * dilation + 1
    size = size - span + 1 if padding == "valid" else size
    return (size + stride - 1) // stride


class ConvLSTMCell(Layer):
    """One step of a convolutional LSTM of rank 1, 2 or 3 (Keras 3's `ConvLSTMCell`), on
    channels-last images: states [h, c] of shape (batch, *output spatial, filters)."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.rank, self.filters = rank, int(filters)
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.padding = standardize_padding(padding)
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("Specifying `strides > 1` is not compatible with `dilation_rate > "
                             "1`. Please provide `strides=1` or `dilation_rate=1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = use_bias, unit_forget_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.seed = seed
        self._input_masks = self._recurrent_masks = None
        self.state_size = [-1, -1]    # (batch, *spatial, filters) each: made by get_initial_state

    def build(self, input_shape):
        spatial, channels = tuple(input_shape[1:-1]), input_shape[-1]
        if None in spatial:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial "
                             f"dimension. Received invalid input shape: input_shape={input_shape}")
        if channels is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be defined. "
                             f"Found None. Full input shape received: input_shape={input_shape}")
        self.spatial_dims = spatial
        self.output_spatial = tuple(
            _conv_length(n, k, self.padding, s, d) for n, k, s, d in
            zip(spatial, self.kernel_size, self.strides, self.dilation_rate))
        self.output_size = self.output_spatial + (self.filters,)
        f = self.filters
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels, 4 * f),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=self.kernel_size + (f, 4 * f),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = self.add_weight(
            name="bias", shape=(4 * f,),
            initializer=lstm_bias_initializer(self.bias_initializer, self.unit_forget_bias, f),
            regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None

    def get_initial_state(self, batch_size=None):
        """Zero states [h, c] of shape (batch, *output spatial, filters)."""
        shape = _array.stack([batch_size, *self.output_size]) if not isinstance(batch_size, int) \
            else (batch_size,) + self.output_size
        return [_array.zeros(shape, dtype=self.compute_dtype) for _ in range(2)]

    # -- dropout, as Keras's: one mask per gate (i, f, c, o) for the inputs and one per gate
    # for the previous output, drawn once per RNN call and reused at every step

    def _gate_masks(self, like, rate, training):
        if not training or not 0.0 < rate < 1.0:
            return None
        return [_nn.dropout(_array.ones_like(like), rate=rate, seed=self.seed)
                for _ in range(4)]

    def make_dropout_masks(self, step_input, state, training):
        """Draws this call's masks (shaped like one step's input and like `state`)."""
        self._input_masks = self._gate_masks(step_input, self.dropout, training)
        self._recurrent_masks = self._gate_masks(state, self.recurrent_dropout, training)

    def reset_dropout_masks(self):
        """Forgets the masks of the last RNN call."""
        self._input_masks = self._recurrent_masks = None

    def _per_gate(self, x, masks, kernel, conv):
        """conv(x, kernel), or with dropout masks the four gates' conv(x * mask, kernel
        quarter) joined."""
        if masks is None:
            return conv(x, kernel)
        f = self.filters
        return _array.concat([conv(x * m, kernel[..., g * f:(g + 1) * f])
                              for g, m in enumerate(masks)], -1)

    def _input_conv(self, x, masks=None, shape=None):
        """conv(x, kernel) + bias over images x (reshaped to `shape` first: a sequence's
        steps folded into the batch), per gate under `masks` (broadcast over x)."""
        def conv(v, k):
            v = v if shape is None else _array.reshape(v, shape)
            return convolve(v, k, self.strides, self.padding, self.dilation_rate)
        z = self._per_gate(x, masks, self.kernel, conv)
        return z + self.bias if self.bias is not None else z

    def project_inputs(self, sequences, training=False):
        """The input convolution (plus bias) of every step at once: time-major
        (T, B, *spatial, C) -> (T, B, *output spatial, 4 filters); with input dropout each
        gate convolves the inputs under its own mask (the same at every step)."""
        lead = _array.shape(sequences)[:2]
        z = self._input_conv(sequences, self._input_masks if training else None,
                             [-1] + list(self.spatial_dims) + [sequences.shape[-1]])
        z = _array.reshape(z, _array.concat([lead, list(self.output_size[:-1]) +
                                             [4 * self.filters]], 0))
        return _array.ensure_shape(z, list(sequences.shape[:2]) + list(self.output_size[:-1]) +
                                   [4 * self.filters])

    def step_weights(self):
        return (self.recurrent_kernel,)

    def projected_step(self, z_x, states, weights, training=False):
        """One step on the hoisted input convolution `z_x`: (h, [h, c]); with recurrent
        dropout each gate convolves the previous output under its own mask."""
        h_prev, c_prev = states
        ones = (1,) * self.rank
        z = z_x + self._per_gate(h_prev, self._recurrent_masks if training else None,
                                 weights[0], lambda v, k: convolve(v, k, ones, "same", ones))
        h, c, _, _ = lstm_gates(z, c_prev, self.activation, self.recurrent_activation)
        return h, [h, c]

    def call(self, inputs, states, training=False):
        return self.projected_step(
            self._input_conv(inputs, self._input_masks if training else None), list(states),
            self.step_weights(), training)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "unit_forget_bias": self.unit_forget_bias,
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed}


class _ConvLSTM(RNN):
    """An RNN over a `ConvLSTMCell`: inputs (batch, time, *spatial, channels) (or channels
    first), outputs the last h or, with `return_sequences`, every step's."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        cell = ConvLSTMCell(
            self.rank, filters, kernel_size, strides=strides, padding=padding,
            dilation_rate=dilation_rate, activation=activation,
            recurrent_activation=recurrent_activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint,
            dropout=dropout, recurrent_dropout=recurrent_dropout, seed=seed,
            name="conv_lstm_cell", dtype=kwargs.get("dtype"))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = standardize_data_format(data_format)

    def _channels_last(self, x, time_axis=True):
        if self.data_format != "channels_first":
            return x
        if not time_axis:
            return to_channels_last(x, self.data_format)
        rank = x.shape.rank      # (B, T, C, *spatial) -> (B, T, *spatial, C)
        return _array.transpose(x, [0, 1] + list(range(3, rank)) + [2])

    def _back(self, x, time_axis=True):
        if self.data_format != "channels_first":
            return x
        if not time_axis:
            return to_data_format(x, self.data_format)
        rank = x.shape.rank
        return _array.transpose(x, [0, 1, rank - 1] + list(range(2, rank - 1)))

    def build(self, sequences_shape, initial_state_shape=None):
        shape = tuple(sequences_shape)
        if len(shape) != self.rank + 3:
            raise ValueError(f"Input 0 of layer \"{self.name}\" is incompatible with the layer: "
                             f"expected ndim={self.rank + 3}, found ndim={len(shape)}. Full "
                             f"shape received: {shape}")
        if self.data_format == "channels_first":
            shape = shape[:2] + shape[3:] + shape[2:3]
        super().build(shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if initial_state is not None:
            initial_state = [self._channels_last(s, time_axis=False) for s in initial_state]
        out = super().call(self._channels_last(sequences), initial_state=initial_state,
                           mask=mask, training=training)
        if not self.return_state:
            return self._back(out, self.return_sequences)
        output, *states = out
        return (self._back(output, self.return_sequences),
                *[self._back(s, time_axis=False) for s in states])

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask, None, None] if self.return_state else output_mask

    __getattr__ = _CellLayer.__getattr__   # the cell's hyper-parameters read as the layer's

    def get_config(self):
        return {**cell_layer_config(self, super().get_config()), "data_format": self.data_format,
                "activity_regularizer": regularizers.serialize(self.activity_regularizer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new layer from `get_config`'s dict."""
        config = {k: v for k, v in config.items() if k != "unroll"
                  and k != "zero_output_for_mask"}
        return cls(**config)

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        return cls.from_config(config)


def _conv_lstm(name, rank, shape):
    doc = (f"Convolutional LSTM over (batch, time, {shape}, channels) sequences (Keras 3's "
           f"`{name}`): the gates are {rank}-D convolutions of the input and of the previous "
           f"output.\n\n    Args:\n        filters: output channels.\n        kernel_size, "
           f"strides, padding, dilation_rate: of the input convolution (the recurrent one is "
           f"'same', stride 1).\n        Other arguments: as `LSTM` and `RNN`.\n")
    return register(type(name, (_ConvLSTM,), {"rank": rank, "__doc__": doc,
                                               "__module__": __name__}))


ConvLSTM1D = _conv_lstm("ConvLSTM1D", 1, "steps")
ConvLSTM2D = _conv_lstm("ConvLSTM2D", 2, "rows, cols")
ConvLSTM3D = _conv_lstm("ConvLSTM3D", 3, "dim1, dim2, dim3")
