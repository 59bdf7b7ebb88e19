"""Keras 3 vs trainlib: losses (reductions, sample weights, logits) and metrics in fit and evaluate.

Covers the "accuracy" resolution from shapes, metric naming (strings, weighted
duplicates, numbered unnamed metrics), the epoch loss (batch-size weighted mean
of the batch losses), evaluate's list/scalar/dict returns.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, close_logs, close_optimizers, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(0)
N = 29
X = RNG.normal(size=(N, 5)).astype(np.float32)
Y_INT = RNG.integers(0, 3, size=(N,))
Y_ONEHOT = np.eye(3, dtype=np.float32)[Y_INT]
Y_BIN = (RNG.random((N, 1)) > 0.5).astype(np.float32)
Y_MULTI = (RNG.random((N, 3)) > 0.5).astype(np.float32)
Y_REG = RNG.normal(size=(N, 2)).astype(np.float32)
SW = RNG.random(N).astype(np.float32)


def _mlp(activation, units):
    def build(k):
        return k.Sequential([k.layers.Input(shape=(5,)), k.layers.Dense(6, activation="tanh"),
                             k.layers.Dense(units, activation=activation)])
    return build


CASES_ = {
    "mse": (_mlp(None, 2), lambda k: dict(loss="mse", metrics=["mae", "mse"]), Y_REG),
    "mae": (_mlp(None, 2), lambda k: dict(loss="mae", metrics=[k.metrics.MeanSquaredError()]),
            Y_REG),
    "huber": (_mlp(None, 2), lambda k: dict(loss=k.losses.Huber(delta=0.5)), Y_REG),
    "mse_sum": (_mlp(None, 2), lambda k: dict(loss=k.losses.MeanSquaredError(reduction="sum")),
                Y_REG),
    "mse_mean": (_mlp(None, 2), lambda k: dict(loss=k.losses.MeanSquaredError(reduction="mean")),
                 Y_REG),
    "mse_mean_with_sample_weight": (_mlp(None, 2), lambda k: dict(
        loss=k.losses.MeanSquaredError(reduction="mean_with_sample_weight")), Y_REG),
    "bce": (_mlp("sigmoid", 1), lambda k: dict(
        loss="binary_crossentropy",
        metrics=["accuracy", k.metrics.Precision(), k.metrics.Recall(), k.metrics.AUC()]), Y_BIN),
    "bce_logits_smoothing": (_mlp(None, 1), lambda k: dict(
        loss=k.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
        metrics=["accuracy"]), Y_BIN),
    "bce_smoothing": (_mlp("sigmoid", 1), lambda k: dict(
        loss=k.losses.BinaryCrossentropy(label_smoothing=0.2), metrics=["binary_accuracy"]),
        Y_BIN),
    "bce_multilabel": (_mlp("sigmoid", 3), lambda k: dict(loss="binary_crossentropy",
                                                          metrics=["accuracy"]), Y_MULTI),
    "cce": (_mlp("softmax", 3), lambda k: dict(loss="categorical_crossentropy",
                                               metrics=["accuracy"]), Y_ONEHOT),
    "cce_smoothing": (_mlp("softmax", 3), lambda k: dict(
        loss=k.losses.CategoricalCrossentropy(label_smoothing=0.1), metrics=["acc"]), Y_ONEHOT),
    "cce_logits": (_mlp(None, 3), lambda k: dict(
        loss=k.losses.CategoricalCrossentropy(from_logits=True),
        metrics=["categorical_accuracy"]), Y_ONEHOT),
    "scce": (_mlp("softmax", 3), lambda k: dict(loss="sparse_categorical_crossentropy",
                                                metrics=["accuracy"]), Y_INT),
    "scce_logits": (_mlp(None, 3), lambda k: dict(
        loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy", "sparse_categorical_accuracy"]), Y_INT),
    "scce_logits_sum": (_mlp(None, 3), lambda k: dict(
        loss=k.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")), Y_INT),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(CASES_))
def test_loss_and_metrics_in_fit(name, weighted):
    build, compile_kwargs, y = CASES_[name]
    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.1), **compile_kwargs(k)))
    extra = {"sample_weight": SW} if weighted else {}
    fit_both(km, tm, X, y, epochs=2, batch_size=8, **extra)
    close_optimizers(km.optimizer, tm.optimizer)
    for bs in (7, 32):
        ke = km.evaluate(X, y, batch_size=bs, verbose=0, **extra)
        te = tm.evaluate(X, y, batch_size=bs, verbose=0, **extra)
        assert type(ke) is type(te), (ke, te)
        close(ke, te, "evaluate")
    close_logs(km.evaluate(X, y, verbose=0, return_dict=True),
               tm.evaluate(X, y, verbose=0, return_dict=True), "evaluate(return_dict=True)")


def test_saturated_sigmoid_uses_logits():
    # Keras computes the cross-entropy of a sigmoid/softmax output from its logits: no clipping
    def build(k):
        return k.Sequential([k.layers.Input(shape=(5,)),
                             k.layers.Dense(1, activation="sigmoid",
                                            kernel_initializer=k.initializers.Constant(6.0))])
    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.1),
                                        loss="binary_crossentropy"))
    y = 1.0 - (X[:, :1] > -10).astype(np.float32)
    fit_both(km, tm, np.abs(X) * 3, y, epochs=1, batch_size=8)


def test_weighted_metrics_names_and_values():
    km, tm = pair(_mlp("softmax", 3), lambda k: dict(
        optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy", "accuracy"],
        weighted_metrics=["accuracy", "accuracy"]))
    fit_both(km, tm, X, Y_INT, epochs=1, batch_size=8, sample_weight=SW)
    ke, te = km.evaluate(X, Y_INT, verbose=0, sample_weight=SW), \
        tm.evaluate(X, Y_INT, verbose=0, sample_weight=SW)
    close(ke, te, "evaluate list")


def test_reductions_direct():
    y_true, y_pred = Y_REG[:6], Y_REG[6:12] * 0.5
    for reduction in ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none",
                      None):
        for w in (None, SW[:6], SW[:6, None]):
            k = keras.losses.MeanSquaredError(reduction=reduction)(y_true, y_pred, sample_weight=w)
            t = tl.losses.MeanSquaredError(reduction=reduction)(y_true, y_pred, sample_weight=w)
            close(np.asarray(k), t.numpy(), f"{reduction} {None if w is None else w.shape}")


def test_metric_default_names_are_numbered_like_keras():
    for cls, stem in (("Precision", "precision"), ("Recall", "recall"), ("AUC", "auc")):
        for names in ([getattr(keras.metrics, cls)().name for _ in range(2)],
                      [getattr(tl.metrics, cls)().name for _ in range(2)]):
            assert names[0] != names[1] and all(n.startswith(stem) for n in names), names


def test_metric_configs():
    for cls, kwargs in (("Precision", {}), ("Recall", {"thresholds": [0.3, 0.6]}), ("AUC", {}),
                        ("Accuracy", {}), ("BinaryAccuracy", {}), ("Mean", {}),
                        ("SparseCategoricalAccuracy", {}), ("MeanSquaredError", {})):
        k = getattr(keras.metrics, cls)(name="m", **kwargs).get_config()
        t = getattr(tl.metrics, cls)(name="m", **kwargs).get_config()
        assert t == k, cls


# the regression and hinge losses and metrics added for issue 21, value for value
_ERRORS = ("mean_squared_logarithmic_error", "cosine_similarity", "log_cosh", "poisson",
           "kl_divergence", "hinge", "squared_hinge", "categorical_hinge")
_ERROR_METRICS = ("MeanAbsolutePercentageError", "MeanSquaredLogarithmicError",
                  "CosineSimilarity", "LogCoshError", "Poisson", "KLDivergence", "Hinge",
                  "SquaredHinge", "CategoricalHinge")


@pytest.mark.parametrize("name", _ERRORS)
def test_added_loss_functions_and_classes_match_keras(name):
    rng = np.random.default_rng(3)
    y_true = rng.uniform(0.05, 1.0, size=(6, 4)).astype(np.float32)
    y_pred = rng.uniform(0.05, 1.0, size=(6, 4)).astype(np.float32)
    if "hinge" in name:
        y_true = (rng.random((6, 4)) > 0.5).astype(np.float32)
        y_pred = rng.normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_allclose(getattr(tl.losses, name)(y_true, y_pred).numpy(),
                               np.asarray(getattr(keras.losses, name)(y_true, y_pred)),
                               rtol=1e-5, atol=1e-6)
    class_name = {"log_cosh": "LogCosh", "kl_divergence": "KLDivergence"}.get(
        name, "".join(p.capitalize() for p in name.split("_")))
    sw = rng.random(6).astype(np.float32)
    ours = getattr(tl.losses, class_name)()(y_true, y_pred, sample_weight=sw)
    theirs = getattr(keras.losses, class_name)()(y_true, y_pred, sample_weight=sw)
    np.testing.assert_allclose(float(ours), float(np.asarray(theirs)), rtol=1e-5)


@pytest.mark.parametrize("name", _ERROR_METRICS)
def test_added_metrics_match_keras(name):
    rng = np.random.default_rng(4)
    ours, theirs = getattr(tl.metrics, name)(), getattr(keras.metrics, name)()
    for _ in range(3):
        y_true = rng.uniform(0.05, 1.0, size=(5, 3)).astype(np.float32)
        y_pred = rng.uniform(0.05, 1.0, size=(5, 3)).astype(np.float32)
        if "Hinge" in name:
            y_true = (rng.random((5, 3)) > 0.5).astype(np.float32)
        sw = rng.random(5).astype(np.float32)
        ours.update_state(y_true, y_pred, sample_weight=sw)
        theirs.update_state(y_true, y_pred, sample_weight=sw)
    np.testing.assert_allclose(float(ours.result()), float(np.asarray(theirs.result())),
                               rtol=1e-5)
    assert ours.name == theirs.name
