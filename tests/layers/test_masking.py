"""Masks as Keras 3 passes them (no Keras needed): `_keras_mask` on outputs, `mask` and
`<arg>_mask` filled in from the inputs, `compute_mask`/`supports_masking`, masks through
functional models (eager, traced, symbolic) and the layers that make and use them."""
import warnings

import numpy as np
import pytest

import trainlib as tl
from trainlib import keras

L = keras.layers
TOKENS = np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 0]], np.int32)
KEEP = TOKENS != 0


def mask_of(x):
    return np.asarray(x._keras_mask)


def test_embedding_mask_zero_and_the_mask_passing_through_dense():
    emb = L.Embedding(10, 3, mask_zero=True)
    y = emb(TOKENS)
    np.testing.assert_array_equal(mask_of(y), KEEP)
    z = L.Dense(2)(y)        # supports masking: the mask passes on
    np.testing.assert_array_equal(mask_of(z), KEEP)
    assert not hasattr(L.Embedding(10, 3)(TOKENS), "_keras_mask")
    assert L.Embedding(10, 3, mask_zero=True).get_config()["mask_zero"] is True


def test_masking_zeroes_and_masks_the_padded_steps():
    x = np.ones((2, 3, 2), np.float32)
    x[0, 2] = 0.0
    y = L.Masking(0.0)(x)
    np.testing.assert_array_equal(mask_of(y), [[True, True, False], [True, True, True]])
    np.testing.assert_array_equal(y.numpy(), x)


def test_mask_argument_filled_in_and_compute_mask():
    seen = {}

    class Probe(L.Layer):
        def call(self, inputs, mask=None):
            seen["mask"] = mask
            return inputs * 2.0

        def compute_mask(self, inputs, mask=None):
            return None if mask is None else tl.logical_not(mask)

    y = L.Embedding(10, 3, mask_zero=True)(TOKENS)
    probe = Probe()
    assert probe.supports_masking           # it overrides compute_mask
    out = probe(y)
    np.testing.assert_array_equal(np.asarray(seen["mask"]), KEEP)
    np.testing.assert_array_equal(mask_of(out), ~KEEP)
    probe(y, mask=tl.constant(np.ones_like(KEEP)))        # a given mask wins
    assert np.asarray(seen["mask"]).all()


def test_arg_masks_for_several_tensor_arguments():
    seen = {}

    class Two(L.Layer):
        def call(self, a, b, a_mask=None, b_mask=None):
            seen.update(a=a_mask, b=b_mask)
            return a + b

    a = L.Embedding(10, 3, mask_zero=True)(TOKENS)
    b = tl.ones((2, 5, 3))
    Two()(a, b)
    np.testing.assert_array_equal(np.asarray(seen["a"]), KEEP)
    assert seen["b"] is None


def test_a_layer_without_mask_support_drops_the_mask_with_a_warning():
    y = L.Embedding(10, 3, mask_zero=True)(TOKENS)
    with pytest.warns(UserWarning, match="does not support masking"):
        out = L.Conv1D(2, 2)(y)
    assert not hasattr(out, "_keras_mask")


def test_pooling_and_rnns_use_the_mask():
    rng = np.random.default_rng(0)
    x = tl.constant(rng.normal(size=(2, 5, 3)).astype(np.float32))
    x._keras_mask = tl.constant(KEEP)
    pooled = L.GlobalAveragePooling1D()(x).numpy()
    expected = [x.numpy()[i][KEEP[i]].mean(0) for i in range(2)]
    np.testing.assert_allclose(pooled, expected, rtol=1e-6)
    rnn = L.SimpleRNN(4, return_sequences=True)
    seq = rnn(x)
    np.testing.assert_array_equal(mask_of(seq), KEEP)
    last = L.SimpleRNN(4)
    last.build((None, 5, 3))
    last.set_weights(rnn.get_weights())
    # the last output is the state after the last unmasked step
    np.testing.assert_allclose(last(x).numpy()[0], seq.numpy()[0, 2], rtol=1e-6)


def test_merge_masks():
    a = L.Embedding(10, 3, mask_zero=True)(TOKENS)
    b = L.Embedding(10, 3, mask_zero=True)(TOKENS[:, ::-1].copy())
    np.testing.assert_array_equal(mask_of(L.Add()([a, b])), KEEP | KEEP[:, ::-1])
    plain = tl.ones((2, 5, 3))
    assert not hasattr(L.Add()([a, plain]), "_keras_mask")
    np.testing.assert_array_equal(mask_of(L.Concatenate()([a, plain])), np.ones_like(KEEP))
    np.testing.assert_array_equal(mask_of(L.Concatenate(axis=1)([a, b])),
                                  np.concatenate([KEEP, KEEP[:, ::-1]], 1))
    # Maximum: a masked entry takes the other input's value
    mx = L.Maximum()([a, b]).numpy()
    both = KEEP & KEEP[:, ::-1]
    only_a = KEEP & ~KEEP[:, ::-1]
    np.testing.assert_allclose(mx[both], np.maximum(a.numpy(), b.numpy())[both])
    np.testing.assert_allclose(mx[only_a], a.numpy()[only_a])


