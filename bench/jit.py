"""`jit_compile=True` (native kernels, numba) against JAX `jit`, TensorFlow XLA and numpy.

Cases, in interleaved rounds within one run (medians; ratios to JAX's jit):
  * the elementwise chain tanh(x*2+1)*sigmoid(x)-x**2 on 1M float32;
  * a Dense 64-128-10 + Adam train step, batch 32;
  * first calls of the chain's Function in fresh processes: trainlib with a cold and with a
    warm disk cache, TensorFlow's XLA.
Run:  python bench/jit.py [--rounds N]   (TensorFlow and JAX optional: rows skip without)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(__file__))
from fit_step import B, C, D, H  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib.graph.exec import native  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
except ImportError:
    tf = None
try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
except ImportError:
    jax = None


def _time(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e6


def interleaved(cases, rounds, number):
    """{name: median microseconds}: every case timed once per round, rounds interleaved."""
    runs = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            runs[name].append(_time(fn, number))
    return {name: statistics.median(v) for name, v in runs.items()}


def table(title, times, ref):
    print(f"\n{title}\n\n| runner | median | vs {ref} |\n| --- | --- | --- |")
    for name, t in times.items():
        ratio = f"{t / times[ref]:.2f}x" if ref in times else "-"
        print(f"| {name} | {t:,.0f} us | {ratio} |")


def chain_cases():
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    cases = {"numpy by hand": lambda: np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - x ** 2}

    def make(lib):
        return lambda x: lib.tanh(x * 2.0 + 1.0) * lib.sigmoid(x) - x ** 2
    tlx = tl.constant(x)
    tl_graph, tl_jit = tl.function(make(tl)), tl.function(make(tl), jit_compile=True)
    tl_graph(tlx), tl_jit(tlx)
    cases["trainlib graph"] = lambda: tl_graph(tlx)
    cases["trainlib jit_compile"] = lambda: tl_jit(tlx)
    if tf is not None:
        tfx = tf.constant(x)
        tf_xla = tf.function(make(tf), jit_compile=True)
        tf_xla(tfx)
        cases["TensorFlow XLA"] = lambda: tf_xla(tfx)
    if jax is not None:
        jx = jnp.asarray(x)
        jchain = jax.jit(lambda x: jnp.tanh(x * 2.0 + 1.0) * jax.nn.sigmoid(x) - x ** 2)
        jchain(jx).block_until_ready()
        cases["JAX jit"] = lambda: jchain(jx).block_until_ready()
    return cases


def mlp_cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, D)).astype(np.float32)
    y = rng.integers(0, C, size=B).astype(np.int32)
    params = [(rng.standard_normal((D, H)) * 0.1).astype(np.float32), np.zeros(H, np.float32),
              (rng.standard_normal((H, C)) * 0.1).astype(np.float32), np.zeros(C, np.float32)]
    cases = {}
    for label, jit in (("trainlib tl.function", False), ("trainlib jit_compile", True)):
        model = tl.Sequential([tl.layers.Input((D,)), tl.layers.Dense(H, activation="relu"),
                               tl.layers.Dense(C)])
        model.set_weights(params)
        opt = tl.optim.Adam(1e-3)
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
        opt.build(model.trainable_variables)

        def step(x, y, model=model, opt=opt, loss_fn=loss_fn):
            with tl.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            return loss
        fn = tl.function(step, jit_compile=jit)
        xt, yt = tl.constant(x), tl.constant(y)
        fn(xt, yt)
        cases[label] = (lambda fn=fn: fn(xt, yt))
    if jax is not None:
        def loss_of(p, x, y):
            logits = jnp.maximum(x @ p[0] + p[1], 0) @ p[2] + p[3]
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

        @jax.jit
        def jstep(p, m, v, t, x, y):
            loss, g = jax.value_and_grad(loss_of)(p, x, y)
            t = t + 1
            alpha = 1e-3 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            m = [a + (b - a) * 0.1 for a, b in zip(m, g)]
            v = [a + (b * b - a) * 0.001 for a, b in zip(v, g)]
            p = [a - b * alpha / (jnp.sqrt(c) + 1e-7) for a, b, c in zip(p, m, v)]
            return p, m, v, t, loss
        state = [[jnp.asarray(p) for p in params], [jnp.zeros(p.shape) for p in params],
                 [jnp.zeros(p.shape) for p in params], jnp.asarray(0.0)]
        jx, jy = jnp.asarray(x), jnp.asarray(y)

        def run():
            out = jstep(*state, jx, jy)
            state[:] = out[:4]
            out[4].block_until_ready()
        run()
        cases["JAX jit"] = run
    return cases


_FIRST = """
import time, numpy as np
start = time.perf_counter()
import {lib} as lib
imported = time.perf_counter()
x = lib.constant(np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32))
f = lib.function(lambda x: lib.tanh(x * 2.0 + 1.0) * lib.sigmoid(x) - x ** 2, jit_compile=True)
t = time.perf_counter()
np.asarray(f(x))
print((time.perf_counter() - t) * 1e3)
"""


def first_calls():
    """First call (trace + compile + run) of the chain in fresh processes, in ms."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRAINLIB_CACHE_DIR=cache)
        for label in ("trainlib, cold disk cache", "trainlib, warm disk cache"):
            done = subprocess.run([sys.executable, "-c", _FIRST.format(lib="trainlib")],
                                  env=env, capture_output=True, text=True, check=True)
            out[label] = float(done.stdout.split()[-1])
    if tf is not None:
        done = subprocess.run([sys.executable, "-c", _FIRST.format(lib="tensorflow")],
                              capture_output=True, text=True, check=True)
        out["TensorFlow XLA"] = float(done.stdout.split()[-1])
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(f"numba {native._numba.__version__ if native.available() else 'not installed'}, "
          f"TensorFlow {tf.__version__ if tf else '-'}, JAX {jax.__version__ if jax else '-'}, "
          f"{os.cpu_count()} cores")
    chain = interleaved(chain_cases(), args.rounds, 5)
    table("Elementwise chain, 1M float32", chain, "JAX jit" if jax else "numpy by hand")
    mlp = interleaved(mlp_cases(), args.rounds, 50)
    table(f"Dense {D}-{H}-{C} + Adam train step, batch {B}", mlp,
          "JAX jit" if jax else "trainlib tl.function")
    print("\nFirst call of the chain's Function (fresh process; trace, compile, run)\n")
    print("| runner | ms |\n| --- | --- |")
    for name, ms in first_calls().items():
        print(f"| {name} | {ms:,.0f} |")
