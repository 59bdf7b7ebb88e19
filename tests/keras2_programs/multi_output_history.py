"""tf.keras 2 style: a functional model with two named outputs, losses and loss_weights by
output name, and the per-output history keys ("output_a_loss", "output_b_accuracy")."""
import numpy as np

from trainlib import keras
from trainlib.keras import layers

inputs = keras.Input(shape=(10,), name="features")
shared = layers.Dense(16, activation="relu")(inputs)
output_a = layers.Dense(1, name="output_a")(shared)
output_b = layers.Dense(3, activation="softmax", name="output_b")(shared)
model = keras.Model(inputs=inputs, outputs=[output_a, output_b])
model.compile(optimizer=keras.optimizers.Adam(lr=0.01),
              loss={"output_a": keras.losses.mean_squared_error,
                    "output_b": "sparse_categorical_crossentropy"},
              loss_weights={"output_a": 1.0, "output_b": 0.5},
              metrics={"output_a": ["mae"], "output_b": ["accuracy"]})

np.random.seed(6)
x = np.random.rand(128, 10).astype("float32")
y_a = x.sum(axis=1, keepdims=True)
y_b = (x[:, 0] * 3).astype("int32")
history = model.fit(x, {"output_a": y_a, "output_b": y_b}, epochs=2, batch_size=32, verbose=0,
                    validation_split=0.25)
keys = sorted(history.history)
print(keys)
for key in ("output_a_loss", "output_b_loss", "output_a_mae", "output_b_accuracy",
            "val_output_a_loss", "val_output_b_accuracy"):
    assert key in keys, key
