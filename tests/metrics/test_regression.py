"""R2Score and the correlation metrics against numpy formulas."""
import numpy as np
import pytest

from trainlib import metrics

CASES = []  # Keras-level module: no op types of its own


def test_r2_score_aggregations_weights_and_adjustment():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(50, 3)).astype(np.float32)
    p = (y + rng.normal(scale=0.5, size=(50, 3))).astype(np.float32)
    w = rng.uniform(0.5, 2.0, 50).astype(np.float32)
    mean = np.sum(w[:, None] * y, 0) / w.sum()
    ss_tot = np.sum(w[:, None] * (y - mean) ** 2, 0)
    raw = 1 - np.sum(w[:, None] * (y - p) ** 2, 0) / ss_tot
    for aggregation, expected in ((None, raw), ("uniform_average", raw.mean()),
                                  ("variance_weighted_average", np.sum(ss_tot * raw) / ss_tot.sum())):
        m = metrics.R2Score(class_aggregation=aggregation)
        m.update_state(y[:20], p[:20], sample_weight=w[:20])
        m.update_state(y[20:], p[20:], sample_weight=w[20:])
        np.testing.assert_allclose(m.result().numpy(), expected, rtol=1e-4)
    adjusted = metrics.R2Score(num_regressors=4)
    adjusted.update_state(y, p)
    plain = 1 - np.sum((y - p) ** 2, 0) / np.sum((y - y.mean(0)) ** 2, 0)
    n = y.size      # Keras counts values, not rows
    assert float(adjusted.result()) == pytest.approx(
        1 - (1 - plain.mean()) * (n - 1) / (n - 4 - 1), rel=1e-4)


def test_correlations_match_numpy():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(6, 8)).astype(np.float32)
    p = (0.7 * y + rng.normal(size=(6, 8))).astype(np.float32)
    pearson = [np.corrcoef(a, b)[0, 1] for a, b in zip(y, p)]
    np.testing.assert_allclose(metrics.pearson_correlation(y, p).numpy(), pearson, rtol=1e-4)
    mt, mp = y.mean(-1, keepdims=True), p.mean(-1, keepdims=True)
    ccc = np.mean(2 * (y - mp) * (p - mp) / (y.var(-1, keepdims=True) + p.var(-1, keepdims=True)
                                             + (mt - mp) ** 2 + 1e-7), -1)
    np.testing.assert_allclose(metrics.concordance_correlation(y, p).numpy(), ccc, rtol=1e-4)
    m = metrics.PearsonCorrelation()
    m.update_state(y, p)
    assert float(m.result()) == pytest.approx(np.mean(pearson), rel=1e-4)
    assert m.get_config() == {"name": "pearson_correlation", "dtype": "float32", "axis": -1}
