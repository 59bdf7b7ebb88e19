"""tf.keras 2 style: a `keras.utils.Sequence` (no super().__init__), `fit_generator`,
`evaluate_generator`, `predict_generator`, and a plain Python generator with steps_per_epoch."""
import math

import numpy as np

from trainlib import keras
from trainlib.keras import layers


class DataSequence(keras.utils.Sequence):
    def __init__(self, x, y, batch_size):
        self.x, self.y = x, y
        self.batch_size = batch_size
        self.epochs_ended = 0

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, idx):
        batch_x = self.x[idx * self.batch_size:(idx + 1) * self.batch_size]
        batch_y = self.y[idx * self.batch_size:(idx + 1) * self.batch_size]
        return batch_x, batch_y

    def on_epoch_end(self):
        self.epochs_ended += 1


def batch_generator(x, y, batch_size):
    while True:
        idx = np.random.randint(0, len(x), batch_size)
        yield x[idx], y[idx]


np.random.seed(1)
x = np.random.rand(200, 8).astype("float32")
y = x @ np.arange(1, 9, dtype="float32")[:, None] / 10.0

model = keras.models.Sequential([layers.Dense(16, activation="tanh", input_shape=(8,)),
                                 layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(lr=0.1, momentum=0.9), loss="mse", metrics=["mae"])

train = DataSequence(x[:160], y[:160], 16)
val = DataSequence(x[160:], y[160:], 20)
history = model.fit_generator(train, epochs=3, validation_data=val, verbose=0)
print("fit_generator history:", {k: round(v[-1], 4) for k, v in history.history.items()})
assert train.epochs_ended == 3, train.epochs_ended
assert history.history["loss"][-1] < history.history["loss"][0]
assert "val_mae" in history.history

history = model.fit_generator(batch_generator(x, y, 16), steps_per_epoch=5, epochs=2, verbose=0)
assert len(history.history["loss"]) == 2

loss, mae = model.evaluate_generator(val, steps=2)
predictions = model.predict_generator(DataSequence(x[:40], y[:40], 16))
print("evaluate_generator:", loss, mae, "predict_generator:", predictions.shape)
assert predictions.shape == (40, 1)
model.fit(train, epochs=1, verbose=0)  # Keras 3 spelling also takes the Sequence
