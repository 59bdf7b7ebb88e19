"""Recurrent layers against numpy references of their formulas, finite-difference gradients in
float64, and eager == tl.function == fit; masks, states, go_backwards, unroll, stateful,
stacked and custom cells, Bidirectional, TimeDistributed, shapes and configs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib import layers
from ._reference import check_layer_gradients

RNG = np.random.default_rng(0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# ------------------------------------------------------------------ numpy references

def np_cell(kind, weights, x, states, reset_after=True):
    """One step of a Keras cell in numpy: (output, new states)."""
    if kind == "SimpleRNN":
        k, rk, b = weights
        h = np.tanh(x @ k + b + states[0] @ rk)
        return h, [h]
    if kind == "LSTM":
        k, rk, b = weights
        z = x @ k + states[0] @ rk + b
        i, f, c, o = np.split(z, 4, axis=-1)
        c = sigmoid(f) * states[1] + sigmoid(i) * np.tanh(c)
        h = sigmoid(o) * np.tanh(c)
        return h, [h, c]
    k, rk, b = weights
    h_prev = states[0]
    u = h_prev.shape[-1]
    if reset_after:
        xz, xr, xh = np.split(x @ k + b[0], 3, axis=-1)
        rz, rr, rh = np.split(h_prev @ rk + b[1], 3, axis=-1)
        z, r = sigmoid(xz + rz), sigmoid(xr + rr)
        hh = np.tanh(xh + r * rh)
    else:
        xz, xr, xh = np.split(x @ k + b, 3, axis=-1)
        z = sigmoid(xz + h_prev @ rk[:, :u])
        r = sigmoid(xr + h_prev @ rk[:, u:2 * u])
        hh = np.tanh(xh + (r * h_prev) @ rk[:, 2 * u:])
    h = z * h_prev + (1 - z) * hh
    return h, [h]


def np_rnn(kind, weights, x, states, mask=None, go_backwards=False, reset_after=True,
           zero_output_for_mask=False):
    """Keras's time loop in numpy: (last output, outputs (B, T, U) in processing order, states)."""
    steps = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    outputs, prev = [], np.zeros_like(states[0])
    for t in steps:
        out, new = np_cell(kind, weights, x[:, t], states, reset_after)
        if mask is not None:
            keep = mask[:, t][:, None]
            new = [np.where(keep, n, o) for n, o in zip(new, states)]
            prev = np.where(keep, out, prev)
            out = np.where(keep, out, 0.0) if zero_output_for_mask else prev
        else:
            prev = out
        states = new
        outputs.append(out)
    return prev, np.stack(outputs, 1), states


def _weights(layer):
    return [w.numpy() for w in layer.weights]


KINDS = ["SimpleRNN", "LSTM", "GRU"]


