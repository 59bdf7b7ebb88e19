"""IoU metrics against a numpy confusion matrix: target classes, ignore_class, out-of-range
labels, one-hot inputs, thresholds, integer-truncated weights."""
import numpy as np
import pytest

from trainlib import metrics

CASES = []  # Keras-level module: no op types of its own


def _cm(t, p, n, w=None):
    cm = np.zeros((n, n))
    np.add.at(cm, (t, p), 1 if w is None else w)
    return cm


def _iou(cm, ids):
    tp = np.diag(cm)
    den = cm.sum(0) + cm.sum(1) - tp
    ids = np.asarray(ids)
    valid = den[ids] > 0
    return np.sum(tp[ids][valid] / den[ids][valid]) / max(valid.sum(), 1)


def test_iou_and_mean_iou_match_numpy():
    rng = np.random.default_rng(0)
    t, p = rng.integers(0, 5, 80), rng.integers(0, 5, 80)
    w = rng.integers(1, 4, 80).astype(np.float32)
    iou, mean = metrics.IoU(5, [1, 3]), metrics.MeanIoU(5)
    for m in (iou, mean):
        m.update_state(t[:40], p[:40], sample_weight=w[:40])
        m.update_state(t[40:], p[40:], sample_weight=w[40:])
    cm = _cm(t, p, 5, w)
    assert float(iou.result()) == pytest.approx(_iou(cm, [1, 3]), rel=1e-5)
    assert float(mean.result()) == pytest.approx(_iou(cm, range(5)), rel=1e-5)
    np.testing.assert_array_equal(mean.total_cm.numpy(), cm)


def test_ignore_class_out_of_range_and_absent_classes():
    t = np.array([0, 1, 2, 2, 7, -1, 1])
    p = np.array([0, 1, 1, 2, 2, 0, 3])
    m = metrics.MeanIoU(4, ignore_class=1)
    m.update_state(t, p)
    keep = (t >= 0) & (t < 4) & (p >= 0) & (p < 4) & (t != 1)
    cm = _cm(t[keep], p[keep], 4)
    assert float(m.result()) == pytest.approx(_iou(cm, range(4)), rel=1e-5)


def test_one_hot_binary_and_weights_truncated_as_keras():
    rng = np.random.default_rng(1)
    t, scores = rng.integers(0, 3, 30), rng.random((30, 3)).astype(np.float32)
    m = metrics.OneHotMeanIoU(3)
    m.update_state(np.eye(3, dtype=np.float32)[t], scores)
    assert float(m.result()) == pytest.approx(_iou(_cm(t, scores.argmax(-1), 3), range(3)),
                                              rel=1e-5)
    one = metrics.OneHotIoU(3, [2])
    one.update_state(np.eye(3, dtype=np.float32)[t], scores)
    assert float(one.result()) == pytest.approx(_iou(_cm(t, scores.argmax(-1), 3), [2]), rel=1e-5)
    b = metrics.BinaryIoU(threshold=0.3)
    yb, pb = rng.integers(0, 2, 20), rng.random(20).astype(np.float32)
    b.update_state(yb, pb, sample_weight=np.full(20, 1.7, np.float32))  # int state: weight 1
    assert float(b.result()) == pytest.approx(_iou(_cm(yb, (pb >= 0.3).astype(int), 2), [0, 1]),
                                              rel=1e-5)
    with pytest.raises(ValueError, match="out of range"):
        metrics.IoU(3, [3])
