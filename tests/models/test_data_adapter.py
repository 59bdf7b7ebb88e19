"""The data arguments of fit/evaluate/predict are checked at once: `x=None` and a `batch_size`
that is not an integer are clear errors naming the caller's line (never an AttributeError deep in
a step, never a silently truncated batch size)."""
import numpy as np
import pytest

import trainlib as tl


@pytest.fixture(scope="module")
def model():
    m = tl.Sequential([tl.layers.Input((3,)), tl.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


X, Y = np.ones((10, 3), np.float32), np.ones((10, 1), np.float32)


@pytest.mark.parametrize("call", [
    lambda m: m.fit(None, Y, verbose=0),
    lambda m: m.evaluate(None, Y, verbose=0),
    lambda m: m.predict(None, verbose=0),
    lambda m: m.fit(X, Y, validation_data=(None, Y), verbose=0),
], ids=["fit", "evaluate", "predict", "validation_data"])
def test_x_none_is_a_clear_error(model, call):
    with pytest.raises(ValueError, match=r"x is None: fit, evaluate and predict need the model's "
                                         r"inputs.*test_data_adapter\.py:\d+"):
        call(model)


@pytest.mark.parametrize("bad", [2.5, 2.0, "4", True, [4]])
@pytest.mark.parametrize("call", [
    lambda m, b: m.fit(X, Y, batch_size=b, verbose=0),
    lambda m, b: m.evaluate(X, Y, batch_size=b, verbose=0),
    lambda m, b: m.predict(X, batch_size=b, verbose=0),
    lambda m, b: m.fit(X, Y, validation_split=0.5, validation_batch_size=b, verbose=0),
    lambda m, b: m.fit(tl.data.Dataset.from_tensor_slices((X, Y)).batch(2), batch_size=b, verbose=0),
], ids=["fit", "evaluate", "predict", "validation", "dataset"])
def test_a_batch_size_that_is_not_an_integer_is_a_type_error(model, call, bad):
    with pytest.raises(TypeError, match=r"batch_size must be an integer .*got "
                                        + r"\S+ of type \w+.*test_data_adapter\.py:\d+"):
        call(model, bad)


def test_integer_batch_sizes_work_and_a_negative_one_names_the_line(model):
    history = model.fit(X, Y, batch_size=np.int64(4), epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1
    assert model.predict(X, batch_size=np.int32(3), verbose=0).shape == (10, 1)
    with pytest.raises(ValueError, match=r"batch_size must be positive, got -1 \(at .*test_data_adapter\.py:\d+"):
        model.fit(X, Y, batch_size=-1, verbose=0)
