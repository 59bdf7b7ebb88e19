"""What profiling costs: the same calls with `tl.profiler.experimental` off and on.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 python bench/profiler_overhead.py
Cases: a tl.function of 200 `tl.sin` ops on 4 floats (the hooks' cost per op) and the
MLP 64-128-10 + Adam train step (`train_on_batch`, batch 32). CPU time of the process,
rounds interleaved (off, on, off, on...), medians; off runs the default generated code,
which has no hooks, so the "off" figures are what a program that never profiles pays.
"""
import statistics
import time

import numpy as np

import trainlib as tl

ROUNDS, CALLS = 7, 1000


def per_call_us(fn, calls=CALLS):
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls * 1e6


def interleaved(fn):
    """(median µs a call off, median µs a call while profiling)."""
    off, on = [], []
    for _ in range(ROUNDS):
        off.append(per_call_us(fn))
        tl.profiler.experimental.start("profiler_overhead_logs")
        on.append(per_call_us(fn))
        tl.profiler.experimental.stop(save=False)
    return statistics.median(off), statistics.median(on)


def sin_chain():
    @tl.function
    def chain(x):
        for _ in range(200):
            x = tl.sin(x)
        return x
    x = tl.constant(np.ones(4, "float32"))
    chain(x)
    return lambda: chain(x)


def mlp_step():
    model = tl.Sequential([tl.layers.Input((64,)), tl.layers.Dense(128, activation="relu"),
                           tl.layers.Dense(10)])
    model.compile("adam", tl.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 64)).astype("float32")
    y = rng.integers(0, 10, 32)
    model.train_on_batch(x, y)
    return lambda: model.train_on_batch(x, y)


def main():
    for name, make, ops in (("200 sin ops", sin_chain, 200), ("MLP 64-128 Adam step", mlp_step, None)):
        off, on = interleaved(make())
        extra = f", {(on - off) / ops * 1000:.0f} ns per op" if ops else ""
        print(f"{name:22} off {off:8.1f} µs  profiling {on:8.1f} µs  ratio {on / off:.2f}{extra}")


if __name__ == "__main__":
    main()
