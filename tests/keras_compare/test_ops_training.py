"""Keras 3 vs trainlib: a custom layer, loss and metric written in `keras.ops`, trained with fit.

The same source (`build`, `loss`, `Metric`) runs on both frameworks through `k.ops`; weights,
batch logs and epoch logs must agree step by step.
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close_optimizers, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(7)
X = RNG.normal(size=(40, 6)).astype(np.float32)
Y = np.stack([np.sin(X[:, 0]) + X[:, 1] * X[:, 2], np.cos(X[:, 3])], -1).astype(np.float32)


def _layer_class(k):
    ops = k.ops

    class GatedRMSDense(k.layers.Layer):
        """Dense -> RMS normalization -> GLU-style gate, written in keras.ops only."""

        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 2 * self.units),
                                          initializer="glorot_uniform")
            self.scale = self.add_weight(name="scale", shape=(2 * self.units,), initializer="ones")

        def call(self, x):
            h = ops.matmul(x, self.kernel)
            h = ops.nn.rms_normalization(h, self.scale, axis=-1)
            a, b = ops.split(h, 2, axis=-1)
            gate = ops.nn.sigmoid(b)
            pooled = ops.logsumexp(ops.stack([a, ops.nn.gelu(a)], axis=0), axis=0)
            return ops.where(ops.greater(gate, 0.5), pooled * gate, ops.tanh(a)) + \
                ops.mean(x, axis=-1, keepdims=True)

    return GatedRMSDense


def _loss(k):
    ops = k.ops

    def smooth_l1_plus_cosine(y_true, y_pred):
        diff = ops.abs(y_true - y_pred)
        huber = ops.where(diff < 0.5, 0.5 * ops.square(diff) / 0.5, diff - 0.25)
        cos = ops.sum(ops.nn.normalize(y_true) * ops.nn.normalize(y_pred), axis=-1)
        return ops.mean(huber, axis=-1) + 0.1 * (1.0 - cos)
    return smooth_l1_plus_cosine


def _metric(k):
    ops = k.ops

    class MaxAbsError(k.metrics.Metric):
        """The largest absolute error seen so far (and the mean of the per-batch medians)."""

        def __init__(self, name="max_abs_error", **kwargs):
            super().__init__(name=name, **kwargs)
            self.worst = self.add_variable(shape=(), initializer="zeros", name="worst")
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")
            self.count = self.add_variable(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            err = ops.abs(ops.convert_to_tensor(y_true) - y_pred)
            self.worst.assign(ops.maximum(self.worst, ops.max(err)))
            self.total.assign(self.total + ops.median(err))
            self.count.assign(self.count + 1.0)

        def result(self):
            return self.worst + ops.divide_no_nan(self.total, self.count)
    return MaxAbsError


def _build(k):
    inputs = k.Input(shape=(6,))
    h = _layer_class(k)(8)(inputs)
    return k.Model(inputs, k.layers.Dense(2)(h))


def _compile(k):
    return dict(optimizer=k.optimizers.Adam(0.01), loss=_loss(k), metrics=[_metric(k)()])


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_custom_layer_loss_metric_in_ops_train_as_keras(run_eagerly):
    def compile_kwargs(k):
        kw = _compile(k)
        if k is tl.keras:
            kw["run_eagerly"] = run_eagerly
        return kw
    km, tm = pair(_build, compile_kwargs)
    fit_both(km, tm, X, Y, epochs=2, batch_size=8, validation_data=(X[:10], Y[:10]),
             rtol=5e-4, atol=5e-5)
    close_optimizers(km.optimizer, tm.optimizer, rtol=5e-4, atol=5e-5)
