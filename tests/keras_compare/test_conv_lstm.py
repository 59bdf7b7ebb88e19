"""Keras 3 vs trainlib: ConvLSTM1D/2D/3D with the same weights give the same outputs, states
and gradients (eager and traced), with padding, strides, dilation, go_backwards, masks,
channels_first, and the same configs."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(6)


def _pair(name, *args, **kwargs):
    k = getattr(keras.layers, name)(*args, **kwargs)
    t = getattr(tl.keras.layers, name)(*args, **kwargs)
    return k, t


@pytest.mark.parametrize("name,shape,options", [
    ("ConvLSTM1D", (2, 4, 7, 3), {"kernel_size": 3}),
    ("ConvLSTM1D", (2, 3, 9, 2), {"kernel_size": 2, "strides": 2, "return_sequences": True}),
    ("ConvLSTM2D", (2, 3, 6, 5, 2), {"kernel_size": (3, 2), "padding": "same",
                                     "return_sequences": True, "return_state": True}),
    ("ConvLSTM2D", (2, 4, 7, 7, 1), {"kernel_size": 3, "dilation_rate": 2,
                                     "go_backwards": True}),
    # channels_first: TensorFlow's CPU convolutions refuse it; tests/layers compares it with
    # channels_last
    ("ConvLSTM3D", (1, 3, 4, 4, 3, 2), {"kernel_size": 2, "padding": "same"}),
])
def test_conv_lstm_matches_keras(name, shape, options):
    k, t = _pair(name, 3, **options)
    x = RNG.normal(size=shape).astype(np.float32)
    kout = k(x)
    t.build(shape)
    t.set_weights(k.get_weights())
    assert [w.path for w in t.weights] == [w.path.replace(k.name, t.name) for w in k.weights]
    tout = t(x)
    kouts = kout if isinstance(kout, (list, tuple)) else [kout]
    touts = tout if isinstance(tout, (list, tuple)) else [tout]
    traced = tl.function(lambda v: t(v))(x)
    traced = traced if isinstance(traced, (list, tuple)) else [traced]
    for i, (a, b, c) in enumerate(zip(kouts, touts, traced)):
        close(a, b, f"output {i}")
        close(a, c, f"traced output {i}")
    # gradients of a weighted sum with respect to the input and the weights
    w = RNG.normal(size=np.asarray(kouts[0]).shape).astype(np.float32)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        kl = tf.reduce_sum((k(xv)[0] if options.get("return_state") else k(xv)) * w)
    kg = tape.gradient(kl, [xv] + k.trainable_variables)
    tx = tl.Variable(x)
    with tl.GradientTape() as tape:
        out = t(tx)
        tl_loss = tl.reduce_sum((out[0] if options.get("return_state") else out) * w)
    tg = tape.gradient(tl_loss, [tx] + t.trainable_variables)
    for i, (a, b) in enumerate(zip(kg, tg)):
        close(a, b, f"gradient {i}", rtol=1e-3, atol=1e-4)
    kc, tc = k.get_config(), t.get_config()
    kc.pop("name"), tc.pop("name")
    assert tc == {key: (list(v) if isinstance(v, tuple) else v) for key, v in kc.items()} or \
        tc == kc
    again = type(t).from_config(t.get_config())
    assert again.get_config()["filters"] == 3


def test_conv_lstm_with_a_mask_and_in_a_model():
    def build(k):
        inp = k.Input((4, 5, 5, 2))
        m = k.layers.Masking(0.0)(k.layers.Reshape((4, 50))(inp))
        x = k.layers.Reshape((4, 5, 5, 2))(m)
        seq = k.layers.ConvLSTM2D(2, 3, padding="same", return_sequences=True)(x)
        return k.Model(inp, k.layers.ConvLSTM2D(2, 3)(seq))
    km, tm = build(keras), build(tl.keras)
    tm.set_weights(km.get_weights())
    x = RNG.normal(size=(2, 4, 5, 5, 2)).astype(np.float32)
    x[0, 2:] = 0.0
    close(km(x), tm(x), "masked model")


def test_conv_lstm_dropout_config_round_trip_and_inference_match_keras():
    """A Keras ConvLSTM2D with dropout and recurrent_dropout: its config builds the trainlib
    layer (and back), and outside training both give the same outputs (no dropout); in
    training both drop (their random streams differ)."""
    k = keras.layers.ConvLSTM2D(3, 2, padding="same", return_sequences=True, dropout=0.3,
                                recurrent_dropout=0.2, seed=5)
    x = RNG.normal(size=(2, 3, 5, 4, 2)).astype(np.float32)
    kout = k(x)
    t = tl.keras.layers.ConvLSTM2D.from_config(k.get_config())
    t.build(x.shape)
    t.set_weights(k.get_weights())
    kc, tc = k.get_config(), t.get_config()
    assert tc["dropout"] == kc["dropout"] == 0.3 and tc["recurrent_dropout"] == 0.2
    assert tc["seed"] == kc["seed"] == 5
    close(kout, t(x), "inference output")
    close(kout, tl.function(lambda v: t(v, training=False))(x), "traced inference output")
    again = keras.layers.ConvLSTM2D.from_config(t.get_config())
    assert again.get_config()["dropout"] == 0.3
    assert not np.allclose(np.asarray(k(x, training=True)), np.asarray(kout))
    assert not np.allclose(t(x, training=True).numpy(), np.asarray(kout))
