"""Recurrent cells: `SimpleRNNCell`, `LSTMCell`, `GRUCell` and `StackedRNNCells`.

Owns: the per-step math of each cell (Keras 3's formulas, weight names, shapes
and order: kernel, recurrent_kernel, bias), their defaults and configs, and
the dropout masks a cell uses during one RNN call.
Invariants: each built-in cell's step is written ONCE, split in two halves:
`project_inputs` (inputs @ kernel + input bias, valid for one step (B, F) or
a whole sequence (B, T, F)) and `projected_step` (the recurrent matmul plus
the gates). `call` is the two halves in a row; the RNN layer hoists the first
half out of its time loop as one matmul over all steps, so both paths compute
the same numbers. A cell's weights are read outside the time loop
(`step_weights`) and passed to `projected_step` as tensors.
"""
import numbers

from .. import activations, initializers
from ..graph.ops import array as _array, math as _math, nn as _nn

from ..saving.serialization_lib import serialize_keras_object as serialize
from .base import Layer, check_unsupported, register, deserialize

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"]


def _check_units(units):
    if isinstance(units, bool) or not isinstance(units, numbers.Integral) or units <= 0:
        raise ValueError("Received an invalid value for argument `units`, expected a positive "
                         f"integer, got {units}.")
    return int(units)


# A^T @ B over this many rows or more, into at most this many elements, runs as a sum of
# _ROW_CHUNKS products: OpenBLAS (its Haswell sgemm) takes ~2.3-2.7x as long for (64, 1600)
# @ (1600, 64) or (32, 1600) @ (1600, 64) in one call as in four of 400 rows (a
# SimpleRNN(64)'s kernel gradients), while wide outputs (an LSTM's (128, 512)) gain nothing
_CHUNK_MIN_ROWS, _CHUNK_MAX_OUTPUT, _ROW_CHUNKS = 1024, 64 * 64, 4


def row_chunks(rows, output_size):
    """The number of row chunks a product over the (T, B, ...) `rows` (static dims) summed
    into `output_size` elements runs as, or 0 for one matmul over the flattened rows."""
    steps, batch = rows.shape[0], rows.shape[1]
    if steps is None or batch is None:
        return 0
    count = steps * batch
    return _ROW_CHUNKS if count >= _CHUNK_MIN_ROWS and count % _ROW_CHUNKS == 0 and \
        output_size <= _CHUNK_MAX_OUTPUT else 0


def _project(inputs, kernel):
    """inputs @ kernel for one step (B, F) or a time-major sequence (T, B, F); a sequence is
    one (T * B, F) matmul, so its kernel gradient is one matmul too (or a few over row
    chunks, summed by the gradient's unbroadcasting, where `row_chunks` says so)."""
    if inputs.shape.rank != 3:
        return _math.matmul(inputs, kernel)
    chunks = row_chunks(inputs, kernel.shape[0] * kernel.shape[1])
    shape = [chunks, -1, kernel.shape[0]] if chunks else [-1, kernel.shape[0]]
    flat = _math.matmul(_array.reshape(inputs, shape), kernel)
    dynamic = _array.shape(inputs)
    lead = [inputs.shape[i] if inputs.shape[i] is not None else dynamic[i] for i in (0, 1)]
    return _array.reshape(flat, lead + [kernel.shape[1]])


def lstm_gates(z, c_prev, activation, recurrent_activation):
    """Keras's LSTM step after its pre-activations `z` (gate order i, f, c, o on the last
    axis), shared by LSTMCell and the convolutional LSTM: returns (h, c, (i, f, g, o), tc)
    with g = activation(z_c) and tc = activation(c)."""
    z_i, z_f, z_c, z_o = _array.split(z, 4, axis=-1)
    if recurrent_activation is activations.sigmoid:
        # one kernel for the three gates (its c quarter unused): per-call cost dominates
        # at these sizes
        i, f, _, o = _array.split(activations.sigmoid(z), 4, axis=-1)
    else:
        i, f, o = (recurrent_activation(v) for v in (z_i, z_f, z_o))
    g = activation(z_c)
    c = f * c_prev + i * g
    tc = activation(c)
    return o * tc, c, (i, f, g, o), tc


def lstm_bias_initializer(base, unit_forget_bias, units):
    """An LSTM's bias initializer (4 `units`, gate order i, f, c, o): `base`, with the
    forget gate's quarter at one when `unit_forget_bias` (Keras's default)."""
    if not unit_forget_bias:
        return base

    def init(shape, dtype=None):
        return _array.concat([base((units,), dtype=dtype), _array.ones((units,), dtype=dtype),
                              base((2 * units,), dtype=dtype)], 0)
    return init


