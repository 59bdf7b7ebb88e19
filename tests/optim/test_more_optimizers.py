"""Adadelta, Adamax, Nadam, Ftrl, Lion, Lamb, Adafactor, Muon, ScheduleFreeAdamW (and the
moving averages of `use_ema`) against hand-written float64 numpy versions of Keras 3's
formulas, over several steps, eagerly and traced; their configs round-trip."""
import math

import numpy as np
import pytest

import trainlib as tl
from trainlib import optim

CASES = []  # no op table: this module tests the Keras level, not op types


def _f32(lr):
    return float(np.float32(lr))  # the learning rate lives in a float32 Variable, as in Keras


def _adadelta(lr, rho=0.95, eps=1e-7):
    lr = _f32(lr)

    def step(w, g, s, t):
        ag = s.setdefault("ag", np.zeros_like(w))
        ad = s.setdefault("ad", np.zeros_like(w))
        ag[...] = rho * ag + (1 - rho) * g * g
        delta = -np.sqrt(ad + eps) * g / np.sqrt(ag + eps)
        ad[...] = rho * ad + (1 - rho) * delta * delta
        return w + lr * delta
    return step


def _adamax(lr, b1=0.9, b2=0.999, eps=1e-7):
    lr = _f32(lr)

    def step(w, g, s, t):
        m = s.setdefault("m", np.zeros_like(w))
        u = s.setdefault("u", np.zeros_like(w))
        m[...] = m + (g - m) * (1 - b1)
        u[...] = np.maximum(b2 * u, np.abs(g))
        return w - lr * m / ((1 - b1 ** t) * (u + eps))
    return step


def _nadam(lr, b1=0.9, b2=0.999, eps=1e-7):
    lr = _f32(lr)
    shared = {"u_product": 1.0, "t": 0}

    def step(w, g, s, t):
        if shared["t"] != t:   # the product moves once per step, whatever the variables
            shared["t"] = t
            shared["u_product"] *= b1 * (1 - 0.5 * 0.96 ** t)
        u_t = b1 * (1 - 0.5 * 0.96 ** t)
        u_t1 = b1 * (1 - 0.5 * 0.96 ** (t + 1))
        prod = shared["u_product"]
        m = s.setdefault("m", np.zeros_like(w))
        v = s.setdefault("v", np.zeros_like(w))
        m[...] = m + (g - m) * (1 - b1)
        v[...] = v + (g * g - v) * (1 - b2)
        m_hat = u_t1 * m / (1 - prod * u_t1) + (1 - u_t) * g / (1 - prod)
        v_hat = v / (1 - b2 ** t)
        return w - m_hat * lr / (np.sqrt(v_hat) + eps)
    return step


def _ftrl(lr, power=-0.5, init=0.1, l1=0.0, l2=0.0, shrink=0.0, beta=0.0):
    lr = _f32(lr)

    def step(w, g, s, t):
        n = s.setdefault("n", np.full_like(w, init))
        z = s.setdefault("z", np.zeros_like(w))
        new_n = n + g * g
        z[...] = z + g + 2 * shrink * w - (new_n ** -power - n ** -power) / lr * w
        quadratic = new_n ** -power / lr + 2 * (l2 + beta / (2 * lr))
        n[...] = new_n
        return (np.clip(z, -l1, l1) - z) / quadratic
    return step


def _lion(lr, b1=0.9, b2=0.99):
    lr = _f32(lr)

    def step(w, g, s, t):
        m = s.setdefault("m", np.zeros_like(w))
        w = w - lr * np.sign(b1 * m + (1 - b1) * g)
        m[...] = b2 * m + (1 - b2) * g
        return w
    return step


def _lamb(lr, b1=0.9, b2=0.999, eps=1e-7):
    lr = _f32(lr)

    def step(w, g, s, t):
        m = s.setdefault("m", np.zeros_like(w))
        v = s.setdefault("v", np.zeros_like(w))
        m[...] = m + (g - m) * (1 - b1)
        v[...] = v + (g * g - v) * (1 - b2)
        update = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
        w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(update)
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        return w - ratio * lr * update
    return step


