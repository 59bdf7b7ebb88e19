"""tf.keras 2 names on the Trainer and around it: `compiled_loss` / `compiled_metrics` in a
custom train_step give exactly the default step's training, `fit_generator` and friends are
`fit`/`evaluate`/`predict` (same weights, same logs), `PyDataset`/`Sequence` batches by index
with shuffling and `on_epoch_end`, and `lr` aliases warn and act on the same Variable.
"""
import math
import warnings

import numpy as np
import pytest

import trainlib as tl
from trainlib import keras

X = np.random.default_rng(0).normal(size=(48, 5)).astype(np.float32)
Y = (X @ np.arange(5, dtype=np.float32)[:, None] / 5).astype(np.float32)


def _model(cls=keras.Model, seed=1):
    tl.random.set_seed(seed)
    inputs = keras.Input((5,))
    hidden = keras.layers.Dense(4, activation="tanh",
                                kernel_regularizer=keras.regularizers.l2(1e-2))(inputs)
    model = cls(inputs, keras.layers.Dense(1)(hidden))
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    return model


class Keras2Step(keras.Model):
    def train_step(self, data):
        x, y = data
        with tl.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_compiled_loss_and_metrics_train_exactly_as_the_default_step():
    plain, custom = _model(), _model(Keras2Step)
    custom.set_weights(plain.get_weights())
    with pytest.warns(DeprecationWarning, match="compute_loss"):
        h_custom = custom.fit(X, Y, batch_size=16, epochs=3, verbose=0, shuffle=False)
    h_plain = plain.fit(X, Y, batch_size=16, epochs=3, verbose=0, shuffle=False)
    assert h_custom.history.keys() == h_plain.history.keys() == {"loss", "mae"}
    for key in h_plain.history:
        np.testing.assert_allclose(h_custom.history[key], h_plain.history[key], rtol=1e-5)
    for a, b in zip(custom.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert [m.name for m in custom.compiled_metrics.metrics] == ["mae"]


class Batches(keras.utils.Sequence):  # no super().__init__(), as tf.keras 2 code often has
    def __init__(self, n_batches=3, size=16):
        self.n_batches, self.size, self.ended, self.seen = n_batches, size, 0, []

    def __len__(self):
        return self.n_batches

    def __getitem__(self, i):
        self.seen.append(i)
        part = slice(i * self.size, (i + 1) * self.size)
        return X[part], Y[part]

    def on_epoch_end(self):
        self.ended += 1


def test_fit_generator_is_fit_and_sequences_batch_by_index():
    a, b = _model(), _model()
    b.set_weights(a.get_weights())
    data_a, data_b = Batches(), Batches()
    with pytest.warns(DeprecationWarning, match="Model.fit"):
        h_a = a.fit_generator(data_a, epochs=2, verbose=0, shuffle=False)
    h_b = b.fit(data_b, epochs=2, verbose=0, shuffle=False)
    assert h_a.history == h_b.history and data_a.ended == 2 and data_a.seen == [0, 0, 1, 2, 0, 1, 2]
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    with pytest.warns(DeprecationWarning, match="Model.evaluate"):
        assert a.evaluate_generator(Batches(), steps=2) == a.evaluate(Batches(), steps=2,
                                                                      verbose=0)
    with pytest.warns(DeprecationWarning, match="Model.predict"):
        out = a.predict_generator(Batches())
    np.testing.assert_allclose(out, a.predict(X, verbose=0), rtol=1e-6)
    shuffled = Batches()
    np.random.seed(3)
    a.fit(shuffled, epochs=1, verbose=0)  # shuffle=True: the batch order is permuted
    assert sorted(shuffled.seen[1:]) == [0, 1, 2] and shuffled.seen[1:] != [0, 1, 2]


def test_generators_with_steps_and_validation_sequences():
    def endless():
        while True:
            yield X[:16], Y[:16]

    model = _model()
    with pytest.warns(DeprecationWarning):
        history = model.fit_generator(endless(), steps_per_epoch=2, epochs=2, verbose=0,
                                      validation_data=Batches(1))
    assert len(history.history["val_loss"]) == 2
    with pytest.raises(ValueError, match="y must be None"):
        model.fit(Batches(), Y)


def test_lr_aliases_warn_and_share_the_variable():
    with pytest.warns(DeprecationWarning, match="learning_rate"):
        opt = keras.optimizers.Adam(lr=0.02)
    assert float(opt.learning_rate) == pytest.approx(0.02)
    with pytest.warns(DeprecationWarning, match="optimizer.lr"):
        variable = opt.lr
    assert isinstance(variable, tl.Variable)
    keras.backend.set_value(variable, 0.5)
    assert float(opt.learning_rate) == 0.5
    with pytest.warns(DeprecationWarning):
        opt.lr = 0.25
    assert float(opt.learning_rate) == 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.optimizers.SGD(learning_rate=0.1).learning_rate  # no warning on the Keras 3 names
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    with pytest.warns(DeprecationWarning):
        assert float(keras.optimizers.SGD(schedule).lr) == pytest.approx(0.1)


def test_sequence_is_keras_3s_pydataset():
    assert keras.utils.Sequence is keras.utils.PyDataset
    ds = Batches(2)
    assert len(ds) == 2 and ds.workers == 1 and not ds.use_multiprocessing
    assert [len(b[0]) for b in ds] == [16, 16] and math.isclose(ds.num_batches, 2)