def _x(b=3, t=5, f=4, dtype=np.float32):
    return RNG.normal(size=(b, t, f)).astype(dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_layer_matches_numpy_eager_and_traced(kind, go_backwards):
    x = _x()
    layer = getattr(layers, kind)(3, return_sequences=True, return_state=True,
                                  go_backwards=go_backwards)
    eager = layer(x)
    traced = tl.function(lambda v: layer(v))(tl.constant(x))
    n_states = 2 if kind == "LSTM" else 1
    zeros = [np.zeros((3, 3), np.float32)] * n_states
    last, seq, states = np_rnn(kind, _weights(layer), x, zeros, go_backwards=go_backwards)
    for got in (eager, traced):
        assert len(got) == 1 + n_states
        np.testing.assert_allclose(got[0].numpy(), seq, rtol=1e-5, atol=1e-6)
        for g, s in zip(got[1:], states):
            np.testing.assert_allclose(g.numpy(), s, rtol=1e-5, atol=1e-6)


def test_gru_reset_before_matches_numpy_with_its_bias_shape():
    x = _x()
    layer = layers.GRU(3, reset_after=False)
    out = layer(x)
    assert layer.weights[2].shape == (9,)
    assert layers.GRU(3)(x) is not None and layers.GRU(3).cell.reset_after
    last, _, _ = np_rnn("GRU", _weights(layer), x, [np.zeros((3, 3), np.float32)],
                        reset_after=False)
    np.testing.assert_allclose(out.numpy(), last, rtol=1e-5, atol=1e-6)


def test_weights_are_keras_names_shapes_and_order():
    x = _x(f=4)
    lstm, gru, simple = layers.LSTM(5), layers.GRU(5), layers.SimpleRNN(5)
    for layer in (lstm, gru, simple):
        layer(x)
    assert [w.name.split(":")[0].split("/")[-1] for w in lstm.weights] == \
        ["kernel", "recurrent_kernel", "bias"]
    assert [tuple(w.shape) for w in lstm.weights] == [(4, 20), (5, 20), (20,)]
    assert [tuple(w.shape) for w in gru.weights] == [(4, 15), (5, 15), (2, 15)]
    assert [tuple(w.shape) for w in simple.weights] == [(4, 5), (5, 5), (5,)]
    # unit_forget_bias: the forget gate's bias starts at one
    np.testing.assert_array_equal(lstm.weights[2].numpy(), np.r_[np.zeros(5), np.ones(5),
                                                                 np.zeros(10)])
    rk = simple.weights[1].numpy()      # orthogonal recurrent kernel
    np.testing.assert_allclose(rk @ rk.T, np.eye(5), atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("zero_output", [False, True])
def test_mask_keeps_states_and_outputs_as_numpy(kind, zero_output):
    x = _x()
    mask = np.array([[1, 1, 1, 0, 0], [0, 1, 1, 1, 1], [1, 0, 1, 0, 1]], bool)
    layer = getattr(layers, kind)(3, return_sequences=True, return_state=True,
                                  zero_output_for_mask=zero_output)
    n_states = 2 if kind == "LSTM" else 1
    zeros = [np.zeros((3, 3), np.float32)] * n_states
    got_eager = layer(x, mask=mask)
    got_graph = tl.function(lambda v, m: layer(v, mask=m))(tl.constant(x), tl.constant(mask))
    last, seq, states = np_rnn(kind, _weights(layer), x, zeros, mask=mask,
                               zero_output_for_mask=zero_output)
    for got in (got_eager, got_graph):
        np.testing.assert_allclose(got[0].numpy(), seq, rtol=1e-5, atol=1e-6)
        for g, s in zip(got[1:], states):
            np.testing.assert_allclose(g.numpy(), s, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_initial_state_is_used(kind):
    x = _x()
    n_states = 2 if kind == "LSTM" else 1
    init = [RNG.normal(size=(3, 3)).astype(np.float32) for _ in range(n_states)]
    layer = getattr(layers, kind)(3)
    got = layer(x, initial_state=[tl.constant(s) for s in init])
    last, _, _ = np_rnn(kind, _weights(layer), x, init)
    np.testing.assert_allclose(got.numpy(), last, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ gradients

def _finite_difference(f, value, eps=1e-6):
    grad = np.zeros_like(value)
    flat, gflat = value.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad


@pytest.mark.parametrize("make", [
    lambda: layers.SimpleRNN(3, return_sequences=True, dtype="float64"),
    lambda: layers.LSTM(3, return_state=True, go_backwards=True, dtype="float64"),
    lambda: layers.GRU(3, return_sequences=True, dtype="float64"),
    lambda: layers.GRU(2, reset_after=False, return_state=True, dtype="float64"),
    lambda: layers.RNN([layers.LSTMCell(2, dtype="float64"), layers.SimpleRNNCell(3, dtype="float64")],
                       dtype="float64"),
], ids=["simple_rnn", "lstm", "gru", "gru_reset_before", "stacked"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("graph", [False, True])
def test_gradients_match_finite_differences_float64(make, masked, graph):
    x = RNG.normal(size=(2, 4, 3))
    mask = np.array([[1, 1, 0, 1], [0, 1, 1, 1]], bool) if masked else None
    layer = make()
    layer(x)
    scale = [RNG.normal(size=tuple(o.shape)) for o in _flat(layer(x))]

    def loss_value():
        outs = _flat(layer(tl.constant(x), mask=mask))
        return float(sum(np.sum(np.sin(o.numpy()) * s) for o, s in zip(outs, scale)))

    def grads(xv):
        with tl.GradientTape() as tape:
            tape.watch(xv)
            outs = _flat(layer(xv, mask=mask))
            loss = tl.add_n([tl.reduce_sum(tl.sin(o) * s) for o, s in zip(outs, scale)])
        return tape.gradient(loss, [xv] + list(layer.trainable_weights))

    got = (tl.function(grads) if graph else grads)(tl.constant(x))
    np.testing.assert_allclose(got[0].numpy(), _finite_difference(loss_value, x), rtol=1e-5,
                               atol=1e-7)
    for variable, g in zip(layer.trainable_weights, got[1:]):
        value = variable.numpy()

        def with_weight():
            variable.assign(value)
            return loss_value()
        fd = _finite_difference(with_weight, value)
        variable.assign(value)
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-7, err_msg=variable.name)


def _flat(y):
    if isinstance(y, (list, tuple)):
        return [leaf for item in y for leaf in _flat(item)]
    return [y]


def test_initial_state_gradient_float64():
    x = RNG.normal(size=(2, 3, 2))
    h0, c0 = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    layer = layers.LSTM(3, dtype="float64")
    layer(x)

    def f(h, c):
        return tl.reduce_sum(tl.sin(layer(tl.constant(x), initial_state=[h, c])))

    h, c = tl.constant(h0), tl.constant(c0)
    with tl.GradientTape() as tape:
        tape.watch([h, c])
        loss = f(h, c)
    dh, dc = tape.gradient(loss, [h, c])
    np.testing.assert_allclose(dh.numpy(), _finite_difference(
        lambda: float(f(tl.constant(h0), tl.constant(c0))), h0), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(dc.numpy(), _finite_difference(
        lambda: float(f(tl.constant(h0), tl.constant(c0))), c0), rtol=1e-5, atol=1e-8)


# ------------------------------------------------------------------ loop forms and fit

@pytest.mark.parametrize("kind", KINDS)
def test_unroll_equals_the_graph_loop(kind):
    x = _x()
    rolled = getattr(layers, kind)(3, return_sequences=True)
    unrolled = getattr(layers, kind)(3, return_sequences=True, unroll=True)
    rolled(x)
    unrolled(x)
    unrolled.set_weights(rolled.get_weights())
    a = tl.function(lambda v: rolled(v))(tl.constant(x))
    b_fn = tl.function(lambda v: unrolled(v))
    b = b_fn(tl.constant(x))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    graph = b_fn.get_concrete_function(tl.constant(x)).graph
    assert "While" not in {op.type for op in graph.get_operations()}
    graph = tl.function(lambda v: rolled(v)).get_concrete_function(tl.constant(x)).graph
    assert [op.type for op in graph.get_operations()].count("While") == 1


def test_time_loop_is_hoisted_one_matmul_per_step():
    x = _x()
    layer = layers.LSTM(3)
    layer(x)
    graph = tl.function(lambda v: layer(v)).get_concrete_function(tl.constant(x)).graph
    loop, = [op for op in graph.get_operations() if op.type == "While"]
    body_types = [op.type for op in loop.attrs["body"].get_operations()]
    assert body_types.count("MatMul") == 1 and "ReadVariableOp" not in body_types


def _model(kind, seed):
    tl.random.set_seed(seed)
    return tl.Sequential([layers.Input((5, 4)), getattr(layers, kind)(6, return_sequences=True),
                          getattr(layers, kind)(4), layers.Dense(2, activation="softmax")])


@pytest.mark.parametrize("kind", KINDS)
def test_fit_eagerly_and_in_graph_agree(kind):
    x = _x(b=8)
    y = RNG.integers(0, 2, size=(8,))
    graph_model, eager_model = _model(kind, 1), _model(kind, 1)
    eager_model.set_weights(graph_model.get_weights())
    for model, eager in ((graph_model, False), (eager_model, True)):
        model.compile(optimizer=tl.optim.Adam(0.01), loss="sparse_categorical_crossentropy",
                      run_eagerly=eager)
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(graph_model.get_weights(), eager_model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_stateful_carries_and_resets_states():
    x = _x()
    layer = layers.SimpleRNN(3, stateful=True)
    first = layer(x).numpy()
    second = layer(x).numpy()
    assert not np.allclose(first, second)
    layer.reset_states()
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-6)
    _, _, states = np_rnn("SimpleRNN", _weights(layer), x, [np.zeros((3, 3), np.float32)])
    np.testing.assert_allclose(layer.states[0].numpy(), states[0], rtol=1e-5, atol=1e-6)
    f = tl.function(lambda v: layer(v))
    np.testing.assert_allclose(f(tl.constant(x)).numpy(), second, rtol=1e-5, atol=1e-6)
    assert len(layer.weights) == 3      # the states are not weights
    with pytest.raises(ValueError, match="batch size must be static"):
        tl.Sequential([layers.Input((5, 4)), layers.SimpleRNN(3, stateful=True)])


def test_dropout_is_active_only_in_training_and_one_mask_per_call():
    x = np.ones((4, 6, 5), np.float32)
    layer = layers.SimpleRNN(3, dropout=0.5, recurrent_dropout=0.5, return_sequences=True)
    inference = layer(x).numpy()
    np.testing.assert_allclose(layer(x, training=False).numpy(), inference)
    tl.random.set_seed(3)
    trained = layer(x, training=True).numpy()
    assert not np.allclose(trained, inference)
    cell = layer.cell
    assert cell._input_mask is None and cell._recurrent_mask is None   # reset after the call
    # the same input mask at every step: with constant inputs and no recurrence the
    # projected inputs are equal along time
    no_rec = layers.SimpleRNN(3, dropout=0.5, return_sequences=True,
                              recurrent_initializer="zeros")
    out = no_rec(x, training=True).numpy()
    np.testing.assert_allclose(out[:, 0], out[:, -1], rtol=1e-6)


# ------------------------------------------------------------------ cells and wrappers

class MinimalCell(layers.Layer):
    """A user's cell: `call(inputs, states)` and `state_size` only."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform")
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel",
                                                shape=(self.units, self.units),
                                                initializer="orthogonal")

    def call(self, inputs, states):
        out = tl.matmul(inputs, self.kernel) + tl.matmul(states[0], self.recurrent_kernel)
        return out, [out]


def test_custom_cell_and_stacked_cells_match_numpy():
    x = _x()
    rnn = layers.RNN(MinimalCell(3), return_sequences=True)
    out = rnn(x)
    k, rk = _weights(rnn)
    h, expected = np.zeros((3, 3), np.float32), []
    for t in range(5):
        h = x[:, t] @ k + h @ rk
        expected.append(h)
    np.testing.assert_allclose(out.numpy(), np.stack(expected, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tl.function(lambda v: rnn(v))(tl.constant(x)).numpy(),
                               out.numpy(), rtol=1e-6)

    stacked = layers.RNN([layers.LSTMCell(4), layers.GRUCell(2)], return_state=True)
    out, lstm_states, gru_state = stacked(x)
    w = _weights(stacked)
    _, seq, s1 = np_rnn("LSTM", w[:3], x, [np.zeros((3, 4), np.float32)] * 2)
    last, _, s2 = np_rnn("GRU", w[3:], seq, [np.zeros((3, 2), np.float32)])
    np.testing.assert_allclose(out.numpy(), last, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lstm_states[1].numpy(), s1[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gru_state.numpy(), s2[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_matches_numpy(merge_mode):
    x = _x()
    bi = layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode=merge_mode)
    out = bi(x)
    assert bi.forward_layer.name.startswith("forward_")
    assert bi.backward_layer.go_backwards and bi.backward_layer.name.startswith("backward_")
    w = _weights(bi)
    zeros = [np.zeros((3, 3), np.float32)]
    _, fwd, _ = np_rnn("GRU", w[:3], x, zeros)
    _, bwd, _ = np_rnn("GRU", w[3:], x, zeros, go_backwards=True)
    bwd = bwd[:, ::-1]
    expected = {"concat": np.concatenate([fwd, bwd], -1), "sum": fwd + bwd, "mul": fwd * bwd,
                "ave": (fwd + bwd) / 2, None: [fwd, bwd]}[merge_mode]
    for a, b in zip(_flat(out), _flat(expected) if merge_mode is None else [expected]):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-5, atol=1e-6)


def test_time_distributed_matches_numpy_and_shapes():
    x = _x()
    td = layers.TimeDistributed(layers.Dense(2, activation="relu"))
    out = td(x)
    k, b = _weights(td)
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ k + b, 0), rtol=1e-5, atol=1e-6)
    inputs = layers.Input((None, 4))
    assert tuple(td(inputs).shape) == (None, None, 2)
    assert td.compute_output_shape((None, 7, 4)) == (None, 7, 2)


@settings(max_examples=10, deadline=None)
@given(units=st.integers(1, 4), steps=st.integers(1, 4), features=st.integers(1, 3),
       kind=st.sampled_from(KINDS), sequences=st.booleans(), state=st.booleans())
def test_functional_shapes(units, steps, features, kind, sequences, state):
    inputs = layers.Input((steps, features))
    layer = getattr(layers, kind)(units, return_sequences=sequences, return_state=state)
    out = layer(inputs)
    first = out[0] if state else out
    expected = (None, steps, units) if sequences else (None, units)
    assert tuple(first.shape) == expected
    if state:
        assert [tuple(s.shape) for s in out[1:]] == [(None, units)] * (2 if kind == "LSTM"
                                                                        else 1)
    assert layer.compute_output_shape((None, steps, features)) == \
        ((expected, *[(None, units)] * (2 if kind == "LSTM" else 1)) if state else expected)
    dynamic = getattr(layers, kind)(units, return_sequences=sequences)(
        layers.Input((None, features)))
    assert tuple(dynamic.shape) == ((None, None, units) if sequences else (None, units))


@pytest.mark.parametrize("make", [
    lambda: layers.LSTM(3, go_backwards=True, dropout=0.1, unit_forget_bias=False),
    lambda: layers.GRU(2, reset_after=False, return_state=True),
    lambda: layers.SimpleRNN(4, activation="relu", stateful=False),
    lambda: layers.RNN([layers.LSTMCell(2), layers.GRUCell(3)], return_sequences=True),
    lambda: layers.Bidirectional(layers.LSTM(2), merge_mode="sum"),
    lambda: layers.TimeDistributed(layers.Dense(3)),
])
def test_config_round_trip(make):
    layer = make()
    config = layer.get_config()
    again = layers.deserialize(layers.serialize(layer))
    assert again.get_config() == config
    x = _x()
    layer(x)
    again(x)
    again.set_weights(layer.get_weights())
    for a, b in zip(_flat(layer(x)), _flat(again(x))):
        np.testing.assert_allclose(a.numpy(), b.numpy())


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="units"):
        layers.LSTM(0)
    with pytest.raises(ValueError, match="merge mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(2))
    with pytest.raises(ValueError, match="unroll"):
        layers.LSTM(2, unroll=True)(layers.Input((None, 3)))
    with pytest.raises(ValueError, match="initial state"):
        layers.LSTM(2)(_x(), initial_state=[tl.zeros((3, 2))])
    with pytest.raises(ValueError, match="go_backwards"):
        layers.Bidirectional(layers.LSTM(2), backward_layer=layers.LSTM(2))


@pytest.mark.parametrize("kind", KINDS)
def test_fused_gradient_equals_the_generic_loop_gradient_with_dropout(kind, monkeypatch):
    """The built-in cells' own BPTT against autodiff of the generic loop, same dropout masks."""
    x = _x()
    layer = getattr(layers, kind)(3, dropout=0.4, recurrent_dropout=0.4, return_sequences=True,
                                  return_state=True)
    layer(x)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 1, 0, 1]], bool)

    def grads():
        tl.random.set_seed(11)
        xv = tl.constant(x)
        with tl.GradientTape() as tape:
            tape.watch(xv)
            outs = _flat(layer(xv, mask=mask, training=True))
            loss = tl.add_n([tl.reduce_sum(tl.sin(o) * float(i + 1)) for i, o in enumerate(outs)])
        return [g.numpy() for g in tape.gradient(loss, [xv] + list(layer.trainable_weights))]

    assert layer._fused()
    fused = grads()
    # the same step, differentiated by the generic While path
    monkeypatch.setattr(type(layer.cell), "fused", False)
    assert not layer._fused()
    generic = grads()
    for a, b in zip(fused, generic):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _conv1d_same_reference(x, kernel):
    """Cross-correlation of (B, L, C) with (K, C, F), 'same' padding as TensorFlow pads."""
    k = kernel.shape[0]
    before = (k - 1) // 2
    padded = np.pad(x, [(0, 0), (before, k - 1 - before), (0, 0)])
    return np.stack([np.einsum("bkc,kcf->bf", padded[:, i:i + k], kernel)
                     for i in range(x.shape[1])], 1)


def test_conv_lstm1d_against_a_numpy_reference_and_its_gradients():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 6, 3)).astype(np.float64)
    layer = tl.layers.ConvLSTM1D(2, 3, padding="same", return_sequences=True, dtype="float64")
    out = layer(x).numpy()
    kernel, recurrent, bias = [w.numpy() for w in layer.weights]

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))
    h = c = np.zeros((2, 6, 2))
    for t in range(4):
        z = _conv1d_same_reference(x[:, t], kernel) + bias + _conv1d_same_reference(h, recurrent)
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-10, atol=1e-12)
    small = tl.layers.ConvLSTM1D(2, 2, dtype="float64")
    check_layer_gradients(lambda layer, xs: layer(xs[0]), small, [x[:, :3, :4]],
                          rtol=1e-5, atol=1e-8)