def _adafactor(lr, decay=-0.8, eps1=1e-30, eps2=1e-3, clip=1.0, relative=True):
    lr = _f32(lr)

    def rms(x):
        return np.sqrt(np.mean(x * x))

    def step(w, g, s, t):
        rate = min(lr, 1 / math.sqrt(t)) if relative else lr
        rho = min(rate, 1 / math.sqrt(t))
        alpha = max(eps2, rms(w)) * rho
        g2 = g * g + eps1
        b = 1 - t ** decay
        if w.ndim >= 2:
            r = s.setdefault("r", np.zeros(w.shape[:-1]))
            c = s.setdefault("c", np.zeros(w.shape[:-2] + w.shape[-1:]))
            r[...] = b * r + (1 - b) * g2.mean(-1)
            c[...] = b * c + (1 - b) * g2.mean(-2)
            v = (r / r.mean(-1, keepdims=True))[..., None] * c[..., None, :]
        else:
            v = s.setdefault("v", np.zeros_like(w))
            v[...] = b * v + (1 - b) * g2
        u = g / np.sqrt(v)
        return w - alpha * u / max(1.0, rms(u) / clip)
    return step


def _muon(lr, momentum=0.95, nesterov=True, ns_steps=5, rms_rate=0.2, wd=0.004,
          adam_wd=0.004, b1=0.9, b2=0.999, eps=1e-7, abc=(3.4445, -4.7750, 2.0315)):
    lr = _f32(lr)

    def orthogonalize(x):
        a, b, c = abc
        tall = x.shape[0] > x.shape[1]
        if tall:
            x = x.T
        x = x / (np.linalg.norm(x) + 1e-7)
        for _ in range(ns_steps):
            xx = x @ x.T
            x = a * x + (b * xx + c * xx @ xx) @ x
        return x.T if tall else x

    def step(w, g, s, t):
        m = s.setdefault("m", np.zeros_like(w))
        if w.ndim != 2:   # AdamW, with its own weight decay
            w = w - w * adam_wd * lr
            v = s.setdefault("v", np.zeros_like(w))
            m[...] = m + (g - m) * (1 - b1)
            v[...] = v + (g * g - v) * (1 - b2)
            alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            return w - m * alpha / (np.sqrt(v) + eps)
        w = w - w * wd * lr
        m[...] = m + g + m * (momentum - 1)
        update = orthogonalize(g + momentum * m if nesterov else m.copy()) * lr
        if rms_rate is not None:
            update = update * math.sqrt(max(w.shape)) * rms_rate
        return w - update
    return step


def _schedule_free_adamw(lr, b1=0.9, b2=0.999, eps=1e-8, warmup=0):
    lr = _f32(lr)

    def step(w, g, s, t):
        z = s.setdefault("z", w.copy())
        v = s.setdefault("v", np.zeros_like(w))
        rate = lr * min(t / warmup, 1.0) if warmup > 0 else lr
        z_old = z.copy()
        v[...] = v + (g * g - v) * (1 - b2)
        z[...] = z - rate * g / (np.sqrt(v / (1 - b2 ** t)) + eps)
        x = (w - (1 - b1) * z_old) / b1
        x = (1 - 1 / t) * x + z / t
        return (1 - b1) * z + b1 * x
    return step


