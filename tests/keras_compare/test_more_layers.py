"""Keras 3 vs trainlib for the later layers (RMSNormalization, SpectralNormalization,
adaptive pooling, ReversibleEmbedding, HashedCrossing, Pipeline, ...): with Keras's
weights copied in, the same inputs give Keras's outputs and input/weight gradients,
eagerly and inside tl.function, and each layer's config equals Keras's and survives
from_config."""
import json

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, functional_shapes  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RTOL, ATOL = 1e-4, 1e-5

# name -> (constructor over a layers module, input shapes, call kwargs)
LAYERS = {
    "RMSNormalization": (lambda L: L.RMSNormalization(), [(2, 3, 5)], {}),
    "RMSNormalization_axes": (lambda L: L.RMSNormalization(axis=[1, 2], epsilon=1e-3),
                              [(2, 3, 4)], {}),
    "SpectralNormalization_dense": (lambda L: L.SpectralNormalization(L.Dense(4)),
                                    [(3, 5)], {}),
    "SpectralNormalization_dense_training": (
        lambda L: L.SpectralNormalization(L.Dense(4), power_iterations=3), [(3, 5)],
        {"training": True}),
    "SpectralNormalization_conv_training": (
        lambda L: L.SpectralNormalization(L.Conv2D(3, 2)), [(2, 5, 5, 2)],
        {"training": True}),
    "AdaptiveAveragePooling1D": (lambda L: L.AdaptiveAveragePooling1D(3), [(2, 7, 3)], {}),
    "AdaptiveMaxPooling1D_channels_first": (
        lambda L: L.AdaptiveMaxPooling1D(4, data_format="channels_first"), [(2, 3, 5)], {}),
    "AdaptiveAveragePooling2D": (lambda L: L.AdaptiveAveragePooling2D((2, 3)), [(2, 5, 7, 2)],
                                 {}),
    "AdaptiveMaxPooling2D_channels_first": (
        lambda L: L.AdaptiveMaxPooling2D(3, data_format="channels_first"), [(2, 2, 6, 4)], {}),
    "AdaptiveAveragePooling3D": (lambda L: L.AdaptiveAveragePooling3D(2), [(1, 3, 4, 5, 2)], {}),
    "AdaptiveMaxPooling3D": (lambda L: L.AdaptiveMaxPooling3D((3, 2, 2)), [(1, 4, 3, 5, 2)], {}),
    "ReversibleEmbedding_reverse_tied": (lambda L: L.ReversibleEmbedding(7, 4), [(2, 3, 4)],
                                         {"reverse": True}),
    "ReversibleEmbedding_reverse_untied_capped": (
        lambda L: L.ReversibleEmbedding(7, 4, tie_weights=False, logit_soft_cap=0.5,
                                        embeddings_initializer="random_normal"),
        [(3, 4)], {"reverse": True}),
    "Pipeline": (lambda L: L.Pipeline([L.Dense(3), L.Rescaling(0.5, offset=1.0),
                                       L.Dense(2, activation="tanh")]), [(2, 4)], {}),
}


def _inputs(name, shapes):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    return [rng.normal(size=s).astype(np.float32) for s in shapes]


def _arg(xs):
    return xs if len(xs) > 1 else xs[0]


def _keras_run(layer, xs, cot, kwargs):
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(ts)
        y = layer(_arg(ts), **kwargs)
        loss = tf.reduce_sum(y * cot)
    grads = tape.gradient(loss, ts + list(layer.trainable_weights))
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


def _tl_step(layer, ts, cot, kwargs):
    with tl.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = layer(_arg(ts), **kwargs)
        loss = tl.reduce_sum(y * cot)
    return y, tape.gradient(loss, ts + list(layer.trainable_weights))


def _numpy(y, grads):
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


def _comparable(config):
    """A config as JSON would hold it, without names and build records (a wrapped layer's
    name and build shape are its own)."""
    config = json.loads(json.dumps(config))
    config.pop("name")
    inner = [config["layer"]] if isinstance(config.get("layer"), dict) else \
        config.get("layers", []) if isinstance(config.get("layers"), list) else []
    for layer in inner:
        layer["config"].pop("name")
        layer.pop("build_config", None)
        layer["config"].pop("quantization_config", None)
    return config


