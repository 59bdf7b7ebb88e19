"""Model.fit against a numpy reference, the one-graph train step, BatchNormalization in fit,
weights files, EarlyStopping, configs, summary, and a custom tl.function loop."""
import re

import numpy as np
import pytest

import trainlib as tl
from trainlib import callbacks, layers, losses, metrics, models, optim
from trainlib.data import Dataset

CASES = []  # Keras-level module: no op types of its own


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    return x, y


def _mlp(seed_weights=None):
    model = models.Sequential([layers.Input(shape=(4,)), layers.Dense(8, activation="tanh"),
                               layers.Dense(3)])
    if seed_weights is not None:
        model.set_weights(seed_weights)
    return model


def _numpy_training(weights, x, y, epochs, batch_size, opt):
    """Per-epoch sample-weighted mean loss of the Keras train loop, in numpy (float64)."""
    w1, b1, w2, b2 = [w.astype(np.float64) for w in weights]
    params = [w1, b1, w2, b2]
    state = [{} for _ in params]
    t = 0
    history = []
    for _ in range(epochs):
        total, count = 0.0, 0
        for s in range(0, len(x), batch_size):
            xb, yb = x[s:s + batch_size].astype(np.float64), y[s:s + batch_size]
            h = np.tanh(xb @ w1 + b1)
            z = h @ w2 + b2
            p = np.exp(z - z.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            n = len(xb)
            loss = -np.log(p[np.arange(n), yb]).mean()
            dz = p.copy()
            dz[np.arange(n), yb] -= 1
            dz /= n
            grads = [None, None, h.T @ dz, dz.sum(0)]
            dh = dz @ w2.T * (1 - h ** 2)
            grads[0], grads[1] = xb.T @ dh, dh.sum(0)
            t += 1
            for p_, g, st in zip(params, grads, state):
                p_ -= opt(g, st, t)
            total += loss * n
            count += n
        history.append(total / count)
    return history, params


def _sgd_momentum(lr, mom):
    lr = float(np.float32(lr))

    def step(g, st, t):
        m = st.setdefault("m", np.zeros_like(g))
        m[...] = mom * m - lr * g
        return -m
    return step


def _adam(lr, b1=0.9, b2=0.999, eps=1e-7):
    lr = float(np.float32(lr))

    def step(g, st, t):
        m = st.setdefault("m", np.zeros_like(g))
        v = st.setdefault("v", np.zeros_like(g))
        m += (g - m) * (1 - b1)
        v += (g * g - v) * (1 - b2)
        return m * (lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)) / (np.sqrt(v) + eps)
    return step


@pytest.mark.parametrize("make_opt,reference", [
    (lambda: optim.SGD(0.1, momentum=0.9), _sgd_momentum(0.1, 0.9)),
    (lambda: optim.Adam(0.01), _adam(0.01)),
], ids=["sgd_momentum", "adam"])
def test_fit_matches_numpy_reference(make_opt, reference):
    x, y = _data(80)
    model = _mlp()
    initial = model.get_weights()
    model.compile(optimizer=make_opt(), loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    ref_losses, ref_params = _numpy_training(initial, x, y, 3, 16, reference)
    np.testing.assert_allclose(history.history["loss"], ref_losses, rtol=1e-5)
    for ours, ref in zip(model.get_weights(), ref_params):
        np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


def test_train_step_is_one_graph_traced_once_plus_partial_batch():
    x, y = _data(100)  # 3 full batches of 32 + one of 4
    model = _mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=4, verbose=0)
    fn = model.train_function
    assert fn.experimental_get_tracing_count() == 2
    x, y = _data(96)
    model2 = _mlp()
    model2.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"],
                   steps_per_execution=3)
    model2.fit(x, y, batch_size=32, epochs=3, verbose=0)
    assert model2.train_function.experimental_get_tracing_count() == 1
    assert int(model2.optimizer.iterations.numpy()) == 9


def test_fit_equals_custom_tl_function_loop_step_for_step():
    x, y = _data(64)
    a = _mlp()
    b = _mlp(a.get_weights())
    a.compile(optim.Adam(0.01), losses.SparseCategoricalCrossentropy(from_logits=True))
    hist = a.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    opt = optim.Adam(0.01)
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
    mean = metrics.Mean()

    @tl.function
    def step(xb, yb):
        with tl.GradientTape() as tape:
            loss = loss_fn(yb, b(xb, training=True))
        grads = tape.gradient(loss, b.trainable_variables)
        opt.apply_gradients(zip(grads, b.trainable_variables))
        mean.update_state(loss)
        return loss
    epoch_losses = []
    for _ in range(2):
        mean.reset_state()
        for s in range(0, 64, 16):
            step(tl.constant(x[s:s + 16]), tl.constant(y[s:s + 16]))
        epoch_losses.append(float(mean.result()))
    # 2: Adam creates its slots in the first trace, so it is traced again, as TensorFlow does
    assert step.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(hist.history["loss"], epoch_losses, rtol=1e-6)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)