def _unsupported(cell, kwargs):
    check_unsupported(cell, **{k: (kwargs.get(k), None) for k in (
        "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "kernel_constraint", "recurrent_constraint", "bias_constraint")})


class _DropoutCell(Layer):
    """Shared by the built-in cells: `dropout` on the step inputs, `recurrent_dropout` on the
    previous output, each with ONE mask per RNN call (drawn by `make_dropout_masks`, reused at
    every time step, dropped by `reset_dropout_masks`), as Keras's DropoutRNNCell."""

    _input_mask = None
    _recurrent_mask = None

    def _init_cell(self, args):
        """The constructor of every built-in cell: `args` is its `locals()` (its arguments,
        `kwargs` the Layer's); sets those all cells take, and `recurrent_activation` and
        `implementation` where the cell has them."""
        units = _check_units(args["units"])
        super().__init__(**args["kwargs"])
        _unsupported(self, args)
        self.units = units
        self.activation = activations.get(args["activation"])
        if "recurrent_activation" in args:
            self.recurrent_activation = activations.get(args["recurrent_activation"])
            self.implementation = args["implementation"]
        self.use_bias = args["use_bias"]
        self.kernel_initializer = initializers.get(args["kernel_initializer"])
        self.recurrent_initializer = initializers.get(args["recurrent_initializer"])
        self.bias_initializer = initializers.get(args["bias_initializer"])
        self.dropout = min(1.0, max(0.0, float(args["dropout"])))
        self.recurrent_dropout = min(1.0, max(0.0, float(args["recurrent_dropout"])))
        self.seed = args["seed"]

    def _mask_like(self, x, rate):
        return _nn.dropout(_array.ones_like(x), rate=rate, seed=self.seed)

    def make_dropout_masks(self, step_input, state, training):
        """Draws this call's masks (shaped like one step's input and like `state`)."""
        self._input_mask = self._mask_like(step_input, self.dropout) \
            if training and 0.0 < self.dropout < 1.0 else None
        self._recurrent_mask = self._mask_like(state, self.recurrent_dropout) \
            if training and 0.0 < self.recurrent_dropout < 1.0 else None

    def reset_dropout_masks(self):
        """Forgets the masks of the last RNN call."""
        self._input_mask = self._recurrent_mask = None

    def _masked_inputs(self, inputs, training):
        if not training or not 0.0 < self.dropout < 1.0:
            return inputs
        mask = self._input_mask   # (B, F): broadcasts over a time-major (T, B, F) sequence
        if mask is None:
            mask = self._mask_like(inputs, self.dropout)
        return inputs * mask

    def _masked_state(self, h, training):
        if not training or not 0.0 < self.recurrent_dropout < 1.0:
            return h
        mask = self._recurrent_mask
        return h * (mask if mask is not None else self._mask_like(h, self.recurrent_dropout))

    fused = True   # the step is `gates(x, recurrent_input(h) @ U + b, states)`
    sums_inputs = True   # `gates` reads x and m only as x + m (their gradients are one)

    def gates(self, x, m, states):
        """The step after its one matmul `m` (previous output @ recurrent_kernel, plus the
        recurrent bias): (output, new states)."""
        out, new_states, _ = self.saving_gates(x, m, states)
        return out, new_states

    @property
    def own_gradient(self):
        """True when `gates_grad` differentiates a step from what `saving_gates(...,
        save=True)` kept (the default activations, whose derivatives read their outputs);
        otherwise a time loop's gradient recomputes `gates` under a tape."""
        return False

    def project_inputs(self, inputs, training=False):
        """inputs @ kernel + bias, for one step (B, F) or all steps, time-major (T, B, F)."""
        x = _project(self._masked_inputs(inputs, training), self.kernel)
        return x + self.bias if self.bias is not None else x

    def _recurrent_weights(self):
        return (self.recurrent_kernel,)

    def _build_kernels(self, input_shape, gates):
        u = self.units
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], gates * u),
                                      initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(u, gates * u),
                                                initializer=self.recurrent_initializer)

    def recurrent_input(self, h, training=False):
        """The previous output as the recurrent matmul reads it (recurrent dropout applied)."""
        return self._masked_state(h, training)

    def recurrent_input_fn(self, training=False):
        """`recurrent_input` bound to this call's recurrent dropout mask, so that a gradient
        built after the RNN call (when the mask is reset) uses the same mask."""
        mask = self._recurrent_mask if training and 0.0 < self.recurrent_dropout < 1.0 else None
        return (lambda h: h * mask) if mask is not None else (lambda h: h)

    def projected_step(self, x, states, weights, training=False):
        """One step from the projected inputs `x`: returns (output, new states)."""
        recurrent_kernel, recurrent_bias = (tuple(weights) + (None,))[:2]
        m = _math.matmul(self.recurrent_input(states[0], training), recurrent_kernel)
        if recurrent_bias is not None:
            m = m + recurrent_bias
        return self.gates(x, m, states)

    def step_weights(self):
        """The weights `projected_step` needs, read once (outside a time loop)."""
        return tuple(_array.identity(w) if w is not None else None
                     for w in self._recurrent_weights())

    def call(self, inputs, states, training=False):
        single = not isinstance(states, (list, tuple))
        states = [states] if single else list(states)
        projected = self.project_inputs(inputs, training)
        output, new_states = self.projected_step(projected, states, self._recurrent_weights(),
                                                 training)
        return output, (new_states[0] if single and len(new_states) == 1 else new_states)

    def get_initial_state(self, batch_size=None):
        """Zero states, one (batch_size, size) tensor per entry of `state_size`."""
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        return [_array.zeros(_array.stack([batch_size, s]) if not isinstance(batch_size, int)
                             else (batch_size, s), dtype=self.dtype) for s in sizes]

    def _base_config(self):
        return {"units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": None, "recurrent_regularizer": None, "bias_regularizer": None,
                "kernel_constraint": None, "recurrent_constraint": None, "bias_constraint": None,
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed}


