"""`keras.backend` (trainlib/backend.py): Keras 3's settings and dtype helpers, and the
tf.keras 2 helpers (`get_value`, `set_value`, `function`, `int_shape`, `clear_session`)."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import keras
from trainlib.keras import backend as K


def test_settings_round_trip_and_validate():
    assert (K.floatx(), K.epsilon(), K.image_data_format()) == ("float32", 1e-7, "channels_last")
    try:
        K.set_floatx("float64")
        K.set_epsilon(1e-5)
        K.set_image_data_format("channels_first")
        assert (K.floatx(), K.epsilon(), K.image_data_format()) == \
            ("float64", 1e-5, "channels_first")
        assert K.standardize_dtype(None) == "float64"
    finally:
        K.set_floatx("float32")
        K.set_epsilon(1e-7)
        K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="floatx"):
        K.set_floatx("float8")
    with pytest.raises(ValueError, match="data_format"):
        K.set_image_data_format("nhwc")


def test_dtype_helpers():
    assert K.standardize_dtype(tl.float16) == "float16" and K.standardize_dtype("int32") == "int32"
    assert K.result_type("int32", "float32") == "float32"  # Keras's promotion, not NumPy's
    assert K.result_type("int8", "uint8") == "int16" and K.result_type() == "float32"
    assert K.is_float_dtype("float16") and not K.is_float_dtype("int8")
    assert K.is_int_dtype("uint8") and not K.is_int_dtype("bool")
    assert K.is_keras_tensor(keras.Input((2,))) and not K.is_keras_tensor(tl.ones([2]))


def test_values_and_variables():
    v = K.variable([1.0, 2.0], name="v")
    assert isinstance(v, tl.Variable) and K.int_shape(v) == (2,) and K.count_params(v) == 2
    K.set_value(v, [3.0, 4.0])
    np.testing.assert_array_equal(K.get_value(v), [3.0, 4.0])
    K.batch_set_value([(v, [5.0, 6.0])])
    np.testing.assert_array_equal(K.batch_get_value([v])[0], [5.0, 6.0])
    assert K.eval(K.constant(2.0, shape=(2,))).tolist() == [2.0, 2.0]
    assert K.int_shape(keras.Input((None, 3))) == (None, None, 3)
    with pytest.raises(TypeError, match="Variable"):
        K.set_value(tl.constant(1.0), 2.0)


def test_function_evaluates_a_sub_graph():
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(2, activation="relu")(inputs)
    output = keras.layers.Dense(1)(hidden)
    keras.Model(inputs, output)
    fn = K.function([inputs], [hidden, output])
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    h, o = fn([x])
    assert h.shape == (4, 2) and (h >= 0).all() and o.shape == (4, 1)
    np.testing.assert_allclose(K.function(inputs, output)(x), o, rtol=1e-6)


def test_clear_session_restarts_default_names():
    keras.layers.Dense(1)
    K.clear_session()
    assert keras.layers.Dense(1).name == "dense" and keras.layers.Dense(1).name == "dense_1"
    assert K.get_uid("x") == 1 and K.get_uid("x") == 2
    K.clear_session()
    assert K.get_uid("x") == 1


def test_utils_normalize_and_batch_packing():
    np.testing.assert_allclose(keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])),
                               [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_allclose(keras.utils.normalize(tl.constant([[3.0, 4.0]])).numpy(),
                               [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(keras.utils.normalize(np.array([[1.0, -3.0]]), order=1),
                               [[0.25, -0.75]])
    assert keras.utils.pack_x_y_sample_weight(1) == 1
    assert keras.utils.pack_x_y_sample_weight([1, 2]) == ([1, 2],)
    assert keras.utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert keras.utils.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
