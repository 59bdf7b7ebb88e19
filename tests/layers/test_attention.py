"""EinsumDense, MultiHeadAttention, Attention and AdditiveAttention against numpy formulas,
finite differences in float64, eager vs tl.function, the functional API and configs."""
import numpy as np
import pytest

import trainlib as tl

from ._reference import check_layer_gradients

RNG = np.random.default_rng(0)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _randomize(layer):
    layer.set_weights([RNG.normal(size=w.shape) for w in layer.get_weights()])


def test_einsum_dense_matches_numpy_and_shapes():
    layer = tl.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de",
                                  activation="relu")
    x = RNG.normal(size=(2, 4, 5)).astype(np.float32)
    y = layer(x)
    k, b = layer.get_weights()
    assert k.shape == (5, 2, 3) and b.shape == (2, 3)
    np.testing.assert_allclose(y.numpy(), np.maximum(np.einsum("abc,cde->abde", x, k) + b, 0),
                               rtol=1e-5, atol=1e-6)
    ell = tl.layers.EinsumDense("...b,bc->...c", output_shape=4, bias_axes="c")
    assert ell(np.ones((2, 3, 5), np.float32)).shape == (2, 3, 4)
    with pytest.raises(ValueError, match="Input shape and output shape do not match"):
        tl.layers.EinsumDense("abc,cd->abd", output_shape=(3, 4))(np.ones((2, 4, 5), np.float32))
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        tl.layers.EinsumDense("ab->b", output_shape=4)(np.ones((2, 4), np.float32))


def test_einsum_dense_gradients():
    layer = tl.layers.EinsumDense("...b,bc->...c", output_shape=3, bias_axes="c", dtype="float64")
    layer.build((2, 3, 4))
    _randomize(layer)
    check_layer_gradients(lambda lay, xs: lay(xs[0]), layer, [RNG.normal(size=(2, 3, 4))])


def _mha_reference(layer, q, v, mask=None, causal=False):
    wq, bq, wk, bk, wv, bv, wo, bo = layer.get_weights()
    h = wq.shape[-1]
    qp = np.einsum("btd,dnh->btnh", q, wq) + bq
    kp = np.einsum("bsd,dnh->bsnh", v, wk) + bk
    vp = np.einsum("bsd,dnh->bsnh", v, wv) + bv
    scores = np.einsum("bsnh,btnh->bnts", kp, qp / np.sqrt(h))
    allowed = np.ones(scores.shape[-2:], bool)
    if causal:
        allowed = np.tril(allowed)
    allowed = np.broadcast_to(allowed, (q.shape[0],) + allowed.shape)
    if mask is not None:
        allowed = allowed & mask
    scores = np.where(allowed[:, None], scores, -1e9)
    probs = _softmax(scores)
    out = np.einsum("bnts,bsnh->btnh", probs, vp)
    return np.einsum("btnh,nhd->btd", out, wo) + bo, probs


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_numpy(causal):
    layer = tl.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
    q = RNG.normal(size=(2, 5, 6)).astype(np.float32)
    v = RNG.normal(size=(2, 5, 7)).astype(np.float32)
    mask = RNG.random((2, 5, 5)) > 0.3
    mask[..., 0] = True
    out, scores = layer(q, v, attention_mask=mask, use_causal_mask=causal,
                        return_attention_scores=True)
    names = [w.path for w in layer.weights]
    assert names[0].endswith("query/kernel") and names[-1].endswith("attention_output/bias")
    want, probs = _mha_reference(layer, q, v, mask, causal)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), probs, rtol=1e-4, atol=1e-6)
    graph = tl.function(lambda a, b, m: layer(a, b, attention_mask=m, use_causal_mask=causal))
    np.testing.assert_allclose(graph(q, v, mask).numpy(), want, rtol=1e-4, atol=1e-5)


