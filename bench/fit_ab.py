"""A/B of `fit` per-step time between two trainlib checkouts, interleaved in one run.

Run: python bench/fit_ab.py /path/to/checkout_A /path/to/checkout_B [rounds]

Each checkout runs in its own worker process (PYTHONPATH set to it) that builds the
digits MLP (64-128-10, Adam, batch 32) once and traces its step; the driver then asks
the workers in turn, round after round, for one epoch of `fit` and the same epoch by
hand in numpy, timed in CPU seconds of the worker (less sensitive than wall time to
other processes on a shared machine). It prints, per checkout, the median per-step
time of fit and of the numpy loop, and their ratio.
"""
import json
import os
import statistics
import subprocess
import sys

WORKER = r'''
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from fit_step import NumpyAdamMLP
import trainlib as tl
from sklearn.datasets import load_digits
d = load_digits()
x, y = (d.data / 16.0).astype(np.float32), d.target.astype(np.int32)
rng = np.random.default_rng(0)
params = [(rng.standard_normal((64, 128)) * 0.1).astype(np.float32), np.zeros(128, np.float32),
          (rng.standard_normal((128, 10)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]
model = tl.Sequential([tl.layers.Input((64,)), tl.layers.Dense(128, activation="relu"),
                       tl.layers.Dense(10)])
model.set_weights(params)
model.compile(optimizer=tl.optim.Adam(1e-3),
              loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=32, epochs=1, verbose=0, shuffle=False)
ref = NumpyAdamMLP(params)
steps = -(-len(x) // 32)
for line in sys.stdin:
    t = time.process_time()
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, shuffle=False)
    fit = time.process_time() - t
    t = time.process_time()
    for s in range(0, len(x), 32):
        ref.step(x[s:s + 32], y[s:s + 32])
    numpy_time = time.process_time() - t
    print(json.dumps({"fit": fit / steps, "numpy": numpy_time / steps}), flush=True)
'''


def main():
    checkouts = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    here = os.path.dirname(os.path.abspath(__file__))
    workers = []
    for path in checkouts:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path), OMP_NUM_THREADS="1")
        workers.append(subprocess.Popen([sys.executable, "-c", WORKER, here], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True))
    results = [[] for _ in workers]
    for _ in range(rounds):
        for worker, out in zip(workers, results):
            worker.stdin.write("run\n")
            worker.stdin.flush()
            out.append(json.loads(worker.stdout.readline()))
    for worker in workers:
        worker.stdin.close()
        worker.wait()
    for path, out in zip(checkouts, results):
        fit = statistics.median(r["fit"] for r in out) * 1e6
        ref = statistics.median(r["numpy"] for r in out) * 1e6
        print(f"{path}: fit {fit:7.1f} us/step, numpy loop {ref:7.1f} us/step, "
              f"fit / numpy = {fit / ref:.2f}x  ({rounds} rounds, CPU time)")


if __name__ == "__main__":
    main()
