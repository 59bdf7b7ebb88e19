"""Shared helpers of the Keras-vs-trainlib differential tests (imported only after Keras is).

A test builds the same model twice through `build(k)`, where `k` is either the
`keras` module or `tl.keras` (trainlib's Keras-layout namespace), copies the
Keras initial weights into trainlib (which checks weight order and shapes), runs
the same training on both and compares what both report step by step.
"""
import numpy as np

import trainlib as tl

RTOL, ATOL = 2e-4, 2e-5


def quiet_keras():
    import os  # noqa: PLC0415
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras  # noqa: PLC0415
    return keras


def pair(build, compile_kwargs=None):
    """(keras model, trainlib model) from `build(k)`, with the Keras weights copied over."""
    import keras  # noqa: PLC0415
    km, tm = build(keras), build(tl.keras)
    kw = km.get_weights()
    tw = tm.get_weights()
    assert [w.shape for w in kw] == [w.shape for w in tw], "weight order/shapes differ"
    tm.set_weights(kw)
    if compile_kwargs is not None:
        km.compile(**compile_kwargs(keras))
        tm.compile(**compile_kwargs(tl.keras))
    return km, tm


def recorder(k):
    """A callback class of framework `k` recording batch logs, epoch logs and weights."""

    class Recorder(k.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.batches, self.epochs, self.weights, self.events = [], [], [], []

        def on_train_batch_end(self, batch, logs=None):
            self.events.append(("train_batch_end", batch))
            self.batches.append({key: float(v) for key, v in (logs or {}).items()})
            self.weights.append([np.array(w) for w in self.model.get_weights()])

        def on_epoch_begin(self, epoch, logs=None):
            self.events.append(("epoch_begin", epoch))

        def on_epoch_end(self, epoch, logs=None):
            self.events.append(("epoch_end", epoch))
            self.epochs.append({key: float(v) for key, v in (logs or {}).items()})

        def on_test_begin(self, logs=None):
            self.events.append(("test_begin",))

        def on_test_end(self, logs=None):
            self.events.append(("test_end",))

    return Recorder()


def close(a, b, what, rtol=RTOL, atol=ATOL):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} (keras) vs {b.shape} (trainlib)"
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=what)


def close_logs(klogs, tlogs, what, rtol=RTOL, atol=ATOL):
    assert sorted(klogs) == sorted(tlogs), f"{what}: keys {sorted(klogs)} vs {sorted(tlogs)}"
    for key in klogs:
        close(klogs[key], tlogs[key], f"{what}[{key}]", rtol, atol)


def close_weights(kw, tw, what, rtol=RTOL, atol=ATOL):
    assert len(kw) == len(tw), f"{what}: {len(kw)} vs {len(tw)} weights"
    for i, (a, b) in enumerate(zip(kw, tw)):
        close(a, b, f"{what} weight {i}", rtol, atol)


def fit_both(km, tm, x, y=None, rtol=RTOL, atol=ATOL, **fit_kwargs):
    """Fits both models with the same arguments and compares every batch and epoch."""
    import keras  # noqa: PLC0415
    fit_kwargs.setdefault("shuffle", False)
    fit_kwargs.setdefault("verbose", 0)
    extra_k = fit_kwargs.pop("keras_callbacks", [])
    extra_t = fit_kwargs.pop("tl_callbacks", [])
    kr, tr = recorder(keras), recorder(tl.keras)
    kh = km.fit(x, y, callbacks=[kr] + extra_k, **fit_kwargs)
    th = tm.fit(x, y, callbacks=[tr] + extra_t, **fit_kwargs)
    assert len(kr.batches) == len(tr.batches), \
        f"batch count {len(kr.batches)} vs {len(tr.batches)}"
    for i, (a, b) in enumerate(zip(kr.batches, tr.batches)):
        close_logs(a, b, f"batch {i} logs", rtol, atol)
    for i, (a, b) in enumerate(zip(kr.weights, tr.weights)):
        close_weights(a, b, f"after batch {i}", rtol, atol)
    assert kh.epoch == th.epoch, f"History.epoch {kh.epoch} vs {th.epoch}"
    assert sorted(kh.history) == sorted(th.history), \
        f"History keys {sorted(kh.history)} vs {sorted(th.history)}"
    for key in kh.history:
        close(kh.history[key], th.history[key], f"History[{key}]", rtol, atol)
    assert kr.events == tr.events, f"callback events\n{kr.events}\nvs\n{tr.events}"
    return kh, th


def optimizer_state(opt):
    """The optimizer's variables as numpy arrays, in `variables` order."""
    return [np.array(v.numpy() if hasattr(v, "numpy") else v) for v in opt.variables]


def close_optimizers(kopt, topt, what="optimizer", rtol=RTOL, atol=ATOL):
    kv, tv = optimizer_state(kopt), optimizer_state(topt)
    knames = [v.name for v in kopt.variables]
    tnames = [v.name.split(":")[0] for v in topt.variables]
    assert len(kv) == len(tv), f"{what}: variables {knames} vs {tnames}"
    for i, (a, b) in enumerate(zip(kv, tv)):
        close(a, b, f"{what} variable {i} ({knames[i]} / {tnames[i]})", rtol, atol)
    assert int(kopt.iterations.numpy()) == int(topt.iterations.numpy())


def functional_shapes(make, batch_shapes, dtype="float32"):
    """(keras's, trainlib's) output shapes of `make(layers_module)` called on functional-API
    Inputs of `batch_shapes` and `dtype` (one input: the tensor itself, several: a list)."""
    import keras  # noqa: PLC0415
    outs = []
    for k in (keras, tl.keras):
        inputs = [k.layers.Input(batch_shape=s, dtype=dtype) for s in batch_shapes]
        outs.append(tuple(make(k.layers)(inputs if len(inputs) > 1 else inputs[0]).shape))
    return outs
