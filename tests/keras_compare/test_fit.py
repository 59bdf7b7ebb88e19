"""Keras 3 vs trainlib: fit options, callbacks, the *_on_batch methods and the model kinds.

Every fit is compared batch by batch (logs, weights), epoch by epoch (History,
the order of callback events including validation's test hooks).
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import (close, close_logs, close_optimizers, close_weights, fit_both,  # noqa: E402
                      pair)

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(1)
X = RNG.normal(size=(30, 4)).astype(np.float32)
Y = RNG.integers(0, 3, size=(30,))
Y_REG = RNG.normal(size=(30, 2)).astype(np.float32)


def _mlp(k):
    return k.Sequential([k.layers.Input(shape=(4,)), k.layers.Dense(8, activation="relu"),
                         k.layers.Dense(3, activation="softmax")])


def _compiled(lr=0.5, **extra):
    return lambda k: dict(optimizer=k.optimizers.SGD(lr), loss="sparse_categorical_crossentropy",
                          metrics=["accuracy"], **extra)


FIT_OPTIONS = {
    "partial_last_batch": dict(epochs=2, batch_size=7),
    "validation_split": dict(epochs=2, batch_size=8, validation_split=0.3),
    "validation_data": dict(epochs=2, batch_size=8, validation_data=(X[:9], Y[:9])),
    "validation_batch_size": dict(epochs=2, batch_size=8, validation_data=(X[:9], Y[:9]),
                                  validation_batch_size=4),
    "validation_freq": dict(epochs=3, batch_size=8, validation_data=(X[:9], Y[:9]),
                            validation_freq=2),
    "initial_epoch": dict(epochs=3, initial_epoch=1, batch_size=8),
    "class_weight": dict(epochs=1, batch_size=8, class_weight={0: 1.0, 1: 2.0, 2: 0.5}),
    "sample_weight": dict(epochs=1, batch_size=8, sample_weight=RNG.random(30).astype("float32")),
    "steps_per_epoch": dict(epochs=2, batch_size=8, steps_per_epoch=2),
    "steps_per_epoch_uneven": dict(epochs=4, batch_size=8, steps_per_epoch=3),
    "validation_steps": dict(epochs=3, batch_size=4, validation_data=(X[:12], Y[:12]),
                             validation_steps=2),
    "default_batch_size": dict(epochs=2),
}


@pytest.mark.parametrize("name", sorted(FIT_OPTIONS))
def test_fit_options(name):
    km, tm = pair(_mlp, _compiled())
    fit_both(km, tm, X, Y, **FIT_OPTIONS[name])
    close_optimizers(km.optimizer, tm.optimizer)


def test_steps_per_execution():
    km, tm = pair(_mlp, _compiled(steps_per_execution=2))
    fit_both(km, tm, X, Y, epochs=2, batch_size=7)
    close(km.evaluate(X, Y, verbose=0), tm.evaluate(X, Y, verbose=0), "evaluate")


CALLBACKS = {
    "early_stopping_patience": (lambda k: [k.callbacks.EarlyStopping(patience=1)],
                                dict(validation_split=0.25)),
    "early_stopping_restore": (lambda k: [k.callbacks.EarlyStopping(
        patience=2, restore_best_weights=True)], dict(validation_split=0.25, lr=2.0)),
    "early_stopping_min_delta_max": (lambda k: [k.callbacks.EarlyStopping(
        monitor="val_accuracy", min_delta=0.05, patience=1)], dict(validation_split=0.25)),
    "early_stopping_baseline": (lambda k: [k.callbacks.EarlyStopping(
        monitor="loss", baseline=0.1, patience=2)], dict(lr=0.1)),
    "early_stopping_start_from_epoch": (lambda k: [k.callbacks.EarlyStopping(
        monitor="loss", min_delta=0.5, start_from_epoch=2)], {}),
    "reduce_lr_on_plateau": (lambda k: [k.callbacks.ReduceLROnPlateau(
        patience=1, factor=0.5, min_delta=0.01, cooldown=1, min_lr=0.05)],
        dict(validation_split=0.25)),
    "learning_rate_scheduler": (lambda k: [k.callbacks.LearningRateScheduler(
        lambda epoch, lr: lr * 0.5 if epoch > 0 else lr)], {}),
}


@pytest.mark.parametrize("name", sorted(CALLBACKS))
def test_callbacks(name):
    make, options = CALLBACKS[name]
    options = dict(options)
    km, tm = pair(_mlp, _compiled(options.pop("lr", 0.5)))
    fit_both(km, tm, X, Y, epochs=7, batch_size=8, keras_callbacks=make(keras),
             tl_callbacks=make(tl.keras), **options)
    close_weights(km.get_weights(), tm.get_weights(), "final weights")
    close_optimizers(km.optimizer, tm.optimizer)


def test_on_batch_methods_and_evaluate_returns():
    def build(k):
        return k.Sequential([k.layers.Input((4,)), k.layers.Dense(6),
                             k.layers.BatchNormalization(momentum=0.8),
                             k.layers.Activation("relu"), k.layers.Dense(3, activation="softmax")])
    for metrics in ([], ["accuracy"], ["accuracy", "sparse_categorical_accuracy"]):
        km, tm = pair(build, lambda k: dict(optimizer="sgd", loss="sparse_categorical_crossentropy",
                                            metrics=list(metrics)))
        for method, args in (("train_on_batch", (X[:8], Y[:8])), ("test_on_batch", (X[8:], Y[8:])),
                             ("train_on_batch", (X[8:], Y[8:]))):
            for return_dict in (False, True):
                k = getattr(km, method)(*args, return_dict=return_dict)
                t = getattr(tm, method)(*args, return_dict=return_dict)
                assert type(k) is type(t), (method, k, t)
                if return_dict:
                    close_logs(k, t, method)
                else:
                    close(k, t, method)
        k, t = km.predict_on_batch(X), tm.predict_on_batch(X)
        assert type(k) is type(t)
        close(k, t, "predict_on_batch")
        for batch_size in (5, 30):
            k = km.evaluate(X, Y, batch_size=batch_size, verbose=0)
            t = tm.evaluate(X, Y, batch_size=batch_size, verbose=0)
            assert type(k) is type(t), (k, t)
            close(k, t, "evaluate")
        close(km(X, training=True), tm(X, training=True), "training-mode call")
        close(km(X, training=False), tm(X, training=False), "inference call")
        close_weights(km.get_weights(), tm.get_weights(), "weights (moving statistics)")
        close_optimizers(km.optimizer, tm.optimizer)


def test_callback_params_and_history():
    params = {}

    def recorder(k, key):
        class P(k.callbacks.Callback):
            def on_train_begin(self, logs=None):
                params[key] = dict(self.params)
        return P()

    km, tm = pair(_mlp, _compiled())
    kh = km.fit(X, Y, epochs=2, batch_size=8, verbose=0, callbacks=[recorder(keras, "k")],
                shuffle=False, validation_split=0.2)
    th = tm.fit(X, Y, epochs=2, batch_size=8, verbose=0, callbacks=[recorder(tl.keras, "t")],
                shuffle=False, validation_split=0.2)
    assert params["k"] == params["t"]
    assert kh.params == th.params and km.history is kh and tm.history is th
    close(km.predict(X, verbose=0), tm.predict(X, verbose=0), "predict")


def _functional(k):
    inputs = k.layers.Input((4,))
    h = k.layers.Dense(6, activation="tanh")(inputs)
    h = k.layers.Dense(6, activation="gelu")(h)
    return k.Model(inputs, k.layers.Dense(2)(k.layers.Dense(4, activation="elu")(h)))


def _subclassed(k):
    class Net(k.Model):
        def __init__(self):
            super().__init__()
            self.d1 = k.layers.Dense(7, activation="selu")
            self.bn = k.layers.BatchNormalization(momentum=0.9)
            self.d2 = k.layers.Dense(2, activation="softplus")

        def call(self, x, training=False):
            return self.d2(self.bn(self.d1(x), training=training))
    model = Net()
    model(X[:2])
    return model


@pytest.mark.parametrize("build", [_functional, _subclassed], ids=["functional", "subclassed"])
def test_model_kinds(build):
    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.RMSprop(0.01), loss="huber",
                                        metrics=["mae"]))
    fit_both(km, tm, X, Y_REG, epochs=2, batch_size=8)
    close_optimizers(km.optimizer, tm.optimizer)
    close(km.predict(X, verbose=0), tm.predict(X, verbose=0), "predict")


def _two_outputs(k):
    inputs = k.layers.Input((4,), name="inp")
    h = k.layers.Dense(5, activation="relu", name="h")(inputs)
    return k.Model(inputs, [k.layers.Dense(3, activation="softmax", name="cls")(h),
                            k.layers.Dense(1, name="reg")(h)])


MULTI_OUTPUT = {
    "list": lambda k: dict(loss=["sparse_categorical_crossentropy", "mse"],
                           metrics=["accuracy", "mae"]),
    "one_loss_for_all": lambda k: dict(loss="mse", metrics=[None, ["mae", "mse"]]),
    "dicts_and_weights": lambda k: dict(
        loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
        loss_weights={"reg": 2.0, "cls": 1.0}, metrics={"reg": ["mae", "mse"]},
        weighted_metrics=[["accuracy"], ["mae"]]),
}


@pytest.mark.parametrize("name", sorted(MULTI_OUTPUT))
def test_multi_output(name):
    y2 = Y_REG[:, :1]
    if name == "one_loss_for_all":
        ys = [np.eye(3, dtype=np.float32)[Y], y2]
    else:
        ys = [Y, y2]
    km, tm = pair(_two_outputs, lambda k: dict(optimizer=k.optimizers.SGD(0.1),
                                               **MULTI_OUTPUT[name](k)))
    weights = np.linspace(0.5, 2.0, 30).astype(np.float32)
    fit_both(km, tm, X, ys, epochs=2, batch_size=8, sample_weight=weights,
             validation_data=(X[:10], [y[:10] for y in ys]))
    close(km.evaluate(X, ys, verbose=0), tm.evaluate(X, ys, verbose=0), "evaluate")
    close(km.train_on_batch(X[:8], [y[:8] for y in ys]),
          tm.train_on_batch(X[:8], [y[:8] for y in ys]), "train_on_batch")
