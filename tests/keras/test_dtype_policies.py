"""keras.dtype_policies: DTypePolicyMap's lookup rules and config round trip, without Keras."""
import pytest

from trainlib import keras


def test_policy_map_exact_then_regex_then_default():
    policies = keras.dtype_policies.DTypePolicyMap(default_policy="float64")
    policies["encoder/dense"] = "float16"
    policies["encoder/.*"] = "mixed_float16"
    assert policies["encoder/dense"].name == "float16"
    assert policies["encoder/attention/query"].name == "mixed_float16"
    assert policies["decoder"].name == "float64" and policies["encoder"].name == "float64"
    with pytest.raises(ValueError, match="already exist"):
        policies["encoder/dense"] = "float32"
    policies["encoder/att.*"] = "float32"
    with pytest.raises(ValueError, match="matches multiple"):
        policies["encoder/attention"]
    again = keras.dtype_policies.deserialize(keras.dtype_policies.serialize(policies))
    assert again == policies and len(again) == 3
    assert keras.dtype_policies.get({"module": "keras", "class_name": "DTypePolicy",
                                     "config": {"name": "float16"},
                                     "registered_name": None}).compute_dtype == "float16"
    with pytest.raises(ValueError, match="no quantized policies"):
        keras.dtype_policies.deserialize({"class_name": "QuantizedDTypePolicy", "config": {}})
