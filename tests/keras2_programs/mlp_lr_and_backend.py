"""tf.keras 2 style: an MLP compiled with `Adam(lr=...)`, the loss as a function from
keras.losses, 'acc' as the metric name, the rate read and set through keras.backend."""
import numpy as np

from trainlib import keras
from trainlib.keras import backend as K
from trainlib.keras.layers import Dense, Dropout
from trainlib.keras.models import Sequential

np.random.seed(0)
x_train = np.random.rand(256, 20).astype("float32")
y_train = (x_train[:, :10].sum(axis=1) > x_train[:, 10:].sum(axis=1)).astype("int32")

model = Sequential()
model.add(Dense(32, activation="relu", input_shape=(20,)))
model.add(Dropout(0.1))
model.add(Dense(2, activation="softmax"))
model.compile(loss=keras.losses.sparse_categorical_crossentropy,
              optimizer=keras.optimizers.Adam(lr=0.01), metrics=["acc"])

history = model.fit(x_train, y_train, batch_size=32, epochs=4, verbose=0, validation_split=0.2)
print("history keys:", sorted(history.history))
assert {"loss", "acc", "val_loss", "val_acc"} <= set(history.history)
assert history.history["loss"][-1] < history.history["loss"][0]

lr = K.get_value(model.optimizer.lr)
assert abs(float(lr) - 0.01) < 1e-7, lr
K.set_value(model.optimizer.lr, 0.001)
assert abs(float(K.get_value(model.optimizer.learning_rate)) - 0.001) < 1e-8
print("epsilon", K.epsilon(), "floatx", K.floatx())
assert K.epsilon() == 1e-7 and K.floatx() == "float32"

score = model.evaluate(x_train, y_train, verbose=0)
print("test loss, test acc:", score)
assert score[1] > 0.6

classes = model.predict_classes(x_train[:8])
probabilities = model.predict_proba(x_train[:8])
assert classes.shape == (8,) and (classes == probabilities.argmax(axis=1)).all()