@register
class SimpleRNNCell(_DropoutCell):
    """One step of a fully-connected RNN: `h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)`.

    Args:
        units: size of the output and state.
        activation: default "tanh".
        use_bias: add a bias.
        kernel_initializer: default "glorot_uniform".
        recurrent_initializer: default "orthogonal".
        bias_initializer: default "zeros".
        dropout: fraction of the inputs dropped while training.
        recurrent_dropout: fraction of the previous state dropped while training.
        seed: seed of the dropout draws.

    Example:
        >>> cell = tl.layers.SimpleRNNCell(4)
        >>> out, state = cell(tl.ones((2, 3)), [tl.zeros((2, 4))])
        >>> out.shape
        TensorShape([2, 4])
    """

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        self._init_cell(locals())
        self.state_size = self.units
        self.output_size = self.units

    def build(self, input_shape):
        self._build_kernels(input_shape, 1)
        self.bias = self.add_weight(name="bias", shape=(self.units,),
                                    initializer=self.bias_initializer) if self.use_bias else None

    def saving_gates(self, x, m, states, save=False):
        """`gates`, and with `save` what `gates_grad` reads: [h]."""
        h = self.activation(x + m)
        return h, [h], ([h] if save else [])

    @property
    def saved_sizes(self):
        """The last dims of what `saving_gates` keeps per step."""
        return [self.units]

    @property
    def own_gradient(self):
        return self.activation is activations.tanh

    def gates_grad(self, saved, old, d_new):
        """(d_x, d_m, d_old) of one step from `saved` and the gradient of its new states
        (output included); None stands for zeros."""
        (h,) = saved
        d_z = d_new[0] * (1.0 - h * h)
        return d_z, d_z, [None]

    def get_config(self):
        return {**super().get_config(), **self._base_config()}


