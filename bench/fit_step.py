"""Dense 64-128-10 + Adam train step, batch 32: hand-written numpy vs tl.function vs Model.fit.

Run: python bench/fit_step.py
Aims (DESIGN.md): the step within 1.3x of numpy, in fit too; first call (trace + run) under 40 ms.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _models import NumpyMLP, tl_step  # noqa: E402
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402

B, D, H, C = 32, 64, 128, 10
LR = 1e-3


# the same step by hand: forward, softmax cross-entropy, backward, Keras-3 Adam
NumpyAdamMLP = NumpyMLP


def make_model(params):
    model = tl.Sequential([tl.layers.Input((D,)), tl.layers.Dense(H, activation="relu"),
                           tl.layers.Dense(C)])
    model.set_weights(params)
    return model


def data(n_batches):
    """(x, y, params): `n_batches` batches of inputs and labels, the initial weights."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B * n_batches, D)).astype(np.float32)
    y = rng.integers(0, C, size=B * n_batches).astype(np.int32)
    params = [(rng.standard_normal((D, H)) * 0.1).astype(np.float32), np.zeros(H, np.float32),
              (rng.standard_normal((H, C)) * 0.1).astype(np.float32), np.zeros(C, np.float32)]
    return x, y, params


def main():
    n_batches = 64
    x, y, params = data(n_batches)
    xb, yb = x[:B], y[:B]

    ref = NumpyAdamMLP(params)
    model = make_model(params)
    train_step = tl_step(model, params, "sparse_ce")

    txb, tyb = tl.constant(xb), tl.constant(yb)
    start = time.perf_counter()
    first = float(train_step(txb, tyb))
    first_ms = (time.perf_counter() - start) * 1e3
    want = ref.step(xb, yb)
    assert abs(first - want) < 1e-5, (first, want)
    np.testing.assert_allclose(model.get_weights()[0], ref.p[0], rtol=1e-4, atol=1e-6)

    t_np = median_us(lambda: ref.step(xb, yb), repeat=9)
    t_fn = median_us(lambda: train_step(txb, tyb), repeat=9)

    fit_model = make_model(params)
    fit_model.compile(optimizer=tl.optim.Adam(LR),
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
    fit_model.fit(x, y, batch_size=B, epochs=1, verbose=0, shuffle=False)  # trace
    epochs = 5
    start = time.perf_counter()
    fit_model.fit(x, y, batch_size=B, epochs=epochs, verbose=0, shuffle=False)
    t_fit = (time.perf_counter() - start) / (epochs * n_batches) * 1e6

    print(f"Dense {D}-{H}-{C} + Adam step, batch {B}: numpy {t_np:.0f} us, tl.function {t_fn:.0f} us "
          f"({t_fn / t_np:.2f}x), Model.fit {t_fit:.0f} us/step ({t_fit / t_np:.2f}x); "
          f"first call {first_ms:.1f} ms")


if __name__ == "__main__":
    main()
