"""Functional configs as Keras 3 writes them for nested models (a nested Functional model's calls
counted from 1 in input/output references, one output as one reference, `mask: None` on model
calls), read back to the same model, and trainlib's earlier form still read."""
import copy

import numpy as np
import pytest

from trainlib import keras


def _nested():
    ia = keras.Input((3,), name="ia")
    inner = keras.Model(ia, keras.layers.Dense(4, name="f1")(ia), name="inner")
    a = keras.Input((3,), name="a")
    h = inner(a)
    twice = inner(keras.layers.Dense(3, name="back")(h))
    return keras.Model(a, twice, name="outer"), keras.Model(a, [twice, h], name="pair")


def _same_outputs(model, rebuilt):
    rebuilt.set_weights(model.get_weights())
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    for a, b in zip(np.atleast_1d(model.predict(x, verbose=0)),
                    np.atleast_1d(rebuilt.predict(x, verbose=0))):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_nested_functional_references_count_calls_from_1():
    single, pair = _nested()
    config = single.get_config()
    assert config["output_layers"] == ["inner", 2, 0]      # the second call: node 2, as Keras
    assert config["input_layers"] == ["a", 0, 0] and "single_output" not in config
    inner_nodes = next(c for c in config["layers"] if c["name"] == "inner")["inbound_nodes"]
    assert [n["kwargs"] for n in inner_nodes] == [{"mask": None}, {"mask": None}]
    # inside call arguments the calls keep their 0-based index, as Keras writes them
    back = next(c for c in config["layers"] if c["name"] == "back")["inbound_nodes"][0]
    assert back["args"][0]["config"]["keras_history"] == ["inner", 0, 0]
    assert pair.get_config()["output_layers"] == [["inner", 2, 0], ["inner", 1, 0]]
    for model in (single, pair):
        _same_outputs(model, keras.Model.from_config(model.get_config()))


def test_configs_of_the_earlier_form_still_load():
    single, pair = _nested()
    for model in (single, pair):
        old = copy.deepcopy(model.get_config())
        refs = old["output_layers"] if isinstance(old["output_layers"][0], list) else \
            [old["output_layers"]]
        old["output_layers"] = [[name, call - 1, index] for name, call, index in refs]
        old["input_layers"] = [old["input_layers"]]
        old["single_input"] = True
        old["single_output"] = model is single
        _same_outputs(model, keras.Model.from_config(old))


@pytest.mark.parametrize("where, ref", [("input", ["x", 5, 7]), ("output", ["d", 0, 3])])
def test_config_naming_a_tensor_that_does_not_exist_is_refused(where, ref):
    inputs = keras.Input((3,), name="x")
    model = keras.Model(inputs, keras.layers.Dense(2, name="d")(inputs))
    config = model.get_config()
    if where == "input":
        config["layers"][1]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = ref
    else:
        config["output_layers"] = ref
    with pytest.raises(ValueError, match="names the tensor"):
        keras.Model.from_config(config)