OPTIMIZERS = [
    ("adadelta", lambda: optim.Adadelta(1.0), lambda: _adadelta(1.0)),
    ("adadelta_rho", lambda: optim.Adadelta(0.5, rho=0.8, epsilon=1e-6),
     lambda: _adadelta(0.5, 0.8, 1e-6)),
    ("adamax", lambda: optim.Adamax(0.01), lambda: _adamax(0.01)),
    ("nadam", lambda: optim.Nadam(0.01), lambda: _nadam(0.01)),
    ("ftrl", lambda: optim.Ftrl(0.1), lambda: _ftrl(0.1)),
    ("ftrl_regularized", lambda: optim.Ftrl(0.1, learning_rate_power=-0.3,
                                            initial_accumulator_value=0.2,
                                            l1_regularization_strength=0.01,
                                            l2_regularization_strength=0.02,
                                            l2_shrinkage_regularization_strength=0.03, beta=0.1),
     lambda: _ftrl(0.1, -0.3, 0.2, 0.01, 0.02, 0.03, 0.1)),
    ("lion", lambda: optim.Lion(0.01, beta_1=0.8), lambda: _lion(0.01, 0.8)),
    ("lamb", lambda: optim.Lamb(0.01), lambda: _lamb(0.01)),
    ("adafactor", lambda: optim.Adafactor(0.05), lambda: _adafactor(0.05)),
    ("adafactor_absolute", lambda: optim.Adafactor(0.8, relative_step=False, clip_threshold=0.5),
     lambda: _adafactor(0.8, relative=False, clip=0.5)),
    ("muon", lambda: optim.Muon(0.01), lambda: _muon(0.01)),
    ("muon_plain", lambda: optim.Muon(0.01, nesterov=False, rms_rate=None, ns_steps=3,
                                      weight_decay=None, adam_weight_decay=0.1),
     lambda: _muon(0.01, nesterov=False, rms_rate=None, ns_steps=3, wd=0.0, adam_wd=0.1)),
    ("schedule_free_adamw", lambda: optim.ScheduleFreeAdamW(0.01),
     lambda: _schedule_free_adamw(0.01)),
    ("schedule_free_adamw_warmup", lambda: optim.ScheduleFreeAdamW(0.01, warmup_steps=3),
     lambda: _schedule_free_adamw(0.01, warmup=3)),
]
SHAPES = [(4, 3), (3,), (2, 5)]   # a tall and a wide matrix (Muon) and a vector (Adafactor)


def _run(make, steps, traced, seed=0):
    rng = np.random.default_rng(seed)
    w0 = [rng.normal(size=s) for s in SHAPES]
    variables = [tl.Variable(w.copy()) for w in w0]   # float64: the formula, not rounding
    opt = make()
    grads = [[rng.normal(size=s) for s in SHAPES] for _ in range(steps)]

    def apply(gs):
        opt.apply(gs, variables)
    step = tl.function(apply) if traced else apply
    return w0, variables, opt, grads, step


