"""Recurrent layers: `RNN` (any cell), `SimpleRNN`, `LSTM`, `GRU`, `Bidirectional`, `TimeDistributed`.

Owns: the time loop and what it carries (outputs, states, the last output
under a mask), `return_sequences` / `return_state` / `go_backwards` /
`stateful` / `initial_state` / `mask` / `unroll`, and Keras 3's configs.
Invariants: the loop is ONE graph `While` while tracing (a Python loop when
eager or with `unroll=True`; both run the same step function, so eager and
graph agree). For the built-in cells the input projection (inputs @ kernel +
bias) is hoisted out of the loop as one matmul over all time steps and the
recurrent weights are read once before it, so each step is one matmul plus
the gates. Time runs on axis 0 inside the loop; outputs come back batch-major.
With `go_backwards` the inputs are read from the last step and the output
sequence stays in processing order, as Keras's.
"""
from ..graph.autodiff import GradientTape, custom_gradient
from ..graph.nest import flatten
from ..graph.context import state as _context
from ..graph.ops import array as _array, control_flow as _cf, math as _math
from ..graph.op import apply, convert_to_tensor
from ..graph.variables import Variable
from ..graph.ops import tensor_array as _tensor_array  # noqa: F401 -- defines TensorArrayWrite

from ..saving.serialization_lib import serialize_keras_object as serialize
from .base import Layer, register, deserialize
from .wrapper import Wrapper
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells, _call_cell, \
    row_chunks

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU", "Bidirectional", "TimeDistributed"]


def _nest_flatten(x):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _nest_flatten(item)]
    return [x]


def _nest_pack(structure, leaves):
    it = iter(leaves)

    def build(s):
        if isinstance(s, (list, tuple)):
            return [build(item) for item in s]
        return next(it)
    return build(structure)


def time_loop(step, inputs, states, mask=None, return_sequences=True, zero_output_for_mask=False,
              unroll=False, output_size=None):
    """Runs `output, states = step(x_t, states)` over time-major `inputs` (T, B, ...).

    Args:
        step: the step function; `states` is a flat list of tensors.
        inputs: time-major inputs.
        states: the initial states (flat list).
        mask: None or a (T, B) bool tensor; a masked step keeps the states and the last output.
        return_sequences: also return all outputs (T, B, units).
        zero_output_for_mask: masked steps output zeros in the sequence.
        unroll: a Python loop even while tracing (needs a static T).
        output_size: size of one output, or its shape (a tuple, for image outputs).

    Returns:
        (last output, outputs (T, B, units) or None, final states).
    """
    steps = inputs.shape[0]
    output_shape = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size]
    if mask is not None:   # (T, B, 1, ...) broadcasts over the units (or the image)
        mask = _array.reshape(mask, _array.concat([_array.shape(mask), [1] * len(output_shape)],
                                                  0))

    def masked(t_mask, out, new_states, prev_out, old_states):
        new_states = [_math.where(t_mask, n, o) for n, o in zip(new_states, old_states)]
        carried = _math.where(t_mask, out, prev_out)
        emitted = _math.where(t_mask, out, _array.zeros_like(out)) if zero_output_for_mask \
            else carried
        return carried, emitted, new_states

    def zero_output():
        batch = _array.shape(states[0])[0] if states else _array.shape(inputs)[1]
        return _array.zeros(_array.stack([batch, *output_shape]), dtype=inputs.dtype)

    if unroll or _context.graph is None:
        if steps is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined: give the "
                             "Input a shape with a known number of time steps.")
        outputs, last = [], None
        prev = zero_output() if mask is not None else None
        for t in range(steps):
            out, new_states = step(inputs[t], states)
            if mask is not None:
                prev, out, new_states = masked(mask[t], out, new_states, prev, states)
                last = prev
            else:
                last = out
            states = list(new_states)
            if return_sequences:
                outputs.append(out)
        return last, (_array.stack(outputs) if return_sequences else None), states

    count = _array.shape(inputs)[0]
    n_states = len(states)

    def cond(t, *_):
        return _math.less(t, count)

    def body(t, *carry):
        old_states = list(carry[:n_states])
        prev, ta = carry[n_states], carry[n_states + 1] if return_sequences else None
        out, new_states = step(_array.gather(inputs, t), old_states)
        if mask is not None:
            prev, out, new_states = masked(_array.gather(mask, t), out, new_states, prev,
                                           old_states)
        else:
            prev = out
        # the TensorArrayWrite op on a plain buffer: the batch dim may be unknown while tracing
        extra = [apply("TensorArrayWrite", ta, t, out)] if return_sequences else []
        return (t + 1, *new_states, prev, *extra)

    # static dims stay known through the loop (the batch dim may be None while tracing)
    prev0 = _array.ensure_shape(zero_output(), [inputs.shape[1], *output_shape])
    loop_vars = [_array.zeros([], dtype="int32"), *states, prev0]
    if return_sequences:
        buffer = _array.zeros(_array.concat([_array.reshape(count, [1]), _array.shape(prev0)], 0),
                              dtype=inputs.dtype)
        loop_vars.append(_array.ensure_shape(buffer, [steps, inputs.shape[1], *output_shape]))
    result = _cf.while_loop(cond, body, loop_vars,
                            maximum_iterations=steps if steps is not None else None)
    final_states = list(result[1:1 + n_states])
    last = result[1 + n_states]
    outputs = result[2 + n_states] if return_sequences else None
    return last, outputs, final_states


