"""Keras 3 vs trainlib: the metric families of issue 21 (confusion counts, Precision/Recall with
top_k/class_id/thresholds, the *At* metrics, AUC's curves and sums, F-scores, IoUs, R2 and the
correlations), value for value over several weighted batches, eagerly and in fit; and configs.
"""
import zlib

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RTOL, ATOL = 1e-5, 1e-6


def _binary(rng, n=24, k=3):
    y = (rng.random((n, k)) > 0.5).astype(np.float32)
    p = np.clip(0.5 * y + 0.7 * rng.random((n, k)), 0, 1).astype(np.float32)
    return y, p


def _logits(rng, n=24, k=2):
    y = (rng.random((n, k)) > 0.5).astype(np.float32)
    return y, (2.0 * y - 1.0 + 1.5 * rng.normal(size=(n, k))).astype(np.float32)


def _multiclass(rng, n=24, k=4):
    y = np.eye(k, dtype=np.float32)[rng.integers(0, k, n)]
    return y, rng.random((n, k)).astype(np.float32)


def _sparse(rng, n=24, k=4):
    return rng.integers(0, k, n), rng.integers(0, k, n)


def _regression(rng, n=24, k=3):
    y = rng.normal(size=(n, k)).astype(np.float32)
    return y, (y + 0.5 * rng.normal(size=(n, k))).astype(np.float32)


# name: (class name, kwargs, data, weighted)
METRICS = {
    "tp": ("TruePositives", {}, _binary, True),
    "fp_thresholds": ("FalsePositives", {"thresholds": [0.2, 0.5, 0.8]}, _binary, True),
    "tn": ("TrueNegatives", {"thresholds": 0.3}, _binary, True),
    "fn": ("FalseNegatives", {}, _binary, False),
    "precision_thresholds": ("Precision", {"thresholds": [0.1, 0.4, 0.9]}, _binary, True),
    "precision_top_k": ("Precision", {"top_k": 2}, _multiclass, True),
    "precision_class_id": ("Precision", {"class_id": 2}, _multiclass, True),
    "recall_top_k_class_id": ("Recall", {"top_k": 2, "class_id": 1}, _multiclass, True),
    "recall_thresholds": ("Recall", {"thresholds": [0.0, 0.5, 1.0]}, _binary, True),
    "sens_at_spec": ("SensitivityAtSpecificity", {"specificity": 0.6}, _binary, True),
    "spec_at_sens": ("SpecificityAtSensitivity", {"sensitivity": 0.7, "num_thresholds": 50},
                     _binary, True),
    "prec_at_recall": ("PrecisionAtRecall", {"recall": 0.5, "class_id": 1}, _binary, False),
    "recall_at_prec": ("RecallAtPrecision", {"precision": 0.8}, _binary, True),
    "auc_roc": ("AUC", {}, _binary, True),
    "auc_pr": ("AUC", {"curve": "PR"}, _binary, True),
    "auc_pr_minoring": ("AUC", {"curve": "PR", "summation_method": "minoring"}, _binary, False),
    "auc_roc_majoring": ("AUC", {"summation_method": "majoring", "num_thresholds": 30},
                         _binary, True),
    "auc_prgain": ("AUC", {"curve": "PRGAIN"}, _binary, False),
    "auc_thresholds": ("AUC", {"thresholds": [0.3, 0.5, 0.55]}, _binary, True),
    "auc_multi_label": ("AUC", {"multi_label": True, "num_labels": 3}, _binary, True),
    "auc_multi_label_lazy": ("AUC", {"multi_label": True, "label_weights": [1.0, 2.0, 0.5]},
                             _binary, True),
    "auc_pr_from_logits": ("AUC", {"curve": "PR", "from_logits": True}, _logits, True),
    "auc_label_weights": ("AUC", {"label_weights": [1.0, 2.0, 0.5]}, _binary, False),
    "f1_none": ("F1Score", {}, _multiclass, True),
    "f1_macro_threshold": ("F1Score", {"average": "macro", "threshold": 0.5}, _binary, True),
    "fbeta_micro": ("FBetaScore", {"average": "micro", "beta": 2.0}, _multiclass, True),
    "fbeta_weighted": ("FBetaScore", {"average": "weighted", "beta": 0.5, "threshold": 0.4},
                       _binary, False),
    "iou": ("IoU", {"num_classes": 4, "target_class_ids": [0, 2]}, _sparse, False),
    "mean_iou": ("MeanIoU", {"num_classes": 4}, _sparse, False),
    "mean_iou_ignore": ("MeanIoU", {"num_classes": 4, "ignore_class": 1}, _sparse, False),
    "binary_iou": ("BinaryIoU", {"threshold": 0.4}, _binary, False),
    "one_hot_iou": ("OneHotIoU", {"num_classes": 4, "target_class_ids": [1, 3]}, _multiclass,
                    False),
    "one_hot_mean_iou": ("OneHotMeanIoU", {"num_classes": 4}, _multiclass, False),
    "r2": ("R2Score", {}, _regression, True),
    "r2_variance_weighted": ("R2Score", {"class_aggregation": "variance_weighted_average"},
                             _regression, False),
    "r2_raw_adjusted": ("R2Score", {"class_aggregation": None, "num_regressors": 2},
                        _regression, True),
    "pearson": ("PearsonCorrelation", {}, _regression, True),
    "concordance": ("ConcordanceCorrelation", {}, _regression, True),
}


