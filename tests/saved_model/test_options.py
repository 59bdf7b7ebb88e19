"""tl.saved_model.SaveOptions / LoadOptions: accepted by save and load, checked values."""
import numpy as np
import pytest

import trainlib as tl


class Double(tl.Module):
    @tl.function(input_signature=[tl.TensorSpec([None], tl.float32)])
    def __call__(self, x):
        return x * 2


def test_options_accepted_by_save_and_load(tmp_path):
    options = tl.saved_model.SaveOptions(function_aliases={"double": Double.__call__},
                                         experimental_variable_policy="save_device_placement",
                                         save_debug_info=True)
    assert options.function_aliases["double"] is Double.__call__
    tl.saved_model.save(Double(), str(tmp_path / "m"), options=options)
    loaded = tl.saved_model.load(str(tmp_path / "m"), options=tl.saved_model.LoadOptions(
        experimental_io_device="/job:localhost"))
    np.testing.assert_array_equal(loaded(tl.constant([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_bad_options():
    with pytest.raises(ValueError, match="experimental_variable_policy"):
        tl.saved_model.SaveOptions(experimental_variable_policy="everywhere")
    with pytest.raises(TypeError, match="function_aliases"):
        tl.saved_model.SaveOptions(function_aliases=["f"])
    with pytest.raises(TypeError, match="SaveOptions"):
        tl.saved_model.save(Double(), "/nonexistent/never", options={"save_debug_info": True})