def _repeat(count, steps, python, body, loop_vars, reverse=False):
    """`loop_vars = body(t, *loop_vars)` for t in 0..count-1 (or count-1..0): a Python loop
    when `python` (eager or unrolled, `steps` static), else one graph `While`."""
    if python:
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            loop_vars = list(body(_array.identity(t), *loop_vars))   # int32 scalar index
        return loop_vars
    start = count - 1 if reverse else _array.zeros([], dtype="int32")

    def cond(t, *_):
        return _math.greater_equal(t, 0) if reverse else _math.less(t, count)

    def step(t, *carry):
        return (t - 1 if reverse else t + 1, *body(t, *carry))
    return list(_cf.while_loop(cond, step, [start, *loop_vars],
                               maximum_iterations=steps if steps is not None else None))[1:]


def _rows(count, steps, like, size, dtype):
    """A (count, batch, *size) zeros buffer for a loop's TensorArrayWrite rows, the batch
    that of `like` (`size`: an int or a tuple of static dims), its static dims kept."""
    dims = list(size) if isinstance(size, (tuple, list)) else [size]
    batch = like.shape[0] if like.shape[0] is not None else _array.shape(like)[0]
    buffer = _array.zeros(_array.stack([count, batch, *dims]), dtype=dtype)
    return _array.ensure_shape(buffer, [steps, like.shape[0], *dims])


def _rows_like(count, steps, row):
    """A (count, *row.shape) zeros buffer, static dims kept, for TensorArrayWrite rows."""
    buffer = _array.zeros(_array.concat([_array.reshape(count, [1]), _array.shape(row)], 0),
                          dtype=row.dtype)
    return _array.ensure_shape(buffer, [steps] + row.shape.as_list())


def _write(buffer, t, row):
    return apply("TensorArrayWrite", buffer, t, row)


def _summed_over_rows(a_rows, b_rows, m, n):
    """sum over steps and batch of a^T @ b, for (T, B, m) and (T, B, n) rows: one matmul
    over the flattened rows, or a batched matmul over row chunks summed where that is
    faster (`rnn_cells.row_chunks`)."""
    chunks = row_chunks(a_rows, m * n)
    if chunks:
        a = _array.reshape(a_rows, [chunks, -1, m])
        b = _array.reshape(b_rows, [chunks, -1, n])
        return _math.reduce_sum(_math.matmul(a, b, transpose_a=True), axis=0)
    return _math.matmul(_array.reshape(a_rows, [-1, m]), _array.reshape(b_rows, [-1, n]),
                        transpose_a=True)


