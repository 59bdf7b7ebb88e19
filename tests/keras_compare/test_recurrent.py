"""Keras 3 vs trainlib: the recurrent layers (SimpleRNN, LSTM, GRU, RNN of cells, stacked cells,
Bidirectional, TimeDistributed) give Keras's outputs, states and input/weight gradients from the
same weights and inputs, eagerly and in tl.function; configs round-trip; fit follows Keras's.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import fit_both, pair  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 6, 4)).astype(np.float32)


def _layer_cases():
    return {
        "simple_rnn": lambda k: k.layers.SimpleRNN(5),
        "simple_rnn_seq_back": lambda k: k.layers.SimpleRNN(5, return_sequences=True,
                                                             go_backwards=True, activation="relu"),
        "lstm": lambda k: k.layers.LSTM(5),
        "lstm_seq_state": lambda k: k.layers.LSTM(5, return_sequences=True, return_state=True),
        "lstm_no_bias_back": lambda k: k.layers.LSTM(4, use_bias=False, go_backwards=True,
                                                     unit_forget_bias=False),
        "gru": lambda k: k.layers.GRU(5, return_state=True),
        "gru_reset_before": lambda k: k.layers.GRU(5, reset_after=False, return_sequences=True),
        "gru_unroll": lambda k: k.layers.GRU(3, unroll=True, return_sequences=True),
        "rnn_stacked": lambda k: k.layers.RNN([k.layers.LSTMCell(4), k.layers.GRUCell(3),
                                               k.layers.SimpleRNNCell(2)], return_state=True),
        "bidirectional_concat": lambda k: k.layers.Bidirectional(
            k.layers.LSTM(4, return_sequences=True)),
        "bidirectional_sum_state": lambda k: k.layers.Bidirectional(
            k.layers.GRU(3, return_state=True), merge_mode="sum"),
        "time_distributed": lambda k: k.layers.TimeDistributed(k.layers.Dense(3,
                                                                              activation="tanh")),
    }


CASES = _layer_cases()


def _as_list(y):
    if isinstance(y, (list, tuple)):
        return [leaf for item in y for leaf in _as_list(item)]
    return [y]


def _keras_run(layer, x, mask=None, initial_state=None):
    xv = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xv)
        kw = {}
        if mask is not None:
            kw["mask"] = tf.constant(mask)
        if initial_state is not None:
            kw["initial_state"] = [tf.constant(s) for s in initial_state]
        outs = _as_list(layer(xv, **kw))
        loss = tf.add_n([tf.reduce_sum(tf.sin(o) * (i + 1)) for i, o in enumerate(outs)])
    grads = tape.gradient(loss, [xv] + list(layer.trainable_weights))
    return [o.numpy() for o in outs], [g.numpy() for g in grads]


def _trainlib_run(layer, x, graph, mask=None, initial_state=None):
    def run(xv, *extra):
        with tl.GradientTape() as tape:
            tape.watch(xv)
            kw = {}
            if mask is not None:
                kw["mask"] = extra[0]
            if initial_state is not None:
                kw["initial_state"] = list(extra[-len(initial_state):])
            outs = _as_list(layer(xv, **kw))
            loss = tl.add_n([tl.reduce_sum(tl.sin(o) * float(i + 1)) for i, o in enumerate(outs)])
        grads = tape.gradient(loss, [xv] + list(layer.trainable_weights))
        return outs, grads
    extra = ([tl.constant(mask)] if mask is not None else []) + \
        [tl.constant(s) for s in (initial_state or [])]
    fn = tl.function(run) if graph else run
    outs, grads = fn(tl.constant(x), *extra)
    return [o.numpy() for o in outs], [g.numpy() for g in grads]


def _compare(make, x, mask=None, initial_state=None):
    klayer, tlayer = make(keras), make(tl.keras)
    klayer(x)
    tlayer(x)
    kw = klayer.get_weights()
    assert [w.shape for w in kw] == [w.shape for w in tlayer.get_weights()]
    assert [w.path.split("/")[-1] for w in klayer.weights] == \
        [w.name.split(":")[0].split("/")[-1] for w in tlayer.weights]
    tlayer.set_weights(kw)
    k_out, k_grad = _keras_run(klayer, x, mask, initial_state)
    for graph in (False, True):
        t_out, t_grad = _trainlib_run(tlayer, x, graph, mask, initial_state)
        assert len(t_out) == len(k_out)
        for a, b in zip(t_out, k_out):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
        for i, (a, b) in enumerate(zip(t_grad, k_grad)):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL,
                                       err_msg=f"gradient {i} (graph={graph})")


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_gradients_match_keras(name):
    _compare(CASES[name], X)


@pytest.mark.parametrize("name", ["simple_rnn_seq_back", "lstm_seq_state", "gru",
                                  "bidirectional_concat"])
def test_masked_steps_match_keras(name):
    mask = np.ones((3, 6), bool)
    mask[0, 4:] = False     # post-padding
    mask[1, :2] = False     # pre-padding
    mask[2, 3] = False
    _compare(CASES[name], X, mask=mask)


@pytest.mark.parametrize("kind,n_states", [("LSTM", 2), ("GRU", 1), ("SimpleRNN", 1)])
def test_initial_state_matches_keras(kind, n_states):
    states = [RNG.normal(size=(3, 4)).astype(np.float32) for _ in range(n_states)]
    _compare(lambda k: getattr(k.layers, kind)(4, return_sequences=True, return_state=True), X,
             initial_state=states)


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_round_trip_and_keys(name):
    klayer, tlayer = CASES[name](keras), CASES[name](tl.keras)
    kconf, tconf = klayer.get_config(), tlayer.get_config()
    assert set(tconf) == set(kconf), (set(tconf) ^ set(kconf))
    again = type(tlayer).from_config(tconf)
    assert again.get_config() == tconf
    # Keras's own config builds the trainlib layer (names, nested cells and layers)
    from_keras = tl.layers.deserialize({"class_name": type(klayer).__name__,
                                        "config": _plain(kconf)})
    from_keras(X)
    tlayer(X)
    assert [w.shape for w in from_keras.weights] == [w.shape for w in tlayer.weights]


def _plain(config):
    """Keras's nested {"module", "class_name", "config"} layer dicts as trainlib reads them."""
    if isinstance(config, dict):
        return {k: _plain(v) for k, v in config.items()}
    if isinstance(config, list):
        return [_plain(v) for v in config]
    return config


