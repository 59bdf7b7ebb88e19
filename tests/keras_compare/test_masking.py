"""Keras 3 vs trainlib: mask propagation (the `_keras_mask` protocol).

The same functional model is built in both (Keras's weights copied over) from
layers that make, pass, combine, consume or drop masks: Embedding(mask_zero),
Masking, the RNN layers (and Bidirectional), the merge layers, pooling, the
attention layers, Lambda with a mask function. The outputs and the masks they
carry are compared eagerly, inside `tl.function`, and on the KerasTensors.
"""
import pytest

keras = pytest.importorskip("keras")

import warnings  # noqa: E402

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

TOKENS = np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 0], [7, 0, 0, 0, 0]], np.int32)
RNG = np.random.default_rng(5)
FEATURES = RNG.normal(size=(3, 5, 4)).astype(np.float32)
FEATURES[0, 3:] = 0.0      # Masking(0.0) masks these steps
FEATURES[2, 1:] = 0.0


def _mask(x):
    m = getattr(x, "_keras_mask", None)
    return None if m is None else np.asarray(m)


def _compare(build, x, graph=True):
    km, tm = pair(build)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kouts, touts = km(x), tm(x)
    kouts = kouts if isinstance(kouts, (list, tuple)) else [kouts]
    touts = touts if isinstance(touts, (list, tuple)) else [touts]
    results = [touts]
    if graph:
        results.append(tl.function(lambda v: tm(v))(x))
    for outs in results:
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for i, (k, t) in enumerate(zip(kouts, outs)):
            close(k, t, f"output {i}")
            if outs is touts:     # masks of eager outputs (a Function returns plain values)
                km_, tm_ = _mask(k), _mask(t)
                assert (km_ is None) == (tm_ is None), f"output {i}: mask {km_} vs {tm_}"
                if km_ is not None:
                    np.testing.assert_array_equal(tm_, km_, err_msg=f"output {i} mask")
    for i, (k, t) in enumerate(zip(km.outputs, tm.outputs)):   # the KerasTensors' masks
        kmask, tmask = getattr(k, "_keras_mask", None), getattr(t, "_keras_mask", None)
        assert (kmask is None) == (tmask is None), f"symbolic output {i}: {kmask} vs {tmask}"
        if kmask is not None:
            assert tuple(kmask.shape) == tuple(tmask.shape)
    return km, tm


def test_embedding_mask_through_lstm_and_pooling():
    def build(k):
        inp = k.Input((5,), dtype="int32")
        e = k.layers.Embedding(10, 4, mask_zero=True)(inp)
        seq = k.layers.LSTM(6, return_sequences=True)(e)
        d = k.layers.Dense(3)(seq)                     # passes the mask on
        pooled = k.layers.GlobalAveragePooling1D()(d)  # the mean of the unmasked steps
        last = k.layers.GRU(5)(d)                      # the last unmasked step
        return k.Model(inp, [d, pooled, last])
    _compare(build, TOKENS)


def test_masking_layer_through_simple_rnn_and_bidirectional():
    def build(k):
        inp = k.Input((5, 4))
        m = k.layers.Masking(0.0)(inp)
        seq = k.layers.SimpleRNN(3, return_sequences=True)(m)
        bi = k.layers.Bidirectional(k.layers.LSTM(2, return_sequences=True))(m)
        bi_last = k.layers.Bidirectional(k.layers.GRU(2))(m)
        return k.Model(inp, [m, seq, bi, bi_last])
    _compare(build, FEATURES)


def test_merge_layers_combine_masks():
    def build(k):
        tokens = k.Input((5,), dtype="int32")
        feats = k.Input((5, 4))
        a = k.layers.Embedding(10, 4, mask_zero=True)(tokens)
        b = k.layers.Masking(0.0)(feats)
        plain = k.layers.Dense(4)(feats)               # no mask
        return k.Model([tokens, feats], [
            k.layers.Add()([a, b]), k.layers.Maximum()([a, b]), k.layers.Add()([a, plain]),
            k.layers.Concatenate()([a, plain]), k.layers.Concatenate(axis=1)([a, b]),
            k.layers.Dot(axes=2)([a, b])])
    _compare(build, [TOKENS, FEATURES])


def test_attention_layers_use_and_pass_masks():
    def build(k):
        tokens = k.Input((5,), dtype="int32")

        def embed():   # one per attention layer: MultiHeadAttention removes its inputs' masks
            return k.layers.Embedding(10, 8, mask_zero=True)(tokens)

        x = embed()
        mha = k.layers.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
        after = k.layers.Add()([x, mha])                     # x's mask is gone at run time
        gqa = k.layers.GroupQueryAttention(head_dim=2, num_query_heads=2,
                                           num_key_value_heads=1)
        x = embed()
        g = gqa(x, x, use_causal_mask=True)
        x = embed()
        dot = k.layers.Attention()([x, x])
        x = embed()
        add = k.layers.AdditiveAttention()([x, x])
        return k.Model(tokens, [mha, after, g, dot, add])
    _compare(build, TOKENS)


def test_lambda_mask_function_and_a_layer_that_drops_the_mask():
    def build(k):
        tokens = k.Input((5,), dtype="int32")
        x = k.layers.Embedding(10, 4, mask_zero=True)(tokens)
        kept = k.layers.Lambda(lambda v: v * 2.0, mask=lambda v, m: m)(x)
        dropped = k.layers.Lambda(lambda v: v * 3.0)(x)            # no mask support
        conv = k.layers.Conv1D(2, 2, padding="same")(x)           # no mask support
        return k.Model(tokens, [kept, dropped, conv])
    _compare(build, TOKENS)


def test_mask_of_an_eager_call_and_a_warning_where_it_is_dropped():
    for k in (keras, tl.keras):
        emb = k.layers.Embedding(10, 3, mask_zero=True)
        y = emb(TOKENS)
        np.testing.assert_array_equal(np.asarray(y._keras_mask), TOKENS != 0)
        with pytest.warns(UserWarning, match="does not support masking"):
            k.layers.Flatten()(y)


def test_batch_normalization_moments_skip_masked_steps():
    def build(k):
        tokens = k.Input((5,), dtype="int32")
        x = k.layers.Embedding(10, 4, mask_zero=True)(tokens)
        return k.Model(tokens, k.layers.BatchNormalization(momentum=0.5)(x))
    km, tm = pair(build)
    close(km(TOKENS, training=True), tm(TOKENS, training=True), "training output")
    close(km.get_weights()[-2:], tm.get_weights()[-2:], "moving statistics")
