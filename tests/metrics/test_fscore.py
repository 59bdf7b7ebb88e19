"""F1Score and FBetaScore against numpy: per-class, micro, macro and weighted averages,
thresholded or argmax predictions, sample weights; state built from the data's shape."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import metrics

CASES = []  # Keras-level module: no op types of its own


def _fbeta(y, pred, w, beta, average):
    w = w[:, None]
    axis = None if average == "micro" else 0
    tp = np.sum(w * pred * y, axis=axis)
    fp = np.sum(w * pred * (1 - y), axis=axis)
    fn = np.sum(w * (1 - pred) * y, axis=axis)
    precision, recall = tp / (tp + fp + 1e-7), tp / (tp + fn + 1e-7)
    score = (1 + beta ** 2) * precision * recall / (beta ** 2 * precision + recall + 1e-7)
    if average == "weighted":
        support = np.sum(w * y, axis=0)
        return np.sum(score * support / (support.sum() + 1e-7))
    return score if average is None else np.mean(score)


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize("beta, threshold", [(1.0, None), (2.0, 0.5), (0.5, 0.3)])
def test_fbeta_matches_numpy(average, beta, threshold):
    rng = np.random.default_rng(0)
    y = (rng.random((40, 4)) > 0.6).astype(np.float32)
    p = rng.random((40, 4)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, 40).astype(np.float32)
    m = metrics.FBetaScore(average=average, beta=beta, threshold=threshold)
    m.update_state(y[:25], p[:25], sample_weight=w[:25])
    m.update_state(y[25:], p[25:], sample_weight=w[25:])
    pred = (p > threshold) if threshold is not None else (p >= p.max(-1, keepdims=True))
    np.testing.assert_allclose(m.result().numpy(),
                               _fbeta(y, pred.astype(np.float32), w, beta, average), rtol=1e-5)


def test_f1_is_fbeta_one_and_checks_its_arguments():
    f1 = metrics.F1Score(average="macro", threshold=0.5)
    f1.update_state([[1., 0.], [0., 1.]], [[0.9, 0.2], [0.6, 0.3]])
    assert float(f1.result()) == pytest.approx(1 / 3, rel=1e-5)
    assert "beta" not in f1.get_config()
    with pytest.raises(ValueError, match="beta"):
        metrics.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="average"):
        metrics.F1Score(average="samples")
    with pytest.raises(ValueError, match="2D"):
        metrics.F1Score().update_state(np.zeros(3), np.zeros(3))


def test_fbeta_state_builds_from_specs_before_a_trace():
    m = metrics.F1Score(average="micro")
    m.build_state(tl.TensorShape([None, 3]), tl.TensorShape([None, 3]))
    assert [v.shape for v in m.variables] == [()] * 4
    step = tl.function(lambda y, p: m.update_state(y, p))
    step(tl.constant(np.eye(3, dtype=np.float32)), tl.constant(np.eye(3, dtype=np.float32)))
    assert float(m.result()) == pytest.approx(1.0, abs=1e-6)
