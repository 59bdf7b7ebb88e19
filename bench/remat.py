"""Recomputation that saves memory: a deep MLP (16 Dense layers of 2048, batch 256, SGD) trained
by `Model.fit`'s step plain and with `compile(remat=True)`.

Run: python bench/remat.py [rounds]
Prints, for both: the planned peak of the compiled train step's intermediates (the memory
plan of passes/memory.py), the peak traced by tracemalloc over one step (numpy reports its
arrays to it), the median time per step over interleaved rounds, and the largest difference
of the weights after one step from the same start (the gradients, as lr = 1).
Aims (issue 26): peak at most 0.6x the plain step's, time at most 1.4x, same gradients to
float32 precision.
"""
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import trainlib as tl  # noqa: E402

WIDTH, DEPTH, BATCH = 2048, 16, 256


def make(weights, remat):
    model = tl.Sequential([tl.layers.Input((WIDTH,))] +
                          [tl.layers.Dense(WIDTH, activation="relu") for _ in range(DEPTH - 1)] +
                          [tl.layers.Dense(WIDTH)])
    model.set_weights(weights)
    model.compile(optimizer=tl.optim.SGD(1.0), loss="mse", remat=remat)
    return model


def planned_peak(model):
    (concrete,) = model.train_function._cache.values()
    return concrete._program.memory["peak_bytes"]


def traced_peak(model, x, y):
    tracemalloc.start()
    tracemalloc.reset_peak()
    model.train_on_batch(x, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(rounds=3):
    rng = np.random.default_rng(0)
    weights = []
    for _ in range(DEPTH):
        weights += [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32),
                    np.zeros(WIDTH, np.float32)]
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    y = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    models = {"plain": make(weights, False), "remat": make(weights, True)}
    for model in models.values():   # one step each from the same weights: compare
        model.train_on_batch(x, y)
    diff = max(float(np.max(np.abs(a - b))) for a, b in
               zip(models["plain"].get_weights(), models["remat"].get_weights()))
    scale = max(float(np.max(np.abs(a - w))) for a, w in
                zip(models["plain"].get_weights(), weights))
    peaks = {k: planned_peak(m) for k, m in models.items()}
    traced = {k: traced_peak(m, x, y) for k, m in models.items()}
    times = {k: [] for k in models}
    for _ in range(rounds):
        for name, model in models.items():
            start = time.perf_counter()
            model.train_on_batch(x, y)
            times[name].append(time.perf_counter() - start)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    mb = 1 / 2 ** 20
    print(f"MLP {DEPTH} x Dense({WIDTH}), batch {BATCH}, SGD, train step:")
    for k in models:
        print(f"  {k:<6} planned peak {peaks[k] * mb:7.1f} MiB | traced peak {traced[k] * mb:7.1f} MiB"
              f" | {med[k]:7.1f} ms/step")
    print(f"  remat / plain: planned peak {peaks['remat'] / peaks['plain']:.2f}x (aim <= 0.6), "
          f"traced peak {traced['remat'] / traced['plain']:.2f}x, time "
          f"{med['remat'] / med['plain']:.2f}x (aim <= 1.4)")
    print(f"  weights after one step (lr 1: the gradients) differ by at most {diff:.3g} "
          f"(largest gradient element {scale:.3g})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