def fused_time_loop(cell, inputs, weights, states, mask=None, return_sequences=True,
                    zero_output_for_mask=False, unroll=False, training=False):
    """`time_loop` for a built-in cell whose step is `gates(x_t, recurrent_input(h) @ U + b,
    states)`, with its own gradient (backpropagation through time written once for all
    such cells): the forward loop saves each step's states and matmul input, and either
    what the cell's `gates_grad` reads (its activations: no recomputation, for the default
    activations) or the matmul output (then the backward loop differentiates `gates` under
    a tape); the backward loop does one matmul per step (dm @ U^T); the recurrent kernel's
    and bias's gradients are one matmul / one sum over all steps after it.

    Args:
        cell: a SimpleRNNCell, LSTMCell or GRUCell (reset_after).
        inputs: the projected inputs, time-major (T, B, P).
        weights: (recurrent_kernel, recurrent bias or None) as tensors.
        states: the initial states (flat list of (B, units) tensors).
        Other arguments: as `time_loop`.

    Returns:
        (last output, outputs (T, B, units) or None, final states).
    """
    kernel, rbias = weights
    steps = inputs.shape[0]
    python = unroll or _context.graph is None
    if python and steps is None:
        raise ValueError("Cannot unroll a RNN if the time dimension is undefined: give the "
                         "Input a shape with a known number of time steps.")
    n_states = len(states)
    time_mask = _array.expand_dims(mask, -1) if mask is not None else None
    args = [inputs, kernel] + ([rbias] if rbias is not None else []) + list(states)
    own = cell.own_gradient   # the step's gradient from its saved activations

    @custom_gradient
    def run(xs, recurrent_kernel, *rest):
        bias = rest[0] if rbias is not None else None
        init = list(rest[1:] if rbias is not None else rest)
        count = _array.shape(xs)[0]

        matmul_input = cell.recurrent_input_fn(training)
        h_in0 = matmul_input(init[0])
        # without recurrent dropout the matmul reads the saved previous output itself
        own_h_in = h_in0 is not init[0]
        units = recurrent_kernel.shape[0]
        kept = cell.saved_sizes if own else [recurrent_kernel.shape[1]]
        saved = [_rows_like(count, steps, s) for s in init] + \
            ([_rows_like(count, steps, h_in0)] if own_h_in else []) + \
            [_rows(count, steps, init[0], size, xs.dtype) for size in kept]
        seq = [_rows(count, steps, init[0], cell.output_size, xs.dtype)] if return_sequences \
            else []
        out0 = _array.zeros_like(init[0])

        def body(t, *carry):
            old = list(carry[:n_states])
            prev = carry[n_states]
            buffers = list(carry[n_states + 1:])
            h_in = matmul_input(old[0])
            m = _math.matmul(h_in, recurrent_kernel)
            if bias is not None:
                m = m + bias
            out, new, keep_rows = cell.saving_gates(_array.gather(xs, t), m, old, save=own)
            if time_mask is not None:
                keep = _array.gather(time_mask, t)
                new = [_math.where(keep, n, o) for n, o in zip(new, old)]
                carried = _math.where(keep, out, prev)
                out = _math.where(keep, out, _array.zeros_like(out)) if zero_output_for_mask \
                    else carried
                prev = carried
            else:
                prev = out
            rows = old + ([h_in] if own_h_in else []) + (keep_rows if own else [m]) + \
                ([out] if return_sequences else [])
            return (*new, prev, *[_write(b, t, r) for b, r in zip(buffers, rows)])

        result = _repeat(count, steps, python, body, [*init, out0, *saved, *seq])
        final, last = result[:n_states], result[n_states]
        saved_rows = result[n_states + 1:n_states + 1 + len(saved)]
        outputs = result[-1] if return_sequences else None

        def grad(*dys):   # one gradient per output, as tl.custom_gradient passes them
            dys = list(dys[0]) if len(dys) == 1 and isinstance(dys[0], (list, tuple)) else list(dys)
            produced = [last] + ([outputs] if return_sequences else []) + list(final)
            dys = [_array.zeros_like(p) if d is None else d for d, p in zip(dys, produced)]
            d_last, d_seq = dys[0], (dys[1] if return_sequences else None)
            d_final = dys[2 if return_sequences else 1:]
            old_rows = saved_rows[:n_states]
            hin_rows = saved_rows[n_states] if own_h_in else old_rows[0]
            kept_rows = saved_rows[n_states + own_h_in:]
            shared = cell.sums_inputs   # d(x_t) is d(m_t): one buffer holds both
            carries_last = time_mask is not None   # else the last output is the final h

            def back(t, *carry):
                d_states = list(carry[:n_states])
                rest_carry = carry[n_states + carries_last:]
                d_m_buf = rest_carry[0]
                d_x_buf = None if shared else rest_carry[1]
                old = [_array.gather(r, t) for r in old_rows]
                d_seq_t = _array.gather(d_seq, t) if d_seq is not None else None
                d_pass = d_prev = None
                if time_mask is not None:
                    d_carried = carry[n_states]
                    keep = _array.gather(time_mask, t)
                    zeros = _array.zeros_like(d_carried)
                    if d_seq_t is not None and not zero_output_for_mask:
                        d_carried, d_seq_t = d_carried + d_seq_t, None
                    d_out = _math.where(keep, d_carried, zeros)
                    if d_seq_t is not None:
                        d_out = d_out + _math.where(keep, d_seq_t, zeros)
                    d_prev = _math.where(keep, zeros, d_carried)
                    d_new = [_math.where(keep, d, _array.zeros_like(d)) for d in d_states]
                    d_pass = [_math.where(keep, _array.zeros_like(d), d) for d in d_states]
                else:
                    d_out, d_new = d_seq_t, d_states
                if d_out is not None:   # a built-in cell's output is its new h
                    d_new = [d_new[0] + d_out] + d_new[1:]
                if own:
                    d_x, d_m, d_old = cell.gates_grad(
                        [_array.gather(r, t) for r in kept_rows], old, d_new)
                else:
                    x_t, m_t = _array.gather(xs, t), _array.gather(kept_rows[0], t)
                    with GradientTape() as tape:
                        tape.watch([x_t, m_t] + old)
                        _, new = cell.gates(x_t, m_t, old)
                    grads = tape.gradient(list(new), [x_t, m_t] + old, output_gradients=d_new)
                    d_x, d_m, d_old = grads[0], grads[1], list(grads[2:])
                if d_pass is not None:
                    d_old = [p if g is None else g + p for g, p in zip(d_old, d_pass)]
                # through the matmul input back to the previous output (recurrent dropout too)
                d_hin = _math.matmul(d_m, recurrent_kernel, transpose_b=True)
                if own_h_in:
                    with GradientTape() as tape:
                        tape.watch(old[0])
                        h_in = matmul_input(old[0])
                    d_hin = tape.gradient(h_in, old[0], output_gradients=d_hin)
                d_old[0] = d_hin if d_old[0] is None else d_old[0] + d_hin
                d_old = [_array.zeros_like(o) if g is None else g for g, o in zip(d_old, old)]
                written = [_write(d_m_buf, t, d_m)] + ([] if shared else [_write(d_x_buf, t, d_x)])
                return (*d_old, *([d_prev] if carries_last else []), *written)

            if carries_last:
                start = [*d_final, d_last]
            else:
                start = [d_final[0] + d_last, *d_final[1:]]
            d_m_rows = _rows(count, steps, init[0], recurrent_kernel.shape[1], xs.dtype)
            back_vars = start + [d_m_rows] + ([] if shared else [_array.zeros_like(xs)])
            result = _repeat(count, steps, python, back, back_vars, reverse=True)
            d_init = result[:n_states]
            d_m_all = result[n_states + carries_last]
            d_xs = d_m_all if shared else result[n_states + carries_last + 1]
            flat_dm = _array.reshape(d_m_all, [-1, recurrent_kernel.shape[1]])
            d_kernel = _summed_over_rows(hin_rows, d_m_all, units, recurrent_kernel.shape[1])
            d_bias = [_math.reduce_sum(flat_dm, axis=0)] if bias is not None else []
            return [d_xs, d_kernel, *d_bias, *d_init]

        return (last, *([outputs] if return_sequences else []), *final), grad
    result = list(run(*args))
    last, outputs = result[0], (result[1] if return_sequences else None)
    return last, outputs, result[2 if return_sequences else 1:]