@register
class LSTMCell(_DropoutCell):
    """One step of a Long Short-Term Memory layer (Hochreiter 1997), Keras's gate order i, f, c, o.

    z = x @ kernel + h_prev @ recurrent_kernel + bias, split in four;
    i, f, o = recurrent_activation(z_i, z_f, z_o); c = f * c_prev + i * activation(z_c);
    h = o * activation(c). States are [h, c].

    Args:
        units: size of the output and of each state.
        activation: default "tanh".
        recurrent_activation: default "sigmoid".
        use_bias: add a bias.
        kernel_initializer: default "glorot_uniform".
        recurrent_initializer: default "orthogonal".
        bias_initializer: default "zeros".
        unit_forget_bias: start the forget gate's bias at 1 (default True).
        dropout, recurrent_dropout, seed: as SimpleRNNCell.

    Example:
        >>> cell = tl.layers.LSTMCell(4)
        >>> h, (h2, c) = cell(tl.ones((2, 3)), [tl.zeros((2, 4)), tl.zeros((2, 4))])
        >>> c.shape
        TensorShape([2, 4])
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, implementation=2, **kwargs):
        self._init_cell(locals())
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]
        self.output_size = self.units

    def build(self, input_shape):
        self._build_kernels(input_shape, 4)
        self.bias = self.add_weight(
            name="bias", shape=(4 * self.units,),
            initializer=lstm_bias_initializer(self.bias_initializer, self.unit_forget_bias,
                                              self.units)) if self.use_bias else None

    def saving_gates(self, x, m, states, save=False):
        """`gates`, and with `save` what `gates_grad` reads: [i, f, g, o joined, tanh(c)]."""
        h, c, gates, tc = lstm_gates(x + m, states[1], self.activation,
                                     self.recurrent_activation)
        return h, [h, c], ([_array.concat(list(gates), -1), tc] if save else [])

    @property
    def saved_sizes(self):
        """The last dims of what `saving_gates` keeps per step."""
        return [4 * self.units, self.units]

    @property
    def own_gradient(self):
        return self.activation is activations.tanh and \
            self.recurrent_activation is activations.sigmoid

    def gates_grad(self, saved, old, d_new):
        """(d_x, d_m, d_old) of one step from `saved` and the gradient of its new states
        (output included); None stands for zeros."""
        a, tc = saved
        d_h, d_c_next = d_new
        i, f, g, o = _array.split(a, 4, axis=-1)
        d_c = d_h * o * (1.0 - tc * tc)
        if d_c_next is not None:
            d_c = d_c + d_c_next
        d_a = _array.concat([d_c * g, d_c * old[1], d_c * i, d_h * tc], -1)
        # sigmoid' = a (1 - a) on i, f, o and tanh' = (1 - g)(1 + g) on g: (1 - a)(a + k)
        # with k one on the g quarter
        u = self.units
        k = _array.constant([0.0] * (2 * u) + [1.0] * u + [0.0] * u, dtype=a.dtype)
        d_z = d_a * (1.0 - a) * (a + k)
        return d_z, d_z, [None, d_c * f]

    def get_config(self):
        config = self._base_config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["unit_forget_bias"] = self.unit_forget_bias
        return {**super().get_config(), **config}


@register
class GRUCell(_DropoutCell):
    """One step of a Gated Recurrent Unit (Cho 2014), Keras's gate order z, r, h.

    z = recurrent_activation(x_z + h_prev @ U_z), r likewise;
    with `reset_after` (default, cuDNN's form) hh = activation(x_h + r * (h_prev @ U_h + b_h')),
    else hh = activation(x_h + (r * h_prev) @ U_h); h = z * h_prev + (1 - z) * hh.
    The bias is (2, 3 * units) with `reset_after` (input bias, recurrent bias), else (3 * units,).

    Args:
        units: size of the output and state.
        activation: default "tanh".
        recurrent_activation: default "sigmoid".
        reset_after: apply the reset gate after the recurrent matmul (default True).
        use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
        dropout, recurrent_dropout, seed: as SimpleRNNCell.

    Example:
        >>> cell = tl.layers.GRUCell(4)
        >>> cell(tl.ones((2, 3)), [tl.zeros((2, 4))])[0].shape
        TensorShape([2, 4])
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, implementation=2, **kwargs):
        self._init_cell(locals())
        self.reset_after = reset_after
        self.state_size = self.units
        self.output_size = self.units

    def build(self, input_shape):
        u = self.units
        self._build_kernels(input_shape, 3)
        shape = (2, 3 * u) if self.reset_after else (3 * u,)
        self.bias = self.add_weight(name="bias", shape=shape, initializer=self.bias_initializer) \
            if self.use_bias else None

    def project_inputs(self, inputs, training=False):
        """inputs @ kernel + input bias, for one step (B, F) or all steps, time-major (T, B, F)."""
        x = _project(self._masked_inputs(inputs, training), self.kernel)
        if self.bias is None:
            return x
        return x + (self.bias[0] if self.reset_after else self.bias)

    def _recurrent_weights(self):
        recurrent_bias = self.bias[1] if self.bias is not None and self.reset_after else None
        return (self.recurrent_kernel, recurrent_bias)

    sums_inputs = False

    @property
    def fused(self):
        return self.reset_after

    def projected_step(self, x, states, weights, training=False):
        """One step from the projected inputs `x`: returns (h, [h])."""
        if self.reset_after:
            return super().projected_step(x, states, weights, training)
        recurrent_kernel, _ = weights
        u = self.units
        h_prev = states[0]
        h_in = self.recurrent_input(h_prev, training)
        x_z, x_r, x_h = _array.split(x, 3, axis=-1)
        r_z, r_r = _array.split(_math.matmul(h_in, recurrent_kernel[:, :2 * u]), 2, axis=-1)
        z = self.recurrent_activation(x_z + r_z)
        r = self.recurrent_activation(x_r + r_r)
        hh = self.activation(x_h + _math.matmul(r * h_in, recurrent_kernel[:, 2 * u:]))
        h = z * h_prev + (1.0 - z) * hh
        return h, [h]

    def saving_gates(self, x, m, states, save=False):
        """`gates` (`reset_after` only), and with `save` what `gates_grad` reads: [z and r
        joined, hh, the recurrent matmul's h part]."""
        h_prev = states[0]
        u = self.units
        x_zr, x_h = _array.split(x, [2 * u, u], axis=-1)
        m_zr, m_h = _array.split(m, [2 * u, u], axis=-1)
        if self.recurrent_activation is activations.sigmoid:   # one kernel for both gates
            zr = activations.sigmoid(x_zr + m_zr)
            z, r = _array.split(zr, 2, axis=-1)
        else:
            x_z, x_r = _array.split(x_zr, 2, axis=-1)
            m_z, m_r = _array.split(m_zr, 2, axis=-1)
            z = self.recurrent_activation(x_z + m_z)
            r = self.recurrent_activation(x_r + m_r)
            zr = None
        hh = self.activation(x_h + r * m_h)
        h = z * h_prev + (1.0 - z) * hh
        return h, [h], ([zr, hh, m_h] if save else [])

    @property
    def saved_sizes(self):
        """The last dims of what `saving_gates` keeps per step."""
        return [2 * self.units, self.units, self.units]

    @property
    def own_gradient(self):
        return self.reset_after and self.activation is activations.tanh and \
            self.recurrent_activation is activations.sigmoid

    def gates_grad(self, saved, old, d_new):
        """(d_x, d_m, d_old) of one step from `saved` and the gradient of its new state
        (output included)."""
        zr, hh, m_h = saved
        d_h = d_new[0]
        z, r = _array.split(zr, 2, axis=-1)
        d_pre_h = d_h * (1.0 - z) * (1.0 - hh * hh)
        d_zr = _array.concat([d_h * (old[0] - hh), d_pre_h * m_h], -1) * zr * (1.0 - zr)
        return (_array.concat([d_zr, d_pre_h], -1), _array.concat([d_zr, d_pre_h * r], -1),
                [d_h * z])

    def get_config(self):
        config = self._base_config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["reset_after"] = self.reset_after
        return {**super().get_config(), **config}


