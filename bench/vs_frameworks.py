"""trainlib vs TensorFlow, JAX (when installed) and hand-written numpy on DESIGN.md's cases.

Run (needs TensorFlow/Keras importable, JAX optional; they are NOT trainlib dependencies):
    python bench/vs_frameworks.py
Prints medians and ratios; absolute times drift between runs, ratios less so.
"""
import os
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402
from fit_step import B, C, D, H, NumpyAdamMLP  # noqa: E402

import trainlib as tl  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
    import keras  # noqa: E402
except ImportError:
    print("TensorFlow/Keras not installed: nothing to compare (pip install tensorflow-cpu in a "
          "separate environment)")
    sys.exit(0)
try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
except ImportError:
    jax = None


def row(name, **times):
    ref = times.get("numpy")
    parts = [f"{k} {v:9.1f} us" + (f" ({v / ref:5.2f}x)" if ref and k != "numpy" else "")
             for k, v in times.items()]
    print(f"{name:<28}" + " | ".join(parts))


def power_case():
    x = np.random.default_rng(0).integers(-1, 2, size=(10, 10)).astype(np.int32)

    def power_np(x, y):
        r = np.eye(10, dtype=np.int32)
        for _ in range(y):
            r = np.matmul(x, r)
        return r

    def make(lib):
        def power(x, y):
            r = lib.eye(10, dtype=lib.int32)
            for _ in range(y):
                r = lib.matmul(x, r)
            return r
        return power

    tfx, tlx = tf.constant(x), tl.constant(x)
    tf_power, tl_power = make(tf), make(tl)
    tf_graph, tl_graph = tf.function(tf_power), tl.function(tl_power)
    tf_graph(tfx, 100), tl_graph(tlx, 100)
    extra = {}
    if jax is not None:
        jx = jnp.asarray(x)
        jax_power = jax.jit(_jax_power)
        jax_power(jx).block_until_ready()
        extra["jax_jit"] = median_us(lambda: jax_power(jx).block_until_ready())
    row("power(x, 100)", numpy=median_us(lambda: power_np(x, 100)), **extra,
        tf_eager=median_us(lambda: tf_power(tfx, 100), repeat=3),
        tf_graph=median_us(lambda: tf_graph(tfx, 100)),
        tl_eager=median_us(lambda: tl_power(tlx, 100), repeat=3),
        tl_graph=median_us(lambda: tl_graph(tlx, 100)))


def _jax_power(x):
    r = jnp.eye(10, dtype=jnp.int32)
    for _ in range(100):
        r = jnp.matmul(x, r)
    return r


