"""Keras `train_on_batch` on the recurrent and embedding cases of issue 31: trainlib.keras
against tf.keras (Keras 3 on TensorFlow) and, for SimpleRNN, a hand-written JAX `lax.scan`
step, measured interleaved in one run (medians, ratios printed).

Cases (Adam 1e-3, the same initial weights in every framework):
    lstm:  LSTM(128) over 50 steps of 32 features, Dense(10), sparse CE from logits, batch 32
    gru:   the same with GRU(128)
    emb:   Embedding(20000, 64), GlobalAveragePooling1D, Dense(10) on 100-token int
           sequences, sparse CE from logits, batch 64
    srnn:  SimpleRNN(64) over 50 steps of 32 features, Dense(1), mean squared error, batch 32

Run as users run (default threads, wall clock, the two OpenBLAS variables unset):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=$PWD ~/tfref/bin/python \\
        bench/keras_rnn_embedding.py [--cases lstm,emb,srnn] [--rounds 7] [--cpu-time]
`--cpu-time` measures process CPU time on one thread in every framework (set
OPENBLAS_NUM_THREADS=1 too): the figure to compare changes by on a shared machine.
The BLAS kernel that ran is printed (threadpoolctl).
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"
if "--cpu-time" in sys.argv:   # XLA's CPU client on one thread, before JAX loads
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _models import jax_simple_rnn_step  # noqa: E402

import trainlib.keras as tk  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
    import keras  # noqa: E402
except ImportError:
    tf = keras = None


def build(k, case):
    """The case's compiled model in Keras namespace `k` (trainlib.keras or keras)."""
    L = k.layers
    if case in ("lstm", "gru"):
        body = [L.Input((50, 32)), getattr(L, case.upper())(128), L.Dense(10)]
    elif case == "emb":
        body = [L.Input((100,), dtype="int32"), L.Embedding(20000, 64),
                L.GlobalAveragePooling1D(), L.Dense(10)]
    else:
        body = [L.Input((50, 32)), L.SimpleRNN(64), L.Dense(1)]
    model = k.Sequential(body)
    loss = "mse" if case == "srnn" else k.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=k.optimizers.Adam(1e-3), loss=loss)
    return model


def data(case, rng):
    if case == "emb":
        return (rng.integers(0, 20000, (64, 100)).astype(np.int32),
                rng.integers(0, 10, 64).astype(np.int32))
    x = rng.standard_normal((32, 50, 32)).astype(np.float32)
    if case == "srnn":
        return x, rng.standard_normal((32, 1)).astype(np.float32)
    return x, rng.integers(0, 10, 32).astype(np.int32)


def blas_kernels():
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        return "threadpoolctl not installed"
    return ", ".join(f"{i.get('internal_api')} {i.get('architecture')} x{i.get('num_threads')}"
                     for i in threadpool_info())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="lstm,emb,srnn")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (medians)")
    parser.add_argument("--calls", type=int, default=10, help="steps per round")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time, every framework on one thread")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    if args.cpu_time and tf is not None:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    print(f"BLAS: {blas_kernels()}; {'CPU time, 1 thread' if args.cpu_time else 'wall clock'}; "
          f"medians of {args.rounds} interleaved rounds of {args.calls} steps, ms per step")
    for case in args.cases.split(","):
        x, y = data(case, np.random.default_rng(0))
        model = build(tk, case)
        steps = {"trainlib": lambda m=model: m.train_on_batch(x, y)}
        if tf is not None:
            reference = build(keras, case)
            reference.set_weights(model.get_weights())
            steps["TensorFlow"] = lambda m=reference: m.train_on_batch(x, y)
        jax_step = jax_simple_rnn_step(model.get_weights(), 64) if case == "srnn" else None
        if jax_step is not None:
            steps["JAX"] = lambda: jax_step(x, y).block_until_ready()
        for fn in steps.values():   # trace, compile, warm up
            for _ in range(3):
                fn()
        runs = {name: [] for name in steps}
        for _ in range(args.rounds):
            for name, fn in steps.items():
                start = clock()
                for _ in range(args.calls):
                    fn()
                runs[name].append((clock() - start) / args.calls * 1e3)
        medians = {name: statistics.median(r) for name, r in runs.items()}
        ratios = "  ".join(f"trainlib/{name} {medians['trainlib'] / m:.2f}x"
                           for name, m in medians.items() if name != "trainlib")
        print(f"{case:5s} " + "  ".join(f"{n} {m:.2f}" for n, m in medians.items()) +
              f"  | {ratios}", flush=True)


if __name__ == "__main__":
    main()
