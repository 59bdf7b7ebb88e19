"""Keras 3 vs trainlib: each optimizer (and clipping, weight decay, schedules) step by step in fit.

Both models start from the same weights; after every batch the logs, the
weights, and at the end the optimizer's variables (order, values, iterations)
must agree.
"""
import re
import sys
import warnings

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from ._common import close, close_optimizers, close_weights, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(0)
X = RNG.normal(size=(27, 5)).astype(np.float32)
Y = RNG.integers(0, 3, size=(27,))


def _mlp(k):
    return k.Sequential([k.layers.Input(shape=(5,)), k.layers.Dense(6, activation="relu"),
                         k.layers.Dense(3, activation="softmax")])


OPTIMIZERS = {
    "sgd": lambda o: o.SGD(0.1),
    "sgd_momentum": lambda o: o.SGD(0.1, momentum=0.9),
    "sgd_nesterov": lambda o: o.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda o: o.Adam(0.01),
    "adam_amsgrad": lambda o: o.Adam(0.01, amsgrad=True),
    "adamw": lambda o: o.AdamW(0.01, weight_decay=0.05),
    "rmsprop": lambda o: o.RMSprop(0.01),
    "rmsprop_momentum_centered": lambda o: o.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda o: o.Adagrad(0.1),
    "adam_clipnorm": lambda o: o.Adam(0.01, clipnorm=0.05),
    "sgd_clipvalue": lambda o: o.SGD(0.1, clipvalue=0.01),
    "rmsprop_global_clipnorm": lambda o: o.RMSprop(0.01, global_clipnorm=0.1),
    "sgd_weight_decay": lambda o: o.SGD(0.1, momentum=0.5, weight_decay=0.1),
    "adagrad_weight_decay_clipnorm": lambda o: o.Adagrad(0.1, weight_decay=0.01, clipnorm=0.1),
    # gradient accumulation (issue 26): every k-th step updates with the mean of k gradients
    "adam_accumulate_3": lambda o: o.Adam(0.01, gradient_accumulation_steps=3),
    "sgd_momentum_accumulate_2_clipnorm": lambda o: o.SGD(0.1, momentum=0.9, clipnorm=0.05,
                                                          gradient_accumulation_steps=2),
    "adamw_accumulate_2": lambda o: o.AdamW(0.01, weight_decay=0.05,
                                            gradient_accumulation_steps=2),
    "rmsprop_accumulate_2_global_clipnorm": lambda o: o.RMSprop(
        0.01, global_clipnorm=0.1, gradient_accumulation_steps=2),
    # the rest of Keras 3.15's optimizers
    "adadelta": lambda o: o.Adadelta(1.0),
    "adadelta_rho": lambda o: o.Adadelta(0.5, rho=0.8, epsilon=1e-6),
    "adamax": lambda o: o.Adamax(0.01),
    "nadam": lambda o: o.Nadam(0.01),
    "nadam_accumulate_2": lambda o: o.Nadam(0.01, gradient_accumulation_steps=2),
    "ftrl": lambda o: o.Ftrl(0.1),
    "ftrl_regularized": lambda o: o.Ftrl(0.1, learning_rate_power=-0.3,
                                         l1_regularization_strength=0.001,
                                         l2_regularization_strength=0.01,
                                         l2_shrinkage_regularization_strength=0.01, beta=0.1),
    "lion": lambda o: o.Lion(0.003),
    "lion_weight_decay": lambda o: o.Lion(0.003, beta_1=0.8, weight_decay=0.1),
    "lamb": lambda o: o.Lamb(0.01),
    "adafactor": lambda o: o.Adafactor(0.05),
    "adafactor_schedule": lambda o: o.Adafactor(o.schedules.ExponentialDecay(0.3, 2, 0.5)),
    "adafactor_no_relative_step": lambda o: o.Adafactor(0.05, relative_step=False,
                                                        clip_threshold=0.5),
    "muon": lambda o: o.Muon(0.01),
    "muon_no_nesterov": lambda o: o.Muon(0.01, nesterov=False, rms_rate=None, ns_steps=3,
                                         adam_lr_ratio=0.5),
    # use_ema (the averages are optimizer variables: compared after fit) and loss_scale_factor
    "adam_ema": lambda o: o.Adam(0.01, use_ema=True, ema_momentum=0.9),
    "sgd_momentum_ema_overwrite": lambda o: o.SGD(0.1, momentum=0.9, use_ema=True,
                                                  ema_momentum=0.8, ema_overwrite_frequency=3),
    "nadam_ema_accumulate_2": lambda o: o.Nadam(0.01, use_ema=True, ema_momentum=0.5,
                                                gradient_accumulation_steps=2),
    "lamb_ema_clipnorm": lambda o: o.Lamb(0.01, use_ema=True, clipnorm=0.1),
    "adam_loss_scale_factor": lambda o: o.Adam(0.01, loss_scale_factor=128.0),
    "rmsprop_loss_scale_factor_clipvalue": lambda o: o.RMSprop(0.01, loss_scale_factor=0.25,
                                                               clipvalue=0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_keras(name):
    make = OPTIMIZERS[name]
    km, tm = pair(_mlp, lambda k: dict(optimizer=make(k.optimizers),
                                       loss="sparse_categorical_crossentropy",
                                       metrics=["accuracy"]))
    fit_both(km, tm, X, Y, epochs=2, batch_size=8)
    close_optimizers(km.optimizer, tm.optimizer)
    # as Keras 3, fit ends on the moving averages with use_ema
    close_weights(km.get_weights(), tm.get_weights(), "after fit")


SCHEDULES = {
    "exponential_staircase": lambda s: s.ExponentialDecay(0.5, decay_steps=3, decay_rate=0.5,
                                                          staircase=True),
    "exponential": lambda s: s.ExponentialDecay(0.5, decay_steps=3, decay_rate=0.5),
    "piecewise": lambda s: s.PiecewiseConstantDecay([2, 5], [0.5, 0.2, 0.05]),
    "cosine": lambda s: s.CosineDecay(0.5, decay_steps=6, alpha=0.1),
    "cosine_warmup": lambda s: s.CosineDecay(0.0, decay_steps=5, warmup_target=0.5,
                                             warmup_steps=3),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_values_and_config(name):
    import trainlib as tl
    k, t = SCHEDULES[name](keras.optimizers.schedules), SCHEDULES[name](tl.optim.schedules)
    close([float(k(s)) for s in range(14)], [float(t(s)) for s in range(14)], name, 1e-6, 1e-8)
    assert t.get_config() == k.get_config()


def test_accumulation_config_and_schedule_on_accumulated_iterations_match_keras():
    import trainlib as tl
    make = SCHEDULES["exponential_staircase"]
    km, tm = pair(_mlp, lambda k: dict(optimizer=k.optimizers.Adam(
        make(k.optimizers.schedules), gradient_accumulation_steps=2),
        loss="sparse_categorical_crossentropy"))
    fit_both(km, tm, X, Y, epochs=2, batch_size=4)
    close_optimizers(km.optimizer, tm.optimizer)
    k_config = keras.optimizers.SGD(0.1, gradient_accumulation_steps=4).get_config()
    t_config = tl.optim.SGD(0.1, gradient_accumulation_steps=4).get_config()
    assert t_config["gradient_accumulation_steps"] == k_config["gradient_accumulation_steps"] == 4
    for bad in (1, 0.5):
        with pytest.raises(ValueError, match="gradient_accumulation_steps"):
            keras.optimizers.SGD(gradient_accumulation_steps=bad)
        with pytest.raises(ValueError, match="gradient_accumulation_steps"):
            tl.optim.SGD(gradient_accumulation_steps=bad)


@pytest.mark.parametrize("name", ["exponential_staircase", "piecewise", "cosine_warmup"])
def test_schedule_in_fit(name):
    make = SCHEDULES[name]
    km, tm = pair(_mlp, lambda k: dict(optimizer=k.optimizers.Adam(make(k.optimizers.schedules)),
                                       loss="sparse_categorical_crossentropy"))
    fit_both(km, tm, X, Y, epochs=2, batch_size=8)
    close_optimizers(km.optimizer, tm.optimizer)


def test_optimizer_configs_and_names():
    import trainlib as tl
    for cls in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor", "Adamax",
                "Ftrl", "Lamb", "Lion", "Muon", "Nadam", "ScheduleFreeAdamW"):
        k, t = getattr(keras.optimizers, cls)(), getattr(tl.optim, cls)()
        kc, tc = k.get_config(), t.get_config()
        # default names are numbered per class in both (adam, adam_1, ...): compare the stem
        assert tc.pop("name").split("_")[0] == kc.pop("name").split("_")[0]
        assert tc == kc, cls


def test_non_default_configs_match_keras_and_load_there():
    import trainlib as tl
    kwargs = dict(learning_rate=0.05, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=4,
                  loss_scale_factor=16.0, clipnorm=1.5, gradient_accumulation_steps=3)
    for cls in ("Adam", "Nadam", "Ftrl", "Lion", "Adafactor"):
        k, t = getattr(keras.optimizers, cls)(**kwargs), getattr(tl.optim, cls)(**kwargs)
        kc, tc = k.get_config(), t.get_config()
        kc.pop("name"), tc.pop("name")
        assert tc == kc, cls
        # Keras builds the same optimizer from trainlib's serialized form, and the reverse
        assert keras.optimizers.deserialize(tl.optim.serialize(t)).get_config()["use_ema"]
        again = tl.optim.deserialize(keras.optimizers.serialize(k))
        assert type(again) is type(t) and again.get_config()["ema_overwrite_frequency"] == 4


NEW_OPTIMIZERS = {
    "Adadelta": dict(learning_rate=1.0), "Adafactor": dict(learning_rate=0.05),
    "Adamax": dict(learning_rate=0.01, use_ema=True), "Ftrl": dict(learning_rate=0.1),
    "Lamb": dict(learning_rate=0.01), "Lion": dict(learning_rate=0.003),
    "Muon": dict(learning_rate=0.01), "Nadam": dict(learning_rate=0.01, use_ema=True),
    "ScheduleFreeAdamW": dict(learning_rate=0.01),
}


@pytest.mark.parametrize("cls", sorted(NEW_OPTIMIZERS))
@pytest.mark.parametrize("direction", ["keras_to_trainlib", "trainlib_to_keras"])
def test_optimizer_state_moves_between_keras_and_trainlib_in_keras_files(tmp_path, cls,
                                                                         direction):
    """The optimizer's variables (order, shapes, dtypes, values) round-trip through `.keras`:
    the slots follow Keras's order, so Keras's saved state loads here and the reverse."""
    import trainlib as tl
    frameworks = (keras, tl.keras) if direction == "keras_to_trainlib" else (tl.keras, keras)
    source_k, target_k = frameworks
    source = _mlp(source_k)
    source.compile(optimizer=getattr(source_k.optimizers, cls)(**NEW_OPTIMIZERS[cls]),
                   loss="sparse_categorical_crossentropy")
    source.fit(X, Y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    path = str(tmp_path / "m.keras")
    source.save(path)
    target = target_k.saving.load_model(path)
    assert type(target.optimizer).__name__ == cls
    sv, tv = list(source.optimizer.variables), list(target.optimizer.variables)
    assert [tuple(v.shape) for v in sv] == [tuple(v.shape) for v in tv]
    if direction == "keras_to_trainlib":
        # the slots are named as Keras names them, after the variables' paths (a model Keras
        # loads from a file has layer paths without the model's name: not compared there)
        # (Keras numbers its unnamed Variables process-wide: Nadam's "variable_3")
        def names(variables):
            return [re.sub(r"^variable_\d+$", "variable", v.name.split(":")[0])
                    for v in variables]
        assert names(sv) == names(tv)
    for a, b in zip(sv, tv):
        a, b = np.asarray(a.numpy()), np.asarray(b.numpy())
        assert a.dtype.kind == b.dtype.kind
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.asarray(target.predict(X, verbose=0)),
                               np.asarray(source.predict(X, verbose=0)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("swap_on_epoch", [False, True])
def test_fit_with_swap_ema_weights_matches_keras(swap_on_epoch):
    """Validation runs on the averages (the val_ logs agree), training on the raw weights."""
    import trainlib as tl
    km, tm = pair(_mlp, lambda k: dict(
        optimizer=k.optimizers.Adam(0.02, use_ema=True, ema_momentum=0.8),
        loss="sparse_categorical_crossentropy", metrics=["accuracy"]))
    fit_both(km, tm, X, Y, epochs=3, batch_size=8, validation_data=(X[:9], Y[:9]),
             keras_callbacks=[keras.callbacks.SwapEMAWeights(swap_on_epoch)],
             tl_callbacks=[tl.keras.callbacks.SwapEMAWeights(swap_on_epoch)])
    close_optimizers(km.optimizer, tm.optimizer)
    close_weights(km.get_weights(), tm.get_weights(), "after fit")
    close(km.evaluate(X, Y, verbose=0), tm.evaluate(X, Y, verbose=0), "evaluate after fit")


_JAX_SCHEDULE_FREE = r"""
import os, sys, json
os.environ["KERAS_BACKEND"] = "jax"
import numpy as np, keras
data = np.load(sys.argv[1])
variables = [keras.Variable(data["w0"]), keras.Variable(data["w1"])]
opt = keras.optimizers.ScheduleFreeAdamW(0.01, warmup_steps=int(sys.argv[2]))
for t in range(int(data["steps"])):
    opt.apply([data[f"g{t}_0"], data[f"g{t}_1"]], variables)
np.savez(sys.argv[1] + ".out.npz", *[np.asarray(v.numpy()) for v in variables + opt.variables])
"""


@pytest.mark.parametrize("warmup", [0, 3])
def test_schedule_free_adamw_matches_keras_as_written(tmp_path, warmup):
    """Keras's ScheduleFreeAdamW keeps `momentum_old = momentum.value` before updating the
    momentum. On the JAX backend that is the old value, as the algorithm says; on the
    TensorFlow backend `.value` is the live tf.Variable, so later uses read the *updated*
    momentum (a backend-dependent result). trainlib follows the algorithm: compared with
    Keras on JAX, in a subprocess (the backend is fixed per process)."""
    import subprocess
    import trainlib as tl
    pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    w = [rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(3,)).astype(np.float32)]
    steps = 6
    grads = [[rng.normal(size=v.shape).astype(np.float32) for v in w] for _ in range(steps)]
    path = str(tmp_path / "data.npz")
    np.savez(path, w0=w[0], w1=w[1], steps=steps,
             **{f"g{t}_{i}": g for t, gs in enumerate(grads) for i, g in enumerate(gs)})
    script = tmp_path / "run.py"
    script.write_text(_JAX_SCHEDULE_FREE)
    subprocess.run([sys.executable, str(script), path, str(warmup)], check=True,
                   capture_output=True, timeout=300)
    with np.load(path + ".out.npz") as out:
        expected = [out[f"arr_{i}"] for i in range(len(out.files))]
    variables = [tl.Variable(v) for v in w]
    opt = tl.optim.ScheduleFreeAdamW(0.01, warmup_steps=warmup)
    step = tl.function(lambda gs: opt.apply(gs, variables))
    for gs in grads:
        step([tl.constant(g) for g in gs])
    got = [v.numpy() for v in variables + opt.variables]
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(expected, got)):
        close(a, b, f"variable {i}", 1e-5, 1e-6)


def _multi(k):
    o = k.optimizers
    return o.MultiOptimizer(o.OptimizerMap(o.Adam(0.01, use_ema=True),
                                           {".*encoder/kernel": o.SGD(0.1, momentum=0.9)}))


def _two_dense(k):
    return k.Sequential([k.layers.Input(shape=(5,)),
                         k.layers.Dense(6, activation="relu", name="encoder"),
                         k.layers.Dense(3, activation="softmax", name="head")])


def test_multi_optimizer_matches_keras_in_fit_and_keras_files(tmp_path):
    import trainlib as tl
    km, tm = pair(_two_dense, lambda k: dict(optimizer=_multi(k),
                                            loss="sparse_categorical_crossentropy"))
    fit_both(km, tm, X, Y, epochs=2, batch_size=8)
    close_optimizers(km.optimizer, tm.optimizer)
    assert [type(o).__name__ for o in tm.optimizer.optimizers] == \
        [type(o).__name__ for o in km.optimizer.optimizers]
    close_weights(km.get_weights(), tm.get_weights(), "after fit")
    for source, target_k in ((km, tl.keras), (tm, keras)):
        path = str(tmp_path / f"{type(source).__module__.split('.')[0]}.keras")
        source.save(path)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # Keras warns when it skips a saved state
            target = target_k.saving.load_model(path)
        assert type(target.optimizer).__name__ == "MultiOptimizer"
        for a, b in zip(source.optimizer.variables, target.optimizer.variables):
            np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))
        assert len(source.optimizer.variables) == len(target.optimizer.variables)


def test_loss_scale_optimizer_state_loads_in_keras_without_warnings(tmp_path):
    """Keras 3 saves a LossScaleOptimizer's inner optimizer as a group of its own
    (`optimizer/inner_optimizer/vars`), and warns when a file lacks it."""
    import trainlib as tl
    source = _mlp(tl.keras)
    source.compile(optimizer=tl.keras.optimizers.LossScaleOptimizer(
        tl.keras.optimizers.Nadam(0.01, use_ema=True)), loss="sparse_categorical_crossentropy")
    source.fit(X, Y, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / "lso.keras")
    source.save(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        target = keras.saving.load_model(path)
    assert len(target.optimizer.variables) == len(source.optimizer.variables)
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), np.asarray(b.numpy()))