@register
class RNN(Layer):
    """A recurrent layer over any cell: runs `cell` along the time axis of (batch, time, ...) inputs.

    A cell is any object with `call(inputs, states)` returning `(output, new_states)` and a
    `state_size` (an int or a list of ints); a list of cells becomes a `StackedRNNCells`.

    Args:
        cell: the cell, or a list of cells.
        return_sequences: return the whole output sequence (batch, time, units), not the last.
        return_state: also return the final states (`output, *states`).
        go_backwards: process the sequence from its last step (outputs in processing order).
        stateful: keep the final states of a batch as the initial states of the next
            (needs a fixed batch size); `reset_states()` zeroes them.
        unroll: a Python loop over a static number of steps instead of a graph `While`.
        zero_output_for_mask: masked steps output zeros (otherwise the last output).

    Call arguments:
        sequences: (batch, time, features).
        initial_state: a list of initial state tensors.
        mask: a (batch, time) bool tensor; masked steps keep the previous state.
        training: applies the cells' dropout.

    Example:
        >>> rnn = tl.layers.RNN(tl.layers.SimpleRNNCell(4), return_sequences=True)
        >>> rnn(tl.ones((2, 5, 3))).shape
        TensorShape([2, 5, 4])
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell, dtype=kwargs.get("dtype"))
        if not hasattr(cell, "call"):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer "
                             "or list of integers, one integer per RNN state). "
                             f"Received: cell={cell}")
        if not isinstance(cell.state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers "
                             "(one for each state tensor).")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self.__dict__["states"] = None

    @property
    def state_size(self):
        size = self.cell.state_size
        return [size] if isinstance(size, int) else list(size)

    def _output_size(self):
        size = getattr(self.cell, "output_size", None)
        if size is None:
            size = _nest_flatten(self.state_size)[0]
        return size

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) < 3:
            raise ValueError(f"Layer '{self.name}' expects inputs of shape (batch, time, "
                             f"features), got shape {sequences_shape}")
        step_shape = (sequences_shape[0],) + sequences_shape[2:]
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be "
                                 f"static. Found dynamic batch size: sequence.shape="
                                 f"{sequences_shape}")
            initial = self.get_initial_state(sequences_shape[0])
            # not weights: kept out of attribute tracking, as Keras's
            self.__dict__["states"] = _nest_pack(initial, [
                Variable(s, trainable=False, name="rnn_state") for s in _nest_flatten(initial)])
        self.built = True

    def get_initial_state(self, batch_size):
        """The zero (or the cell's) initial states for `batch_size` sequences."""
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None:
            states = fn(batch_size=batch_size)
            return list(states) if isinstance(states, (list, tuple)) else [states]
        batch = batch_size if isinstance(batch_size, int) else None
        return [_array.zeros((batch, d) if batch is not None else _array.stack([batch_size, d]),
                             dtype=self.dtype) for d in self.state_size]

    def reset_states(self):
        """Zeroes the states of a stateful layer."""
        self.reset_state()

    def reset_state(self):
        """Zeroes the states of a stateful layer."""
        if self.states is not None:
            for v in _nest_flatten(self.states):
                v.assign(_array.zeros_like(v.read_value()))

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, length = sequences_shape[0], sequences_shape[1]
        units = self._output_size()
        out = (batch, length, units) if self.return_sequences else (batch, units)
        if not self.return_state:
            return out
        states = [(batch, s) if isinstance(s, int) else [(batch, x) for x in s]
                  for s in self.state_size]
        return (out, *states)

    def compute_mask(self, inputs, mask=None):
        """The output mask: the input mask with `return_sequences`, else None."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out = mask if self.return_sequences else None
        return [out] + [None] * len(self.state_size) if self.return_state else out

    def _fused(self):
        return isinstance(self.cell, (SimpleRNNCell, LSTMCell, GRUCell)) and self.cell.fused

    def _step_function(self, training):
        """(prepare, step): `prepare(sequences)` is what the loop reads per step (the hoisted
        projection for built-in cells) and `step(x_t, flat_states)` one step on it."""
        cell = self.cell
        structure = self.state_size
        if hasattr(cell, "projected_step"):   # built-in cells: the input projection hoisted
            weights = cell.step_weights()

            def step(x, flat_states):
                return cell.projected_step(x, flat_states, weights, training)
            return (lambda seq: cell.project_inputs(seq, training)), step

        def generic(x, flat_states):
            states = _nest_pack(structure, flat_states)
            out, new_states = _call_cell(cell, x, states, training)
            if not isinstance(new_states, (list, tuple)):
                new_states = [new_states]
            return out, _nest_flatten(list(new_states))
        return (lambda seq: seq), generic

    def _make_masks(self, cell, step_input, initial_state, training):
        if hasattr(cell, "make_dropout_masks"):
            cell.make_dropout_masks(step_input, initial_state[0] if isinstance(
                initial_state, (list, tuple)) else initial_state, training)
        elif isinstance(cell, StackedRNNCells):
            x = step_input
            for c, s in zip(cell.cells, initial_state):
                s = list(s) if isinstance(s, (list, tuple)) else [s]
                self._make_masks(c, x, s, training)
                x, _ = _call_cell(c, x, s, False)

    def _reset_masks(self, cell):
        if hasattr(cell, "reset_dropout_masks"):
            cell.reset_dropout_masks()
        for c in getattr(cell, "cells", ()):
            self._reset_masks(c)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined. Give the "
                             "Input a shape with a known number of time steps.")
        if initial_state is None:
            if self.stateful:
                initial_state = _nest_pack(self.states, [
                    v.read_value() for v in _nest_flatten(self.states)])
            else:
                initial_state = self.get_initial_state(_array.shape(sequences)[0])
        if not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        initial_state = _nest_pack(list(initial_state), [
            _math.cast(convert_to_tensor(s), sequences.dtype) for s in _nest_flatten(list(initial_state))])
        sizes = _nest_flatten(self.state_size)
        if len(_nest_flatten(initial_state)) != len(sizes):
            raise ValueError(f"Layer '{self.name}' has {len(sizes)} state(s) but was passed "
                             f"{len(_nest_flatten(initial_state))} initial state tensor(s)")
        # static dims known to the loop even when the batch size is not
        initial_state = _nest_pack(initial_state, [
            _array.ensure_shape(s, [sequences.shape[0], size])
            if isinstance(size, int) and size > 0 else s
            for s, size in zip(_nest_flatten(initial_state), sizes)])
        self._make_masks(self.cell, sequences[:, 0], initial_state, training)
        try:
            prepare, step = self._step_function(training)
            rank = sequences.shape.rank
            # time-major first: the (T, B, F) inputs are smaller than their projection
            time_major = _array.transpose(sequences, [1, 0] + list(range(2, rank)))
            if mask is not None:
                if isinstance(mask, (list, tuple)):
                    mask = mask[0]
                mask = _array.transpose(_math.cast(mask, "bool"), [1, 0])
            if self.go_backwards:
                time_major = _array.reverse(time_major, [0])
                if mask is not None:
                    mask = _array.reverse(mask, [0])
            time_major = prepare(time_major)
            if self._fused():
                weights = self.cell.step_weights()
                last, outputs, states = fused_time_loop(
                    self.cell, time_major, (weights + (None,))[:2], _nest_flatten(initial_state),
                    mask=mask, return_sequences=self.return_sequences,
                    zero_output_for_mask=self.zero_output_for_mask, unroll=self.unroll,
                    training=training)
            else:
                last, outputs, states = time_loop(
                    step, time_major, _nest_flatten(initial_state), mask=mask,
                    return_sequences=self.return_sequences,
                    zero_output_for_mask=self.zero_output_for_mask, unroll=self.unroll,
                    output_size=self._output_size())
        finally:
            self._reset_masks(self.cell)
        if self.stateful:
            for variable, value in zip(_nest_flatten(self.states), states):
                variable.assign(value)
        if self.return_sequences:
            output = _array.transpose(outputs, [1, 0] + list(range(2, outputs.shape.rank)))
        else:
            output = last
        if self.return_state:
            return (output, *_nest_pack(self.state_size, states))
        return output

    def get_config(self):
        config = {"return_sequences": self.return_sequences, "return_state": self.return_state,
                  "go_backwards": self.go_backwards, "stateful": self.stateful,
                  "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask,
                  "cell": serialize(self.cell)}
        return {**super().get_config(), **config}

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        config = dict(config)
        cell = deserialize(config.pop("cell"), custom_objects)
        return cls(cell, **config)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new RNN from `get_config`'s dict (the cell deserialized by class name)."""
        return cls._from_config_custom(config, custom_objects)


def cell_layer_config(layer, rnn_config):
    """The config of an RNN layer made on one built-in cell, as Keras writes it: the RNN's
    (`rnn_config`) without the cell, plus the cell's arguments."""
    config = dict(rnn_config)
    del config["cell"]
    cell_config = layer.cell.get_config()
    for key in ("name", "trainable", "dtype"):
        cell_config.pop(key, None)
    return {**config, **cell_config}


_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
             "zero_output_for_mask")