def compare_layer(name, make, xs, kwargs, rtol=RTOL, atol=ATOL):
    """Builds both layers on `xs`, copies Keras's weights, and compares outputs, gradients
    and weights afterwards (eager, then graph from the same starting weights), and configs."""
    klayer, tlayer = make(keras.layers), make(tl.layers)
    klayer(_arg([tf.constant(x) for x in xs]), **kwargs)
    tlayer(_arg([tl.constant(x) for x in xs]), **kwargs)
    kweights = [np.array(w) for w in klayer.get_weights()]
    assert [w.shape for w in kweights] == [tuple(w.shape) for w in tlayer.get_weights()], \
        "weight order or shapes differ"
    tlayer.set_weights(kweights)
    kout = klayer(_arg([tf.constant(x) for x in xs]), **kwargs)
    cot = np.random.default_rng(1).normal(size=kout.shape).astype(np.float32)
    klayer.set_weights(kweights)
    ky, kgrads = _keras_run(klayer, xs, cot, kwargs)
    kafter = klayer.get_weights()
    ty, tgrads = _numpy(*_tl_step(tlayer, [tl.constant(x) for x in xs], cot, kwargs))
    close(ky, ty, f"{name} eager output", rtol, atol)
    for i, (a, b) in enumerate(zip(kgrads, tgrads)):
        assert (a is None) == (b is None), f"{name} gradient {i}: keras {a is None}, tl {b is None}"
        if a is not None:
            close(a, b, f"{name} gradient {i}", rtol, atol)
    for i, (a, b) in enumerate(zip(kafter, tlayer.get_weights())):
        close(a, b, f"{name} weight {i} after the call", rtol, atol)

    tlayer.set_weights(kweights)
    graph_step = tl.function(lambda *ts: _tl_step(tlayer, list(ts), cot, kwargs))
    gy, ggrads = _numpy(*graph_step(*[tl.constant(x) for x in xs]))
    close(ky, gy, f"{name} graph output", rtol, atol)
    for i, (a, b) in enumerate(zip(kgrads, ggrads)):
        if a is not None:
            close(a, b, f"{name} graph gradient {i}", rtol, atol)
    for i, (a, b) in enumerate(zip(kafter, tlayer.get_weights())):
        close(a, b, f"{name} graph weight {i} after the call", rtol, atol)

    assert _comparable(tlayer.get_config()) == _comparable(klayer.get_config())
    again = type(tlayer).from_config(tlayer.get_config())
    assert _comparable(again.get_config()) == _comparable(tlayer.get_config())
    return klayer, tlayer


SYMBOLIC = {"RMSNormalization": [(None, 3, 5)], "SpectralNormalization_dense": [(None, 5)],
            "SpectralNormalization_conv_training": [(None, 5, 5, 2)],
            "AdaptiveAveragePooling2D": [(None, 5, 7, 2)],
            "AdaptiveMaxPooling1D_channels_first": [(None, 3, 5)]}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_outputs_gradients_and_config_match_keras(name):
    make, shapes, kwargs = LAYERS[name]
    compare_layer(name, make, _inputs(name, shapes), kwargs)
    if name in SYMBOLIC:    # symbolic shape inference in the functional API
        kshape, tshape = functional_shapes(make, SYMBOLIC[name])
        assert tshape == kshape


def test_input_spec_config_matches_keras():
    for kwargs in ({"ndim": 3, "axes": {-1: 4}}, {"shape": (None, 2), "dtype": "int32"},
                   {"min_ndim": 2, "max_ndim": 4}):
        kspec, tspec = keras.layers.InputSpec(**kwargs), tl.keras.layers.InputSpec(**kwargs)
        assert tspec.get_config() == kspec.get_config()
        assert repr(tspec) == repr(kspec)


def test_reversible_embedding_forward_and_mask_match_keras():
    make = lambda L: L.ReversibleEmbedding(6, 3, mask_zero=True)  # noqa: E731
    klayer, tlayer = make(keras.layers), make(tl.keras.layers)
    ids = np.array([[1, 0, 5], [2, 3, 0]])
    kout = klayer(ids)
    tlayer(ids)
    tlayer.set_weights(klayer.get_weights())
    tout = tlayer(ids)
    close(np.asarray(kout), tout.numpy(), "forward lookup")
    np.testing.assert_array_equal(np.asarray(kout._keras_mask), tout._keras_mask.numpy())
    kshape, tshape = functional_shapes(make, [(None, 5)], "int32")
    assert tshape == kshape


@pytest.mark.parametrize("mode", ["int", "one_hot"])
def test_hashed_crossing_matches_keras(mode):
    ints = np.array([1, -4, 7, 2 ** 35])
    small = np.array([3, 3, 0, 9], np.int32)
    words = np.array(["a", "bc", "", "a longer word"])
    klayer = keras.layers.HashedCrossing(11, output_mode=mode)
    tlayer = tl.keras.layers.HashedCrossing(11, output_mode=mode)
    for inputs in ((ints, small), (ints[:, None], words[:, None]), (words, small, ints),
                   (np.array(5), np.array("x"))):
        want = np.asarray(klayer(tuple(tf.constant(x) for x in inputs)))
        got = tlayer(tuple(tl.constant(x) for x in inputs))
        assert got.dtype.name == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    graph = tl.function(lambda a, b: tlayer((a, b)))
    np.testing.assert_array_equal(graph(ints, small).numpy(),
                                  np.asarray(klayer((tf.constant(ints), tf.constant(small)))))
    kconfig, tconfig = klayer.get_config(), tlayer.get_config()
    assert {k: v for k, v in tconfig.items() if k != "name"} == \
        {k: v for k, v in kconfig.items() if k != "name"}
    assert tl.keras.layers.HashedCrossing.from_config(tconfig).get_config() == tconfig
    kshape, tshape = functional_shapes(
        lambda L: L.HashedCrossing(11, output_mode=mode), [(None, 1), (None, 1)], "int64")
    assert tshape == kshape