def test_functional_model_masks_eager_traced_and_symbolic():
    inp = L.Input((5,), dtype="int32")
    e = L.Embedding(10, 4, mask_zero=True)(inp)
    assert e._keras_mask.shape == (None, 5) and e._keras_mask.dtype == "bool"
    seq = L.LSTM(3, return_sequences=True)(e)
    pooled = L.GlobalAveragePooling1D()(seq)
    assert seq._keras_mask.shape == (None, 5) and not hasattr(pooled, "_keras_mask")
    model = keras.Model(inp, [seq, pooled])
    out_seq, out_pooled = model(TOKENS)
    np.testing.assert_array_equal(mask_of(out_seq), KEEP)
    traced = tl.function(lambda t: model(t))(TOKENS)
    np.testing.assert_allclose(traced[1].numpy(), out_pooled.numpy(), rtol=1e-5)
    # what stands at the masked (padded) steps changes nothing
    other = np.where(KEEP, TOKENS, 7)
    other_model = keras.Model(inp, [seq, pooled])
    e_layer = model.layers[1]
    shifted = e_layer(other)
    shifted._keras_mask = tl.constant(KEEP)
    np.testing.assert_allclose(model.layers[3](model.layers[2](shifted)).numpy(),
                               out_pooled.numpy(), rtol=1e-5)
    assert other_model.layers == model.layers


def test_fit_with_a_masked_sequence_model():
    model = keras.Sequential([L.Input((5,), dtype="int32"), L.Embedding(10, 4, mask_zero=True),
                              L.GRU(4), L.Dense(1)])
    model.compile("adam", "mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # no layer drops the mask
        history = model.fit(TOKENS, np.ones((2, 1), np.float32), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


def test_several_tensor_arguments_in_a_functional_model_and_its_config():
    class Pair(L.Layer):
        def build(self, a_shape, b_shape):
            self.w = self.add_weight(shape=(a_shape[-1], b_shape[-1]), initializer="ones")

        def call(self, a, b, scale=1.0):
            return tl.matmul(a, self.w) * b * scale

    a, b = L.Input((3,)), L.Input((2,))
    mask = L.Input((4, 4), dtype="bool")
    p = Pair()(a, b, scale=2.0)
    s = a + a * 2.0 - b[:, :1]                     # KerasTensor arithmetic
    q = L.Reshape((4, 1))(L.Dense(4)(a))
    att = L.MultiHeadAttention(1, 2)(query=q, value=q, attention_mask=mask)
    model = keras.Model([a, b, mask], [p, s, att])
    assert [tuple(o.shape) for o in model.outputs] == [(None, 2), (None, 3), (None, 4, 1)]
    x = [np.ones((2, 3), np.float32), np.full((2, 2), 2.0, np.float32), np.ones((2, 4, 4), bool)]
    out = model(x)
    np.testing.assert_allclose(out[0].numpy(), np.full((2, 2), 12.0))
    np.testing.assert_allclose(out[1].numpy(), np.ones((2, 3)))
    config = model.get_config()
    mha = [c for c in config["layers"] if c["class_name"] == "MultiHeadAttention"][0]
    assert sorted(mha["inbound_nodes"][0]["kwargs"]) == ["attention_mask", "query", "value"]
    again = keras.Model.from_config(config, custom_objects={"Pair": Pair})
    again.set_weights(model.get_weights())
    for u, v in zip(again(x), out):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-6)
    clone = keras.models.clone_model(model)
    assert [tuple(o.shape) for o in clone.outputs] == [(None, 2), (None, 3), (None, 4, 1)]


def test_batch_normalization_uses_only_unmasked_steps_while_training():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    bn = L.BatchNormalization(momentum=0.0, epsilon=1e-6)
    out = bn(x, training=True, mask=tl.constant(KEEP)).numpy()
    kept = x[KEEP]
    mean, var = kept.mean(0), kept.var(0)
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), var, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[KEEP], (kept - mean) / np.sqrt(var + 1e-6), rtol=1e-3,
                               atol=1e-4)
    with pytest.raises(ValueError, match="one dimension less"):
        bn(x, training=True, mask=tl.constant(np.ones((2, 5, 3), bool)))
