"""Keras 3 vs trainlib: attention, normalization, regularization and preprocessing layers give
Keras's outputs and input/weight gradients for the same weights and inputs (eagerly and in a
tl.function), and their configs round-trip."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close  # noqa: E402

CASES = []  # Keras-level module: no op types of its own
RTOL, ATOL = 1e-4, 1e-5
RNG = np.random.default_rng(7)


def _rand(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def _keras_run(layer, inputs, kwargs):
    ts = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        args, extra = _split(_arrange(ts, layer))
        out = layer(*args, **extra, **kwargs)
        out0 = out[0] if isinstance(out, (tuple, list)) else out
        w = tf.reshape(tf.sin(tf.cast(tf.range(tf.size(out0)), out0.dtype)), tf.shape(out0))
        loss = tf.reduce_sum(out0 * w)
    grads = tape.gradient(loss, ts + list(layer.trainable_weights))
    return out, grads


_ARRANGE = {}


def _arrange(ts, layer):
    return _ARRANGE.get(type(layer).__name__, lambda t: t)(ts)


def _split(arranged):
    """(positional args, keyword args): an arrangement may end with a dict of keywords."""
    if arranged and isinstance(arranged[-1], dict):
        return arranged[:-1], arranged[-1]
    return arranged, {}


def _tl_run(layer, inputs, kwargs, graph):
    def step(*xs):
        with tl.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            args, extra = _split(_arrange(list(xs), layer))
            out = layer(*args, **extra, **kwargs)
            out0 = out[0] if isinstance(out, (tuple, list)) else out
            n = tl.size(out0)
            w = tl.reshape(tl.sin(tl.cast(tl.range(n), out0.dtype)), tl.shape(out0))
            loss = tl.reduce_sum(out0 * w)
        return out, tape.gradient(loss, list(xs) + list(layer.trainable_weights))
    fn = tl.function(step) if graph else step
    return fn(*[tl.constant(x) for x in inputs])


def _compare(make, inputs, kwargs=None, arrange=None, grads=True):
    kwargs = kwargs or {}
    kl = make(keras)
    _ARRANGE[type(kl).__name__] = arrange or (lambda t: t)
    kout, kgrads = _keras_run(kl, inputs, kwargs)
    for graph in (False, True):
        tlayer = make(tl.keras)
        args, extra = _split(_arrange([tl.constant(x) for x in inputs], tlayer))
        tlayer(*args, **extra, **kwargs)
        kw, tw = kl.get_weights(), tlayer.get_weights()
        assert [w.shape for w in kw] == [w.shape for w in tw], "weight order/shapes differ"
        tlayer.set_weights(kw)
        tout, tgrads = _tl_run(tlayer, inputs, kwargs, graph)
        kouts = kout if isinstance(kout, (tuple, list)) else [kout]
        touts = tout if isinstance(tout, (tuple, list)) else [tout]
        for i, (a, b) in enumerate(zip(kouts, touts)):
            close(np.asarray(a), b.numpy(), f"output {i} graph={graph}", RTOL, ATOL)
        if grads:
            for i, (a, b) in enumerate(zip(kgrads, tgrads)):
                if a is None:
                    continue
                close(np.asarray(a), b.numpy(), f"gradient {i} graph={graph}", RTOL, ATOL)
    config = make(tl.keras).get_config()
    kconfig = kl.get_config()
    assert sorted(config) == sorted(kconfig), (sorted(config), sorted(kconfig))
    again = type(tlayer).from_config(tlayer.get_config())
    assert again.get_config() == tlayer.get_config()
    return tlayer


def _list(ts):
    return [ts]


def test_einsum_dense():
    _compare(lambda k: k.layers.EinsumDense("abc,cde->abde", output_shape=(None, 3, 4),
                                            bias_axes="de", activation="tanh"),
             [_rand(2, 5, 6)])
    _compare(lambda k: k.layers.EinsumDense("...b,bc->...c", output_shape=4, bias_axes="c"),
             [_rand(2, 3, 5)])


@pytest.mark.parametrize("kwargs", [
    {}, {"use_causal_mask": True}, {"return_attention_scores": True},
])
def test_multi_head_attention(kwargs):
    _compare(lambda k: k.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4),
             [_rand(2, 5, 6), _rand(2, 4, 7)],
             kwargs=kwargs)


def test_multi_head_attention_key_mask_and_axes():
    mask = (RNG.random((2, 5, 4)) > 0.3)
    mask[..., 0] = True
    _compare(lambda k: k.layers.MultiHeadAttention(num_heads=2, key_dim=3, output_shape=5),
             [_rand(2, 5, 6), _rand(2, 4, 6), _rand(2, 4, 3), mask.astype(np.float32)],
             arrange=lambda ts: [ts[0], ts[1], ts[2], {"attention_mask": ts[3] > 0.5}],
             kwargs={"return_attention_scores": True})
    _compare(lambda k: k.layers.MultiHeadAttention(num_heads=2, key_dim=2,
                                                   attention_axes=(1, 2)),
             [_rand(2, 3, 4, 5), _rand(2, 3, 4, 5)], kwargs={"return_attention_scores": True})


@pytest.mark.parametrize("make", [
    lambda k: k.layers.Attention(),
    lambda k: k.layers.Attention(use_scale=True, score_mode="concat"),
    lambda k: k.layers.AdditiveAttention(),
])
def test_dense_attention(make):
    _compare(make, [_rand(2, 3, 4), _rand(2, 5, 4), _rand(2, 5, 4)],
             arrange=lambda ts: [list(ts)], kwargs={"use_causal_mask": False})
    _compare(make, [_rand(2, 5, 4), _rand(2, 5, 4), (np.arange(5) < [[3], [5]]).astype(np.float32)],
             arrange=lambda ts: [list(ts[:2]), {"mask": [None, ts[2] > 0.5]}],
             kwargs={"use_causal_mask": True, "return_attention_scores": True})


def test_group_and_unit_normalization():
    def make(k):
        return k.layers.GroupNormalization(groups=2, gamma_initializer="random_normal",
                                           beta_initializer="random_normal")
    _compare(make, [_rand(3, 4, 5, 6)])
    _compare(lambda k: k.layers.GroupNormalization(groups=-1, axis=1), [_rand(3, 4, 5)])
    _compare(lambda k: k.layers.UnitNormalization(axis=(1, 2)), [_rand(3, 4, 5)])


def test_preprocessing_deterministic():
    _compare(lambda k: k.layers.Rescaling(1 / 255.0, offset=-1.0), [_rand(2, 3, 4)])
    _compare(lambda k: k.layers.CenterCrop(2, 3), [_rand(2, 5, 6, 3)])
    _compare(lambda k: k.layers.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0]),
             [_rand(4, 3)])
    _compare(lambda k: k.layers.Normalization(axis=None, mean=2.0, variance=4.0, invert=True),
             [_rand(4, 3)])
    # identity at inference, active when training
    _compare(lambda k: k.layers.RandomFlip(seed=1), [_rand(2, 4, 4, 3)], kwargs={"training": False})
    _compare(lambda k: k.layers.AlphaDropout(0.3, seed=1), [_rand(2, 4)],
             kwargs={"training": False})


def test_normalization_adapt_matches_keras():
    data = _rand(40, 3, 2) * 3 + 1
    kl, tlayer = keras.layers.Normalization(axis=(1, 2)), tl.keras.layers.Normalization(axis=(1, 2))
    kl.adapt(data)
    tlayer.adapt(tl.data.Dataset.from_tensor_slices(data).batch(7))
    close(kl(data), tlayer(data), "adapted")
    assert [w.shape for w in kl.get_weights()] == [w.shape for w in tlayer.get_weights()]


def test_integer_encoders():
    ids = RNG.integers(0, 5, size=(4, 3)).astype(np.int32)
    for mode in ("multi_hot", "count"):
        close(keras.layers.CategoryEncoding(5, mode)(ids),
              tl.keras.layers.CategoryEncoding(5, mode)(ids), mode)
    close(keras.layers.CategoryEncoding(5, "one_hot")(ids[:, 0]),
          tl.keras.layers.CategoryEncoding(5, "one_hot")(ids[:, 0]), "one_hot")
    x = _rand(3, 4)
    for mode in ("int", "one_hot"):
        kd = keras.layers.Discretization([-0.5, 0.0, 1.0], output_mode=mode)
        td = tl.keras.layers.Discretization([-0.5, 0.0, 1.0], output_mode=mode)
        close(kd(x[0] if mode == "one_hot" else x), td(x[0] if mode == "one_hot" else x), mode)
        assert sorted(kd.get_config()) == sorted(td.get_config())


def test_random_color_layers_identity_and_config():
    _compare(lambda k: k.layers.RandomBrightness(0.2, seed=1), [_rand(2, 4, 4, 3)],
             kwargs={"training": False})
    _compare(lambda k: k.layers.RandomContrast((0.1, 0.3), value_range=(-5, 5), seed=1),
             [_rand(2, 4, 4, 3)], kwargs={"training": False})
    for name, kwargs in [("RandomBrightness", {"factor": (-0.3, 0.1)}),
                         ("RandomContrast", {"factor": 0.4}), ("RandomFlip", {"mode": "vertical"})]:
        kc = getattr(keras.layers, name)(**kwargs).get_config()
        tc = getattr(tl.keras.layers, name)(**kwargs).get_config()
        assert sorted(kc) == sorted(tc), name
        assert tuple(kc.get("factor", ())) == tuple(tc.get("factor", ())), name


def test_random_contrast_range_as_keras():
    """Keras 3 draws contrast factors in [1 - lower, 1 + upper] of its (lower, upper) factor."""
    x = (RNG.random((64, 4, 4, 1)) * 100 + 50).astype(np.float32)
    for k in (keras, tl.keras):
        layer = k.layers.RandomContrast(0.5, seed=3)
        y = np.asarray(layer(x, training=True))
        mean = x.mean(axis=(1, 2), keepdims=True)
        f = ((y - mean) / (x - mean))[:, 0, 0, 0]
        assert f.min() >= 1.0 - 1e-3 and f.max() <= 1.5 + 1e-3 and f.std() > 0.05


def test_integer_lookup_as_keras():
    data = RNG.integers(0, 9, size=(30,))
    x = np.array([[0, 3, 8, 11], [5, 5, 100, 2]])
    for kwargs in [{}, {"num_oov_indices": 2}, {"mask_token": 0}, {"max_tokens": 5},
                   {"output_mode": "multi_hot"}]:
        kl, tlayer = keras.layers.IntegerLookup(**kwargs), tl.keras.layers.IntegerLookup(**kwargs)
        kl.adapt(data)
        tlayer.adapt(data)
        assert [int(v) for v in kl.get_vocabulary()] == tlayer.get_vocabulary(), kwargs
        close(kl(x), tlayer(x), str(kwargs))
        assert sorted(kl.get_config()) == sorted(tlayer.get_config())
    kl = keras.layers.IntegerLookup(vocabulary=[4, 2, 7], invert=True)
    tlayer = tl.keras.layers.IntegerLookup(vocabulary=[4, 2, 7], invert=True)
    close(kl(np.array([0, 1, 2, 3])), tlayer(np.array([0, 1, 2, 3])), "invert")


def test_attention_model_trains_as_keras():
    from ._common import close_optimizers, fit_both, pair  # noqa: PLC0415

    def build(k):
        x = k.Input((6, 4))
        h = k.layers.MultiHeadAttention(2, 3, seed=1)(x, x, use_causal_mask=True)
        h = k.layers.GroupNormalization(2)(h)
        h = k.layers.Attention(use_scale=True)([h, x])
        h = k.layers.UnitNormalization()(h)
        h = k.layers.GlobalAveragePooling1D()(h)
        return k.Model(x, k.layers.Dense(3, activation="softmax")(h))

    def compile_kwargs(k):
        # SGD: the key bias's gradient is zero up to rounding (softmax is shift invariant),
        # which Adam would scale up to full steps of noise
        return dict(optimizer=k.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                    metrics=["accuracy"])
    km, tm = pair(build, compile_kwargs)
    x = _rand(20, 6, 4)
    y = RNG.integers(0, 3, size=(20,))
    fit_both(km, tm, x, y, epochs=2, batch_size=5)
    close_optimizers(km.optimizer, tm.optimizer)
    close(km.predict(x, verbose=0), tm.predict(x, verbose=0), "predict")


@pytest.mark.parametrize("kwargs", [{}, {"use_causal_mask": True},
                                    {"return_attention_scores": True}])
def test_grouped_query_attention(kwargs):
    _compare(lambda k: k.layers.GroupQueryAttention(head_dim=3, num_query_heads=4,
                                                      num_key_value_heads=2),
             [_rand(2, 5, 6), _rand(2, 4, 7)], kwargs=kwargs)


def test_discretization_adapt_matches_keras_quantiles():
    x = RNG.normal(size=(1000,)).astype(np.float32)
    for num_bins, epsilon, data in ((4, 0.01, x), (3, 0.01, [x[:300].reshape(-1, 3), x[300:]]),
                                    (5, 0.05, tl.data.Dataset.from_tensor_slices(x).batch(128))):
        kd = keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
        td = tl.keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
        kd.adapt(data if isinstance(data, (list, np.ndarray)) else   # the same batches
                 [x[i:i + 128] for i in range(0, len(x), 128)])
        td.adapt(data)
        close(kd.bin_boundaries, td.bin_boundaries, f"boundaries for {num_bins} bins")
        ko, to = kd(x[:7]), td(x[:7])
        assert to.numpy().dtype == np.asarray(ko).dtype == np.int32
        np.testing.assert_array_equal(np.asarray(ko), to.numpy())
        assert kd.get_config() == {**td.get_config(), "name": kd.name}


def test_hashing_integers_floats_and_strings_match_keras():
    ints = np.array([[0, 1, 2, -7], [123456789, 42, 0, 99]], np.int64)
    for kwargs in ({"num_bins": 5}, {"num_bins": 7, "mask_value": 0},
                   {"num_bins": 4, "output_mode": "multi_hot"},
                   {"num_bins": 4, "output_mode": "count", "mask_value": 42}):
        k, t = keras.layers.Hashing(**kwargs), tl.keras.layers.Hashing(**kwargs)
        np.testing.assert_array_equal(np.asarray(k(ints)), t(ints).numpy())
        np.testing.assert_array_equal(np.asarray(k(ints[:, :2].astype(np.int32))),
                                      tl.function(lambda v: t(v))(ints[:, :2].astype(np.int32)))
        kc, tc = k.get_config(), t.get_config()
        assert {**kc, "name": None} == {**tc, "name": None}
    floats = np.array([1.7, -2.2, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(keras.layers.Hashing(9)(floats)),
                                  tl.keras.layers.Hashing(9)(floats).numpy())
    words = np.array([["a", "bb"], ["", "hello"]])
    np.testing.assert_array_equal(np.asarray(keras.layers.Hashing(11)(words)),
                                  tl.keras.layers.Hashing(11)(words).numpy())