def _call_cell(cell, inputs, states, training):
    if isinstance(cell, Layer) and cell._call_takes_training:
        return cell(inputs, states, training=training)
    return cell(inputs, states) if callable(cell) else cell.call(inputs, states)


@register
class StackedRNNCells(Layer):
    """Cells run one after the other at each time step, as one cell (the RNN of a list of cells).

    Its `state_size` is the list of the cells' state sizes; its output is the last cell's.

    Args:
        cells: a list of cells.

    Example:
        >>> cells = tl.layers.StackedRNNCells([tl.layers.SimpleRNNCell(4), tl.layers.GRUCell(3)])
        >>> tl.layers.RNN(cells)(tl.ones((2, 5, 6))).shape
        TensorShape([2, 3])
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call"):
                raise ValueError(f"All cells must have a `call` method. Received cell without a "
                                 f"`call` method: {cell}")
            if not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell "
                                 f"without a `state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return last.state_size[0] if isinstance(last.state_size, (list, tuple)) else last.state_size

    def get_initial_state(self, batch_size=None):
        """The cells' initial states, one entry per cell."""
        out = []
        for cell in self.cells:
            fn = getattr(cell, "get_initial_state", None)
            if fn is not None:
                states = fn(batch_size=batch_size)
                out.append(states[0] if isinstance(cell.state_size, int) else states)
            else:
                sizes = [cell.state_size] if isinstance(cell.state_size, int) else cell.state_size
                zeros = [_array.zeros(_array.stack([batch_size, s]), dtype=self.dtype)
                         for s in sizes]
                out.append(zeros[0] if isinstance(cell.state_size, int) else zeros)
        return out

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            size = getattr(cell, "output_size", None)
            if size is None:
                size = cell.state_size[0] if isinstance(cell.state_size, (list, tuple)) \
                    else cell.state_size
            input_shape = (input_shape[0], size)

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            is_list = isinstance(cell_states, (list, tuple))
            inputs, out_states = _call_cell(cell, inputs, list(cell_states) if is_list
                                            else [cell_states], training)
            if not isinstance(out_states, (list, tuple)):
                out_states = [out_states]
            new_states.append(list(out_states) if is_list or len(out_states) != 1
                              else out_states[0])
        return inputs, new_states

    def get_config(self):
        return {**super().get_config(), "cells": [serialize(c) for c in self.cells]}

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new StackedRNNCells from `get_config`'s dict."""
        return cls._from_config_custom(config, custom_objects)