def test_digits_mlp_reaches_good_accuracy():
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target
    rng = np.random.default_rng(0)
    order = rng.permutation(len(x))
    x, y = x[order], y[order]
    model = models.Sequential([layers.Input(shape=(64,)), layers.Dense(64, activation="relu"),
                               layers.Dense(10, activation="softmax")])
    model.compile(optim.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=64, epochs=8, validation_split=0.2, verbose=0)
    assert history.history["val_accuracy"][-1] >= 0.93
    assert model.train_function.experimental_get_tracing_count() <= 2


def test_batchnorm_moving_stats_update_inside_fit():
    x, y = _data(64)
    x = x * 3.0 + 2.0
    model = models.Sequential([layers.Input(shape=(4,)), layers.BatchNormalization(momentum=0.5),
                               layers.Dense(3)])
    model.compile("sgd", losses.SparseCategoricalCrossentropy(from_logits=True))
    bn = model.layers[0]
    model.fit(x, y, batch_size=64, epochs=3, verbose=0, shuffle=False)
    mean, var = x.mean(0), x.var(0)
    m, v = np.zeros(4), np.ones(4)
    for _ in range(3):
        m, v = m * 0.5 + mean * 0.5, v * 0.5 + var * 0.5
    np.testing.assert_allclose(bn.moving_mean.numpy(), m, rtol=1e-4)
    np.testing.assert_allclose(bn.moving_variance.numpy(), v, rtol=1e-4)
    out = model.predict(x[:4], verbose=0)  # inference uses the moving statistics
    assert out.shape == (4, 3)
    assert [w.name for w in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]


def test_save_load_weights_round_trip_and_bad_files(tmp_path):
    x, y = _data(32)
    model = _mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    path = tmp_path / "m.weights.npz"
    model.save_weights(path)
    other = _mlp()
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(model.predict(x, verbose=0), other.predict(x, verbose=0))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]
    truncated = tmp_path / "t.weights.npz"
    truncated.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="t.weights.npz"):
        other.load_weights(truncated)
    pickled = tmp_path / "p.weights.npz"
    np.savez(pickled, __format__=np.array("trainlib.weights.v1"),
             w00000=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="p.weights.npz"):
        other.load_weights(pickled)
    with pytest.raises(ValueError, match="npz"):
        model.save_weights(tmp_path / "m.pickle")


def test_early_stopping_restores_best_weights():
    x, y = _data(64)
    model = _mlp()
    model.compile(optim.SGD(0.5), losses.SparseCategoricalCrossentropy(from_logits=True))
    seen = []

    class Record(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((logs["loss"], self.model.get_weights()))

    # loss keeps falling, so "max" mode finds the first epoch best and stops after patience 2
    stop = callbacks.EarlyStopping(monitor="loss", mode="max", patience=2, restore_best_weights=True)
    history = model.fit(x, y, epochs=10, batch_size=16, verbose=0, callbacks=[Record(), stop])
    assert len(history.history["loss"]) == 3
    assert stop.stopped_epoch == 2
    for a, b in zip(model.get_weights(), seen[0][1]):
        np.testing.assert_array_equal(a, b)


def test_configs_round_trip():
    dense = layers.Dense(5, activation="relu", use_bias=False, name="d")
    clone = layers.Dense.from_config(dense.get_config())
    assert clone.get_config() == dense.get_config()
    for layer in [layers.Conv2D(4, 3, padding="same"), layers.BatchNormalization(momentum=0.9),
                  layers.LayerNormalization(), layers.Dropout(0.3), layers.Embedding(10, 4),
                  layers.MaxPooling2D(3), layers.Flatten(), layers.Activation("gelu")]:
        config = layers.deserialize(layers.serialize(layer)).get_config()
        assert {k: v for k, v in config.items() if k != "name"} == \
            {k: v for k, v in layer.get_config().items() if k != "name"}
    seq = _mlp()
    seq2 = models.Sequential.from_config(seq.get_config())
    assert [w.shape for w in seq2.get_weights()] == [w.shape for w in seq.get_weights()]
    inp = layers.Input(shape=(4,))
    h = layers.Dense(6, activation="relu")(inp)
    out = layers.Dense(2)(layers.Dense(6)(h))
    fun = models.Model(inp, out)
    fun2 = models.Functional.from_config(fun.get_config())
    fun2.set_weights(fun.get_weights())
    x, _ = _data(5)
    np.testing.assert_allclose(fun2.predict(x, verbose=0), fun.predict(x, verbose=0), rtol=1e-6)


def test_summary_prints_parameter_counts(capsys):
    model = _mlp()
    model.summary()
    text = capsys.readouterr().out
    assert "Total params: 67" in text and "Trainable params: 67" in text
    assert "(None, 8)" in text and "40" in text and "27" in text
    assert model.count_params() == 67


def test_subclassed_model_dataset_and_eager():
    class MLP(models.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(8, activation="relu")
            self.drop = layers.Dropout(0.1)
            self.out = layers.Dense(3)

        def call(self, x, training=False):
            return self.out(self.drop(self.hidden(x), training=training))

    x, y = _data(64)
    model = MLP()
    model.compile("adam", losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    ds = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=1).batch(16)
    h = model.fit(ds, epochs=2, verbose=0, validation_data=(x, y))
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert [v.name for v in model.weights] == ["kernel", "bias", "kernel", "bias"]
    eager = MLP()
    eager.compile("adam", losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=True)
    eager.fit(x, y, epochs=1, verbose=0)
    assert not isinstance(eager.train_function, tl.Function)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy"}
    assert len(model.train_on_batch(x[:8], y[:8])) == 2
    assert model.predict_on_batch(x[:3]).shape == (3, 3)


def test_bad_input_errors():
    x, y = _data(32)
    model = _mlp()
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y, verbose=0)
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="cardinality"):
        model.fit(x, y[:10], verbose=0)
    with pytest.raises(ValueError, match="Unknown loss"):
        model.compile("adam", "msee")
    with pytest.raises(ValueError, match="Unknown optimizer"):
        model.compile("adamm", "mse")
    # Keras's wording: the layer, the axis, the expected value and the shape received
    with pytest.raises(ValueError, match=r'layer "dense.*expected axis -1 .* value 4.*\(None, 5\)'):
        model.fit(np.zeros((8, 5), np.float32), y[:8], verbose=0)  # 5 features, not 4