def test_multi_head_attention_gradients_and_dropout():
    layer = tl.layers.MultiHeadAttention(num_heads=2, key_dim=2, dtype="float64")
    q, v = RNG.normal(size=(1, 3, 4)), RNG.normal(size=(1, 2, 4))
    layer(q, v)
    check_layer_gradients(lambda lay, xs: lay(xs[0], xs[1], use_causal_mask=True), layer, [q, v])
    drop = tl.layers.MultiHeadAttention(num_heads=1, key_dim=2, dropout=0.5, seed=3)
    a = drop(q.astype(np.float32), v.astype(np.float32), training=False)
    np.testing.assert_allclose(a.numpy(), drop(q.astype(np.float32), v.astype(np.float32)).numpy())
    train = tl.function(lambda x, y: drop(x, y, training=True, return_attention_scores=True))
    draws = {tuple(np.round(train(q.astype(np.float32), v.astype(np.float32))[0].numpy()
                            .ravel(), 5)) for _ in range(6)}
    assert len(draws) > 1, "dropout in a traced call draws fresh masks per call"


def test_multi_head_attention_axes_and_errors():
    layer = tl.layers.MultiHeadAttention(num_heads=2, key_dim=2, attention_axes=(1, 2))
    x = np.ones((2, 3, 4, 5), np.float32)
    out, scores = layer(x, x, return_attention_scores=True)
    assert out.shape == (2, 3, 4, 5) and scores.shape == (2, 2, 3, 4, 3, 4)
    np.testing.assert_allclose(scores.numpy().sum(axis=(-2, -1)), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="num_heads"):
        tl.layers.MultiHeadAttention(num_heads=0, key_dim=2)
    with pytest.raises(ValueError, match="key_dim"):
        tl.layers.MultiHeadAttention(num_heads=1, key_dim=2.5)


def test_attention_layers_in_a_functional_model_fit_config_and_saving(tmp_path):
    k = tl.keras
    x = k.Input((5, 6))
    h = k.layers.MultiHeadAttention(2, 3, output_shape=4)(x, x, use_causal_mask=True)
    h = k.layers.Attention(use_scale=True)([h, h, h])
    h = k.layers.AdditiveAttention()([h, h])
    out = k.layers.Dense(3, activation="softmax")(k.layers.GlobalAveragePooling1D()(h))
    model = k.Model(x, out)
    assert h.shape == (None, 5, 4)
    model.compile("adam", "sparse_categorical_crossentropy")
    data = RNG.normal(size=(16, 5, 6)).astype(np.float32)
    labels = RNG.integers(0, 3, 16)
    history = model.fit(data, labels, epochs=3, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    clone = type(model).from_config(model.get_config())
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(data, verbose=0), model.predict(data, verbose=0),
                               rtol=1e-5)
    model.save(tmp_path / "m.keras")
    loaded = k.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0),
                               rtol=1e-5)


def _dense_attention_reference(q, v, k, scores_fn, v_mask=None, q_mask=None):
    scores = scores_fn(q, k)
    if v_mask is not None:
        scores = np.where(v_mask[:, None, :], scores, scores - 1e9)
    w = _softmax(scores)
    out = w @ v
    if q_mask is not None:
        out = np.where(q_mask[..., None], out, 0)
    return out, w


def test_dot_and_additive_attention_match_numpy():
    q, v, kk = (RNG.normal(size=s).astype(np.float32) for s in [(2, 3, 4), (2, 5, 4), (2, 5, 4)])
    v_mask = np.arange(5) < np.array([[2], [5]])
    q_mask = np.arange(3) < np.array([[3], [1]])
    dot = tl.layers.Attention(use_scale=True)
    out, w = dot([q, v, kk], mask=[q_mask, v_mask], return_attention_scores=True)
    scale = 1.0
    want, want_w = _dense_attention_reference(q, v, kk, lambda a, b: scale * a @ b.swapaxes(1, 2),
                                              v_mask, q_mask)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5, atol=1e-6)
    add = tl.layers.AdditiveAttention()
    out = add([q, v])
    s = add.get_weights()[0]
    want, _ = _dense_attention_reference(
        q, v, v, lambda a, b: (s * np.tanh(a[:, :, None] + b[:, None])).sum(-1))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    concat = tl.layers.Attention(score_mode="concat")
    out = concat([q, v])
    want, _ = _dense_attention_reference(
        q, v, v, lambda a, b: np.tanh(a[:, :, None] + b[:, None]).sum(-1))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="list of inputs"):
        tl.layers.Attention()(q)
    with pytest.raises(ValueError, match="score_mode"):
        tl.layers.Attention(score_mode="sum")