def _jax_adam_step():
    """The same Dense+Adam step in JAX (jit of value_and_grad + Keras-3 Adam by hand)."""
    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        logits = jnp.maximum(x @ w1 + b1, 0) @ w2 + b2
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(params, m, v, t, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        alpha = 1e-3 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        m = [mi + (g - mi) * 0.1 for mi, g in zip(m, grads)]
        v = [vi + (g * g - vi) * 0.001 for vi, g in zip(v, grads)]
        params = [p - mi * alpha / (jnp.sqrt(vi) + 1e-7) for p, mi, vi in zip(params, m, v)]
        return params, m, v, t, loss
    return step


def mlp_case():
    rng = np.random.default_rng(0)
    n_batches = 32
    x = rng.standard_normal((B * n_batches, D)).astype(np.float32)
    y = rng.integers(0, C, size=B * n_batches).astype(np.int32)
    params = [(rng.standard_normal((D, H)) * 0.1).astype(np.float32), np.zeros(H, np.float32),
              (rng.standard_normal((H, C)) * 0.1).astype(np.float32), np.zeros(C, np.float32)]
    xb, yb = x[:B], y[:B]
    ref = NumpyAdamMLP(params)

    def keras_model():
        m = keras.Sequential([keras.Input((D,)), keras.layers.Dense(H, activation="relu"),
                              keras.layers.Dense(C)])
        m.set_weights(params)
        return m

    def tl_model():
        m = tl.Sequential([tl.layers.Input((D,)), tl.layers.Dense(H, activation="relu"),
                           tl.layers.Dense(C)])
        m.set_weights(params)
        return m

    times, firsts = {}, {}
    for name, lib, make, losses, optim in (("tf", tf, keras_model, keras.losses, keras.optimizers),
                                           ("tl", tl, tl_model, tl.losses, tl.optim)):
        model, opt = make(), optim.Adam(1e-3)
        loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
        opt.build(model.trainable_variables)

        @lib.function
        def step(x, y, model=model, opt=opt, loss_fn=loss_fn, lib=lib):
            with lib.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            return loss

        xt, yt = lib.constant(xb), lib.constant(yb)
        start = time.perf_counter()
        step(xt, yt)
        firsts[name] = (time.perf_counter() - start) * 1e3
        times[name + "_function"] = median_us(lambda: step(xt, yt), repeat=9)
        fit_model = make()
        fit_model.compile(optimizer=optim.Adam(1e-3),
                          loss=losses.SparseCategoricalCrossentropy(from_logits=True))
        fit_model.fit(x, y, batch_size=B, epochs=1, verbose=0, shuffle=False)
        start = time.perf_counter()
        fit_model.fit(x, y, batch_size=B, epochs=3, verbose=0, shuffle=False)
        times[name + "_fit"] = (time.perf_counter() - start) / (3 * n_batches) * 1e6
    if jax is not None:
        step = _jax_adam_step()
        state = [[jnp.asarray(p) for p in params], [jnp.zeros_like(jnp.asarray(p)) for p in params],
                 [jnp.zeros_like(jnp.asarray(p)) for p in params], jnp.asarray(0.0)]
        jxb, jyb = jnp.asarray(xb), jnp.asarray(yb)

        def run():
            out = step(*state, jxb, jyb)
            state[:] = out[:4]
            out[4].block_until_ready()
        run()
        times["jax_jit"] = median_us(run, repeat=9)
    row(f"Dense {D}-{H}-{C}+Adam, b{B}", numpy=median_us(lambda: ref.step(xb, yb), repeat=9), **times)
    print(f"{'  first call (trace+run)':<28}tf {firsts['tf']:.0f} ms | tl {firsts['tl']:.0f} ms")


def chain_case():
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)

    def chain_np(x):
        return np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - x ** 2

    def make(lib):
        return lambda x: lib.tanh(x * 2.0 + 1.0) * lib.sigmoid(x) - x ** 2

    tfx, tlx = tf.constant(x), tl.constant(x)
    tf_graph, tf_xla = tf.function(make(tf)), tf.function(make(tf), jit_compile=True)
    tl_graph, tl_jit = tl.function(make(tl)), tl.function(make(tl), jit_compile=True)
    for f, a in ((tf_graph, tfx), (tf_xla, tfx), (tl_graph, tlx), (tl_jit, tlx)):
        f(a)
    extra = {}
    if jax is not None:
        jx = jnp.asarray(x)
        jax_chain = jax.jit(lambda x: jnp.tanh(x * 2.0 + 1.0) * jax.nn.sigmoid(x) - x ** 2)
        jax_chain(jx).block_until_ready()
        extra["jax_jit"] = median_us(lambda: jax_chain(jx).block_until_ready())
    row("chain 1M float32", numpy=median_us(lambda: chain_np(x)), **extra,
        tf_graph=median_us(lambda: tf_graph(tfx)), tf_xla=median_us(lambda: tf_xla(tfx)),
        tl_graph=median_us(lambda: tl_graph(tlx)), tl_jit=median_us(lambda: tl_jit(tlx)))


if __name__ == "__main__":
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"JAX {jax.__version__ if jax else 'not installed'}, trainlib {tl.__version__}")
    power_case()
    mlp_case()
    chain_case()
