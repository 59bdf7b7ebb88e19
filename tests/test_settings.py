"""keras.config (trainlib/settings.py and what reads it): floatx reaching new layers through the
default dtype policy, the epoch/step caps fit honours, interactive logging, unsafe
deserialization, and what clear_session forgets."""
import logging

import numpy as np
import pytest

from trainlib import keras
from trainlib import settings


@pytest.fixture(autouse=True)
def _restore():
    yield
    keras.config.set_floatx("float32")
    keras.config.set_epsilon(1e-7)
    keras.config.set_image_data_format("channels_last")
    keras.config.set_max_epochs(None)
    keras.config.set_max_steps_per_epoch(None)
    keras.mixed_precision.set_global_policy(None)
    keras.utils.clear_session()


def _dense_dtype():
    layer = keras.layers.Dense(1)
    layer.build((None, 2))
    return layer.kernel.dtype


def test_set_floatx_reaches_new_layers_after_clear_session_as_keras():
    keras.utils.clear_session()
    assert keras.config.floatx() == "float32" and _dense_dtype() == "float32"
    keras.config.set_floatx("float64")
    # as Keras: the default policy was fixed by the first layer, until clear_session
    assert _dense_dtype() == "float32" and keras.config.dtype_policy().name == "float32"
    keras.utils.clear_session()
    assert keras.config.dtype_policy().name == "float64"
    layer = keras.layers.Dense(1)
    out = layer(np.ones((2, 2)))
    assert layer.kernel.dtype == "float64" and out.dtype == "float64"
    with pytest.raises(ValueError, match="Unknown `floatx` value: int32"):
        keras.config.set_floatx("int32")


def test_set_dtype_policy_wins_over_floatx_and_is_the_mixed_precision_one():
    keras.config.set_dtype_policy("mixed_float16")
    assert keras.mixed_precision.global_policy() is keras.config.dtype_policy()
    layer = keras.layers.Dense(1)
    layer.build((None, 2))
    assert layer.compute_dtype == "float16" and layer.kernel.dtype == "float32"


def test_scalar_settings_and_flags():
    keras.config.set_epsilon(1e-5)
    assert keras.config.epsilon() == keras.backend.epsilon() == 1e-5
    keras.config.set_image_data_format("channels_first")
    assert keras.backend.image_data_format() == "channels_first"
    with pytest.raises(ValueError, match="data_format"):
        keras.config.set_image_data_format("nhwc")
    assert keras.config.backend() == "tensorflow"
    keras.config.set_backend("tensorflow")
    with pytest.raises(ValueError, match="one backend"):
        keras.config.set_backend("jax")
    assert keras.config.is_flash_attention_enabled() is None
    keras.config.disable_flash_attention()
    assert keras.config.is_flash_attention_enabled() is False
    keras.config.enable_flash_attention()
    assert keras.config.is_flash_attention_enabled() is None
    keras.config.disable_traceback_filtering()
    assert not keras.config.is_traceback_filtering_enabled()
    keras.config.disable_interactive_logging()
    keras.config.disable_flash_attention()
    keras.utils.clear_session()       # forgets the switches, keeps the set values
    assert keras.config.is_traceback_filtering_enabled()
    assert keras.config.is_interactive_logging_enabled()
    assert keras.config.is_flash_attention_enabled() is None
    assert keras.config.epsilon() == 1e-5
    assert keras.config.is_nnx_enabled() is False


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_max_epochs_and_max_steps_cap_fit_with_keras_warnings():
    x, y = np.ones((40, 3), "float32"), np.ones((40, 1), "float32")
    keras.config.set_max_epochs(2)
    keras.config.set_max_steps_per_epoch(3)
    steps = []
    counter = keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: steps.append(b))
    with pytest.warns(UserWarning) as record:
        history = _model().fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[counter])
    messages = [str(w.message) for w in record]
    assert "Limiting epochs to 2" in messages and "Limiting steps_per_epoch to 3" in messages
    assert len(history.history["loss"]) == 2 and steps == [0, 1, 2, 0, 1, 2]
    evaluated = []
    counter = keras.callbacks.LambdaCallback(on_test_batch_end=lambda b, logs: evaluated.append(b))
    with pytest.warns(UserWarning, match="Limiting steps_per_epoch to 3"):
        _model().evaluate(x, y, batch_size=4, verbose=0, callbacks=[counter])
    assert evaluated == [0, 1, 2]
    keras.config.set_max_epochs(None)
    keras.config.set_max_steps_per_epoch(None)
    assert len(_model().fit(x, y, batch_size=4, epochs=3, verbose=0).history["loss"]) == 3


def test_disabled_interactive_logging_sends_progress_and_summary_to_the_logger(capsys, caplog):
    x, y = np.ones((8, 3), "float32"), np.ones((8, 1), "float32")
    model = _model()
    keras.utils.disable_interactive_logging()
    assert not keras.config.is_interactive_logging_enabled()
    with caplog.at_level(logging.INFO, logger="trainlib"):
        model.fit(x, y, batch_size=4, epochs=2, verbose=2)
        model.summary()
    assert capsys.readouterr().out == ""
    messages = [r.getMessage() for r in caplog.records if r.name == "trainlib"]
    assert messages[0] == "Epoch 1/2" and messages[1].startswith("2/2 - ")
    assert any("Total params" in m for m in messages)
    keras.utils.enable_interactive_logging()
    model.fit(x, y, batch_size=4, epochs=2, verbose=2)
    assert capsys.readouterr().out.startswith("Epoch 1/2\n2/2 - ")


def test_enable_unsafe_deserialization_lets_lambda_bytecode_load(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Lambda(lambda t: t * 2.0)])
    path = tmp_path / "lambda.keras"
    model.save(path)
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.saving.load_model(path)
    keras.config.enable_unsafe_deserialization()
    assert settings.in_safe_mode() is False
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(np.ones((1, 2)), verbose=0), [[2.0, 2.0]])
    keras.utils.clear_session()
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.saving.load_model(path)


def test_keras_ops_and_random_default_to_floatx():
    import numpy as np  # noqa: PLC0415
    keras.config.set_floatx("float64")
    made = [keras.ops.zeros(2), keras.ops.ones((1,)), keras.ops.eye(2), keras.ops.linspace(0, 1, 3),
            keras.ops.sqrt(np.int32(4)), keras.ops.add(np.int32(1), 1.5),
            keras.random.normal((2,)), keras.ops.std(np.arange(3, dtype=np.int32))]
    assert [t.dtype.name for t in made] == ["float64"] * len(made)
    # as Keras: a Python float converts to float32, and mean/var of integers are float32
    assert keras.ops.convert_to_tensor(1.0).dtype.name == "float32"
    assert keras.ops.mean(np.arange(3, dtype=np.int32)).dtype.name == "float32"
    keras.config.set_floatx("float32")
    assert keras.ops.zeros(2).dtype.name == "float32"