@pytest.mark.parametrize("make", [lambda: tl.layers.Attention(use_scale=True, score_mode="concat",
                                                              dtype="float64"),
                                  lambda: tl.layers.AdditiveAttention(dtype="float64")])
def test_dense_attention_gradients(make):
    layer = make()
    q, v = RNG.normal(size=(1, 2, 3)), RNG.normal(size=(1, 3, 3))
    layer([q, v])
    check_layer_gradients(lambda lay, xs: lay([xs[0], xs[1]], use_causal_mask=False), layer, [q, v])


@pytest.mark.parametrize("layer", [
    tl.layers.MultiHeadAttention(3, 2, value_dim=4, dropout=0.1, output_shape=(5,),
                                 attention_axes=1, seed=2),
    tl.layers.Attention(use_scale=True, score_mode="concat", dropout=0.2),
    tl.layers.AdditiveAttention(use_scale=False),
    tl.layers.EinsumDense("ab,bc->ac", output_shape=3, bias_axes="c", activation="tanh"),
])
def test_attention_config_round_trip(layer):
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == config


def test_grouped_query_attention_matches_numpy_and_gradients():
    layer = tl.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2,
                                          dtype="float64")
    q, v = RNG.normal(size=(2, 3, 5)), RNG.normal(size=(2, 4, 6))
    layer(q, v)
    _randomize(layer)
    wq, bq, wk, bk, wv, bv, wo, bo = layer.get_weights()
    assert wk.shape == (6, 2, 2) and wq.shape == (5, 4, 2) and wo.shape == (4, 2, 5)
    qp = np.einsum("bqm,muh->bquh", q, wq) + bq
    kp = np.repeat(np.einsum("bkm,mvh->bkvh", v, wk) + bk, 2, axis=2)
    vp = np.repeat(np.einsum("bkm,mvh->bkvh", v, wv) + bv, 2, axis=2)
    probs = _softmax(np.einsum("bquh,bkuh->buqk", qp / np.sqrt(2), kp))
    want = np.einsum("bquh,uhm->bqm", np.einsum("buqk,bkuh->bquh", probs, vp), wo) + bo
    np.testing.assert_allclose(layer(q, v).numpy(), want, rtol=1e-10)
    check_layer_gradients(lambda lay, xs: lay(xs[0], xs[1], use_causal_mask=True), layer,
                          [q[:1], v[:1]])
    with pytest.raises(ValueError, match="divisible"):
        tl.layers.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)
    config = layer.get_config()
    assert tl.layers.GroupQueryAttention.from_config(config).get_config() == config


def test_multi_head_attention_builds_from_the_first_formats_packed_shapes():
    """trainlib's first `.keras` format recorded the build shape as one packed list
    [query, value, key, attention_mask, query_mask, value_mask, key_mask]; it builds the
    same weights as `build(query_shape, value_shape, key_shape)`, and Keras's build_config
    names the shapes."""
    packed = tl.layers.MultiHeadAttention(2, 4, name="packed")
    packed.build([(None, 5, 3), (None, 7, 6), (None, 7, 2), None, None, None, None])
    named = tl.layers.MultiHeadAttention(2, 4, name="named")
    named.build((None, 5, 3), (None, 7, 6), (None, 7, 2))
    assert [tuple(w.shape) for w in packed.weights] == [tuple(w.shape) for w in named.weights]
    assert packed._keras_build_config(None) == {"shapes_dict": {
        "query_shape": [None, 5, 3], "value_shape": [None, 7, 6], "key_shape": [None, 7, 2]}}
    with pytest.raises(TypeError, match="needs `query_shape` and `value_shape`"):
        tl.layers.MultiHeadAttention(2, 4).build((None, 5, 3))
