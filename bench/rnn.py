"""Recurrent train steps: trainlib vs TensorFlow/Keras 3 measured side by side in one run.

The case of issue 19: batch 32, 50 time steps, 32 features, 64 units, then Dense(1), mean
squared error, Adam; one `tl.function` step (forward, gradients through the time loop,
update) against the same step as a `tf.function` over Keras's layer. SimpleRNN and GRU too.

Run (TensorFlow is optional; without it only trainlib's figures print; with JAX and optax,
the SimpleRNN case also runs by hand in JAX, `lax.scan` under `jit`):
    PYTHONPATH=$PWD ~/tfref/bin/python bench/rnn.py [--cases lstm,gru,simple_rnn] [--unroll]
Rounds are interleaved (each framework once per round), medians and ratios printed.
All frameworks get the same number of threads (BENCH_THREADS, default 1: numpy's BLAS,
TensorFlow's intra/inter-op pools, XLA's CPU threads): on a shared 2-core machine a multi-threaded BLAS spins
and a (32, 64) @ (64, 256) matmul can take milliseconds instead of microseconds.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
THREADS = os.environ.setdefault("BENCH_THREADS", "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, THREADS)   # before numpy loads its BLAS
if THREADS == "1":   # XLA's CPU client too, before JAX loads
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402
sys.path.insert(0, os.path.dirname(__file__))
from _models import jax_simple_rnn_step  # noqa: E402
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
    import keras  # noqa: E402
    tf.config.threading.set_intra_op_parallelism_threads(int(THREADS))
    tf.config.threading.set_inter_op_parallelism_threads(int(THREADS))
except ImportError:
    tf = keras = None

B, T, F, U = 32, 50, 32, 64
LAYERS = {"lstm": "LSTM", "gru": "GRU", "simple_rnn": "SimpleRNN"}


def make_step(lib, k, kind, unroll, weights=None):
    """(train step function, model) for framework `lib` (tl or tf) with Keras namespace `k`."""
    model = k.Sequential([k.layers.Input((T, F)), getattr(k.layers, LAYERS[kind])(U, unroll=unroll),
                          k.layers.Dense(1)])
    if weights is not None:
        model.set_weights(weights)
    opt = k.optimizers.Adam(1e-3)

    @lib.function
    def step(x, y):
        with lib.GradientTape() as tape:
            loss = lib.reduce_mean(lib.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step, model


def first_call_ms(step, x, y):
    start = time.perf_counter()
    step(x, y)
    return (time.perf_counter() - start) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="lstm,gru,simple_rnn")
    parser.add_argument("--unroll", action="store_true", help="unroll=True (a Python loop)")
    parser.add_argument("--generic", action="store_true",
                        help="trainlib without the cells' own BPTT gradient: the generic While "
                             "gradient, as a custom cell gets")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians)")
    args = parser.parse_args()
    if args.generic:
        from trainlib.layers import rnn_cells  # noqa: PLC0415
        for cell in (rnn_cells.SimpleRNNCell, rnn_cells.LSTMCell, rnn_cells.GRUCell):
            cell.fused = False
    rng = np.random.default_rng(0)
    x = rng.normal(size=(B, T, F)).astype(np.float32)
    y = rng.normal(size=(B, 1)).astype(np.float32)
    print(f"batch {B}, {T} steps, {F} features, {U} units, Adam; unroll={args.unroll}; "
          f"generic={args.generic}; {THREADS} thread(s); medians of {args.rounds} interleaved "
          f"rounds")
    for kind in args.cases.split(","):
        tl_step, tl_model = make_step(tl, tl.keras, kind, args.unroll)
        tx, ty = tl.constant(x), tl.constant(y)
        steps = {"trainlib": lambda: tl_step(tx, ty).numpy()}
        firsts = {"trainlib": first_call_ms(tl_step, tx, ty)}
        if tf is not None:
            tf_step, _ = make_step(tf, keras, kind, args.unroll, tl_model.get_weights())
            fx, fy = tf.constant(x), tf.constant(y)
            firsts["TensorFlow"] = first_call_ms(tf_step, fx, fy)
            steps["TensorFlow"] = lambda: tf_step(fx, fy).numpy()
        jax_step = jax_simple_rnn_step(tl_model.get_weights(), U) if kind == "simple_rnn" and not args.unroll \
            else None
        if jax_step is not None:
            firsts["JAX"] = first_call_ms(jax_step, x, y)
            steps["JAX"] = lambda: jax_step(x, y).block_until_ready()
        runs = {name: [] for name in steps}
        for _ in range(args.rounds):
            for name, fn in steps.items():
                runs[name].append(median_us(fn, repeat=3))
        line = f"{kind:<11}" + " | ".join(
            f"{name} {statistics.median(r) / 1e3:7.2f} ms (first call {firsts[name]:6.0f} ms)"
            for name, r in runs.items())
        for other in ("TensorFlow", "JAX"):
            if other in runs:
                ratio = statistics.median(a / b for a, b in zip(runs["trainlib"], runs[other]))
                line += f" | trainlib/{other} {ratio:5.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