def test_stateful_lstm_carries_states_like_keras():
    def make(k):
        return k.layers.LSTM(4, stateful=True, return_sequences=True)
    klayer, tlayer = make(keras), make(tl.keras)
    klayer(X)
    tlayer(X)
    tlayer.set_weights(klayer.get_weights())
    klayer.reset_states()
    tlayer.reset_states()
    f = tl.function(lambda x: tlayer(x))
    for step in range(2):
        np.testing.assert_allclose(f(tl.constant(X)).numpy(), klayer(X).numpy(), rtol=RTOL,
                                   atol=ATOL, err_msg=f"call {step}")
    klayer.reset_states()
    tlayer.reset_states()
    np.testing.assert_allclose(tlayer(X).numpy(), klayer(X).numpy(), rtol=RTOL, atol=ATOL)


def test_fit_of_a_recurrent_classifier_follows_keras():
    labels = RNG.integers(0, 3, size=(12,))
    x = RNG.normal(size=(12, 6, 4)).astype(np.float32)

    def build(k):
        return k.Sequential([k.layers.Input((6, 4)),
                             k.layers.Bidirectional(k.layers.GRU(4, return_sequences=True)),
                             k.layers.LSTM(5), k.layers.Dense(3, activation="softmax")])
    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.Adam(0.01),
                                        loss="sparse_categorical_crossentropy",
                                        metrics=["accuracy"]))
    fit_both(km, tm, x, labels, epochs=2, batch_size=4)
