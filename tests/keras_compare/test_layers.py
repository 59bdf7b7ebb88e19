"""Keras 3 vs trainlib: layers trained in fit, their outputs in both modes, configs, summaries
and the initializers' distributions.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, close_optimizers, close_weights, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(3)
IMAGES = RNG.normal(size=(14, 10, 10, 2)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=(14,))


def _adam(k):
    return dict(optimizer=k.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                metrics=["accuracy"])


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("strides", [1, 2])
def test_conv_pooling_stack(padding, strides):
    def build(k):
        return k.Sequential([
            k.layers.Input((10, 10, 2)),
            k.layers.Conv2D(3, 3, strides=strides, padding=padding, activation="relu"),
            k.layers.MaxPooling2D(2, padding=padding),
            k.layers.Conv2D(4, (2, 1), padding="same"),
            k.layers.AveragePooling2D((1, 2), strides=1, padding=padding),
            k.layers.Flatten(), k.layers.Dense(3, activation="softmax")])
    km, tm = pair(build, _adam)
    fit_both(km, tm, IMAGES, LABELS, epochs=1, batch_size=5)
    close_optimizers(km.optimizer, tm.optimizer)
    close(km.predict(IMAGES, verbose=0), tm.predict(IMAGES, verbose=0), "predict")


def test_batch_normalization_moving_statistics_and_modes():
    def build(k):
        return k.Sequential([k.layers.Input((10, 10, 2)), k.layers.Conv2D(3, 3),
                             k.layers.BatchNormalization(momentum=0.9, epsilon=1e-2),
                             k.layers.Activation("relu"), k.layers.GlobalAveragePooling2D(),
                             k.layers.Dense(3)])
    km, tm = pair(build, lambda k: dict(
        optimizer=k.optimizers.SGD(0.05),
        loss=k.losses.SparseCategoricalCrossentropy(from_logits=True)))
    fit_both(km, tm, IMAGES, LABELS, epochs=2, batch_size=5)
    close_weights(km.get_weights(), tm.get_weights(), "weights with moving statistics")
    close(km(IMAGES, training=True), tm(IMAGES, training=True), "training-mode outputs")
    close(km(IMAGES, training=False), tm(IMAGES, training=False), "inference outputs")


def test_embedding_layer_normalization_global_pooling_dropout():
    def build(k):
        return k.Sequential([k.layers.Input((6,), dtype="int32"), k.layers.Embedding(10, 4),
                             k.layers.LayerNormalization(), k.layers.GlobalAveragePooling1D(),
                             k.layers.Dropout(0.0), k.layers.Dense(3, activation="softmax")])
    tokens = RNG.integers(0, 10, size=(14, 6))
    # SGD: with Adam/RMSprop/Adagrad Keras's TF backend squares each occurrence's
    # IndexedSlices gradient separately when an index repeats in a batch (see the report)
    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.5),
                                        loss="sparse_categorical_crossentropy",
                                        metrics=["accuracy"]))
    fit_both(km, tm, tokens, LABELS, epochs=2, batch_size=5)


def test_embedding_with_adam_on_distinct_indices():
    def build(k):
        return k.Sequential([k.layers.Input((1,), dtype="int32"), k.layers.Embedding(14, 4),
                             k.layers.Flatten(), k.layers.Dense(3, activation="softmax")])
    km, tm = pair(build, _adam)
    fit_both(km, tm, np.arange(14).reshape(14, 1), LABELS, epochs=2, batch_size=5)


def test_activations_by_name():
    def build(k):
        names = ["relu", "tanh", "sigmoid", "gelu", "elu", "selu", "softplus", "swish",
                 "leaky_relu", "linear", "exponential"]
        layers = [k.layers.Input((4,))]
        for name in names:
            layers.append(k.layers.Dense(4, activation=name))
        layers.append(k.layers.Dense(2, activation="softmax"))
        return k.Sequential(layers)
    km, tm = pair(build, lambda k: dict(optimizer="sgd", loss="categorical_crossentropy"))
    x = RNG.normal(size=(10, 4)).astype(np.float32) * 0.5
    y = np.eye(2, dtype=np.float32)[RNG.integers(0, 2, 10)]
    fit_both(km, tm, x, y, epochs=1, batch_size=4)
    for name in ("relu", "gelu", "elu", "selu", "softplus", "swish", "leaky_relu", "softmax",
                 "sigmoid", "tanh", "log_softmax"):
        close(keras.layers.Activation(name)(x * 4), tl.layers.Activation(name)(x * 4), name)


def test_dropout_statistics():
    x = np.ones((4000, 10), np.float32)
    for rate in (0.2, 0.5):
        k = np.asarray(keras.layers.Dropout(rate)(x, training=True))
        t = tl.layers.Dropout(rate)(x, training=True).numpy()
        assert set(np.unique(t)) <= {0.0, np.float32(1 / (1 - rate))}
        assert abs((t == 0).mean() - (k == 0).mean()) < 0.02
        assert np.array_equal(tl.layers.Dropout(rate)(x, training=False).numpy(), x)


LAYERS = {
    "Dense": lambda L: L.Dense(3, activation="relu", name="x"),
    "Conv2D": lambda L: L.Conv2D(2, 3, strides=2, padding="same", name="x"),
    "MaxPooling2D": lambda L: L.MaxPooling2D(name="x"),
    "AveragePooling2D": lambda L: L.AveragePooling2D(3, strides=1, name="x"),
    "Flatten": lambda L: L.Flatten(name="x"),
    "Dropout": lambda L: L.Dropout(0.3, name="x"),
    "BatchNormalization": lambda L: L.BatchNormalization(momentum=0.9, name="x"),
    "LayerNormalization": lambda L: L.LayerNormalization(epsilon=1e-5, name="x"),
    "Embedding": lambda L: L.Embedding(5, 2, name="x"),
    "Activation": lambda L: L.Activation("tanh", name="x"),
    "GlobalAveragePooling1D": lambda L: L.GlobalAveragePooling1D(name="x"),
    "GlobalAveragePooling2D": lambda L: L.GlobalAveragePooling2D(keepdims=True, name="x"),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_configs(name):
    k = LAYERS[name](keras.layers).get_config()
    t = LAYERS[name](tl.layers).get_config()
    assert t == k


def _summary(model):
    lines = []
    model.summary(print_fn=lambda text, **kwargs: lines.append(text))
    return "\n".join(lines).rstrip("\n")


def test_summaries(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")

    def sequential(k):
        return k.Sequential([k.layers.Input((8, 8, 2)),
                             k.layers.Conv2D(3, 3, activation="relu", name="conv2d"),
                             k.layers.BatchNormalization(name="batch_normalization"),
                             k.layers.MaxPooling2D(name="max_pooling2d"),
                             k.layers.Flatten(name="flatten"), k.layers.Dropout(0.5, name="dropout"),
                             k.layers.Dense(10, activation="softmax", name="dense")], name="seq")

    def chain(k):
        i = k.layers.Input((5,), name="inp")
        return k.Model(i, k.layers.Dense(2, name="out")(k.layers.Dense(3, name="hid")(i)),
                       name="chain")

    def branches(k):
        i = k.layers.Input((5,), name="inp2")
        h = k.layers.Dense(3, name="h1")(i)
        return k.Model(i, [k.layers.Dense(2, name="a")(h), k.layers.Dense(2, name="b")(h)],
                       name="branchy")

    for build in (sequential, chain, branches):
        km, tm = build(keras), build(tl.keras)
        assert _summary(tm) == _summary(km)
        assert tm.count_params() == km.count_params()
    km, tm = sequential(keras), sequential(tl.keras)
    for model, k in ((km, keras), (tm, tl.keras)):
        model.compile("adam", "mse")
        model.fit(np.ones((4, 8, 8, 2), "float32"), np.ones((4, 10), "float32"), verbose=0)
    assert _summary(tm) == _summary(km)   # with the optimizer's parameters


def _draws(k, name, shape, **kwargs):
    init = getattr(k.initializers, name)(**kwargs)
    return np.asarray(init(shape))


@pytest.mark.parametrize("name,shape", [("GlorotUniform", (60, 40)), ("GlorotNormal", (60, 40)),
                                        ("HeUniform", (3, 3, 8, 16)), ("HeNormal", (3, 3, 8, 16)),
                                        ("LecunNormal", (50, 30)), ("RandomUniform", (40, 40)),
                                        ("RandomNormal", (40, 40)), ("TruncatedNormal", (40, 40))])
def test_initializer_distributions(name, shape):
    k, t = _draws(keras, name, shape), _draws(tl.keras, name, shape)
    assert k.shape == t.shape and t.dtype == np.float32
    if "Uniform" in name or "Normal" in name and name != "RandomNormal":
        # bounds: uniform limits and the truncation at two standard deviations
        assert t.min() >= 1.05 * k.min() - 1e-3 and t.max() <= 1.05 * k.max() + 1e-3
    assert abs(t.std() - k.std()) < 0.12 * k.std()
    assert abs(t.mean() - k.mean()) < 0.15 * k.std()
    kc = getattr(keras.initializers, name)().get_config()
    tc = getattr(tl.initializers, name)().get_config()
    assert tc == kc
