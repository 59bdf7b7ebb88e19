"""tf.keras 2 style text classification: `Tokenizer`, `pad_sequences`, an Embedding model."""
import numpy as np

from trainlib import keras
from trainlib.keras.preprocessing.sequence import pad_sequences
from trainlib.keras.preprocessing.text import Tokenizer

positive = ["good great fine", "great movie", "fine good good", "great fine"]
negative = ["bad awful", "awful boring bad", "boring movie", "bad bad"]
texts = positive * 4 + negative * 4
labels = np.array([1] * 16 + [0] * 16)

tokenizer = Tokenizer(num_words=20, oov_token="<OOV>")
tokenizer.fit_on_texts(texts)
sequences = tokenizer.texts_to_sequences(texts)
padded = pad_sequences(sequences, maxlen=4, padding="post", truncating="post")
print("vocabulary:", len(tokenizer.word_index), "padded:", padded.shape)

model = keras.Sequential([keras.layers.Embedding(20, 8, input_length=4),
                          keras.layers.GlobalAveragePooling1D(),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(lr=0.05),
              metrics=["accuracy"])
history = model.fit(padded, labels, epochs=10, verbose=0)
test = pad_sequences(tokenizer.texts_to_sequences(["good fine", "awful bad movie"]), maxlen=4,
                     padding="post")
scores = model.predict(test, verbose=0).ravel()
print("accuracy:", history.history["accuracy"][-1], "scores:", scores)
assert scores[0] > 0.5 > scores[1]
