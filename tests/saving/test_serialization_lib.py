"""Keras 3's object serialization: `serialize_keras_object` / `deserialize_keras_object`,
`get_custom_objects`, `custom_object_scope`, `register_keras_serializable`, and the
`module` / `registered_name` fields `tl.layers.serialize` writes."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import layers
from trainlib.saving import (custom_object_scope, deserialize_keras_object, get_custom_objects,
                             register_keras_serializable, serialize_keras_object)


class Unregistered(layers.Layer):
    def call(self, x):
        return x * 3


@register_keras_serializable(package="sertest")
class Doubling(layers.Layer):
    def call(self, x):
        return x * 2


@register_keras_serializable(package="sertest")
def sertest_abs_loss(y_true, y_pred):
    return tl.reduce_mean(tl.abs(y_true - y_pred))


def test_serialize_builtin_layer_as_keras_3():
    out = serialize_keras_object(layers.Dense(2, name="d"))
    assert (out["module"], out["class_name"], out["registered_name"]) == \
        ("keras.layers", "Dense", None)
    assert "build_config" not in out          # not built: Keras writes none
    dense = layers.Dense(2)
    dense(tl.ones((1, 3)))
    assert serialize_keras_object(dense)["build_config"] == {"input_shape": [1, 3]}
    again = deserialize_keras_object(serialize_keras_object(dense))
    assert again.built and [w.shape for w in again.weights] == [w.shape for w in dense.weights]
    assert tl.layers.serialize(dense)["module"] == "keras.layers"


def test_registered_and_custom_classes():
    out = serialize_keras_object(Doubling())
    assert out["registered_name"] == "sertest>Doubling" and out["class_name"] == "Doubling"
    assert isinstance(deserialize_keras_object(out), Doubling)
    assert get_custom_objects()["sertest>Doubling"] is Doubling
    out = serialize_keras_object(Unregistered())
    assert out["registered_name"] == "Unregistered"
    assert out["module"] == __name__
    with pytest.raises(ValueError, match="Could not locate class 'Unregistered'"):
        deserialize_keras_object(out)
    assert isinstance(deserialize_keras_object(out, custom_objects={"Unregistered": Unregistered}),
                      Unregistered)
    with custom_object_scope({"Unregistered": Unregistered}):
        assert isinstance(deserialize_keras_object(out), Unregistered)
        with custom_object_scope({"Other": Doubling}):
            assert isinstance(deserialize_keras_object(out), Unregistered)
    with pytest.raises(ValueError, match="Could not locate"):
        deserialize_keras_object(out)


def test_functions_optimizers_losses_and_plain_values():
    out = serialize_keras_object(tl.activations.relu)
    assert out == {"module": "builtins", "class_name": "function", "config": "relu",
                   "registered_name": "function"}
    assert deserialize_keras_object(out) is tl.activations.relu
    assert deserialize_keras_object(serialize_keras_object(sertest_abs_loss)) is sertest_abs_loss
    opt = deserialize_keras_object(serialize_keras_object(tl.optim.Adam(0.01)))
    assert isinstance(opt, tl.optim.Adam) and float(opt.learning_rate) == pytest.approx(0.01)
    loss = tl.losses.MeanSquaredError()
    out = serialize_keras_object(loss)
    assert out["module"] == "keras.losses"
    assert isinstance(deserialize_keras_object(out), tl.losses.MeanSquaredError)
    assert serialize_keras_object([1, (2.5, None), {"a": "relu", "b": np.float32(1)}]) == \
        [1, [2.5, None], {"a": "relu", "b": 1.0}]
    assert deserialize_keras_object("relu") == "relu"
    with pytest.raises(TypeError, match="no get_config"):
        serialize_keras_object(object())


def test_compiled_model_round_trips_with_its_compile_config():
    model = tl.Sequential([layers.Input((2,)), Doubling(), layers.Dense(1)])
    model.compile(tl.optim.SGD(0.1), loss=sertest_abs_loss, metrics=["mae"])
    out = serialize_keras_object(model)
    assert out["compile_config"]["loss"] is not None
    again = deserialize_keras_object(out)
    assert again.compiled and isinstance(again.layers[0], Doubling)
    again.fit(np.ones((4, 2), np.float32), np.ones((4, 1), np.float32), verbose=0)


def test_compile_config_round_trip():
    model = tl.Sequential([layers.Input((2,)), layers.Dense(1)])
    assert model.get_compile_config() is None
    model.compile(tl.optim.Adam(0.01), loss="mse", metrics=["mae"])
    other = tl.Sequential([layers.Input((2,)), layers.Dense(1)])
    other.compile_from_config(model.get_compile_config())
    assert other.compiled and isinstance(other.optimizer, tl.optim.Adam)
    assert other.get_compile_config() == model.get_compile_config()


def test_regularizers_and_constraints_round_trip_through_keras_configs():
    from trainlib.keras import constraints, regularizers, saving
    for obj in (regularizers.L1L2(l1=0.1, l2=0.02), constraints.MaxNorm(2.0, axis=1)):
        config = saving.serialize_keras_object(obj)
        assert config["module"] in ("keras.regularizers", "keras.constraints")
        back = saving.deserialize_keras_object(config)
        assert type(back) is type(obj) and back.get_config() == obj.get_config()
