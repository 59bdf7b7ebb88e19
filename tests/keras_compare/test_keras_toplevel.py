"""Keras 3's top-level names trainlib.keras mirrors: dtype_policies (DTypePolicyMap lookups and
serialization as Keras), name_scope (Variable paths), device, version, InputSpec."""
import pytest

keras = pytest.importorskip("keras")
from trainlib import keras as tk  # noqa: E402


def test_dtype_policy_map_looks_up_and_serializes_as_keras():
    maps = []
    for lib in (keras, tk):
        policies = lib.dtype_policies.DTypePolicyMap()
        policies["encoder/layer_0/dense"] = lib.dtype_policies.DTypePolicy("float16")
        policies["encoder/.*"] = "float64" if lib is tk else lib.dtype_policies.DTypePolicy("float64")
        maps.append(policies)
    for path in ("encoder/layer_0/dense", "encoder/attention/query", "decoder", "encoder"):
        assert maps[0][path].name == maps[1][path].name, path
    for lib, policies in zip((keras, tk), maps):
        policies["encoder/attention/.*"] = lib.dtype_policies.DTypePolicy("float16")
        with pytest.raises(ValueError, match="matches multiple"):
            policies["encoder/attention/query"]
    policy = keras.dtype_policies.DTypePolicy("mixed_float16")
    assert tk.dtype_policies.serialize(tk.dtype_policies.get("mixed_float16")) == \
        keras.dtype_policies.serialize(policy)
    assert tk.dtype_policies.deserialize(keras.dtype_policies.serialize(policy)).name == \
        "mixed_float16"


def test_name_scope_makes_keras_variable_paths():
    paths = []
    for lib in (keras, tk):
        with lib.name_scope("outer"):
            with lib.name_scope("inner"):
                v = lib.Variable(1.0, name="w")
        paths.append(v.path)
    assert paths[0] == paths[1] == "outer/inner/w"


def test_device_version_input_spec():
    with tk.device("cpu"):
        assert float(tk.ops.add(1.0, 2.0)) == 3.0
    assert tk.version() == keras.version()
    spec = tk.InputSpec(ndim=2)
    layer = tk.layers.Dense(2)
    layer.input_spec = spec
    with pytest.raises(ValueError):
        layer(tk.ops.ones((1, 2, 3)))
