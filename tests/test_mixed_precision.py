"""Dtype policies, input autocasting, mixed_float16 and the LossScaleOptimizer."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import keras

mp = keras.mixed_precision


@pytest.fixture
def mixed_float16():
    mp.set_global_policy("mixed_float16")
    yield
    mp.set_global_policy("float32")


def test_policies():
    p = mp.Policy("mixed_float16")
    assert (p.compute_dtype, p.variable_dtype, repr(p)) == \
        ("float16", "float32", '<DTypePolicy "mixed_float16">')
    assert mp.DTypePolicy("float64").compute_dtype == "float64"
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match="Cannot convert 'mixed_int8'"):
        mp.Policy("mixed_int8")
    with pytest.raises(ValueError, match="floating-point policies"):
        mp.set_global_policy("int32")


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.float16, np.float64])
def test_inputs_cast_to_the_compute_dtype_as_keras(dtype):
    x = np.ones((2, 3), dtype)
    floating = np.dtype(dtype).kind == "f"
    assert keras.layers.Dense(2)(x).dtype == "float32"
    assert keras.layers.BatchNormalization()(x).dtype == "float32"
    assert keras.layers.LayerNormalization()(x).dtype == "float32"
    assert keras.layers.GlobalAveragePooling1D()(x[None]).dtype == "float32"
    # where Keras's ops keep integers, so does trainlib: only floating inputs are autocast
    assert keras.layers.Flatten()(x).dtype == ("float32" if floating else np.dtype(dtype).name)
    assert keras.layers.Activation("relu")(x).dtype == \
        ("float32" if floating else np.dtype(dtype).name)
    assert keras.layers.Dense(2, dtype="float64")(x).dtype == "float64"


def test_autocast_off_keeps_floating_inputs():
    class Identity(keras.layers.Layer):
        def call(self, x):
            return x

    assert Identity(autocast=False)(np.ones(2, np.float64)).dtype == "float64"
    assert Identity()(np.ones(2, np.float64)).dtype == "float32"


def test_fit_on_uint8_int64_float64_arrays():
    rng = np.random.default_rng(0)
    for dtype in (np.uint8, np.int64, np.float64):
        x = rng.integers(0, 255, size=(16, 4)).astype(dtype)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        history = model.fit(x, np.ones((16, 1), dtype), verbose=0)
        assert np.isfinite(history.history["loss"][0])
        assert model.predict(x, verbose=0).dtype == np.float32


def test_mixed_float16_layers(mixed_float16):
    dense = keras.layers.Dense(3, activation="softmax")
    y = dense(np.ones((2, 2), np.float32))
    assert dense.kernel.dtype == "float32" and dense.compute_dtype == "float16"
    assert y.dtype == "float16"
    assert keras.layers.Activation("softmax", dtype="float32")(y).dtype == "float32"
    bn = keras.layers.BatchNormalization()
    assert bn(y).dtype == "float16" and bn.gamma.dtype == "float32"
    loss = keras.losses.MeanSquaredError()(np.ones((2, 3), np.float16), y)
    assert loss.dtype == "float32"                  # losses compute in float32, as Keras
    x = keras.Input((2,))
    assert x.dtype == "float32" and keras.layers.Dense(4)(x).dtype == "float16"

    # the gradient reaches the float32 kernel through the cast, in float32
    with tl.GradientTape() as tape:
        out = tl.reduce_sum(tl.cast(dense(np.ones((2, 2), np.float32)), tl.float32))
    assert tape.gradient(out, dense.kernel).dtype == "float32"


def test_a_layers_own_mixed_policy():
    dense = keras.layers.Dense(2, dtype="mixed_float16")
    assert dense(np.ones((1, 3), np.float64)).dtype == "float16" and dense.dtype == "float32"
    assert dense.dtype_policy == mp.Policy("mixed_float16")
    assert keras.layers.Dense(2, dtype=mp.Policy("float64")).compute_dtype == "float64"


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_compile_wraps_the_optimizer_and_scales_the_loss(mixed_float16):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, dtype="float32")])
    model.compile(keras.optimizers.SGD(0.01), "mse")
    assert isinstance(model.optimizer, mp.LossScaleOptimizer)
    assert model.optimizer.name == "loss_scale_optimizer"
    x = np.random.default_rng(1).normal(size=(32, 4)).astype(np.float32)
    model.fit(x, x[:, :1], batch_size=8, epochs=1, verbose=0)
    # float16 gradients of a loss scaled by 2**15 may overflow: each such step is skipped
    # and halves the scale; the others are applied and counted
    applied = int(model.optimizer.iterations)
    assert 0 < applied <= 4 and int(model.optimizer.step_counter) <= applied
    assert float(model.optimizer.dynamic_scale) == 2.0 ** (15 - (4 - applied))
    other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    other.compile("sgd", "mse", auto_scale_loss=False)
    assert not isinstance(other.optimizer, mp.LossScaleOptimizer)


def test_loss_scale_optimizer_skips_non_finite_steps_and_grows():
    v = tl.Variable(1.0)
    opt = mp.LossScaleOptimizer(tl.optim.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)

    @tl.function
    def step(g):
        return opt.apply_gradients([(g, v)])

    assert bool(step(tl.constant(8.0)))             # unscaled gradient 1.0
    assert float(v) == pytest.approx(0.9) and float(opt.dynamic_scale) == 8.0
    assert bool(step(tl.constant(8.0)))             # the second finite step doubles the scale
    assert float(v) == pytest.approx(0.8) and float(opt.dynamic_scale) == 16.0
    assert not bool(step(tl.constant(np.inf)))      # skipped: halved, counter reset
    assert float(v) == pytest.approx(0.8) and float(opt.dynamic_scale) == 8.0
    assert int(opt.step_counter) == 0 and int(opt.iterations) == 2
    assert not bool(step(tl.constant(np.nan)))
    assert float(opt.dynamic_scale) == 4.0
    assert float(opt.scale_loss(tl.constant(2.0))) == 8.0
    assert [v.name.split(":")[0] for v in opt.variables] == [
        "iteration", "learning_rate", "step_counter", "dynamic_scale", "iteration",
        "learning_rate"]                                 # Keras 3's order
    config = opt.get_config()
    assert config["initial_scale"] == 8.0 and config["inner_optimizer"]["class_name"] == "SGD"
    again = mp.LossScaleOptimizer.from_config(config)
    assert isinstance(again.inner_optimizer, tl.optim.SGD) and again.dynamic_growth_steps == 2
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        mp.LossScaleOptimizer(tl.optim.SGD(), clipnorm=1.0)