def test_conv_lstm2d_channels_first_equals_channels_last():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 5, 4, 2)).astype(np.float32)
    last = tl.layers.ConvLSTM2D(3, 2, return_sequences=True, return_state=True)
    first = tl.layers.ConvLSTM2D(3, 2, return_sequences=True, return_state=True,
                                 data_format="channels_first")
    outs_last = last(x)
    first.build((None, 3, 2, 5, 4))
    first.set_weights(last.get_weights())
    outs_first = first(np.transpose(x, (0, 1, 4, 2, 3)))
    np.testing.assert_allclose(np.transpose(outs_first[0].numpy(), (0, 1, 3, 4, 2)),
                               outs_last[0].numpy(), rtol=1e-5)
    for a, b in zip(outs_first[1:], outs_last[1:]):
        np.testing.assert_allclose(np.transpose(a.numpy(), (0, 2, 3, 1)), b.numpy(), rtol=1e-5)
    assert tuple(tl.keras.Model(*_symbolic(first)).outputs[0].shape) == (None, 3, 3, 4, 3)


def _symbolic(layer):
    inp = tl.layers.Input((3, 2, 5, 4))
    return inp, layer(inp)[0]


@pytest.mark.parametrize("kind", KINDS)
def test_own_step_gradient_equals_the_tape_of_the_step(kind, monkeypatch):
    """The cells' `gates_grad` (from the saved activations) against the fused loop's other
    form, which differentiates `gates` under a tape from the saved matmul output."""
    x = _x()
    layer = getattr(layers, kind)(3, return_sequences=True, return_state=True)
    layer(x)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 1, 0, 1]], bool)

    def grads(masked):
        xv = tl.constant(x)
        with tl.GradientTape() as tape:
            tape.watch(xv)
            outs = _flat(layer(xv, mask=mask if masked else None))
            loss = tl.add_n([tl.reduce_sum(tl.sin(o) * float(i + 1)) for i, o in enumerate(outs)])
        return tape.gradient(loss, [xv] + list(layer.trainable_weights))

    def run():
        return [[g.numpy() for g in tl.function(grads)(m)] for m in (False, True)]

    assert layer.cell.own_gradient
    own = run()
    monkeypatch.setattr(type(layer.cell), "own_gradient", False)
    taped = run()
    for a_list, b_list in zip(own, taped):
        for a, b in zip(a_list, b_list):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: layers.SimpleRNN(3, activation="relu", return_sequences=True, dtype="float64"),
    lambda: layers.LSTM(3, recurrent_activation="hard_sigmoid", return_state=True,
                        dtype="float64"),
    lambda: layers.GRU(3, activation="softsign", dtype="float64"),
], ids=["simple_rnn", "lstm", "gru"])
def test_other_activations_take_the_taped_step_gradient(make):
    x = RNG.normal(size=(2, 4, 3))
    layer = make()
    layer(x)
    assert not layer.cell.own_gradient and layer._fused()
    check = tl.function(lambda v: tl.add_n([tl.reduce_sum(tl.sin(o)) for o in _flat(layer(v))]))
    with tl.GradientTape() as tape:
        xv = tl.constant(x)
        tape.watch(xv)
        loss = check(xv)
    got = tape.gradient(loss, xv).numpy()
    fd = _finite_difference(lambda: float(check(tl.constant(x))), x)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-7)


