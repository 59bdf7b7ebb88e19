"""Optimizers against hand-written numpy versions of Keras 3's update formulas, eagerly and traced."""
import math

import numpy as np
import pytest

import trainlib as tl
from trainlib import optim

CASES = []  # no op table: this module tests the Keras level, not op types


def _numpy_sgd(lr=0.01, momentum=0.0, nesterov=False):
    lr = float(np.float32(lr))  # the learning rate lives in a float32 Variable, as in Keras
    def step(w, g, s, t):
        if momentum == 0:
            return w - lr * g
        m = s.setdefault("m", np.zeros_like(w))
        m[...] = momentum * m - lr * g
        return w + (momentum * m - lr * g if nesterov else m)
    return step


def _numpy_adam(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=None):
    lr = float(np.float32(lr))  # the learning rate lives in a float32 Variable, as in Keras
    def step(w, g, s, t):
        if wd:
            w = w - w * wd * lr
        m = s.setdefault("m", np.zeros_like(w))
        v = s.setdefault("v", np.zeros_like(w))
        m[...] = m + (g - m) * (1 - b1)
        v[...] = v + (g * g - v) * (1 - b2)
        alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        if amsgrad:
            vh = s.setdefault("vh", np.zeros_like(w))
            vh[...] = np.maximum(vh, v)
            return w - m * alpha / (np.sqrt(vh) + eps)
        return w - m * alpha / (np.sqrt(v) + eps)
    return step


def _numpy_rmsprop(lr=0.001, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    lr = float(np.float32(lr))  # the learning rate lives in a float32 Variable, as in Keras
    def step(w, g, s, t):
        v = s.setdefault("v", np.zeros_like(w))
        v[...] = rho * v + (1 - rho) * g * g
        if centered:
            a = s.setdefault("a", np.zeros_like(w))
            a[...] = rho * a + (1 - rho) * g
            den = v - a * a + eps
        else:
            den = v + eps
        inc = lr * g / np.sqrt(den)
        if momentum > 0:
            mom = s.setdefault("mom", np.zeros_like(w))
            mom[...] = momentum * mom + inc
            return w - mom
        return w - inc
    return step


def _numpy_adagrad(lr=0.001, init=0.1, eps=1e-7):
    lr = float(np.float32(lr))  # the learning rate lives in a float32 Variable, as in Keras
    def step(w, g, s, t):
        acc = s.setdefault("acc", np.full_like(w, init))
        acc[...] = acc + g * g
        return w - lr * g / np.sqrt(acc + eps)
    return step


OPTIMIZERS = [
    ("sgd", lambda: optim.SGD(0.1), _numpy_sgd(0.1)),
    ("sgd_momentum", lambda: optim.SGD(0.1, momentum=0.9), _numpy_sgd(0.1, 0.9)),
    ("sgd_nesterov", lambda: optim.SGD(0.1, momentum=0.9, nesterov=True), _numpy_sgd(0.1, 0.9, True)),
    ("adam", lambda: optim.Adam(0.01), _numpy_adam(0.01)),
    ("adam_amsgrad", lambda: optim.Adam(0.01, amsgrad=True), _numpy_adam(0.01, amsgrad=True)),
    ("adamw", lambda: optim.AdamW(0.01, weight_decay=0.1), _numpy_adam(0.01, wd=0.1)),
    ("rmsprop", lambda: optim.RMSprop(0.01), _numpy_rmsprop(0.01)),
    ("rmsprop_centered_momentum", lambda: optim.RMSprop(0.01, momentum=0.5, centered=True),
     _numpy_rmsprop(0.01, momentum=0.5, centered=True)),
    ("adagrad", lambda: optim.Adagrad(0.1), _numpy_adagrad(0.1)),
    ("sgd_weight_decay", lambda: optim.SGD(0.1, weight_decay=0.01), None),
]


def _grads(rng, steps):
    return [rng.normal(size=(3, 2)) for _ in range(steps)]


@pytest.mark.parametrize("name,make,reference", [o for o in OPTIMIZERS if o[2] is not None],
                         ids=[o[0] for o in OPTIMIZERS if o[2] is not None])
@pytest.mark.parametrize("traced", [False, True])
def test_update_matches_numpy_formula(name, make, reference, traced):
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(3, 2))
    var = tl.Variable(w0.copy())            # float64: compares the formula, not rounding
    opt = make()
    grads = _grads(rng, 5)

    def apply(g):
        opt.apply_gradients([(g, var)])
    step = tl.function(apply) if traced else apply
    w, state = w0.copy(), {}
    for t, g in enumerate(grads, start=1):
        step(tl.constant(g))
        w = reference(w, g, state, t)
        np.testing.assert_allclose(var.numpy(), w, rtol=1e-10, atol=1e-12)
    assert int(opt.iterations.numpy()) == 5
    if traced:  # 2 when the first trace creates slots: TensorFlow traces such a function twice
        assert step.experimental_get_tracing_count() in (1, 2)


