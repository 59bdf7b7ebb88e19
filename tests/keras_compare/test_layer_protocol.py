"""Keras 3 vs trainlib: the Layer protocol's losses in fit (regularizers, activity
regularizers, add_loss), input autocasting, and a mixed_float16 run's loss scale.

Every fit starts both models from the same (Keras's) weights and compares each batch's
logs and weights, and the History.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, close_weights, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(3)
X = RNG.normal(size=(24, 4)).astype(np.float32)
Y = RNG.integers(0, 3, size=(24,))


def _ops(k):
    """(sum, mean, square) of framework `k`."""
    if k is keras:
        return keras.ops.sum, keras.ops.mean, keras.ops.square
    return tl.reduce_sum, tl.reduce_mean, tl.square


def _compile(k):
    return {"optimizer": k.optimizers.SGD(0.1), "loss": "sparse_categorical_crossentropy"}


def test_weight_and_activity_regularizers_in_fit():
    def build(k):
        return k.Sequential([
            k.layers.Input(shape=(4,)),
            k.layers.Dense(6, activation="relu", kernel_regularizer=k.regularizers.L2(0.05),
                           bias_regularizer=k.regularizers.L1(0.02), bias_initializer="ones",
                           activity_regularizer=k.regularizers.L1L2(0.01, 0.02)),
            k.layers.BatchNormalization(gamma_regularizer="l2"),
            k.layers.Dense(3, activation="softmax",
                           kernel_regularizer=k.regularizers.OrthogonalRegularizer(0.1))])

    km, tm = pair(build, _compile)
    fit_both(km, tm, X, Y, batch_size=8, epochs=3)
    close(km.evaluate(X, Y, verbose=0), tm.evaluate(X, Y, verbose=0), "evaluate loss")
    close([float(v) for v in km.losses[-4:]], [float(v) for v in tm.losses[-4:]],
          "weight penalties after training")


def test_add_loss_in_fit_with_constraints():
    def build(k):
        total, mean, square = _ops(k)

        class Penalized(k.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.inner = k.layers.Dense(5, kernel_constraint=k.constraints.MaxNorm(0.4))

            def call(self, x):
                y = self.inner(x)
                self.add_loss(0.1 * mean(square(y)))
                self.add_loss(0.01 * total(x * 0.0 + 1.0))
                return y

        inputs = k.Input(shape=(4,))
        hidden = Penalized()(inputs)
        return k.Model(inputs, k.layers.Dense(3, activation="softmax",
                                              bias_constraint=k.constraints.NonNeg())(hidden))

    km, tm = pair(build, _compile)
    fit_both(km, tm, X, Y, batch_size=6, epochs=2)


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float64])
def test_autocast_of_inputs(dtype):
    x = RNG.integers(0, 200, size=(5, 2, 4)).astype(dtype)
    makers = [lambda k: k.layers.Dense(3), lambda k: k.layers.BatchNormalization(),
              lambda k: k.layers.Flatten(), lambda k: k.layers.GlobalAveragePooling1D(),
              lambda k: k.layers.Activation("relu")]
    if dtype is np.float64:
        # Keras's LayerNormalization takes the moments of integer inputs in integers (a
        # truncated mean, wrapping uint8); trainlib normalizes them as floats
        makers.append(lambda k: k.layers.LayerNormalization())
    for make in makers:
        kl, tl_layer = make(keras), make(tl.keras)
        ky = kl(x)
        if kl.weights:
            tl_layer.build(x.shape)
            tl_layer.set_weights(kl.get_weights())
        ty = tl_layer(x)
        assert np.dtype(ky.dtype.name if hasattr(ky.dtype, "name") else ky.dtype).name == \
            ty.dtype.name, type(kl).__name__
        close(np.asarray(ky), ty.numpy(), type(kl).__name__)
    km, tm = pair(lambda k: k.Sequential([k.Input((2, 4)), k.layers.Flatten(),
                                          k.layers.Dense(3, activation="softmax")]), _compile)
    fit_both(km, tm, x, np.arange(5) % 3, batch_size=2, epochs=2, rtol=1e-3, atol=1e-4)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # float16 overflow is the point
def test_mixed_float16_loss_scale_over_steps():
    def build(k):
        return k.Sequential([k.Input((4,)), k.layers.Dense(16, activation="relu"),
                             k.layers.Dense(1, dtype="float32")])

    def compile_kwargs(k):
        inner = k.optimizers.SGD(1e-4)
        return {"optimizer": k.mixed_precision.LossScaleOptimizer(inner, dynamic_growth_steps=3),
                "loss": "mse"}

    for k in (keras, tl.keras):
        k.mixed_precision.set_global_policy("mixed_float16")
    try:
        km, tm = pair(build, compile_kwargs)
        # large targets: at the first scales the float16 gradients overflow and the steps
        # are skipped; then finite steps apply and every third one doubles the scale
        x = RNG.normal(size=(40, 4)).astype(np.float32) * 3
        y = (x.sum(axis=1, keepdims=True) * 5).astype(np.float32)
        scales = {}
        for name, model, k in (("keras", km, keras), ("trainlib", tm, tl.keras)):
            seen = []

            class Scale(k.callbacks.Callback):
                def on_train_batch_end(self, batch, logs=None, seen=seen):
                    opt = self.model.optimizer
                    seen.append((float(np.asarray(opt.dynamic_scale)),
                                 int(np.asarray(opt.step_counter)),
                                 int(np.asarray(opt.iterations)), logs["loss"]))

            model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=[Scale()])
            scales[name] = seen
        kscales, tscales = scales["keras"], scales["trainlib"]
        assert [s[:3] for s in kscales] == [s[:3] for s in tscales]
        assert len({s[0] for s in kscales}) > 2            # the scale moved both ways
        close([s[3] for s in kscales], [s[3] for s in tscales], "losses", rtol=2e-2)
        close_weights(km.get_weights(), tm.get_weights(), "weights", rtol=2e-2, atol=1e-3)
    finally:
        for k in (keras, tl.keras):
            k.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("make", [
    lambda k: k.layers.Dense(3, kernel_regularizer=k.regularizers.L1L2(0.1, 0.2),
                             bias_constraint="non_neg", activity_regularizer="l1",
                             dtype="mixed_float16"),
    lambda k: k.layers.Conv2D(2, 3, kernel_constraint=k.constraints.UnitNorm(axis=[0, 1, 2]),
                              bias_regularizer="l2"),
    lambda k: k.layers.BatchNormalization(gamma_regularizer="l2",
                                          beta_constraint=k.constraints.MinMaxNorm(0.1, 2.0)),
    lambda k: k.layers.LayerNormalization(beta_regularizer=k.regularizers.L1(0.3),
                                          gamma_constraint=k.constraints.MaxNorm(2, axis=0)),
    lambda k: k.layers.Embedding(5, 2, embeddings_constraint="unit_norm",
                                 embeddings_regularizer=k.regularizers.OrthogonalRegularizer(
                                     0.2, "columns")),
], ids=["Dense", "Conv2D", "BatchNormalization", "LayerNormalization", "Embedding"])
def test_regularizer_constraint_and_policy_configs_as_keras(make):
    keras_config = make(keras).get_config()
    layer = type(make(tl.keras)).from_config(keras_config)
    assert {**layer.get_config(), "name": None} == {**keras_config, "name": None}
    assert {**make(tl.keras).get_config(), "name": None} == {**keras_config, "name": None}


def test_printing_paths_and_warnings_as_keras():
    import warnings  # noqa: PLC0415

    def build(k):
        class Block(k.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.inner = k.layers.Dense(2, kernel_initializer="ones", name="inner")

            def call(self, x):
                return self.inner(x)

        seq = k.Sequential([k.Input((3,)), k.layers.Dense(2, name="d1", kernel_initializer="ones"),
                            Block(name="block")], name="seq")
        inputs = k.Input((3,), name="pixels")
        functional = k.Model(inputs, k.layers.Dense(4, name="head")(inputs), name="fn")
        return seq, functional, inputs

    (kseq, kfn, kin), (tseq, tfn, tin) = build(keras), build(tl.keras)
    kseq(np.ones((1, 3), np.float32))
    tseq(np.ones((1, 3), np.float32))
    for km, tm in ((kseq, tseq), (kfn, tfn)):
        assert [v.path for v in km.weights] == [v.path for v in tm.weights]
        assert [v.name for v in km.weights] == [v.name for v in tm.weights]
    assert repr(kseq.weights[0]) == repr(tseq.weights[0])
    assert repr(kin) == repr(tin) and kin.shape == tin.shape and kin.dtype == tin.dtype
    messages = []
    for k in (keras, tl.keras):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            k.layers.Dense(3, input_shape=(4,))
        messages.append([(str(w.message), w.category) for w in caught])
    assert messages[0] == messages[1]


def test_mixed_float16_cnn_with_normalization_trains_as_keras():
    """Conv2D, BatchNormalization (float32 math inside), LayerNormalization and a float32
    softmax under mixed_float16: per-epoch losses and weights as Keras's."""
    x = RNG.normal(size=(32, 8, 8, 2)).astype(np.float32)
    y = RNG.integers(0, 3, 32)

    def build(k):
        return k.Sequential([
            k.Input((8, 8, 2)), k.layers.Conv2D(4, 3, activation="relu"),
            k.layers.BatchNormalization(), k.layers.Flatten(),
            k.layers.Dense(8, activation="relu"), k.layers.LayerNormalization(),
            k.layers.Dense(3), k.layers.Activation("softmax", dtype="float32")])

    for k in (keras, tl.keras):
        k.mixed_precision.set_global_policy("mixed_float16")
    try:
        km, tm = pair(build, lambda k: {"optimizer": k.optimizers.Adam(1e-2),
                                        "loss": "sparse_categorical_crossentropy"})
        assert tm.layers[0].compute_dtype == "float16" and tm.layers[0].kernel.dtype == "float32"
        kh = km.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
        th = tm.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
        close(kh, th, "per-epoch losses", rtol=2e-3)
        close_weights(km.get_weights(), tm.get_weights(), "weights", rtol=1e-2, atol=2e-3)
        assert float(km.optimizer.dynamic_scale) == float(tm.optimizer.dynamic_scale)
        # 12 steps; a step skipped on an overflow does not count, in Keras as here
        assert int(km.optimizer.iterations) == int(tm.optimizer.iterations) <= 12
    finally:
        for k in (keras, tl.keras):
            k.mixed_precision.set_global_policy("float32")