@pytest.mark.parametrize("case", sorted(METRICS))
def test_metric_matches_keras_over_weighted_batches(case):
    cls, kwargs, data, weighted = METRICS[case]
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    ours, theirs = getattr(tl.metrics, cls)(**kwargs), getattr(keras.metrics, cls)(**kwargs)
    for _ in range(3):
        y, p = data(rng)
        sw = rng.integers(1, 4, len(y)).astype(np.float32) if weighted else None
        ours.update_state(y, p, sample_weight=sw)
        theirs.update_state(y, p, sample_weight=sw)
    np.testing.assert_allclose(np.asarray(ours.result()), np.asarray(theirs.result()),
                               rtol=RTOL, atol=ATOL)
    assert ours.get_config() == _plain(theirs.get_config()), case
    ours.reset_state()
    theirs.reset_state()
    y, p = data(rng)
    ours.update_state(y, p)
    theirs.update_state(y, p)
    np.testing.assert_allclose(np.asarray(ours.result()), np.asarray(theirs.result()),
                               rtol=RTOL, atol=ATOL)


def _plain(config):
    return {k: (np.asarray(v).tolist() if hasattr(v, "shape") else v) for k, v in config.items()}


@pytest.mark.parametrize("case", ["auc_pr", "precision_top_k", "fbeta_micro", "mean_iou_ignore",
                                  "r2", "auc_multi_label_lazy", "sens_at_spec"])
def test_metric_in_fit_and_evaluate_matches_keras(case):
    cls, kwargs, data, _ = METRICS[case]
    rng = np.random.default_rng(1)
    y, _ = data(rng, n=40)
    units = y.shape[-1] if y.ndim == 2 else 4
    x = rng.normal(size=(40, 5)).astype(np.float32)
    activation = "softmax" if data is _sparse or data is _multiclass else \
        None if data is _regression else "sigmoid"
    loss = "sparse_categorical_crossentropy" if data is _sparse else \
        "categorical_crossentropy" if data is _multiclass else \
        "mse" if data is _regression else "binary_crossentropy"

    def build(k):
        return k.Sequential([k.layers.Input(shape=(5,)), k.layers.Dense(units, activation)])

    if data is _sparse:   # the IoUs read class ids: score them on the argmax
        kwargs = {**kwargs, "sparse_y_pred": False}
        cls_ = "MeanIoU"
    else:
        cls_ = cls

    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.1), loss=loss,
                                        metrics=[getattr(k.metrics, cls_)(**kwargs)]))
    fit_both(km, tm, x, y, epochs=2, batch_size=16)
    ke = km.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    te = tm.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    assert sorted(ke) == sorted(te)
    for key in ke:
        np.testing.assert_allclose(np.asarray(te[key]), np.asarray(ke[key]), rtol=2e-4,
                                   atol=2e-5, err_msg=key)


@pytest.mark.parametrize("name", ["pearson_correlation", "concordance_correlation",
                                  "binary_focal_crossentropy", "categorical_focal_crossentropy"])
def test_metric_functions_match_keras(name):
    rng = np.random.default_rng(5)
    y, p = _regression(rng, n=6, k=5) if "correlation" in name else _binary(rng, n=6, k=5)
    np.testing.assert_allclose(getattr(tl.metrics, name)(y, p).numpy(),
                               np.asarray(getattr(keras.metrics, name)(y, p)), rtol=1e-5,
                               atol=1e-6)


def test_metric_serialize_round_trips_in_keras_form():
    for metric in (tl.metrics.AUC(curve="PR", name="pr"), tl.metrics.F1Score(average="macro"),
                   tl.metrics.MeanIoU(num_classes=3), tl.metrics.PrecisionAtRecall(0.4)):
        config = tl.metrics.serialize(metric)
        k = keras.metrics.deserialize(config)
        assert type(k).__name__ == type(metric).__name__
        assert _plain(k.get_config()) == metric.get_config()
        back = tl.metrics.deserialize(keras.metrics.serialize(k))
        assert type(back) is type(metric) and back.get_config() == metric.get_config()


def test_new_losses_and_metrics_compiled_into_keras_files_both_ways(tmp_path):
    rng = np.random.default_rng(7)
    x = rng.random((8, 4)).astype(np.float32)
    y = (rng.random((8, 3)) > 0.5).astype(np.float32)
    model = tl.keras.Sequential([tl.keras.layers.Input(shape=(4,)),
                                 tl.keras.layers.Dense(3, "sigmoid")])
    model.compile(optimizer="sgd", loss=tl.keras.losses.Tversky(alpha=0.3, beta=0.7),
                  # named: an unnamed one would advance trainlib's name counters, not Keras's
                  metrics=[tl.keras.metrics.F1Score(average="macro"),
                           tl.keras.metrics.AUC(curve="PR", name="pr_auc"),
                           tl.keras.metrics.BinaryIoU(name="iou")])
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "t.keras")
    k = keras.models.load_model(tmp_path / "t.keras")
    assert type(k.loss).__name__ == "Tversky" and k.loss.get_config()["alpha"] == 0.3
    expected = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(k.evaluate(x, y, verbose=0), expected, rtol=1e-5)
    k.save(tmp_path / "k.keras")
    back = tl.keras.models.load_model(tmp_path / "k.keras")
    assert type(back.loss) is tl.losses.Tversky
    np.testing.assert_allclose(back.evaluate(x, y, verbose=0), expected, rtol=1e-5)
