"""tf.keras 2 style: a LearningRateScheduler with `schedule(epoch, lr)`, and a custom callback
reading `self.model.optimizer.lr` and setting it with `K.set_value`."""
import numpy as np

from trainlib import keras
from trainlib.keras import backend as K


def scheduler(epoch, lr):
    return lr if epoch < 1 else lr * 0.5


class HalveOnEpochEnd(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.rates = []

    def on_epoch_end(self, epoch, logs=None):
        self.rates.append(float(K.get_value(self.model.optimizer.lr)))


model = keras.models.Sequential([keras.layers.Dense(1, input_shape=(2,))])
model.compile(optimizer=keras.optimizers.SGD(lr=0.1), loss="mse")
record = HalveOnEpochEnd()
x = np.random.rand(32, 2).astype("float32")
model.fit(x, x.sum(axis=1), epochs=3, verbose=0,
          callbacks=[keras.callbacks.LearningRateScheduler(scheduler), record])
print("rates:", record.rates)
assert np.allclose(record.rates, [0.1, 0.05, 0.025])
K.set_value(model.optimizer.lr, 0.2)
assert abs(float(K.get_value(model.optimizer.lr)) - 0.2) < 1e-7