@pytest.mark.parametrize("name,make,reference", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
@pytest.mark.parametrize("traced", [False, True])
def test_update_matches_numpy_formula(name, make, reference, traced):
    w0, variables, opt, grads, step = _run(make, 6, traced)
    refs = [reference() for _ in SHAPES] if name != "nadam" else [reference()] * len(SHAPES)
    ws, states = [w.copy() for w in w0], [{} for _ in SHAPES]
    for t, gs in enumerate(grads, start=1):
        step([tl.constant(g) for g in gs])
        ws = [ref(w, g, s, t) for ref, w, g, s in zip(refs, ws, gs, states)]
        for i, (var, w) in enumerate(zip(variables, ws)):
            np.testing.assert_allclose(var.numpy(), w, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name}, step {t}, variable {i}")
    assert int(opt.iterations.numpy()) == len(grads)


@pytest.mark.parametrize("name,make,reference", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_config_round_trips_and_names_the_keras_class(name, make, reference):
    opt = make()
    config = opt.get_config()
    again = type(opt).from_config(config)
    assert again.get_config() == config
    serialized = optim.serialize(opt)
    assert serialized["class_name"] == type(opt).__name__
    assert serialized["module"] == "keras.optimizers"
    restored = optim.deserialize(serialized)
    assert type(restored) is type(opt) and restored.get_config() == config
    assert type(optim.get(type(opt).__name__.lower())) is type(opt)


def test_variables_follow_keras_order_names_and_kinds():
    # iterations, learning rate, [averages], then the slots interleaved per variable
    rng = np.random.default_rng(0)
    model = tl.keras.Sequential([tl.keras.layers.Input((3,)), tl.keras.layers.Dense(2, name="d")],
                                name="net")
    variables = model.trainable_variables
    assert [v.path for v in variables] == ["net/d/kernel", "net/d/bias"]
    nadam = optim.Nadam(use_ema=True)
    nadam.build(variables)
    assert [v.name.split(":")[0] for v in nadam.variables] == ["iteration", "learning_rate"] + [
        "net_d_" + n for n in ("kernel_average", "bias_average", "kernel_momentum",
                                          "kernel_velocity", "bias_momentum", "bias_velocity")
    ] + ["variable"]
    assert float(nadam.variables[-1].numpy()) == 1.0
    adafactor = optim.Adafactor()
    adafactor.build(variables)
    assert [(tuple(v.shape), v.dtype.name) for v in adafactor.variables[2:]] == [
        ((3,), "float32"), ((2,), "float32"), ((3, 2), "float32"),
        ((), "int32"), ((), "int32"), ((2,), "float32")]
    # built by a LossScaleOptimizer, as Keras: the attribute Variables stay untracked
    for inner, count in ((optim.Nadam(), 6), (optim.Adafactor(), 6)):
        wrapped = optim.LossScaleOptimizer(inner)
        wrapped.build(variables)
        assert len(inner.variables) == count
        assert len(wrapped.variables) == 4 + count
    muon = optim.Muon()
    muon.build(variables)
    assert [v.name.split(":")[0] for v in muon.variables[2:]] == [
        "net_d_kernel_momentum", "net_d_bias_momentum",
        "net_d_bias_velocity"]
    assert [v.name.split(":")[0] for v in adafactor.variables[2:]] == [
        "kernel", "kernel", "net_d_kernel_velocity", "bias", "bias",
        "net_d_bias_velocity"]


def test_argument_checks_as_keras():
    with pytest.raises(ValueError, match="beta_1"):
        optim.Lion(beta_1=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        optim.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        optim.Ftrl(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="ema_momentum"):
        optim.Adam(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="ema_overwrite_frequency"):
        optim.Adam(use_ema=True, ema_overwrite_frequency=0.5)
    with pytest.raises(ValueError, match="fused=True"):
        optim.Lamb(fused=True)   # not elementwise


# -- use_ema
@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("overwrite", [None, 3])
@pytest.mark.parametrize("accumulate", [None, 2])
def test_moving_average_matches_numpy(traced, overwrite, accumulate):
    momentum = 0.8
    make = lambda: optim.SGD(0.1, use_ema=True, ema_momentum=momentum,  # noqa: E731
                             ema_overwrite_frequency=overwrite,
                             gradient_accumulation_steps=accumulate)
    w0, variables, opt, grads, step = _run(make, 7, traced)
    ws = [w.copy() for w in w0]
    averages = [np.zeros_like(w) for w in w0]
    acc = [np.zeros_like(w) for w in w0]
    for call, gs in enumerate(grads):
        iterations = call // accumulate if accumulate else call
        if accumulate and (call + 1) % accumulate:
            acc = [a + g for a, g in zip(acc, gs)]
        else:
            if accumulate:
                gs = [(g + a) / accumulate for g, a in zip(gs, acc)]
                acc = [np.zeros_like(w) for w in w0]
            ws = [w - _f32(0.1) * g for w, g in zip(ws, gs)]
        m = momentum if iterations != 0 else 0.0
        averages = [m * a + (1 - m) * w for a, w in zip(averages, ws)]
        if overwrite and (iterations + 1) % overwrite == 0:
            ws = [a.copy() for a in averages]
        step([tl.constant(g) for g in gs] if not accumulate else
             [tl.constant(g) for g in grads[call]])
        for var, w, a, avg in zip(variables, ws, opt._model_variables_moving_average, averages):
            np.testing.assert_allclose(var.numpy(), w, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a.numpy(), avg, rtol=1e-12, atol=1e-12)
    opt.finalize_variable_values(variables)
    for var, avg in zip(variables, averages):
        np.testing.assert_array_equal(var.numpy(), avg)
    assert opt.get_config()["use_ema"] is True
    assert opt.get_config()["ema_overwrite_frequency"] == overwrite


def test_fit_ends_on_the_averages_and_swap_ema_weights_evaluates_them():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = rng.normal(size=(32, 1)).astype(np.float32)
    model = tl.keras.Sequential([tl.keras.layers.Input((4,)), tl.keras.layers.Dense(1)])
    model.compile(optimizer=optim.SGD(0.1, use_ema=True, ema_momentum=0.5), loss="mse")
    seen = {}

    class Probe(tl.keras.callbacks.Callback):
        def on_test_begin(self, logs=None):
            seen["test"] = [w.copy() for w in self.model.get_weights()]

        def on_epoch_end(self, epoch, logs=None):
            seen.setdefault("epoch_end", []).append([w.copy() for w in self.model.get_weights()])

    swap = tl.keras.callbacks.SwapEMAWeights()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, validation_data=(x, y),
              callbacks=[swap, Probe()], shuffle=False)
    averages = [a.numpy() for a in model.optimizer._model_variables_moving_average]
    for w, a in zip(seen["test"], averages):   # evaluation saw the averages ...
        np.testing.assert_array_equal(w, a)
    raw = seen["epoch_end"][0]                  # ... and training continued on its own weights
    assert not all(np.array_equal(w, a) for w, a in zip(raw, averages))
    for w, a in zip(model.get_weights(), averages):   # fit ends on the averages (Keras 3)
        np.testing.assert_array_equal(w, a)


def test_swap_on_epoch_holds_the_averages_between_epochs_and_needs_use_ema():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = rng.normal(size=(16, 1)).astype(np.float32)
    model = tl.keras.Sequential([tl.keras.layers.Input((3,)), tl.keras.layers.Dense(1)])
    model.compile(optimizer=optim.Adam(0.05, use_ema=True, ema_momentum=0.7), loss="mse")
    log = []

    class Probe(tl.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            log.append(("begin", [w.copy() for w in self.model.get_weights()]))

        def on_epoch_end(self, epoch, logs=None):
            opt = self.model.optimizer
            log.append(("end", [w.copy() for w in self.model.get_weights()],
                        [a.numpy() for a in opt._model_variables_moving_average]))

    model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False,
              callbacks=[tl.keras.callbacks.SwapEMAWeights(swap_on_epoch=True), Probe()])
    (_, _), (_, held0, slots0), (_, back1), (_, held1, _) = log
    # at the end of epoch 0 the model holds the averages (the raw weights sit in the slots)
    assert not all(np.array_equal(a, b) for a, b in zip(held0, slots0))
    # epoch 1 begins on the raw weights again: they were swapped back
    for w, raw in zip(back1, slots0):
        np.testing.assert_array_equal(w, raw)
    for w, held in zip(model.get_weights(), held1):   # the last epoch's averages stay
        np.testing.assert_array_equal(w, held)
    plain = tl.keras.Sequential([tl.keras.layers.Input((3,)), tl.keras.layers.Dense(1)])
    plain.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="use_ema"):
        plain.fit(x, y, verbose=0, validation_data=(x, y),
                  callbacks=[tl.keras.callbacks.SwapEMAWeights()])


# -- loss_scale_factor
@pytest.mark.parametrize("traced", [False, True])
def test_loss_scale_factor_scales_the_loss_and_unscales_the_gradients(traced):
    rng = np.random.default_rng(3)
    w0 = rng.normal(size=(3, 2))
    x = tl.constant(rng.normal(size=(5, 3)))
    results = []
    for factor in (None, 1024.0):
        var = tl.Variable(w0.copy())
        opt = optim.Adam(0.01, loss_scale_factor=factor)

        def step():
            with tl.GradientTape() as tape:
                loss = tl.reduce_sum(tl.square(tl.matmul(x, var)))
                scaled = opt.scale_loss(loss)
            opt.apply([tape.gradient(scaled, var)], [var])
            return loss, scaled
        run = tl.function(step) if traced else step
        for _ in range(3):
            loss, scaled = run()
        factor_seen = 1.0 if factor is None else factor
        np.testing.assert_allclose(scaled.numpy(), loss.numpy() * factor_seen, rtol=1e-12)
        results.append(var.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    assert optim.Adam(loss_scale_factor=8.0).get_config()["loss_scale_factor"] == 8.0


# -- MultiOptimizer
def test_multi_optimizer_delegates_by_path_and_round_trips():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.normal(size=(16, 2)).astype(np.float32)

    def build():
        model = tl.keras.Sequential([tl.keras.layers.Input((4,)),
                                     tl.keras.layers.Dense(3, name="encoder"),
                                     tl.keras.layers.Dense(2, name="head")])
        model.set_weights([np.full(w.shape, 0.1, np.float32) for w in model.get_weights()])
        return model

    multi = build()
    sgd, adam = optim.SGD(0.1), optim.Adam(0.01)
    multi.compile(optimizer=optim.MultiOptimizer(optim.OptimizerMap(adam, {".*encoder/.*": sgd})),
                  loss="mse")
    multi.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    # the same steps by hand: SGD on the encoder, Adam on the head
    model = build()
    sgd2, adam2 = optim.SGD(0.1), optim.Adam(0.01)
    enc = model.get_layer("encoder").trainable_variables
    head = model.get_layer("head").trainable_variables
    for _ in range(2):
        for i in range(0, 16, 4):
            with tl.GradientTape() as tape:
                loss = tl.reduce_mean(tl.square(model(x[i:i + 4]) - y[i:i + 4]))
            grads = tape.gradient(loss, enc + head)
            sgd2.apply(grads[:2], enc)
            adam2.apply(grads[2:], head)
    for a, b in zip(multi.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    opt = multi.optimizer
    assert [type(o).__name__ for o in opt.optimizers] == ["SGD", "Adam"]
    assert int(opt.iterations.numpy()) == 8 and int(adam.iterations.numpy()) == 8
    assert len(opt.variables) == 2 + len(sgd.variables) + len(adam.variables)
    with pytest.raises(AttributeError, match="MultiOptimizer"):
        opt.learning_rate  # noqa: B018
    again = optim.deserialize(optim.serialize(opt))
    assert [type(o).__name__ for o in again.optimizers] == ["SGD", "Adam"]
    assert again.get_config() == opt.get_config()
    with pytest.raises(ValueError, match="cannot be"):
        optim.OptimizerMap(sgd)["x"] = optim.MultiOptimizer(optim.OptimizerMap(adam))


def test_global_clipnorm_spreads_a_non_finite_norm_to_every_gradient_as_keras():
    # Keras 3: scale = clip * min(1/norm, 1/clip) + (norm - norm): NaN for an inf norm
    a, b = tl.Variable([1.0, 2.0]), tl.Variable([3.0])
    opt = optim.SGD(0.1, global_clipnorm=1.0)
    opt.apply([tl.constant([np.inf, 0.0]), tl.constant([1.0])], [a, b])
    assert np.isnan(a.numpy()).all() and np.isnan(b.numpy()).all()
    c = tl.Variable([3.0, 4.0])
    optim.SGD(1.0, global_clipnorm=1.0).apply([tl.constant([3.0, 4.0])], [c])
    np.testing.assert_allclose(c.numpy(), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-6)
