"""Metrics against numpy: accumulation over batches, sample weights, reset, graph updates."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import metrics

CASES = []  # Keras-level module: no op types of its own


def _batches(seed=0, n_batches=3, n=8, k=4):
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        p = rng.uniform(size=(n, k)).astype(np.float32)
        labels = rng.integers(0, k, size=n)
        yield labels, p, rng.uniform(0.5, 2.0, size=n).astype(np.float32)


def test_mean_sum_weighted_and_reset():
    m, s = metrics.Mean(), metrics.Sum()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state([5.0], sample_weight=[3.0])
    assert float(m.result()) == pytest.approx((6 + 15) / 6)
    s.update_state([1.0, 2.0])
    assert float(s.result()) == 3.0
    m.reset_state()
    assert float(m.result()) == 0.0


def test_accuracies_match_numpy():
    accs = {"sparse": metrics.SparseCategoricalAccuracy(), "cat": metrics.CategoricalAccuracy(),
            "bin": metrics.BinaryAccuracy(), "acc": metrics.Accuracy(), "top2": metrics.TopKCategoricalAccuracy(k=2)}
    hits = {k: [] for k in accs}
    for labels, p, _ in _batches():
        onehot = np.eye(4, dtype=np.float32)[labels]
        accs["sparse"].update_state(labels, p)
        accs["cat"].update_state(onehot, p)
        accs["bin"].update_state(onehot, p)
        accs["acc"].update_state(labels, p.argmax(-1))
        accs["top2"].update_state(onehot, p)
        hits["sparse"] += list(p.argmax(-1) == labels)
        hits["cat"] += list(p.argmax(-1) == labels)
        hits["bin"] += list(((p > 0.5) == onehot).mean(-1))
        hits["acc"] += list(p.argmax(-1) == labels)
        hits["top2"] += list((np.argsort(-p, -1)[:, :2] == labels[:, None]).any(-1))
    for k in accs:
        assert float(accs[k].result()) == pytest.approx(np.mean(hits[k]), rel=1e-6), k


def test_errors_precision_recall_auc():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, size=50).astype(np.float32)
    p = np.clip(y * 0.6 + rng.uniform(size=50) * 0.5, 0, 1).astype(np.float32)
    prec, rec, auc = metrics.Precision(), metrics.Recall(), metrics.AUC(num_thresholds=500)
    mse, mae = metrics.MeanSquaredError(), metrics.MeanAbsoluteError()
    for sl in (slice(0, 20), slice(20, 50)):
        for m in (prec, rec, auc):
            m.update_state(y[sl], p[sl])
        mse.update_state(y[sl, None], p[sl, None])
        mae.update_state(y[sl, None], p[sl, None])
    pred = p > 0.5
    tp = np.sum(pred & (y == 1))
    assert float(prec.result()) == pytest.approx(tp / pred.sum(), rel=1e-6)
    assert float(rec.result()) == pytest.approx(tp / (y == 1).sum(), rel=1e-6)
    assert float(mse.result()) == pytest.approx(np.mean((y - p) ** 2), rel=1e-5)
    assert float(mae.result()) == pytest.approx(np.mean(np.abs(y - p)), rel=1e-5)
    pos, neg = p[y == 1], p[y == 0]
    exact_auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    assert float(auc.result()) == pytest.approx(exact_auc, abs=0.01)


def test_updates_inside_a_graph_trace_once():
    acc = metrics.SparseCategoricalAccuracy()

    @tl.function
    def update(y, p):
        acc.update_state(y, p)
        return acc.result()
    hits = []
    for labels, p, _ in _batches():
        update(tl.constant(labels), tl.constant(p))
        hits += list(p.argmax(-1) == labels)
    assert float(acc.result()) == pytest.approx(np.mean(hits))
    assert update.experimental_get_tracing_count() == 1


def test_accuracy_resolution_and_names():
    f32 = tl.float32
    pred10 = tl.TensorSpec((None, 10), f32)
    assert isinstance(metrics.get("accuracy", tl.TensorSpec((None,), tl.int64), pred10),
                      metrics.SparseCategoricalAccuracy)
    assert isinstance(metrics.get("accuracy", tl.TensorSpec((None, 10), f32), pred10),
                      metrics.CategoricalAccuracy)
    assert isinstance(metrics.get("accuracy", tl.TensorSpec((None, 1), f32),
                                  tl.TensorSpec((None, 1), f32)), metrics.BinaryAccuracy)
    assert metrics.get("accuracy").name == "accuracy"
    assert metrics.get("mae").name == "mae"
    with pytest.raises(ValueError, match="Unknown metric"):
        metrics.get("accuracyy")


@pytest.mark.parametrize("name, formula", [
    ("MeanAbsolutePercentageError", lambda t, p: 100 * np.mean(np.abs((t - p) / t), -1)),
    ("MeanSquaredLogarithmicError", lambda t, p: np.mean((np.log1p(p) - np.log1p(t)) ** 2, -1)),
    ("LogCoshError", lambda t, p: np.mean(np.log(np.cosh(p - t)), -1)),
    ("Poisson", lambda t, p: np.mean(p - t * np.log(p + 1e-7), -1)),
    ("CosineSimilarity", lambda t, p: np.sum(t * p, -1) / np.linalg.norm(t, axis=-1) /
     np.linalg.norm(p, axis=-1)),
])
def test_added_error_metrics_are_weighted_running_means(name, formula):
    rng = np.random.default_rng(1)
    metric = getattr(metrics, name)()
    values, weights = [], []
    for _ in range(3):
        t, p = rng.uniform(0.1, 1, size=(4, 3)), rng.uniform(0.1, 1, size=(4, 3))
        w = rng.random(4)
        metric.update_state(t.astype(np.float32), p.astype(np.float32), sample_weight=w)
        values.append(formula(t, p))
        weights.append(w)
    expected = np.sum(np.concatenate(values) * np.concatenate(weights)) / np.sum(weights)
    np.testing.assert_allclose(float(metric.result()), expected, rtol=1e-4)
    assert metrics.get(metric.name).__class__ is type(metric)
