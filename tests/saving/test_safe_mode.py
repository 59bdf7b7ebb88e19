"""Under the default safe_mode, a model file never makes trainlib import or call code that
the file names (Keras 3.15's rule; CVE-2024-3660 / CVE-2025-1550 class); safe_mode=False
and keras.config.enable_unsafe_deserialization() opt in, for every layer of the load."""
import operator

import numpy as np
import pytest

import trainlib as tl


def _lambda_model(tmp_path, fn):
    inputs = tl.keras.Input((3,))
    model = tl.keras.Model(inputs, tl.keras.layers.Dense(2)(tl.keras.layers.Lambda(fn)(inputs)))
    path = str(tmp_path / "m.keras")
    model.save(path)
    return model, path


def test_a_function_named_by_module_is_refused_in_safe_mode_and_loads_when_opted_in(tmp_path):
    model, path = _lambda_model(tmp_path, operator.neg)   # module "_operator": not trainlib's
    with pytest.raises(ValueError, match="safe_mode=False"):
        tl.keras.models.load_model(path)
    loaded = tl.keras.models.load_model(path, safe_mode=False)   # passed to the Lambda
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_file_naming_os_functions_is_refused(tmp_path):
    layer = tl.keras.layers.Lambda(operator.neg)
    config = layer.get_config()
    config["function"] = {"module": "os", "class_name": "function", "config": "getcwd",
                          "registered_name": "getcwd"}
    with pytest.raises(ValueError, match="disallowed by default"):
        tl.keras.layers.Lambda.from_config(config)
    import os
    assert tl.keras.layers.Lambda.from_config(config, safe_mode=False).function is os.getcwd


def test_python_lambda_bytecode_is_refused_in_safe_mode(tmp_path):
    _, path = _lambda_model(tmp_path, lambda t: t * 2.0)
    with pytest.raises(ValueError, match="safe_mode=False"):
        tl.keras.models.load_model(path)
    assert tl.keras.models.load_model(path, safe_mode=False) is not None
