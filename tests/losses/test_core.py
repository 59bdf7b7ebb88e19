"""Losses against numpy references (Keras 3 formulas, reductions, sample weights)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib import losses

CASES = []  # Keras-level module: no op types of its own
EPS = 1e-7


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _data(seed, n=6, k=4):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)).astype(np.float32)
    labels = rng.integers(0, k, size=n)
    onehot = np.eye(k, dtype=np.float32)[labels]
    binary = rng.integers(0, 2, size=(n, k)).astype(np.float32)
    w = rng.uniform(0.1, 2.0, size=n).astype(np.float32)
    return logits, labels, onehot, binary, w


@given(st.integers(0, 10_000))
def test_each_loss_matches_numpy(seed):
    logits, labels, onehot, binary, w = _data(seed)
    p = _softmax(logits.astype(np.float64))
    s = _sigmoid(logits.astype(np.float64))
    y = logits[::-1].copy()
    ref = {
        "mse": ((y - logits) ** 2).mean(-1),
        "mae": np.abs(y - logits).mean(-1),
        "huber": np.where(np.abs(logits - y) <= 1.0, 0.5 * (logits - y) ** 2,
                          np.abs(logits - y) - 0.5).mean(-1),
        "bce_logits": (np.maximum(logits, 0) - logits * binary +
                       np.log1p(np.exp(-np.abs(logits)))).mean(-1),
        "bce": -(binary * np.log(np.clip(s, EPS, 1 - EPS)) +
                 (1 - binary) * np.log(1 - np.clip(s, EPS, 1 - EPS))).mean(-1),
        "cce": -(onehot * np.log(np.clip(p, EPS, 1 - EPS))).sum(-1),
        "cce_logits": -(onehot * np.log(p)).sum(-1),
        "scce": -np.log(np.clip(p[np.arange(len(labels)), labels], EPS, 1 - EPS)),
        "scce_logits": -np.log(p[np.arange(len(labels)), labels]),
    }
    ours = {
        "mse": losses.MeanSquaredError(reduction="none")(y, logits),
        "mae": losses.MeanAbsoluteError(reduction="none")(y, logits),
        "huber": losses.Huber(reduction="none")(y, logits),
        "bce_logits": losses.BinaryCrossentropy(from_logits=True, reduction="none")(binary, logits),
        "bce": losses.BinaryCrossentropy(reduction="none")(binary, s.astype(np.float32)),
        "cce": losses.CategoricalCrossentropy(reduction="none")(onehot, p.astype(np.float32)),
        "cce_logits": losses.CategoricalCrossentropy(from_logits=True, reduction="none")(onehot, logits),
        "scce": losses.SparseCategoricalCrossentropy(reduction="none")(labels, p.astype(np.float32)),
        "scce_logits": losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(
            labels, logits),
    }
    for name in ref:
        np.testing.assert_allclose(ours[name].numpy(), ref[name], rtol=2e-5, atol=2e-6, err_msg=name)


def test_reductions_and_sample_weight():
    logits, labels, onehot, binary, w = _data(1)
    per = losses.mean_squared_error(binary, logits).numpy()
    mse = losses.MeanSquaredError()
    assert float(mse(binary, logits)) == pytest.approx(per.mean(), rel=1e-6)
    assert float(mse(binary, logits, sample_weight=w)) == pytest.approx((per * w).sum() / len(per), rel=1e-6)
    assert float(losses.MeanSquaredError(reduction="sum")(binary, logits)) == pytest.approx(per.sum(), rel=1e-6)
    # Keras 3: "mean" is "sum_over_batch_size"; "mean_with_sample_weight" divides by sum(w)
    assert float(losses.MeanSquaredError(reduction="mean")(binary, logits, sample_weight=w)) == \
        pytest.approx((per * w).sum() / len(per), rel=1e-6)
    assert float(losses.MeanSquaredError(reduction="mean_with_sample_weight")(
        binary, logits, sample_weight=w)) == pytest.approx((per * w).sum() / w.sum(), rel=1e-6)


def test_function_forms_and_names():
    y, p = np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])
    assert float(losses.mse(y, p)[0]) == pytest.approx(0.5)
    assert float(losses.mae(y, p)[0]) == pytest.approx(0.5)
    assert losses.get("mse") is losses.mean_squared_error
    assert isinstance(losses.get("MeanSquaredError"), losses.MeanSquaredError)
    with pytest.raises(ValueError, match="Unknown loss"):
        losses.get("nope")
    # (n,) labels fit (n, 1) predictions, as in Keras
    assert losses.mse(np.zeros(3), np.ones((3, 1))).shape == (3,)


def test_losses_trace_and_differentiate():
    logits = tl.Variable(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
    labels = tl.constant([0, 2, 1, 1])
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)

    @tl.function
    def grad():
        with tl.GradientTape() as tape:
            loss = loss_fn(labels, logits)
        return loss, tape.gradient(loss, logits)
    loss, g = grad()
    p = _softmax(logits.numpy().astype(np.float64))
    expected = (p - np.eye(3)[[0, 2, 1, 1]]) / 4
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5, atol=1e-6)
    config = loss_fn.get_config()
    assert losses.SparseCategoricalCrossentropy.from_config(config).get_config() == config


def test_bad_shapes_raise():
    with pytest.raises(ValueError):
        losses.MeanSquaredError()(np.zeros((4, 3), np.float32), np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError, match="do not fit"):
        losses.sparse_categorical_crossentropy(np.zeros((4, 3), np.int32), np.zeros((4, 2), np.float32))


# the regression and hinge losses of issue 21 against numpy formulas
def _signed(y):
    return 2 * y - 1 if np.isin(y, (0, 1)).all() else y


_FORMULAS = {
    "mean_squared_logarithmic_error": lambda t, p: np.mean(
        (np.log1p(np.maximum(p, 1e-7)) - np.log1p(np.maximum(t, 1e-7))) ** 2, -1),
    "cosine_similarity": lambda t, p: -np.sum(
        t / np.linalg.norm(t, axis=-1, keepdims=True) *
        p / np.linalg.norm(p, axis=-1, keepdims=True), -1),
    "log_cosh": lambda t, p: np.mean(np.log(np.cosh(p - t)), -1),
    "poisson": lambda t, p: np.mean(p - t * np.log(p + 1e-7), -1),
    "kl_divergence": lambda t, p: np.sum(
        np.clip(t, 1e-7, 1) * np.log(np.clip(t, 1e-7, 1) / np.clip(p, 1e-7, 1)), -1),
    "hinge": lambda t, p: np.mean(np.maximum(1 - _signed(t) * p, 0), -1),
    "squared_hinge": lambda t, p: np.mean(np.maximum(1 - _signed(t) * p, 0) ** 2, -1),
    "categorical_hinge": lambda t, p: np.maximum(
        np.max((1 - t) * p, -1) - np.sum(t * p, -1) + 1, 0),
}


@pytest.mark.parametrize("name", sorted(_FORMULAS))
def test_added_losses_match_numpy(name):
    rng = np.random.default_rng(0)
    t = rng.uniform(0.05, 1, size=(5, 4))
    p = rng.uniform(0.05, 1, size=(5, 4))
    if "hinge" in name:
        t, p = (rng.random((5, 4)) > 0.5).astype(np.float64), rng.normal(size=(5, 4))
    got = getattr(losses, name)(t.astype(np.float32), p.astype(np.float32)).numpy()
    np.testing.assert_allclose(got, _FORMULAS[name](t, p), rtol=1e-4, atol=1e-6)
    assert losses.get(name) is getattr(losses, name)