def test_nan_loss_is_reported_and_stops_with_terminate_on_nan():
    x, y = _data(32)
    model = _mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    history = model.fit(np.full_like(x, np.nan), y, epochs=3, verbose=0,
                        callbacks=[callbacks.TerminateOnNaN()])
    assert len(history.history["loss"]) == 1 and np.isnan(history.history["loss"][0])


def test_verbose_output(capsys):
    x, y = _data(32)
    model = _mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    # Keras 3's verbose=2: "Epoch i/N", then "steps - time - time/step - logs" (sorted by key),
    # the logs as the epoch ended
    assert [line for line in lines if line.startswith("Epoch")] == ["Epoch 1/2", "Epoch 2/2"]
    loss = history.history["loss"][1]
    assert re.fullmatch(r"1/1 - \d+s - \d+(ms|us|s)/step - accuracy: \d\.\d{4} - loss: "
                        + f"{loss:.4f}", lines[3]), lines
    model.fit(x, y, epochs=1, verbose=2)      # one epoch: no "Epoch 1/1" line, as Keras
    assert not capsys.readouterr().out.startswith("Epoch")
    model.evaluate(x, y, verbose=2)
    assert re.fullmatch(r"1/1 - \d+s - \d+(ms|us|s)/step - accuracy: \d\.\d{4} - loss: "
                        r"\d+\.\d{4}\n", capsys.readouterr().out)
    model.predict(x, verbose=2)
    assert re.fullmatch(r"1/1 - \d+s - \d+(ms|us|s)/step\n", capsys.readouterr().out)


def test_digits_mlp_64_128_10_fit_and_custom_loop_reach_095():
    """The issue's digits classifier: fit, and the same model by a custom loop traced once."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    split = int(len(x) * 0.8)

    def build():
        tl.random.set_seed(0)
        return models.Sequential([layers.Input(shape=(64,)), layers.Dense(128, activation="relu"),
                                  layers.Dense(10)])

    model = build()
    model.compile(optim.Adam(0.003), losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=12, validation_split=0.2, verbose=0)
    assert history.history["val_accuracy"][-1] >= 0.95

    custom = build()
    optimizer = optim.Adam(0.003)
    optimizer.build(custom.trainable_variables)  # slots before the first trace: one trace
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)

    @tl.function
    def train_step(xb, yb):
        with tl.GradientTape() as tape:
            loss = loss_fn(yb, custom(xb, training=True))
        grads = tape.gradient(loss, custom.trainable_variables)
        optimizer.apply_gradients(zip(grads, custom.trainable_variables))
        return loss

    for _ in range(12):
        for s in range(0, split - 31, 32):  # full batches of the training rows only
            train_step(tl.constant(x[s:s + 32]), tl.constant(y[s:s + 32]))
    assert train_step.experimental_get_tracing_count() == 1
    accuracy = np.mean(np.argmax(custom.predict(x[split:], verbose=0), axis=1) == y[split:])
    assert accuracy >= 0.95


def test_fit_evaluate_predict_from_a_python_generator():
    x, y = _data(64)
    model = _mlp()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])

    def batches():
        while True:
            for s in range(0, 64, 16):
                yield x[s:s + 16], y[s:s + 16]

    history = model.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    reference = _mlp()
    reference.set_weights(model.get_weights())
    reference.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    assert model.evaluate(batches(), steps=4, verbose=0) == reference.evaluate(x, y, batch_size=16,
                                                                             verbose=0)
    assert model.predict(batches(), steps=2, verbose=0).shape[0] == 32