def test_sgd_weight_decay_is_decoupled():
    var = tl.Variable(np.array([1.0, -2.0]))
    opt = optim.SGD(0.1, weight_decay=0.01)
    opt.apply_gradients([(tl.constant(np.array([0.5, 0.5])), var)])
    w = np.array([1.0, -2.0])
    w = w - w * 0.01 * 0.1
    np.testing.assert_allclose(var.numpy(), w - 0.1 * 0.5)


def test_clipping():
    g = np.array([3.0, 4.0])
    for kwargs, expected in [({"clipnorm": 1.0}, g / 5.0), ({"clipvalue": 3.5}, np.clip(g, -3.5, 3.5)),
                             ({"global_clipnorm": 2.5}, g / 2.0)]:
        var = tl.Variable(np.zeros(2))
        optim.SGD(1.0, **kwargs).apply_gradients([(tl.constant(g), var)])
        np.testing.assert_allclose(var.numpy(), -expected, rtol=1e-12)
    with pytest.raises(ValueError, match="Only one"):
        optim.SGD(clipnorm=1.0, clipvalue=1.0)


def test_learning_rate_change_does_not_retrace():
    var = tl.Variable(1.0)
    opt = optim.SGD(0.5)

    @tl.function
    def step():
        opt.apply_gradients([(tl.constant(1.0), var)])
    step()
    opt.learning_rate = 0.25
    step()
    assert step.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(var.numpy(), 1.0 - 0.5 - 0.25)


def test_minimize_and_slots_created_in_build():
    var = tl.Variable([1.0, 2.0])
    opt = optim.Adam(0.1)
    opt.build([var])
    n = len(opt.variables)
    with tl.GradientTape() as tape:
        loss = tl.reduce_sum(tl.square(var))
    opt.minimize(loss, [var], tape=tape)
    assert len(opt.variables) == n
    assert np.all(var.numpy() < [1.0, 2.0])


def test_errors():
    with pytest.raises(ValueError, match="Unknown optimizer"):
        optim.get("adamz")
    var = tl.Variable(1.0)
    with pytest.raises(ValueError, match="No gradients"):
        optim.SGD().apply_gradients([(None, var)])
    opt = optim.SGD(momentum=0.9)
    opt.build([var])
    with pytest.raises(KeyError, match="not part of the var_list"):
        opt.apply_gradients([(tl.constant(1.0), tl.Variable(2.0))])
    assert isinstance(optim.get("adam"), optim.Adam)


def test_schedules_match_formulas():
    s = optim.schedules
    exp = s.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    stair = s.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    pw = s.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1])
    cos = s.CosineDecay(0.1, decay_steps=20, alpha=0.1)
    warm = s.CosineDecay(0.0, decay_steps=20, warmup_target=0.2, warmup_steps=5)
    for step in [0, 3, 5, 7, 10, 15, 25, 40]:
        np.testing.assert_allclose(float(exp(step)), 0.1 * 0.5 ** (step / 10), rtol=1e-6)
        np.testing.assert_allclose(float(stair(step)), 0.1 * 0.5 ** (step // 10), rtol=1e-6)
        assert float(pw(step)) == pytest.approx(1.0 if step <= 5 else 0.5 if step <= 10 else 0.1)
        c = min(step, 20) / 20
        np.testing.assert_allclose(float(cos(step)), 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * c)) + 0.1),
                                   rtol=1e-5, atol=1e-7)
        if step < 5:
            expected = 0.2 * step / 5
        else:
            c = min(step - 5, 20) / 20
            expected = 0.2 * 0.5 * (1 + math.cos(math.pi * c))
        np.testing.assert_allclose(float(warm(step)), expected, rtol=1e-5, atol=1e-7)


def test_schedule_drives_optimizer_in_graph():
    var = tl.Variable(0.0)
    opt = optim.SGD(optim.schedules.ExponentialDecay(1.0, 1, 0.5))

    @tl.function
    def step():
        opt.apply_gradients([(tl.constant(-1.0), var)])
    for _ in range(3):
        step()
    np.testing.assert_allclose(var.numpy(), 1.0 + 0.5 + 0.25, rtol=1e-6)
    assert step.experimental_get_tracing_count() == 1
