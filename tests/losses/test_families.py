"""The loss families of issue 21 against numpy: focal and generalized cross-entropies, Dice,
Tversky, Circle, CTC (against brute-force enumeration of alignments), gradients through a
traced step, and the mask of the predictions weighing the reduction (`apply_mask`)."""
import itertools

import numpy as np
import pytest

import trainlib as tl
from trainlib import losses

CASES = []  # Keras-level module: no op types of its own
EPS = 1e-7


def _bce(y, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def test_binary_focal_matches_numpy():
    rng = np.random.default_rng(0)
    y = (rng.random((5, 4)) > 0.5).astype(np.float32)
    p = rng.uniform(0.05, 0.95, (5, 4)).astype(np.float32)
    p_t = y * p + (1 - y) * (1 - p)
    expected = np.mean((1 - p_t) ** 2 * _bce(y, p), -1)
    np.testing.assert_allclose(losses.binary_focal_crossentropy(y, p).numpy(), expected, rtol=1e-5)
    balanced = (y * 0.3 + (1 - y) * 0.7) * (1 - p_t) ** 1.5 * _bce(y, p)
    np.testing.assert_allclose(
        losses.binary_focal_crossentropy(y, p, apply_class_balancing=True, alpha=0.3,
                                         gamma=1.5).numpy(), balanced.mean(-1), rtol=1e-5)
    logits = np.log(p / (1 - p))
    np.testing.assert_allclose(
        losses.binary_focal_crossentropy(y, logits, from_logits=True).numpy(), expected,
        rtol=1e-4)


def test_categorical_focal_and_generalized_cross_entropy_match_numpy():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 6)
    y = np.eye(3, dtype=np.float32)[labels]
    p = rng.random((6, 3)).astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    q = np.clip(p, EPS, 1 - EPS)
    expected = np.sum(0.25 * (1 - q) ** 2 * -y * np.log(q), -1)
    np.testing.assert_allclose(losses.categorical_focal_crossentropy(y, p).numpy(), expected,
                               rtol=1e-5)
    gce = (1 - p[np.arange(6), labels] ** 0.6) / 0.6
    np.testing.assert_allclose(losses.categorical_generalized_cross_entropy(labels, p, 0.6).numpy(),
                               gce, rtol=1e-5)
    with pytest.raises(ValueError, match="q must be"):
        losses.CategoricalGeneralizedCrossEntropy(q=1.0)


def test_dice_and_tversky_match_numpy():
    rng = np.random.default_rng(2)
    y = (rng.random((4, 6)) > 0.5).astype(np.float32)
    p = rng.random((4, 6)).astype(np.float32)
    inter = np.sum(y * p)
    assert float(losses.dice(y, p)) == pytest.approx(1 - 2 * inter / (y.sum() + p.sum() + EPS),
                                                     rel=1e-5)
    per_row = 1 - 2 * np.sum(y * p, 1) / (y.sum(1) + p.sum(1) + EPS)
    np.testing.assert_allclose(losses.dice(y, p, axis=1).numpy(), per_row, rtol=1e-5)
    fp, fn = np.sum((1 - p) * y), np.sum(p * (1 - y))
    assert float(losses.tversky(y, p, alpha=0.2, beta=0.8)) == pytest.approx(
        1 - inter / (inter + 0.2 * fp + 0.8 * fn + EPS), rel=1e-5)
    assert float(losses.Tversky(0.2, 0.8)(y, p)) == pytest.approx(
        float(losses.tversky(y, p, alpha=0.2, beta=0.8)), rel=1e-6)


def test_circle_matches_numpy():
    rng = np.random.default_rng(3)
    labels = np.array([0, 1, 0, 2, 1, 0])
    e = rng.normal(size=(6, 4)).astype(np.float32)
    e /= np.linalg.norm(e, axis=-1, keepdims=True)
    gamma, m = 16.0, 0.3
    d = np.maximum(1 - e @ e.T, 0)
    pos = (labels[:, None] == labels[None, :]) & ~np.eye(6, dtype=bool)
    neg = labels[:, None] != labels[None, :]

    def lse(x, mask):
        x = np.where(mask, x, -np.inf)
        top = np.max(x, 1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
        return np.log(np.sum(np.exp(x - top), 1)) + top[:, 0]

    p_term = -gamma * np.maximum((m + d) * pos, 0) * (m - d)
    n_term = gamma * np.maximum((1 + m - d) * neg, 0) * ((1 - m) - d)
    expected = np.log1p(np.exp(lse(p_term, pos) + lse(n_term, neg)))
    out = losses.circle(labels, e, gamma=gamma, margin=m)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-6)
    # the reduction averages over the samples that have a loss (the values' own mask)
    kept = expected > 0
    assert float(losses.Circle(gamma=gamma, margin=m)(labels, e)) == pytest.approx(
        np.sum(expected) / len(expected) * len(expected) / kept.sum(), rel=1e-4)


def _ctc_brute_force(labels, logits):
    """-log of the summed probability of every alignment that collapses to `labels`."""
    t, k = logits.shape
    logp = logits - np.log(np.sum(np.exp(logits), -1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(k), repeat=t):
        collapsed = [c for i, c in enumerate(path) if c != 0 and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.exp(sum(logp[i, c] for i, c in enumerate(path)))
    return -np.log(total)


def test_ctc_matches_brute_force_alignments():
    rng = np.random.default_rng(4)
    y = np.array([[1, 2, 0], [2, 2, 1]])     # 0 pads (and is the blank)
    logits = rng.normal(size=(2, 5, 3)).astype(np.float32)
    expected = [_ctc_brute_force([1, 2], logits[0]), _ctc_brute_force([2, 2, 1], logits[1])]
    np.testing.assert_allclose(losses.ctc(y, logits).numpy(), expected, rtol=1e-4)
    assert float(losses.CTC()(y, logits)) == pytest.approx(np.mean(expected), rel=1e-4)
    with pytest.raises(ValueError, match="rank|shape"):
        losses.ctc(y[0], logits)


@pytest.mark.parametrize("name", ["binary_focal_crossentropy", "dice", "tversky"])
def test_new_losses_differentiate_in_a_traced_step(name):
    y = tl.constant([[1.0, 0.0, 1.0]])
    w = tl.Variable([[0.3, -0.2, 0.5]])

    @tl.function
    def grad():
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(getattr(losses, name)(y, tl.sigmoid(w)))
        return tape.gradient(loss, w)

    g = grad().numpy()
    assert np.all(np.isfinite(g)) and np.any(g != 0)


def test_apply_mask_reweighs_the_mean_over_kept_entries():
    values = tl.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = tl.constant([[True, True, False], [True, False, False]])
    mean = losses.reduce_weighted_values(values, mask=mask)
    assert float(mean) == pytest.approx((1 + 2 + 4) / 3)
    total = losses.reduce_weighted_values(values, reduction="sum", mask=mask)
    assert float(total) == pytest.approx(7.0)
    weighted = losses.reduce_weighted_values(values, sample_weight=tl.constant([[2.0], [1.0]]),
                                             reduction="mean_with_sample_weight", mask=mask)
    assert float(weighted) == pytest.approx((2 * 1 + 2 * 2 + 4) / (2 + 2 + 1))
    pred = tl.zeros([2, 3, 1])
    pred._keras_mask = mask      # as a masking layer leaves it on its output
    out = losses.MeanAbsoluteError()(values[..., None], pred)
    assert float(out) == pytest.approx((1 + 2 + 4) / 3)
