"""tf.keras 2 style: augmentation with `ImageDataGenerator` (rotation, shifts, zoom, flips,
rescale, feature-wise centering, a validation split), `flow` into `fit_generator`."""
import numpy as np

from trainlib import keras
from trainlib.keras.preprocessing.image import ImageDataGenerator

np.random.seed(2)
x_train = np.random.randint(0, 256, (64, 12, 12, 3)).astype("float32")
y_train = keras.utils.to_categorical((x_train[:, :, :6].mean(axis=(1, 2, 3)) >
                                      x_train[:, :, 6:].mean(axis=(1, 2, 3))).astype(int), 2)

datagen = ImageDataGenerator(featurewise_center=True, rotation_range=15, width_shift_range=0.1,
                             height_shift_range=0.1, zoom_range=0.1, horizontal_flip=True,
                             fill_mode="nearest", rescale=1.0 / 255, validation_split=0.25)
datagen.fit(x_train)

model = keras.models.Sequential([
    keras.layers.Conv2D(4, (3, 3), activation="relu", input_shape=(12, 12, 3)),
    keras.layers.MaxPooling2D((2, 2)),
    keras.layers.Flatten(),
    keras.layers.Dense(2, activation="softmax"),
])
model.compile(loss="categorical_crossentropy", optimizer=keras.optimizers.RMSprop(lr=1e-3),
              metrics=["accuracy"])

train_flow = datagen.flow(x_train, y_train, batch_size=16, subset="training", seed=3)
val_flow = datagen.flow(x_train, y_train, batch_size=16, subset="validation")
x_batch, y_batch = next(train_flow)
print("one augmented batch:", x_batch.shape, x_batch.dtype, y_batch.shape)
assert x_batch.shape == (16, 12, 12, 3) and abs(float(x_batch.mean())) < 0.5

history = model.fit_generator(train_flow, steps_per_epoch=len(train_flow), epochs=2,
                              validation_data=val_flow, validation_steps=len(val_flow), verbose=0)
print("history:", sorted(history.history))
assert len(train_flow) == 3 and len(val_flow) == 1
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
