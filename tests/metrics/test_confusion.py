"""Confusion metrics against numpy: weighted counts at thresholds, top_k, class_id, the *At*
metrics, AUC (ROC against the exact rank statistic, PR sums, multi-label), and updates inside a
traced graph."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import trainlib as tl
from trainlib import metrics

CASES = []  # Keras-level module: no op types of its own


def _data(seed=0, n=60, k=3):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) > 0.5).astype(np.float32)
    p = np.clip(0.4 * y + 0.6 * rng.random((n, k)), 0, 1).astype(np.float32)
    return y, p, rng.uniform(0.5, 2.0, n).astype(np.float32)


def _counts(y, p, w, t):
    pos, pred = y != 0, p > t
    w = np.broadcast_to(w[:, None], y.shape)
    return {"tp": np.sum(w * (pos & pred)), "fp": np.sum(w * (~pos & pred)),
            "tn": np.sum(w * (~pos & ~pred)), "fn": np.sum(w * (pos & ~pred))}


@pytest.mark.parametrize("cls, key", [("TruePositives", "tp"), ("FalsePositives", "fp"),
                                      ("TrueNegatives", "tn"), ("FalseNegatives", "fn")])
def test_counts_at_thresholds(cls, key):
    y, p, w = _data()
    thresholds = [0.2, 0.5, 0.9]
    m = getattr(metrics, cls)(thresholds=thresholds)
    m.update_state(y[:30], p[:30], sample_weight=w[:30])
    m.update_state(y[30:], p[30:], sample_weight=w[30:])
    np.testing.assert_allclose(m.result().numpy(), [_counts(y, p, w, t)[key] for t in thresholds],
                               rtol=1e-5)
    single = getattr(metrics, cls)()
    single.update_state(y, p)
    assert single.result().shape == ()
    assert float(single.result()) == pytest.approx(_counts(y, p, np.ones(len(y)), 0.5)[key])


def test_precision_recall_thresholds_class_id_and_top_k():
    y, p, w = _data(1)
    c = [_counts(y, p, w, t) for t in (0.3, 0.6)]
    prec, rec = metrics.Precision(thresholds=[0.3, 0.6]), metrics.Recall(thresholds=[0.3, 0.6])
    for m in (prec, rec):
        m.update_state(y, p, sample_weight=w)
    np.testing.assert_allclose(prec.result().numpy(), [x["tp"] / (x["tp"] + x["fp"]) for x in c],
                               rtol=1e-5)
    np.testing.assert_allclose(rec.result().numpy(), [x["tp"] / (x["tp"] + x["fn"]) for x in c],
                               rtol=1e-5)
    # class_id: that column only
    m = metrics.Recall(class_id=1)
    m.update_state(y, p)
    col = _counts(y[:, 1:2], p[:, 1:2], np.ones(len(y)), 0.5)
    assert float(m.result()) == pytest.approx(col["tp"] / (col["tp"] + col["fn"]), rel=1e-6)
    # top_k: only each row's k highest scores are predicted positive (threshold -inf)
    m = metrics.Precision(top_k=1)
    m.update_state(y, p)
    top = np.zeros_like(y, dtype=bool)
    top[np.arange(len(p)), p.argmax(-1)] = True
    assert float(m.result()) == pytest.approx(np.sum(top & (y == 1)) / len(y), rel=1e-6)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        metrics.Precision(thresholds=[0.5, 1.5])


def _rates(y, p, thresholds):
    out = []
    for t in thresholds:
        c = _counts(y, p, np.ones(len(y)), t)
        div = lambda a, b: a / b if b else 0.0  # noqa: E731
        out.append({"sensitivity": div(c["tp"], c["tp"] + c["fn"]),
                    "specificity": div(c["tn"], c["tn"] + c["fp"]),
                    "precision": div(c["tp"], c["tp"] + c["fp"])})
    return out


@pytest.mark.parametrize("cls, value_name, constrained, maximized", [
    ("SensitivityAtSpecificity", "specificity", "specificity", "sensitivity"),
    ("SpecificityAtSensitivity", "sensitivity", "sensitivity", "specificity"),
    ("PrecisionAtRecall", "recall", "sensitivity", "precision"),
    ("RecallAtPrecision", "precision", "precision", "sensitivity"),
])
def test_rate_at_fixed_rate(cls, value_name, constrained, maximized):
    y, p, _ = _data(2)
    n = 21
    thresholds = [0.0] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1.0]
    m = getattr(metrics, cls)(0.6, num_thresholds=n)
    m.update_state(y, p)
    rates = _rates(y, p, thresholds)
    expected = max([r[maximized] for r in rates if r[constrained] >= 0.6], default=0.0)
    assert float(m.result()) == pytest.approx(expected, rel=1e-5)
    assert m.get_config()[value_name] == 0.6


def test_auc_roc_pr_and_multi_label_against_numpy():
    y, p, _ = _data(3, n=200, k=1)
    y, p = y[:, 0], p[:, 0]
    roc = metrics.AUC(num_thresholds=2000)
    roc.update_state(y, p)
    pos, neg = p[y == 1], p[y == 0]
    exact = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    assert float(roc.result()) == pytest.approx(exact, abs=2e-3)
    # PR with minoring: the lower Riemann sum of precision over recall at the thresholds
    n = 50
    thresholds = [-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7]
    m = metrics.AUC(num_thresholds=n, curve="PR", summation_method="minoring")
    m.update_state(y, p)
    c = [_counts(y[:, None], p[:, None], np.ones(len(y)), t) for t in thresholds]
    rec = np.array([x["tp"] / (x["tp"] + x["fn"]) for x in c])
    prec = np.array([x["tp"] / (x["tp"] + x["fp"]) if x["tp"] + x["fp"] else 0.0 for x in c])
    expected = np.sum((rec[:-1] - rec[1:]) * np.minimum(prec[:-1], prec[1:]))
    assert float(m.result()) == pytest.approx(expected, rel=1e-5)
    # multi_label: the mean of the per-label ROC AUCs
    y3, p3, _ = _data(4, n=100)
    ml = metrics.AUC(multi_label=True, num_thresholds=500)
    ml.update_state(y3, p3)
    per_label = []
    for j in range(3):
        single = metrics.AUC(num_thresholds=500)
        single.update_state(y3[:, j], p3[:, j])
        per_label.append(float(single.result()))
    assert float(ml.result()) == pytest.approx(np.mean(per_label), rel=1e-5)
    with pytest.raises(ValueError, match="curve"):
        metrics.AUC(curve="XYZ")


def test_confusion_metrics_update_in_a_traced_graph():
    y, p, w = _data(5)
    ms = [metrics.AUC(curve="PR"), metrics.Precision(top_k=2), metrics.RecallAtPrecision(0.7),
          metrics.FalseNegatives(thresholds=[0.1, 0.7])]
    eager = [type(m)(**{k: v for k, v in m.get_config().items() if k != "name"}) for m in ms]

    @tl.function
    def step(yb, pb, wb):
        for m in ms:
            m.update_state(yb, pb, sample_weight=wb)
        return [m.result() for m in ms]

    for sl in (slice(0, 20), slice(20, 40), slice(40, 60)):
        step(tl.constant(y[sl]), tl.constant(p[sl]), tl.constant(w[sl]))
        for m in eager:
            m.update_state(y[sl], p[sl], sample_weight=w[sl])
    assert step.experimental_get_tracing_count() == 1
    for m, e in zip(ms, eager):
        np.testing.assert_allclose(m.result().numpy(), e.result().numpy(), rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, (n, 2), elements=st.sampled_from([0.0, 1.0])),
    hnp.arrays(np.float32, (n, 2), elements=st.floats(0, 1, width=32)),
    hnp.arrays(np.float32, (n,), elements=st.floats(0, 4, width=32)))))
def test_counts_are_weighted_numpy_counts_for_any_batch(batch):
    # thresholds exact in float32, so float32 and float64 comparisons agree
    y, p, w = batch
    thresholds = [0.0, 0.25, 0.5, 0.75, 1.0]
    ms = {key: getattr(metrics, cls)(thresholds=thresholds) for key, cls in (
        ("tp", "TruePositives"), ("fp", "FalsePositives"), ("tn", "TrueNegatives"),
        ("fn", "FalseNegatives"))}
    for m in ms.values():
        m.update_state(y, p, sample_weight=w)
    for key, m in ms.items():
        np.testing.assert_allclose(m.result().numpy(),
                                   [_counts(y, p, w, t)[key] for t in thresholds],
                                   rtol=1e-5, atol=1e-5)
