"""tf.keras 2 style: images on disk, one folder per class, read by
`ImageDataGenerator.flow_from_directory` (binary labels) and trained with `fit`."""
import os
import tempfile

import numpy as np
from PIL import Image

from trainlib import keras
from trainlib.keras.preprocessing.image import ImageDataGenerator

root = tempfile.mkdtemp()
rng = np.random.RandomState(4)
for label, (low, high) in (("cats", (0, 100)), ("dogs", (150, 255))):
    os.makedirs(os.path.join(root, label))
    for i in range(6):
        pixels = rng.randint(low, high, (20, 24, 3)).astype("uint8")
        Image.fromarray(pixels).save(os.path.join(root, label, f"{label}_{i}.png"))

datagen = ImageDataGenerator(rescale=1.0 / 255, horizontal_flip=True, validation_split=1 / 3)
train = datagen.flow_from_directory(root, target_size=(16, 16), batch_size=4,
                                    class_mode="binary", subset="training")
val = datagen.flow_from_directory(root, target_size=(16, 16), batch_size=4,
                                  class_mode="binary", subset="validation")
print(train.class_indices, train.samples, val.samples)
assert train.class_indices == {"cats": 0, "dogs": 1}
assert (train.samples, val.samples) == (8, 4)

model = keras.models.Sequential([
    keras.layers.Conv2D(4, 3, activation="relu", input_shape=(16, 16, 3)),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=keras.optimizers.Adam(lr=0.05), loss="binary_crossentropy",
              metrics=["accuracy"])
history = model.fit(train, steps_per_epoch=train.samples // train.batch_size, epochs=8,
                    validation_data=val, verbose=0)
print("final:", history.history["accuracy"][-1], history.history["val_accuracy"][-1])
assert history.history["loss"][-1] < history.history["loss"][0]
