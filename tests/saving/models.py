"""Small models for the `.keras` tests: one of each kind (Sequential, functional, subclassed),
together using every layer class in `tl.layers`, plus data for them."""
import numpy as np

import trainlib as tl
from trainlib import layers as L


@tl.saving.register_keras_serializable(package="tests")
class Scale(L.Layer):
    """A registered custom layer with its own weight and a constructor argument."""

    def __init__(self, init=2.0, **kwargs):
        super().__init__(**kwargs)
        self.init = init

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x):
        return x * self.w * self.init

    def get_config(self):
        return {**super().get_config(), "init": self.init}


@tl.saving.register_keras_serializable(package="tests")
class Tower(tl.Model):
    """A registered subclassed model with nested layers (a Sequential among them)."""

    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.embed = L.Embedding(10, 4)
        self.norm = L.LayerNormalization()
        self.pool = L.GlobalAveragePooling1D()
        self.block = tl.Sequential([L.Dense(5, activation="relu"), L.BatchNormalization(),
                                    L.Dropout(0.25)])
        self.scale = Scale(0.5)
        self.head = L.Dense(units)

    def call(self, x, training=False):
        h = self.pool(self.norm(self.embed(x)))
        return self.head(self.scale(self.block(h, training=training)))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def sequential():
    return tl.Sequential([L.Input(shape=(8, 8, 2)),
                          L.Conv2D(3, 3, activation="relu", padding="same"),
                          L.BatchNormalization(),
                          L.MaxPooling2D(),
                          L.AveragePooling2D(pool_size=2, strides=1),
                          L.Flatten(),
                          L.Dropout(0.3),
                          L.Dense(4),
                          Scale(),
                          L.Activation("tanh"),
                          L.Dense(2)], name="seq")


def functional():
    image = L.Input(shape=(8, 8, 2), name="image")
    tokens = L.Input(shape=(5,), dtype="int32", name="tokens")
    conv = L.Conv2D(2, 3, strides=2)(image)
    a = L.Dense(1)(L.GlobalMaxPooling2D()(conv))
    b = L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling2D()(L.BatchNormalization()(conv)))
    emb = L.Embedding(10, 3)(tokens)
    shared = L.Dense(2)
    c = shared(L.GlobalMaxPooling1D()(L.LayerNormalization()(emb)))
    seq = L.TimeDistributed(L.Dense(3))(emb)
    seq = L.RNN([L.SimpleRNNCell(3), L.LSTMCell(3)], return_sequences=True)(seq)
    seq = L.Bidirectional(L.GRU(2, return_sequences=True))(seq)
    seq = L.SimpleRNN(3, return_sequences=True)(L.LSTM(3, return_sequences=True)(seq))
    d = shared(L.GlobalAveragePooling1D()(seq))   # a layer called twice
    return tl.Model([image, tokens], [a, b, c, d], name="func")


def subclassed():
    return Tower(units=2, name="tower")


def data(kind, n=8, seed=0):
    """(x, y) for a model made by `kind()`."""
    rng = np.random.default_rng(seed)
    image = rng.normal(size=(n, 8, 8, 2)).astype(np.float32)
    tokens = rng.integers(0, 10, size=(n, 5)).astype(np.int32)
    if kind is sequential:
        return image, rng.normal(size=(n, 2)).astype(np.float32)
    if kind is functional:
        ys = [rng.normal(size=(n, 1)).astype(np.float32),
              rng.integers(0, 2, size=(n, 1)).astype(np.float32),
              rng.normal(size=(n, 2)).astype(np.float32),
              rng.normal(size=(n, 2)).astype(np.float32)]
        return [image, tokens], ys
    return tokens, rng.normal(size=(n, 2)).astype(np.float32)


def compiled(kind):
    """A model of `kind`, compiled with a loss/metric/optimizer mix, trained two steps."""
    model = kind()
    if kind is functional:
        model.compile(optimizer=tl.optim.Adam(learning_rate=0.01, amsgrad=True),
                      loss=["mse", tl.losses.BinaryCrossentropy(), tl.losses.Huber(delta=2.0),
                            tl.losses.mean_absolute_error],
                      loss_weights=[1.0, 0.5, 1.0, 2.0])
    elif kind is sequential:
        schedule = tl.optim.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
        model.compile(optimizer=tl.optim.SGD(schedule, momentum=0.9, nesterov=True), loss="mse",
                      metrics=["mae", tl.metrics.RootMeanSquaredError()])
    else:
        model.compile(optimizer=tl.optim.RMSprop(0.01, clipnorm=1.0),
                      loss=tl.losses.MeanSquaredError(),
                      metrics=[tl.losses.mean_absolute_error])
    x, y = data(kind)
    tl.random.set_seed(1)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    return model
