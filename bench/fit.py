"""Steps/s of `fit` on the digits MLP (64-128-10, Adam): graph, eager, and hand-written numpy.

Run: python bench/fit.py [batch sizes...]   (default: 32 256)
Aims (issue 7): graph fit at least 2x eager fit, and within 1.3x of the numpy loop.
Per-step times are printed beside steps/s; compare two versions of trainlib by their
ratio to the numpy loop of the same run (absolute times drift on a shared machine):
PYTHONPATH=/path/to/other/checkout python bench/fit.py 32
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from fit_step import NumpyAdamMLP  # noqa: E402

import trainlib as tl  # noqa: E402


def digits():
    from sklearn.datasets import load_digits  # noqa: PLC0415 -- ships its data, no download
    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int32)


def numpy_fit(params, x, y, batch, epochs):
    """The same epochs by hand: a numpy loop over the batches (the floor for numpy kernels)."""
    ref = NumpyAdamMLP(params)
    for _ in range(epochs):
        for s in range(0, len(x), batch):
            ref.step(x[s:s + batch], y[s:s + batch])


def trainlib_fit(params, x, y, batch, epochs, eager):
    model = tl.Sequential([tl.layers.Input((64,)), tl.layers.Dense(128, activation="relu"),
                           tl.layers.Dense(10)])
    model.set_weights(params)
    model.compile(optimizer=tl.optim.Adam(1e-3), run_eagerly=eager,
                  loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)  # trace (graph) once
    start = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=epochs, verbose=0, shuffle=False)
    return time.perf_counter() - start


def main():
    x, y = digits()
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((64, 128)) * 0.1).astype(np.float32), np.zeros(128, np.float32),
              (rng.standard_normal((128, 10)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]
    batches = [int(b) for b in sys.argv[1:]] or [32, 256]
    for batch in batches:
        steps_per_epoch = -(-len(x) // batch)
        epochs = 10 if batch == 32 else 40
        steps = steps_per_epoch * epochs
        times = {}
        start = time.perf_counter()
        numpy_fit(params, x, y, batch, epochs)
        times["numpy loop"] = time.perf_counter() - start
        times["fit (graph)"] = min(trainlib_fit(params, x, y, batch, epochs, False) for _ in range(3))
        times["fit (run_eagerly)"] = trainlib_fit(params, x, y, batch, max(1, epochs // 5), True) * 5
        print(f"digits MLP 64-128-10, batch {batch}, {steps} steps:")
        for name, t in times.items():
            print(f"  {name:<18} {steps / t:8.0f} steps/s  {1e6 * t / steps:8.1f} us/step")
        print(f"  graph fit / numpy loop time = {times['fit (graph)'] / times['numpy loop']:.2f}x "
              f"(aim <= 1.3); eager / graph = {times['fit (run_eagerly)'] / times['fit (graph)']:.1f}x "
              "(aim >= 2)")


if __name__ == "__main__":
    main()
