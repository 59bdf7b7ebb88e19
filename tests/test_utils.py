"""keras.utils names (trainlib/utils.py and what it re-exports): the same objects as
keras.saving and keras.backend, Config, get_source_inputs, and the preprocessing re-exports."""
import json

import pytest

from trainlib import keras


def test_utils_reexports_the_saving_and_backend_objects_themselves():
    for name in ("CustomObjectScope", "custom_object_scope", "get_custom_objects",
                 "register_keras_serializable", "get_registered_name", "get_registered_object",
                 "serialize_keras_object", "deserialize_keras_object"):
        assert getattr(keras.utils, name) is getattr(keras.saving, name), name
    for name in ("clear_session", "is_keras_tensor", "standardize_dtype"):
        assert getattr(keras.utils, name) is getattr(keras.backend, name), name
    for name in ("image_dataset_from_directory", "text_dataset_from_directory",
                 "timeseries_dataset_from_array"):
        assert getattr(keras.preprocessing, name) is getattr(keras.utils, name), name
    assert keras.utils.is_interactive_logging_enabled is \
        keras.config.is_interactive_logging_enabled


def test_registration_through_utils_round_trips_a_custom_layer():
    @keras.utils.register_keras_serializable(package="UtilsTest")
    class Twice(keras.layers.Layer):
        def call(self, x):
            return x * 2.0

    assert keras.utils.get_registered_name(Twice) == "UtilsTest>Twice"
    assert keras.utils.get_registered_object("UtilsTest>Twice") is Twice
    rebuilt = keras.utils.deserialize_keras_object(keras.utils.serialize_keras_object(Twice()))
    assert type(rebuilt) is Twice


def test_small_backend_helpers():
    x = keras.Input((3,))
    assert keras.utils.is_keras_tensor(x) and not keras.utils.is_keras_tensor(1.0)
    assert keras.utils.standardize_dtype(None) == "float32"
    assert keras.utils.standardize_dtype("float64") == "float64"
    keras.layers.Dense(1, name=None)
    keras.utils.clear_session()
    assert keras.layers.Dense(1).name == "dense"


def test_get_source_inputs_walks_back_to_each_input_once():
    a, b = keras.Input((2,)), keras.Input((2,))
    shared = keras.layers.Dense(2)
    h = keras.layers.Add()([shared(a), shared(b)])
    out = keras.layers.Concatenate()([h, a])
    assert keras.utils.get_source_inputs(out) == [a, b]
    assert keras.utils.get_source_inputs(a) == [a]
    assert keras.utils.get_source_inputs(3) == 3


def test_config_is_a_freezable_attribute_dict():
    config = keras.utils.Config(learning_rate=0.1, momentum=0.9)
    config.seed = 123
    config["use_ema"] = True
    assert config.seed == 123 and config["learning_rate"] == 0.1 and "use_ema" in config
    assert list(config) == ["learning_rate", "momentum", "seed", "use_ema"]   # sorted
    assert list(config.keys()) == ["learning_rate", "momentum", "seed", "use_ema"]
    assert json.loads(config.to_json()) == config.as_dict() and len(config) == 4
    with pytest.raises(AttributeError, match="Did you mean 'momentum'"):
        config.momentun  # noqa: B018
    config.freeze()
    assert config.frozen
    for change in (lambda: setattr(config, "foo", 1), lambda: config.update(a=1),
                   lambda: config.pop("seed"), lambda: config.__delitem__("seed"),
                   lambda: config.__setitem__("a", 1)):
        with pytest.raises(ValueError, match="frozen"):
            change()
    config.unfreeze()
    del config["seed"]
    assert config.get("seed", "gone") == "gone" and repr(config).startswith("<Config {")
