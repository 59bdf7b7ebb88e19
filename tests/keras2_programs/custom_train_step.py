"""tf.keras 2 style: overriding `train_step` and `test_step` with `self.compiled_loss` and
`self.compiled_metrics` (the 'Customizing what happens in fit' guide of TF 2.2 - 2.15)."""
import numpy as np

import trainlib as tf  # the guide's `tf.GradientTape`, under trainlib
from trainlib import keras


class CustomModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


inputs = keras.Input(shape=(32,))
hidden = keras.layers.Dense(16, activation="relu",
                            kernel_regularizer=keras.regularizers.l2(1e-4))(inputs)
outputs = keras.layers.Dense(1)(hidden)
model = CustomModel(inputs, outputs)
model.compile(optimizer="adam", loss="mse", metrics=["mae"])

np.random.seed(5)
x = np.random.random((512, 32)).astype("float32")
y = (x[:, :4].sum(axis=1, keepdims=True) - 2.0).astype("float32")
history = model.fit(x, y, epochs=3, batch_size=64, verbose=0, validation_data=(x[:64], y[:64]))
print({k: [round(v, 4) for v in vs] for k, vs in history.history.items()})
assert {"loss", "mae", "val_loss", "val_mae"} <= set(history.history)
assert history.history["loss"][-1] < history.history["loss"][0]
assert history.history["mae"][-1] < history.history["mae"][0]
print("evaluate:", model.evaluate(x, y, verbose=0, return_dict=True))
