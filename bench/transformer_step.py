"""One Transformer encoder block's training step, trainlib.keras against tf.keras, in one run.

The model (issue 31): Input((64, 128)) -> MultiHeadAttention(4 heads, key_dim 32)(x, x) -> Add ->
LayerNormalization -> Dense(512, relu) -> Dense(128) -> Add -> LayerNormalization ->
GlobalAveragePooling1D -> Dense(10); batch 32, Adam, sparse categorical crossentropy from
logits; both libraries time `model.train_on_batch` on the same batch, in interleaved rounds
(each round times a block of calls of each library, the order alternating), and the table
shows medians and trainlib's ratio to TensorFlow. Without TensorFlow only trainlib is timed.

Run from the repository root, as users run (the OpenBLAS variables these machines set unset):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=$PWD KERAS_BACKEND=tensorflow \
        ~/tfref/bin/python bench/transformer_step.py [--rounds N] [--threads N] [--cpu-time]
        [--profile]
--threads N gives numpy's BLAS, trainlib's pool and TensorFlow's pools N threads (default: each
library's own, all cores); --cpu-time times by the process's CPU time (all its threads), steadier
on a loaded machine; --profile prints cProfile's top functions over trainlib's steps instead.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--profile", action="store_true")
    return parser.parse_args()


ARGS = _parse()
if ARGS.threads:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(ARGS.threads)      # before numpy loads its BLAS

import numpy as np  # noqa: E402

BATCH, SEQ, WIDTH = 32, 64, 128


def build(keras):
    """The encoder block model, compiled with Adam and sparse categorical crossentropy."""
    layers = keras.layers
    inputs = keras.Input((SEQ, WIDTH))
    x = layers.Add()([inputs, layers.MultiHeadAttention(num_heads=4, key_dim=32)(inputs, inputs)])
    x = layers.LayerNormalization()(x)
    y = layers.Dense(128)(layers.Dense(512, activation="relu")(x))
    x = layers.LayerNormalization()(layers.Add()([x, y]))
    outputs = layers.Dense(10)(layers.GlobalAveragePooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _block(step, seconds=0.3):
    """Median ms of one step over a block of calls lasting about `seconds` (of the clock that
    --cpu-time picks)."""
    clock = time.process_time if ARGS.cpu_time else time.perf_counter
    times, start = [], clock()
    while clock() - start < seconds or len(times) < 3:
        t = clock()
        step()
        times.append(clock() - t)
    return statistics.median(times) * 1e3


def main():
    args = ARGS
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SEQ, WIDTH)).astype("float32")
    y = rng.integers(0, 10, BATCH).astype("int64")
    import trainlib as tl
    import trainlib.keras as tk
    if args.threads:   # trainlib's own pool too
        tl.config.threading.set_intra_op_parallelism_threads(args.threads)
    steps = {"trainlib": (lambda m=build(tk): m.train_on_batch(x, y))}
    if args.profile:
        import cProfile
        import pstats
        for _ in range(3):
            steps["trainlib"]()
        profile = cProfile.Profile()
        profile.runcall(lambda: [steps["trainlib"]() for _ in range(10)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    try:
        import keras
        import tensorflow as tf
        if args.threads:
            tf.config.threading.set_intra_op_parallelism_threads(args.threads)
            tf.config.threading.set_inter_op_parallelism_threads(args.threads)
        steps["tensorflow"] = lambda m=build(keras): m.train_on_batch(x, y)
    except ImportError:
        print("no keras/tensorflow: timing trainlib only", file=sys.stderr)
    for step in steps.values():
        for _ in range(3):
            step()
    rows = {name: [] for name in steps}
    for r in range(args.rounds):
        for name in (list(steps) if r % 2 == 0 else list(steps)[::-1]):
            rows[name].append(_block(steps[name]))
    try:
        from threadpoolctl import threadpool_info
        kernels = sorted({i.get("architecture", "?") for i in threadpool_info()
                          if i.get("internal_api") == "openblas"})
    except ImportError:
        kernels = ["?"]
    medians = {name: statistics.median(v) for name, v in rows.items()}
    print(f"Transformer encoder block train_on_batch, batch {BATCH}, OpenBLAS kernels {kernels}, "
          f"threads {args.threads or 'default'}, {'CPU time' if args.cpu_time else 'wall clock'}")
    for name, ms in medians.items():
        print(f"  {name:<11} {ms:8.2f} ms")
    if "tensorflow" in medians:
        print(f"  ratio       {medians['trainlib'] / medians['tensorflow']:8.2f}x TensorFlow")


if __name__ == "__main__":
    main()
