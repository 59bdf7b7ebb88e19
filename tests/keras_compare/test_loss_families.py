"""Keras 3 vs trainlib: the loss families of issue 21 (focal and generalized cross-entropies,
Dice, Tversky, Circle, CTC) as functions and classes with every reduction, in fit, and the
mask a masking layer puts on the predictions (Keras's `apply_mask`).
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own


def _probs(rng, shape=(6, 4)):
    return (rng.random(shape) > 0.5).astype(np.float32), \
        rng.uniform(0.02, 0.98, shape).astype(np.float32)


def _onehot(rng, n=6, k=4):
    p = rng.random((n, k)).astype(np.float32)
    return np.eye(k, dtype=np.float32)[rng.integers(0, k, n)], p / p.sum(-1, keepdims=True)


def _sparse(rng, n=6, k=4):
    p = rng.random((n, k)).astype(np.float32)
    return rng.integers(0, k, n), p / p.sum(-1, keepdims=True)


def _embeddings(rng, n=8, d=5):
    e = rng.normal(size=(n, d)).astype(np.float32)
    return rng.integers(0, 3, n), e / np.linalg.norm(e, axis=-1, keepdims=True)


def _ctc(rng, n=3, t=7, k=5):
    labels = rng.integers(1, k, (n, 3))
    labels[0, 2] = 0    # padding
    return labels, rng.normal(size=(n, t, k)).astype(np.float32)


# name: (class, kwargs, function, data)
LOSSES = {
    "bfce": ("BinaryFocalCrossentropy", {}, "binary_focal_crossentropy", _probs),
    "bfce_balanced_logits": ("BinaryFocalCrossentropy",
                             {"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5,
                              "from_logits": True, "label_smoothing": 0.1},
                             "binary_focal_crossentropy", _probs),
    "cfce": ("CategoricalFocalCrossentropy", {}, "categorical_focal_crossentropy", _onehot),
    "cfce_logits": ("CategoricalFocalCrossentropy",
                    {"alpha": 0.5, "gamma": 3.0, "from_logits": True, "label_smoothing": 0.2},
                    "categorical_focal_crossentropy", _onehot),
    "gce": ("CategoricalGeneralizedCrossEntropy", {"q": 0.7},
            "categorical_generalized_cross_entropy", _sparse),
    "dice": ("Dice", {}, "dice", _probs),
    "dice_axis": ("Dice", {"axis": (1,)}, "dice", _probs),
    "tversky": ("Tversky", {"alpha": 0.3, "beta": 0.7}, "tversky", _probs),
    "tversky_axis": ("Tversky", {"axis": (1,)}, "tversky", _probs),
    "circle": ("Circle", {}, "circle", _embeddings),
    "circle_options": ("Circle", {"gamma": 10.0, "margin": 0.25, "remove_diagonal": False},
                       "circle", _embeddings),
    "ctc": ("CTC", {}, "ctc", _ctc),
}


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none",
                                       "mean_with_sample_weight"])
@pytest.mark.parametrize("case", sorted(LOSSES))
def test_loss_class_and_function_match_keras(case, reduction):
    cls, kwargs, fn, data = LOSSES[case]
    rng = np.random.default_rng(len(case))
    y, p = data(rng)
    fn_kwargs = {k: v for k, v in kwargs.items()}
    if fn in ("tversky", "dice", "binary_focal_crossentropy", "categorical_focal_crossentropy",
              "circle", "categorical_generalized_cross_entropy"):
        np.testing.assert_allclose(getattr(tl.losses, fn)(y, p, **fn_kwargs).numpy(),
                                   np.asarray(getattr(keras.losses, fn)(y, p, **fn_kwargs)),
                                   rtol=1e-5, atol=1e-5)
    sw = rng.uniform(0.5, 2.0, len(y)).astype(np.float32)
    ours = getattr(tl.losses, cls)(reduction=reduction, **kwargs)
    theirs = getattr(keras.losses, cls)(reduction=reduction, **kwargs)
    for w in (None, sw):
        np.testing.assert_allclose(ours(y, p, sample_weight=w).numpy(),
                                   np.asarray(theirs(y, p, sample_weight=w)), rtol=1e-5,
                                   atol=1e-5, err_msg=f"weights: {w is not None}")
    assert ours.get_config() == theirs.get_config()
    assert tl.losses.serialize(ours) == keras.losses.serialize(theirs)


def test_ctc_function_matches_keras():
    y, p = _ctc(np.random.default_rng(0))
    np.testing.assert_allclose(tl.losses.ctc(y, p).numpy(), np.asarray(keras.losses.ctc(y, p)),
                               rtol=1e-5)


@pytest.mark.parametrize("loss", ["binary_focal_crossentropy", "dice", "tversky"])
def test_new_losses_train_as_keras(loss):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(32, 5)).astype(np.float32)
    y = (rng.random((32, 3)) > 0.5).astype(np.float32)

    def build(k):
        return k.Sequential([k.layers.Input(shape=(5,)), k.layers.Dense(3, "sigmoid")])

    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.5), loss=loss))
    fit_both(km, tm, x, y, epochs=2, batch_size=8)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight"])
@pytest.mark.parametrize("weighted", [False, True])
def test_masked_sequence_loss_matches_keras(reduction, weighted):
    # Embedding(mask_zero=True) -> LSTM(return_sequences) -> Dense: the mask reaches the loss
    # and the metrics
    rng = np.random.default_rng(3)
    x = rng.integers(1, 9, (12, 6))
    for i, length in enumerate(rng.integers(2, 7, 12)):
        x[i, length:] = 0
    y = rng.normal(size=(12, 6, 2)).astype(np.float32)
    y[x == 0] = 10.0    # far off at the padding: only a masked loss ignores it
    # per-timestep weights (Keras cannot pair per-sample weights [12] with a [12, 6] mask)
    sw = rng.uniform(0.5, 2.0, (12, 6)).astype(np.float32) if weighted else None

    def build(k):
        return k.Sequential([k.layers.Input(shape=(6,), dtype="int32"),
                             k.layers.Embedding(9, 4, mask_zero=True),
                             k.layers.LSTM(3, return_sequences=True), k.layers.Dense(2)])

    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.1),
                                        loss=k.losses.MeanSquaredError(reduction=reduction),
                                        metrics=["mae"], weighted_metrics=["mse"]))
    ke = km.evaluate(x, y, sample_weight=sw, batch_size=12, verbose=0)
    te = tm.evaluate(x, y, sample_weight=sw, batch_size=12, verbose=0)
    np.testing.assert_allclose(te, ke, rtol=1e-5)   # the loss and the masked metrics
    ke = ke[0]
    # the masked loss differs from the unmasked one, so the test sees the mask
    unmasked = keras.losses.MeanSquaredError(reduction=reduction)(
        y, np.asarray(km.predict(x, verbose=0)), sample_weight=sw)
    assert abs(float(unmasked) - ke) > 1.0
    fit_both(km, tm, x, y, epochs=2, batch_size=4, **({"sample_weight": sw} if weighted else {}))


def test_mask_on_predictions_weighs_a_direct_loss_call():
    y = np.ones((2, 3), np.float32)
    p = tl.constant(np.zeros((2, 3), np.float32))
    mask = tl.constant([[True, False, False], [True, True, False]])
    p._keras_mask = mask
    kp = keras.ops.convert_to_tensor(np.zeros((2, 3), np.float32))
    kp._keras_mask = keras.ops.convert_to_tensor(np.asarray(mask))
    for reduction in ("sum_over_batch_size", "sum", "none"):
        ours = tl.losses.MeanAbsoluteError(reduction=reduction)(y[..., None], p[..., None])
        theirs = keras.losses.MeanAbsoluteError(reduction=reduction)(y[..., None], kp[..., None])
        np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-6)


def test_binary_crossentropy_of_a_softmax_output_reads_its_logits_in_the_train_graph():
    # Keras keeps the logits of its sigmoid/softmax activations on the output, traced too
    rng = np.random.default_rng(6)
    x = rng.normal(size=(32, 5)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 32)]

    def build(k):
        return k.Sequential([k.layers.Input(shape=(5,)), k.layers.Dense(4, "softmax")])

    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.5),
                                        loss="binary_crossentropy",
                                        metrics=["binary_crossentropy"]))
    fit_both(km, tm, x, y, epochs=2, batch_size=8)
    np.testing.assert_allclose(tm.evaluate(x, y, verbose=0), km.evaluate(x, y, verbose=0),
                               rtol=1e-5)