class _CellLayer(RNN):
    """An RNN built on one built-in cell type: the cell's arguments are the layer's."""

    _cell_class = None
    _cell_name = None

    def __init__(self, units, *, activity_regularizer=None, use_cudnn="auto", **kwargs):
        rnn = {k: kwargs.pop(k) for k in _RNN_ARGS if k in kwargs}
        base = {k: kwargs.pop(k) for k in ("name", "trainable", "dtype", "input_shape",
                                           "input_dim") if k in kwargs}
        if use_cudnn not in ("auto", True, False):
            raise ValueError("Invalid valid received for argument `use_cudnn`. Expected one of "
                             f"{{'auto', True, False}}. Received: use_cudnn={use_cudnn}")
        if activity_regularizer is not None:
            raise NotImplementedError(f"{type(self).__name__}: activity_regularizer is not "
                                      "supported by trainlib")
        cell = self._cell_class(units, name=self._cell_name, dtype=base.get("dtype"),
                                trainable=base.get("trainable", True), **kwargs)
        super().__init__(cell, **rnn, **base)
        self.use_cudnn = use_cudnn

    def __getattr__(self, name):
        # the cell's hyper-parameters read as the layer's (units, activation, dropout, ...)
        if name.startswith("_") or name in ("cell",):
            raise AttributeError(name)
        cell = self.__dict__.get("cell")
        if cell is not None and hasattr(cell, name):
            return getattr(cell, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def build(self, sequences_shape, initial_state_shape=None):
        shape = tuple(sequences_shape)
        if len(shape) != 3:   # built-in cells step over (batch, features) only
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: '
                             f"expected ndim=3 (batch, time, features), found ndim={len(shape)}."
                             f" Full shape received: {shape}")
        super().build(sequences_shape, initial_state_shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        return super().call(sequences, initial_state=initial_state, mask=mask, training=training)

    def get_config(self):
        return {**cell_layer_config(self, super().get_config()), "activity_regularizer": None}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new layer from `get_config`'s dict."""
        return cls(**config)

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        return cls.from_config(config)


@register
class SimpleRNN(_CellLayer):
    """A fully-connected RNN whose output is fed back as the next step's state.

    Args:
        units: output size. Other arguments: those of `SimpleRNNCell` and `RNN`.

    Example:
        >>> tl.layers.SimpleRNN(4)(tl.ones((2, 5, 3))).shape
        TensorShape([2, 4])
    """

    _cell_class, _cell_name = SimpleRNNCell, "simple_rnn_cell"

    def get_config(self):
        config = super().get_config()
        del config["seed"]   # Keras's SimpleRNN config has no seed (its cell's has)
        return config


@register
class LSTM(_CellLayer):
    """Long Short-Term Memory layer (Hochreiter 1997): an RNN of `LSTMCell`, states [h, c].

    Args:
        units: output size. Other arguments: those of `LSTMCell` and `RNN`.

    Example:
        >>> out, h, c = tl.layers.LSTM(4, return_state=True)(tl.ones((2, 5, 3)))
        >>> out.shape, c.shape
        (TensorShape([2, 4]), TensorShape([2, 4]))
    """

    _cell_class, _cell_name = LSTMCell, "lstm_cell"


@register
class GRU(_CellLayer):
    """Gated Recurrent Unit layer (Cho 2014): an RNN of `GRUCell` (`reset_after=True` default).

    Args:
        units: output size. Other arguments: those of `GRUCell` and `RNN`.

    Example:
        >>> tl.layers.GRU(4, return_sequences=True)(tl.ones((2, 5, 3))).shape
        TensorShape([2, 5, 4])
    """

    _cell_class, _cell_name = GRUCell, "gru_cell"


def _renamed_copy(layer, prefix, **changes):
    config = layer.get_config()
    name = layer.name
    for p in ("forward_", "backward_"):
        if name.startswith(p):
            name = name[len(p):]
    config.update(changes, name=prefix + name)
    return deserialize({"class_name": type(layer).__name__, "config": config},
                       {type(layer).__name__: type(layer)})


@register
class Bidirectional(Layer):
    """Runs an RNN forwards and a copy of it backwards and merges their outputs.

    Args:
        layer: an RNN layer (its copy "forward_<name>" runs forwards).
        merge_mode: "concat" (default), "sum", "mul", "ave", or None (a list of both outputs).
        backward_layer: the backward RNN (default: a copy of `layer` with `go_backwards=True`).

    Example:
        >>> bi = tl.layers.Bidirectional(tl.layers.LSTM(4, return_sequences=True))
        >>> bi(tl.ones((2, 5, 3))).shape
        TensorShape([2, 5, 8])
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                             'one of {"sum", "mul", "ave", "concat", None}')
        if weights is not None:
            raise NotImplementedError("Bidirectional: weights= is not supported by trainlib; "
                                      "call set_weights after building")
        super().__init__(**kwargs)
        self.forward_layer = _renamed_copy(layer, "forward_")
        self.backward_layer = backward_layer if backward_layer is not None else \
            _renamed_copy(layer, "backward_", go_backwards=not layer.go_backwards)
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError("Forward layer and backward layer should have different "
                             "`go_backwards` value. Received: forward_layer.go_backwards "
                             f"{self.forward_layer.go_backwards}, backward_layer.go_backwards="
                             f"{self.backward_layer.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            fwd, bwd = getattr(self.forward_layer, a), getattr(self.backward_layer, a)
            if fwd != bwd:
                raise ValueError("Forward layer and backward layer are expected to have the same "
                                 f'value for attribute "{a}", got "{fwd}" for forward layer and '
                                 f'"{bwd}" for backward layer')
        for rnn in (self.forward_layer, self.backward_layer):
            if hasattr(rnn, "zero_output_for_mask"):
                rnn.zero_output_for_mask = rnn.return_sequences
        self.merge_mode = merge_mode
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """As Keras: the input mask for sequence outputs (one per direction without a
        merge mode), None for last outputs and states."""
        mask = flatten(mask)[0] if mask is not None else None
        if self.return_sequences:
            output_mask = mask if self.merge_mode else [mask, mask]
        else:
            output_mask = None if self.merge_mode else [None, None]
        if self.return_state:
            states = [None] * (2 * len(flatten(self.forward_layer.cell.state_size)))
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + states
        return output_mask

    def build(self, sequences_shape, initial_state_shape=None):
        for rnn in (self.forward_layer, self.backward_layer):
            if not rnn.built:
                rnn.build(sequences_shape)
                rnn.built = True
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=False):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, mask=mask,
                               training=training)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, mask=mask,
                                    training=training)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = _array.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = _array.concat([y, y_rev], -1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2.0
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = (y, y_rev)
        if self.return_state:
            return (*output, *states) if self.merge_mode is None else (output, *states)
        return list(output) if self.merge_mode is None else output

    def reset_states(self):
        """Zeroes both directions' states (stateful layers)."""
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    reset_state = reset_states

    def get_config(self):
        config = {**super().get_config(), "merge_mode": self.merge_mode,
                  "layer": serialize(self.forward_layer),
                  "backward_layer": serialize(self.backward_layer)}
        return config

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize(config.pop("layer"), custom_objects)
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize(config["backward_layer"], custom_objects)
        return cls(layer, **config)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new Bidirectional from `get_config`'s dict."""
        return cls._from_config_custom(config, custom_objects)


@register
class TimeDistributed(Wrapper):
    """Applies a layer to every time step of (batch, time, ...) inputs (axis 1).

    The time steps are folded into the batch, so the wrapped layer runs once
    on (batch * time, ...) and shares its weights over time.

    Args:
        layer: the layer to apply.

    Example:
        >>> td = tl.layers.TimeDistributed(tl.layers.Dense(4))
        >>> td(tl.ones((2, 5, 3))).shape
        TensorShape([2, 5, 4])
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at "
                             f"least 3 dimensions, received: {input_shape}")
        if not self.layer.built:
            self.layer.build((None,) + input_shape[2:])
            self.layer.built = True
        self.built = True

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape((input_shape[0],) + tuple(input_shape[2:]))
        return (inner[0], input_shape[1]) + tuple(inner[1:])

    def call(self, inputs, training=False, mask=None):
        def dims(tensor, which):   # static where known, else read at run time
            dynamic = _array.shape(tensor)
            return [tensor.shape[i] if tensor.shape[i] is not None else dynamic[i] for i in which]

        rank = inputs.shape.rank
        folded = _array.reshape(inputs, [-1] + dims(inputs, range(2, rank)))
        kwargs = {"training": training} if self.layer._call_takes_training else {}
        out = self.layer(folded, **kwargs)
        return _array.reshape(out, dims(inputs, (0, 1)) + dims(out, range(1, out.shape.rank)))