def test_conv_lstm_dropout_masks_each_gate_as_keras_does(monkeypatch):
    """ConvLSTM `dropout` / `recurrent_dropout`: four masks each (one per gate i, f, c, o),
    drawn once per call and applied at every step, against a numpy reference of the
    formula with the masks the call drew; inactive unless training."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 4, 6, 3))
    layer = tl.layers.ConvLSTM1D(2, 3, padding="same", return_sequences=True, dropout=0.4,
                                 recurrent_dropout=0.3, seed=7, dtype="float64")
    plain = tl.layers.ConvLSTM1D(2, 3, padding="same", return_sequences=True, dtype="float64")
    inference = layer(x).numpy()
    plain(x)
    plain.set_weights(layer.get_weights())
    np.testing.assert_array_equal(inference, plain(x).numpy())   # training=False: no dropout
    np.testing.assert_array_equal(layer(x, training=False).numpy(), inference)

    drawn = {}
    draw = type(layer.cell).make_dropout_masks

    def keep(cell, step_input, state, training):
        draw(cell, step_input, state, training)
        drawn["input"] = [m.numpy() for m in cell._input_masks]
        drawn["recurrent"] = [m.numpy() for m in cell._recurrent_masks]

    monkeypatch.setattr(type(layer.cell), "make_dropout_masks", keep)
    out = layer(x, training=True).numpy()
    dm, rm = drawn["input"], drawn["recurrent"]
    assert [m.shape for m in dm] == [(2, 6, 3)] * 4 and [m.shape for m in rm] == [(2, 6, 2)] * 4
    for masks, rate in ((dm, 0.4), (rm, 0.3)):
        for m in masks:
            assert set(np.unique(m)) <= {0.0, 1.0 / (1.0 - rate)}
        assert not all(np.array_equal(masks[0], m) for m in masks[1:])   # one per gate
    kernel, recurrent, bias = [w.numpy() for w in layer.weights]

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))
    h = c = np.zeros((2, 6, 2))
    for t in range(4):
        z = np.concatenate([_conv1d_same_reference(x[:, t] * dm[g], kernel[..., 2 * g:2 * g + 2])
                            + _conv1d_same_reference(h * rm[g], recurrent[..., 2 * g:2 * g + 2])
                            for g in range(4)], -1) + bias
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-10, atol=1e-12)
    assert layer.cell._input_masks is None   # forgotten after the call
    monkeypatch.undo()

    traced = tl.function(lambda v, training: layer(v, training=training))
    np.testing.assert_allclose(traced(tl.constant(x), False).numpy(), inference, rtol=1e-12)
    one, two = traced(tl.constant(x), True).numpy(), traced(tl.constant(x), True).numpy()
    assert one.shape == inference.shape and not np.allclose(one, inference)
    assert not np.array_equal(one, two)   # new masks on every call
    with tl.GradientTape() as tape:   # differentiable through the masks
        tape.watch(layer.trainable_weights)
        loss = tl.reduce_sum(layer(x, training=True))
    assert all(g is not None for g in tape.gradient(loss, layer.trainable_weights))


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM"])
def test_kernel_gradients_over_row_chunks_equal_one_product(kind, monkeypatch):
    """Enough rows (steps x batch) and a narrow kernel: the kernels' gradients are sums of
    products over row chunks (`rnn_cells.row_chunks`), equal to the single product's."""
    from trainlib.layers import rnn_cells
    x = tl.constant(RNG.normal(size=(8, 16, 3)))   # 128 rows
    layer = getattr(layers, kind)(4, return_sequences=True, dtype="float64")
    layer(x)
    weights = RNG.normal(size=(8, 16, 4))

    @tl.function
    def grads(v):
        with tl.GradientTape() as tape:
            tape.watch(v)
            loss = tl.reduce_sum(tl.sin(layer(v)) * weights)
        return tape.gradient(loss, [v] + list(layer.trainable_weights))

    monkeypatch.setattr(rnn_cells, "_CHUNK_MIN_ROWS", 64)
    assert rnn_cells.row_chunks(tl.zeros([8, 16, 3]), 3 * 16) == rnn_cells._ROW_CHUNKS
    assert rnn_cells.row_chunks(tl.zeros([3, 7, 3]), 12) == 0   # 21 rows: too few, indivisible
    chunked = [g.numpy() for g in grads(x)]
    graph = grads.get_concrete_function(x).graph
    assert any(op.type == "MatMul" and op.outputs[0].shape.rank == 3
               for op in _all_ops(graph))
    monkeypatch.setattr(rnn_cells, "_CHUNK_MIN_ROWS", 10 ** 9)
    whole = [g.numpy() for g in tl.function(grads.python_function)(x)]
    for a, b in zip(chunked, whole):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _all_ops(graph):
    for op in graph.get_operations():
        yield op
        for attr in ("body", "cond"):
            if attr in op.attrs:
                yield from _all_ops(op.attrs[attr])
