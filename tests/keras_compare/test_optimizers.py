"""Keras 3 vs trainlib: each optimizer (and clipping, weight decay, schedules) step by step in fit.

Both models start from the same weights; after every batch the logs, the
weights, and at the end the optimizer's variables (order, values, iterations)
must agree.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from ._common import close, close_optimizers, fit_both, pair  # noqa: E402

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
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_keras(name):
    make = OPTIMIZERS[name]
    km, tm = pair(_mlp, lambda k: dict(optimizer=make(k.optimizers),
                                       loss="sparse_categorical_crossentropy",
                                       metrics=["accuracy"]))
    fit_both(km, tm, X, Y, epochs=2, batch_size=8)
    close_optimizers(km.optimizer, tm.optimizer)


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
    for cls in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        k, t = getattr(keras.optimizers, cls)(), getattr(tl.optim, cls)()
        kc, tc = k.get_config(), t.get_config()
        # default names are numbered per class in both (adam, adam_1, ...): compare the stem
        assert tc.pop("name").split("_")[0] == kc.pop("name").split("_")[0]
        assert tc == kc, cls
