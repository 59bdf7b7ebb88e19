"""tf.keras 2 style: `K.function` to read an intermediate layer, `K.int_shape`,
`K.count_params`, `K.clear_session` restarting default layer names, and the loss functions
by their tf.keras 2 names."""
import numpy as np

from trainlib import keras
from trainlib.keras import backend as K

K.clear_session()
model = keras.models.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 keras.layers.Dense(2)])
print([layer.name for layer in model.layers])
assert model.layers[0].name == "dense"

get_hidden = K.function([model.layers[0].input], [model.layers[0].output])
x = np.random.rand(5, 3).astype("float32")
hidden = get_hidden([x])[0]
assert hidden.shape == (5, 4) and (hidden >= 0).all()
assert K.int_shape(model.layers[0].kernel) == (3, 4)
assert K.count_params(model.layers[0].kernel) == 12

y_true = np.array([[0.0, 1.0], [1.0, 0.0]], "float32")
y_pred = np.array([[0.1, 0.9], [0.8, 0.2]], "float32")
for fn in (keras.losses.mean_squared_error, keras.losses.mse, keras.losses.MSE,
           keras.losses.mean_absolute_error, keras.losses.categorical_crossentropy,
           keras.losses.kullback_leibler_divergence, keras.losses.logcosh,
           keras.losses.categorical_hinge, keras.losses.cosine_similarity):
    value = K.get_value(fn(y_true, y_pred))
    assert value.shape == (2,), (fn.__name__, value.shape)
print("mse:", K.get_value(keras.losses.mse(y_true, y_pred)))
K.clear_session()
