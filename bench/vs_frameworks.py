"""trainlib against TensorFlow, JAX and hand-written numpy, per training step of the same model,
batch, optimizer (Adam) and initial weights, measured in interleaved rounds in one run.

Cases (bench/_models.py): MLP 64-128-10 batch 32, MLP 784-1024-1024-10 batch 256, the CNN (2
Conv2D 3x3 + 2 MaxPool 2 + Dense, 28x28x1, batch 64), SimpleRNN 64 units over 50 steps of 32
features batch 32, `tanh(x*2+1)*sigmoid(x)-x**2` on 1M float32 (plain graph and compiled),
the guide's `power(x, 100)`, `fit` per step of the small MLP against Keras 3 on JAX, and four
models of Keras layers (bench/_models.py's LAYER_MODELS, sparse softmax cross-entropy, Adam):
`transformer`, an encoder block (MultiHeadAttention 4 heads, key_dim 32, self-attention over
64 x 128 floats, Add + LayerNormalization, FFN Dense 512 relu + Dense 128, Add +
LayerNormalization, GlobalAveragePooling1D, Dense 10), batch 32; `lstm`, LSTM(128) over 50 steps
of 32 features + Dense 10, batch 32; `embedding`, Embedding(20000, 64) + GlobalAveragePooling1D
+ Dense 10 on 100 tokens, batch 64; `rescnn`, Conv2D 32 3x3 + BatchNormalization + relu,
Conv2D 32 3x3 + BatchNormalization, Add with a 1x1 Conv2D projection of the input, relu,
GlobalAveragePooling2D, Dense 10 on 32x32x3, batch 32, BatchNormalization in training mode.

How each side is written: TensorFlow runs raw ops in a `tf.function` (Keras 3 is loaded on its
JAX backend, and TensorFlow 2.21's tf.keras is that Keras, so the Keras-layer models are Keras
3's layer math in TensorFlow ops: einsum projections, a While loop over time, tf.nn.moments),
JAX a `jax.jit` of `value_and_grad` plus Keras 3's Adam by hand. For the Keras-layer models
trainlib builds them with trainlib.keras layers as a user does and trains them in a
`tl.function` step (GradientTape, Adam), and the JAX column is Keras 3's own layers on JAX:
`model.stateless_call` in a jitted `value_and_grad` step with Keras's Adam `stateless_apply`,
state donated (what Keras's JAX `fit` runs per step, without its per-call Python). All start
from the same numpy weights; each Keras-layer case prints every library's loss of its first
two steps and exits if the first ones disagree.

Each round times every implementation of every case once (a block of calls lasting about
50 ms, 20 ms with --quick), in an order rotated per round, so load that comes and goes hits
all of them alike, with a pause of 0.2 s before each block so that the threads a library
leaves spinning after its block (OpenBLAS's for tens of ms) do not run into the next one's;
the table shows medians over rounds and trainlib's ratio to each.

Run from the repository root (TensorFlow and JAX are not trainlib dependencies; without them
the script compares trainlib with numpy only):
    PYTHONPATH=$PWD ~/tfref/bin/python bench/vs_frameworks.py [--quick] [--rounds N]
        [--threads N] [--cases cnn,rnn,...]
--threads N gives numpy's BLAS, trainlib's pool, TensorFlow's and XLA's pools N threads each
(default: each library's own default, all cores).

--memory prints, instead of times, the peak memory of each library's step of each case: each
runs in a fresh subprocess (`--memory-child CASE:COLUMN`, not importing the other frameworks),
--rounds N times (default 1; the table shows medians), and the figure is the resident memory's high-water mark over its steps after warm-up, above what was
resident before them once freed heap went back to the system (Linux: /proc/self/clear_refs
resets the mark; glibc's malloc_trim). Resident memory sees every allocator alike (numpy's,
TensorFlow's, XLA's), which tracemalloc (bench/memory.py) does not.

--load N runs N competing CPU-bound
processes (busy loops) during every other round, stopped (SIGSTOP) in the rounds between, and
prints the loaded table after the quiet one, with each ratio's loaded/quiet factor (the
issue's aim: at most 1.25x). The header names the BLAS library and kernel that ran
(threadpoolctl's `threadpool_info()`).
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

CASES = ("mlp", "mlp_jit", "mlp_large", "cnn", "rnn", "chain", "chain_jit", "power", "fit",
         "transformer", "lstm", "embedding", "rescnn")


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 20 ms blocks")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7, quick 3)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for BLAS, trainlib's pool, TensorFlow and XLA (default: their own)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time blocks by the process's CPU time (all its threads) instead "
                             "of the wall clock: steadier on a machine other jobs load")
    parser.add_argument("--memory", action="store_true",
                        help="instead of times, each step's peak memory: each library's step of "
                             "each case in a fresh subprocess, its peak resident memory over "
                             "steps after warm-up above what was resident before them")
    parser.add_argument("--memory-child", metavar="CASE:COLUMN", help=argparse.SUPPRESS)
    parser.add_argument("--load", type=int, default=0,
                        help="also measure with N competing CPU-bound processes running")
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated subset of {','.join(CASES)}")
    return parser.parse_args()


ARGS = _parse()
# the one library (column) a --memory child builds, None when timing: a child imports no other
MEMORY_COLUMN = ARGS.memory_child.split(":")[1] if ARGS.memory_child else None


def _wanted(column):
    return MEMORY_COLUMN in (None, column)


os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "jax")     # Keras 3 on JAX for the fit row
if ARGS.threads:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(ARGS.threads)      # before numpy loads its BLAS
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={str(ARGS.threads > 1).lower()}"
                               f" intra_op_parallelism_threads={ARGS.threads}")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import _models as M  # noqa: E402

import trainlib as tl  # noqa: E402

if ARGS.threads:   # trainlib's own pool (the conv/pooling kernels' batch slices) too
    tl.config.threading.set_intra_op_parallelism_threads(ARGS.threads)

try:
    if not _wanted("TensorFlow"):
        raise ImportError("a --memory child of another library")
    import tensorflow as tf  # noqa: E402
    if ARGS.threads:
        tf.config.threading.set_intra_op_parallelism_threads(ARGS.threads)
        tf.config.threading.set_inter_op_parallelism_threads(ARGS.threads)
except ImportError:
    tf = None
try:
    if not _wanted("JAX"):
        raise ImportError("a --memory child of another library")
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
except ImportError:
    jax = jnp = None
keras = None
if jax is not None:
    try:
        import keras  # noqa: E402
        if keras.backend.backend() != "jax":
            keras = None
    except ImportError:
        keras = None

COLUMNS = ("trainlib", "TensorFlow", "JAX", "numpy")


class Case:
    """One table row: implementations by column, each `fn()` running `per_call` steps."""

    def __init__(self, name, *aims):
        self.name, self.aims, self.impls = name, aims, {}   # aims: (column, ratio limit)

    def add(self, column, fn, per_call=1):
        if not _wanted(column):
            return
        if MEMORY_COLUMN is None:   # a --memory child measures its first calls too
            fn()   # trace / compile / warm up before any timing
        self.impls[column] = (fn, per_call)


# ------------------------------------------------------------------ TensorFlow and JAX steps

def _tf_adam(params):
    """Variables of `params` and Keras 3's Adam update over them, in TensorFlow ops."""
    vs = [tf.Variable(p) for p in params]
    ms = [tf.Variable(np.zeros_like(p)) for p in params]
    us = [tf.Variable(np.zeros_like(p)) for p in params]
    t = tf.Variable(0.0)

    def update(grads):
        t.assign_add(1.0)
        alpha = M.LR * tf.sqrt(1 - M.B2 ** t) / (1 - M.B1 ** t)
        for p, g, m, u in zip(vs, grads, ms, us):
            g = tf.convert_to_tensor(g)   # an Embedding's IndexedSlices: Keras's Adam is dense
            m.assign_add((g - m) * (1 - M.B1))
            u.assign_add((g * g - u) * (1 - M.B2))
            p.assign_sub(m * alpha / (tf.sqrt(u) + M.EPS))
    return vs, update


def _tf_step(params, forward, loss):
    vs, update = _tf_adam(params)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            out = forward(vs, x)
            value = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(y, out) if loss == "sparse_ce"
                else tf.square(out - y))
        update(tape.gradient(value, vs))
        return value
    return step


def _jax_step(params, forward, loss):
    """A jitted value_and_grad + Adam step; returns a callable advancing its own state."""
    def loss_fn(ps, x, y):
        out = forward(ps, x)
        if loss == "sparse_ce":
            logp = jax.nn.log_softmax(out)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
        return jnp.mean(jnp.square(out - y))

    @jax.jit
    def step(ps, ms, us, t, x, y):
        value, grads = jax.value_and_grad(loss_fn)(ps, x, y)
        t = t + 1
        alpha = M.LR * jnp.sqrt(1 - M.B2 ** t) / (1 - M.B1 ** t)
        ms = [m + (g - m) * (1 - M.B1) for m, g in zip(ms, grads)]
        us = [u + (g * g - u) * (1 - M.B2) for u, g in zip(us, grads)]
        ps = [p - m * alpha / (jnp.sqrt(u) + M.EPS) for p, m, u in zip(ps, ms, us)]
        return ps, ms, us, t, value

    state = [[jnp.asarray(p) for p in params], [jnp.zeros(p.shape, p.dtype) for p in params],
             [jnp.zeros(p.shape, p.dtype) for p in params], jnp.asarray(0.0)]

    def run(x, y):
        out = step(*state, x, y)
        state[:] = out[:4]
        return out[4].block_until_ready()
    return run


def _mlp_forward(lib):
    def forward(ps, x):
        for i in range(0, len(ps), 2):
            x = x @ ps[i] + ps[i + 1]
            if i < len(ps) - 2:
                x = lib.maximum(x, 0.0)
        return x
    return forward


def _tf_cnn(ps, x):
    w1, b1, w2, b2, w3, b3 = ps
    a = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, w1, 1, "VALID") + b1), 2, 2, "VALID")
    a = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(a, w2, 1, "VALID") + b2), 2, 2, "VALID")
    return tf.reshape(a, [x.shape[0], -1]) @ w3 + b3


def _jax_cnn(ps, x):
    w1, b1, w2, b2, w3, b3 = ps
    dims = ("NHWC", "HWIO", "NHWC")

    def block(a, w, b):
        a = jax.nn.relu(jax.lax.conv_general_dilated(a, w, (1, 1), "VALID",
                                                     dimension_numbers=dims) + b)
        return jax.lax.reduce_window(a, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    a = block(block(x, w1, b1), w2, b2)
    return a.reshape(x.shape[0], -1) @ w3 + b3


def _tf_rnn(ps, x):
    w, u, b, wd, bd = ps
    h = tf.zeros([x.shape[0], u.shape[0]])
    for t in tf.range(x.shape[1]):   # AutoGraph: a While loop, as Keras's RNN layer makes
        h = tf.tanh(x[:, t] @ w + h @ u + b)
    return h @ wd + bd


def _jax_rnn(ps, x):
    w, u, b, wd, bd = ps

    def cell(h, xt):
        h = jnp.tanh(xt @ w + h @ u + b)
        return h, None
    h, _ = jax.lax.scan(cell, jnp.zeros((x.shape[0], u.shape[0]), x.dtype), jnp.swapaxes(x, 0, 1))
    return h @ wd + bd


# ---------------------------------------------- the Keras-layer models in TensorFlow ops
# Keras 3's layer math (bench/_models.py's models), weights in the models' order: TensorFlow's
# tf.keras here is Keras 3 on the JAX backend the script loads, so these are raw ops, as
# Keras 3's TensorFlow backend runs them (einsum projections, a while loop over time).

def _tf_layer_norm(x, gamma, beta):
    mean, var = tf.nn.moments(x, [-1], keepdims=True)
    return tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-3)


def _tf_transformer(ps, x):
    wq, bq, wk, bk, wv, bv, wo, bo, g1, e1, w1, c1, w2, c2, g2, e2, wd, bd = ps
    q = tf.einsum("btd,dhk->bthk", x, wq) + bq
    k = tf.einsum("btd,dhk->bthk", x, wk) + bk
    v = tf.einsum("btd,dhk->bthk", x, wv) + bv
    scores = tf.einsum("bshk,bthk->bhts", k, q * (1.0 / float(wq.shape[-1]) ** 0.5))
    a = tf.einsum("bhts,bshk->bthk", tf.nn.softmax(scores), v)
    h = _tf_layer_norm(x + tf.einsum("bthk,hkd->btd", a, wo) + bo, g1, e1)
    h = _tf_layer_norm(h + tf.nn.relu(h @ w1 + c1) @ w2 + c2, g2, e2)
    return tf.reduce_mean(h, axis=1) @ wd + bd


def _tf_lstm(ps, x):
    w, u, b, wd, bd = ps
    steps = x.shape[1]
    xs = tf.TensorArray(x.dtype, size=steps).unstack(tf.transpose(x, [1, 0, 2]))
    h = c = tf.zeros([x.shape[0], u.shape[0]])
    for t in tf.range(steps):   # AutoGraph: a While loop, as Keras's RNN layer makes
        i, f, g, o = tf.split(xs.read(t) @ w + h @ u + b, 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
    return h @ wd + bd


def _tf_embedding(ps, x):
    table, wd, bd = ps
    return tf.reduce_mean(tf.gather(table, x), axis=1) @ wd + bd


def _tf_rescnn(moving):
    """The residual CNN's forward over its trainable weights; BatchNormalization in training
    mode updates the moving statistics in `moving` (tf.Variables, models' order)."""
    def batch_norm(x, gamma, beta, mean_var):
        mean, var = tf.nn.moments(x, [0, 1, 2])
        for stat, batch_stat in zip(mean_var, (mean, var)):
            stat.assign(stat * 0.99 + batch_stat * 0.01)
        return tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-3)

    def forward(ps, x):
        k1, g1, e1, k2, g2, e2, kp, bp, wd, bd = ps
        h = tf.nn.relu(batch_norm(tf.nn.conv2d(x, k1, 1, "SAME"), g1, e1, moving[:2]))
        h = batch_norm(tf.nn.conv2d(h, k2, 1, "SAME"), g2, e2, moving[2:])
        h = tf.nn.relu(h + tf.nn.conv2d(x, kp, 1, "SAME") + bp)
        return tf.reduce_mean(h, axis=[1, 2]) @ wd + bd
    return forward


def _keras_jax_step(model, weights, x, y):
    """Keras 3 on JAX: `model`'s `stateless_call` under `jax.jit` of `value_and_grad`, and
    Keras's Adam `stateless_apply`, state donated, as Keras's own JAX train step runs them
    without `fit`'s per-call Python; returns a callable advancing its own state."""
    model.set_weights(weights)
    opt = keras.optimizers.Adam(M.LR, epsilon=M.EPS)
    opt.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss_of(trainable, non_trainable, x, y):
        out, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, out), non_trainable

    def step(state, x, y):
        trainable, non_trainable, slots = state
        (value, non_trainable), grads = jax.value_and_grad(loss_of, has_aux=True)(
            trainable, non_trainable, x, y)
        trainable, slots = opt.stateless_apply(slots, grads, trainable)
        return (trainable, non_trainable, slots), value
    step = jax.jit(step, donate_argnums=0)
    state = [tuple([v.value for v in vs] for vs in (
        model.trainable_variables, model.non_trainable_variables, opt.variables))]
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def run():
        state[0], value = step(state[0], jx, jy)
        return value.block_until_ready()
    return run


# ------------------------------------------------------------------ cases

def _train_case(name, aims, data, tl_model, np_cls, tf_fwd, jax_fwd, loss, jit_compile=False):
    case = Case(name, *aims)
    params, x, y = data()
    step = M.tl_step(tl_model(), params, loss, jit_compile)
    xt, yt = tl.constant(x), tl.constant(y)
    case.add("trainlib", lambda: step(xt, yt).numpy())
    if tf is not None and tf_fwd is not None:
        tf_step, tfx, tfy = _tf_step(params, tf_fwd, loss), tf.constant(x), tf.constant(y)
        case.add("TensorFlow", lambda: tf_step(tfx, tfy).numpy())
    if jax is not None and jax_fwd is not None:
        jax_step, jx, jy = _jax_step(params, jax_fwd, loss), jnp.asarray(x), jnp.asarray(y)
        case.add("JAX", lambda: jax_step(jx, jy))
    if np_cls is not None:
        ref = np_cls(params)
        case.add("numpy", lambda: ref.step(x, y))
    return case


def mlp_case():
    sizes = M.MLP_SMALL["sizes"]
    return _train_case("MLP 64-128-10, batch 32", [("JAX", 1.0)], lambda: M.mlp_data(**M.MLP_SMALL),
                       lambda: M.tl_mlp(sizes), M.NumpyMLP, _mlp_forward(tf),
                       _mlp_forward(jnp), "sparse_ce")


def mlp_jit_case():
    """The small MLP step with jit_compile=True on both sides (trainlib: native kernels with
    the jit extra; TensorFlow: XLA; JAX: jit, as always)."""
    sizes = M.MLP_SMALL["sizes"]
    case = _train_case("MLP 64-128-10, batch 32, jit_compile", [("JAX", 1.0)],
                       lambda: M.mlp_data(**M.MLP_SMALL), lambda: M.tl_mlp(sizes), None,
                       None, _mlp_forward(jnp) if jax is not None else None, "sparse_ce",
                       jit_compile=True)
    return case


def mlp_large_case():
    sizes = M.MLP_LARGE["sizes"]
    return _train_case("MLP 784-1024-1024-10, batch 256", [("TensorFlow", 1.0)],
                       lambda: M.mlp_data(**M.MLP_LARGE), lambda: M.tl_mlp(sizes), M.NumpyMLP,
                       _mlp_forward(tf), _mlp_forward(jnp), "sparse_ce")


def cnn_case():
    return _train_case("CNN 2x(Conv2D 3x3 + MaxPool 2) + Dense, 28x28x1, batch 64",
                       [("TensorFlow", 1.0)], M.cnn_data, M.tl_cnn, M.NumpyCNN, _tf_cnn, _jax_cnn,
                       "sparse_ce")


def rnn_case():
    return _train_case("SimpleRNN 64 units, 50 steps x 32 features, batch 32",
                       [("TensorFlow", 1.0), ("JAX", 1.5)], M.rnn_data, M.tl_rnn, None, _tf_rnn, _jax_rnn, "mse")


def _chain(lib, sigmoid):
    return lambda x: lib.tanh(x * 2.0 + 1.0) * sigmoid(x) - x ** 2


def _chain_case(name, aims, compiled):
    case = Case(name, *aims)
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    tl_fn, tlx = tl.function(_chain(tl, tl.sigmoid), jit_compile=compiled), tl.constant(x)
    case.add("trainlib", lambda: tl_fn(tlx).numpy())
    if tf is not None:
        tf_fn = tf.function(_chain(tf, tf.sigmoid), jit_compile=compiled)
        tfx = tf.constant(x)
        case.add("TensorFlow", lambda: tf_fn(tfx).numpy())
    if jax is not None:
        jax_fn, jx = jax.jit(_chain(jnp, jax.nn.sigmoid)), jnp.asarray(x)
        case.add("JAX", lambda: jax_fn(jx).block_until_ready())
    case.add("numpy", lambda: np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - x ** 2)
    return case


def chain_case():
    return _chain_case("`tanh(x*2+1)*sigmoid(x)-x**2`, 1M float32, plain graph",
                       [("numpy", 1.0)], compiled=False)


def chain_jit_case():
    return _chain_case("the same chain, jit_compile (TF: XLA)", [("JAX", 1.0)], compiled=True)


def power_case():
    case = Case("guide `power(x, 100)`, int32 10x10")
    x = np.random.default_rng(0).integers(-1, 2, size=(10, 10)).astype(np.int32)

    def power(lib, x):
        r = lib.eye(10, dtype=lib.int32)
        for _ in range(100):
            r = lib.matmul(x, r)
        return r
    tl_fn, tlx = tl.function(lambda x: power(tl, x)), tl.constant(x)
    case.add("trainlib", lambda: tl_fn(tlx).numpy())
    if tf is not None:
        tf_fn, tfx = tf.function(lambda x: power(tf, x)), tf.constant(x)
        case.add("TensorFlow", lambda: tf_fn(tfx).numpy())
    if jax is not None:
        jax_fn, jx = jax.jit(lambda x: power(jnp, x)), jnp.asarray(x)
        case.add("JAX", lambda: jax_fn(jx).block_until_ready())
    case.add("numpy", lambda: power(np, x))
    return case


def fit_case():
    """`fit` per step of the small MLP: trainlib's Model.fit against Keras 3 on JAX (JAX
    column) and a numpy loop over the same batches."""
    case = Case("`fit` per step, MLP 64-128-10, batch 32 (JAX column: Keras 3 on JAX)",
                ("JAX", 0.5))   # the JAX column holds Keras on JAX here
    batches = 32
    params, x, y = M.mlp_data(**M.MLP_SMALL, batches=batches)
    batch = M.MLP_SMALL["batch"]

    def fitter(model, optimizers, losses):
        model.set_weights(params)
        model.compile(optimizer=optimizers.Adam(M.LR),
                      loss=losses.SparseCategoricalCrossentropy(from_logits=True))
        return lambda: model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    case.add("trainlib", fitter(M.tl_mlp(M.MLP_SMALL["sizes"]), tl.optim, tl.losses), batches)
    if keras is not None:
        sizes = M.MLP_SMALL["sizes"]
        model = keras.Sequential([keras.Input((sizes[0],)),
                                  keras.layers.Dense(sizes[1], activation="relu"),
                                  keras.layers.Dense(sizes[2])])
        case.add("JAX", fitter(model, keras.optimizers, keras.losses), batches)
    ref = M.NumpyMLP(params)

    def numpy_loop():
        for i in range(0, len(x), batch):
            ref.step(x[i:i + batch], y[i:i + batch])
    case.add("numpy", numpy_loop, batches)
    return case


def _layers_case(name, aims, model, tf_forward):
    """A case of Keras layers (bench/_models.py's LAYER_MODELS[model]): trainlib.keras layers
    in a `tl.function` step (GradientTape, Adam), TensorFlow ops in a `tf.function` step,
    Keras 3's layers on JAX in a jitted step, all from the same weights on the same batch;
    the first two steps' losses are printed, and the first must agree."""
    case = Case(name, *aims)
    build = M.LAYER_MODELS[model][0]
    weights, trainable, x, y = M.layers_data(model)
    losses = {}

    def add(column, fn):
        if MEMORY_COLUMN is None:
            losses[column] = (float(fn()), float(fn()))
        case.add(column, fn)
    step, xt, yt = M.tl_step(build(tl.keras), weights, "sparse_ce"), tl.constant(x), tl.constant(y)
    add("trainlib", lambda: step(xt, yt).numpy())
    if tf is not None:
        moving = [tf.Variable(w, trainable=False) for w, t in zip(weights, trainable) if not t]
        forward = tf_forward(moving) if moving else tf_forward
        tf_step = _tf_step([w for w, t in zip(weights, trainable) if t], forward, "sparse_ce")
        tfx, tfy = tf.constant(x), tf.constant(y)
        add("TensorFlow", lambda: tf_step(tfx, tfy).numpy())
    if keras is not None:
        add("JAX", _keras_jax_step(build(keras), weights, x, y))
    _check_losses(model, losses)
    return case


def _check_losses(model, losses):
    """Print the first two steps' losses per library; the first ones (same weights, same
    batch) must agree, or the implementations do not compute the same model."""
    if len(losses) < 2:
        return
    print(f"{model} losses of steps 1, 2: " + ", ".join(
        f"{column} {a:.5f} {b:.5f}" for column, (a, b) in losses.items()))
    first = [a for a, _ in losses.values()]
    if max(first) - min(first) > 1e-4 * max(1.0, abs(first[0])):
        sys.exit(f"{model}: the libraries' first-step losses differ: {losses}")


def transformer_case():
    return _layers_case("Transformer encoder block (MHA 4x32, d 128, seq 64, FFN 512), "
                        "batch 32", [("TensorFlow", 1.0)], "transformer", _tf_transformer)


def lstm_case():
    return _layers_case("LSTM(128), 50 steps x 32 features, batch 32", [("TensorFlow", 1.0)],
                        "lstm", _tf_lstm)


def embedding_case():
    return _layers_case("Embedding(20000, 64) + GlobalAveragePooling1D + Dense, 100 tokens, "
                        "batch 64", [("TensorFlow", 1.0)], "embedding", _tf_embedding)


def rescnn_case():
    return _layers_case("residual CNN block (2x Conv2D 3x3 + BatchNorm, 1x1 projection), "
                        "32x32x3, batch 32", [("TensorFlow", 1.0)], "rescnn", _tf_rescnn)


BUILDERS = {"mlp": mlp_case, "mlp_jit": mlp_jit_case, "mlp_large": mlp_large_case, "cnn": cnn_case, "rnn": rnn_case,
            "chain": chain_case, "chain_jit": chain_jit_case, "power": power_case,
            "fit": fit_case, "transformer": transformer_case, "lstm": lstm_case,
            "embedding": embedding_case, "rescnn": rescnn_case}


# ------------------------------------------------------------------ timing and the table

# the clock blocks are timed by: the wall clock, or (--cpu-time) this process's CPU time
# summed over its threads, which time other jobs take from the cores does not inflate
_clock = time.process_time if ARGS.cpu_time else time.perf_counter


def _calls_for(fn, block_s):
    """How many calls of `fn` make a block of about `block_s` seconds."""
    number = 1
    while True:
        start = _clock()
        for _ in range(number):
            fn()
        elapsed = _clock() - start
        if elapsed >= block_s or number >= 1 << 16:
            return max(1, int(number * block_s / max(elapsed, 1e-9)))
        number *= 2


PAUSE_S = 0.2   # between blocks


def measure(cases, rounds, block_s, competitors=()):
    """{(case index, column): [seconds per step, one per round]}, rounds interleaved; with
    `competitors` (stopped processes), ({quiet}, {loaded}): they run in every other round."""
    plan = [(i, col, fn, per_call, _calls_for(fn, block_s))
            for i, case in enumerate(cases) for col, (fn, per_call) in case.impls.items()]
    times = {(i, col): [] for i, col, *_ in plan}
    loaded = {key: [] for key in times}
    for r in range(rounds * (2 if competitors else 1)):
        if competitors:
            _signal_all(competitors, signal.SIGCONT if r % 2 else signal.SIGSTOP)
        shift = r // (2 if competitors else 1) % len(plan)
        for i, col, fn, per_call, number in plan[shift:] + plan[:shift]:
            # idle threads of the block before (OpenBLAS's workers spin for tens of ms after
            # a call) would take the cores from this one: the same column would always pay,
            # since rotating the order keeps who follows whom
            time.sleep(PAUSE_S)
            start = _clock()
            for _ in range(number):
                fn()
            (loaded if competitors and r % 2 else times)[(i, col)].append(
                (_clock() - start) / (number * per_call))
    return (times, loaded) if competitors else times


def _competitors(n):
    """N busy-looping processes, stopped (`measure` lets them run in the loaded rounds)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    _signal_all(procs, signal.SIGSTOP)
    return procs


def _signal_all(procs, sig):
    for p in procs:
        p.send_signal(sig)


def load_factors(cases, quiet, loaded):
    """Lines: trainlib's ratio to each other column, quiet and loaded, and loaded / quiet."""
    lines = []
    for i, case in enumerate(cases):
        parts = []
        for col in COLUMNS[1:]:
            if (i, col) not in quiet:
                continue
            q, l = (statistics.median(t[(i, "trainlib")]) / statistics.median(t[(i, col)])
                    for t in (quiet, loaded))
            parts.append(f"/ {col}: quiet {q:.2f}x, loaded {l:.2f}x, factor {l / q:.2f}")
        lines.append(f"- {case.name}: " + "; ".join(parts))
    return "\n".join(lines)


def blas_description():
    """The BLAS libraries numpy (and the others) loaded, with kernel and threads."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: threadpoolctl not installed"
    blas = [f"{b.get('internal_api')} {b.get('version')} {b.get('architecture')} kernels, "
            f"{b.get('num_threads')} threads" for b in threadpool_info()
            if b.get("user_api") == "blas"]
    return "BLAS: " + ("; ".join(blas) or "none found")


def _fmt(seconds):
    if seconds is None:
        return "—"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def table(cases, times):
    """The markdown table: medians per column, trainlib's ratio to each other column, and the
    issue's aim for the row (met or not)."""
    others = COLUMNS[1:]
    lines = ["| case | " + " | ".join(COLUMNS) + " | " +
             " | ".join(f"trainlib / {c}" for c in others) + " | aim |",
             "| --- " * (2 + len(COLUMNS) + len(others)) + "|"]
    for i, case in enumerate(cases):
        med = {c: statistics.median(times[(i, c)]) if (i, c) in times else None for c in COLUMNS}
        ratios = {c: med["trainlib"] / med[c] if med[c] and med["trainlib"] else None
                  for c in others}
        aims = "; ".join(f"<= {limit:g}x {col}: " + (
            "not measured" if ratios[col] is None else "met" if ratios[col] <= limit else "not met")
            for col, limit in case.aims) or "—"
        lines.append(f"| {case.name} | " + " | ".join(_fmt(med[c]) for c in COLUMNS) + " | " +
                     " | ".join("—" if ratios[c] is None else f"{ratios[c]:.2f}x"
                                for c in others) + f" | {aims} |")
    return "\n".join(lines)


def _case_names():
    names = [n.strip() for n in ARGS.cases.split(",") if n.strip()]
    unknown = sorted(set(names) - set(BUILDERS))
    if unknown:
        sys.exit(f"unknown cases {unknown}; choose from {','.join(CASES)}")
    return names


# ------------------------------------------------------------------ --memory

def _proc_status_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _resident_kb():
    """VmRSS after a garbage collection and, with glibc, after freed heap went back to the
    system (malloc_trim), so that memory a step reuses from freed blocks still counts."""
    import ctypes
    import gc
    gc.collect()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
    return _proc_status_kb("VmRSS")


def memory_child():
    """Build one column of one case (`--memory-child CASE:COLUMN`) and print its step's peak
    memory as JSON: `step_mb`, resident memory's high-water mark (VmHWM, reset through
    /proc/self/clear_refs after two warm-up calls) over at least 5 more calls and 0.5 s, above
    the resident memory before them (`_resident_kb`); `first_mb`, that mark above the resident
    memory before the first call, which adds what the warm-up calls left resident: traced or
    compiled code, caches, optimizer slots, and memory a library keeps to reuse at each step
    (XLA keeps its buffers so: its `step_mb` alone misses them)."""
    import json
    name, column = ARGS.memory_child.split(":")
    impl = BUILDERS[name]().impls.get(column)
    result = None
    if impl is not None:
        fn, per_call = impl
        before_first = _resident_kb()
        fn()
        fn()
        base = _resident_kb()
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")   # reset VmHWM to VmRSS (Linux 4.0+)
        calls, start = 0, time.perf_counter()
        while calls < 5 or time.perf_counter() - start < 0.5:
            fn()
            calls += 1
        peak = _proc_status_kb("VmHWM")
        result = {"step_mb": (peak - base) / 1024, "first_mb": (peak - before_first) / 1024,
                  "steps": calls * per_call}
    print("MEMORY " + json.dumps(result))


def memory_main():
    """The --memory tables: each case's step per library, each in its own subprocess, medians
    over --rounds subprocesses (default 1)."""
    import json
    import subprocess
    names = _case_names()
    flags = ["--threads", str(ARGS.threads)] if ARGS.threads else []
    print(f"peak resident memory of a training step (per call for chain and power) above the "
          f"resident memory before it, each library in a fresh process, medians of "
          f"{ARGS.rounds or 1}; {os.cpu_count()} CPUs, "
          f"threads: {ARGS.threads or 'library defaults'}\n")
    rows = []
    for name in names:
        found = {}
        for column in COLUMNS:
            runs = []
            for _ in range(ARGS.rounds or 1):
                child = subprocess.run([sys.executable, __file__, "--memory-child",
                                        f"{name}:{column}"] + flags, capture_output=True, text=True)
                lines = [ln for ln in child.stdout.splitlines() if ln.startswith("MEMORY ")]
                if child.returncode or not lines:
                    sys.exit(f"--memory child {name}:{column} failed:\n{child.stderr[-3000:]}")
                runs.append(json.loads(lines[-1][7:]))
            if runs[0] is not None:
                found[column] = {key: statistics.median(run[key] for run in runs)
                                 for key in runs[0]}
        rows.append((BUILDERS[name].__name__, found))
    for key, title in (("step_mb", "step peak, MB"),
                       ("first_mb", "peak above the process before the first call, MB")):
        print(f"| case ({title}) | " + " | ".join(COLUMNS) + " | trainlib / TensorFlow | aim |")
        print("| --- " * (len(COLUMNS) + 3) + "|")
        for name, found in rows:
            mb = {c: found[c][key] if c in found else None for c in COLUMNS}
            ratio = (mb["trainlib"] / mb["TensorFlow"]
                     if mb["TensorFlow"] and mb["trainlib"] is not None else None)
            aim = ("—" if key != "step_mb" else "<= 1x TensorFlow: not measured" if ratio is None
                   else f"<= 1x TensorFlow: {'met' if ratio <= 1 else 'not met'}")
            print(f"| {name[:-len('_case')]} | " + " | ".join(
                "—" if v is None else f"{v:.1f}" for v in mb.values()) + " | " +
                ("—" if ratio is None else f"{ratio:.2f}x") + f" | {aim} |")
        print()


def main():
    names = _case_names()
    rounds = ARGS.rounds or (3 if ARGS.quick else 7)
    block_s = 0.02 if ARGS.quick else 0.05
    versions = [f"trainlib {tl.__version__}", f"numpy {np.__version__}",
                f"TensorFlow {tf.__version__}" if tf else "TensorFlow: not installed",
                f"JAX {jax.__version__}" if jax else "JAX: not installed",
                f"Keras {keras.__version__} (JAX backend)" if keras else "Keras on JAX: not installed"]
    print(", ".join(versions) + "; " + blas_description())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{rounds} interleaved rounds of ~{block_s * 1e3:.0f} ms blocks "
          f"({'process CPU time' if ARGS.cpu_time else 'wall clock'}); threads: "
          f"{ARGS.threads or 'library defaults'}; {os.cpu_count()} CPUs, load average "
          f"{load:.2f} at start; medians per training step (per call for chain and power)\n")
    cases = [BUILDERS[n]() for n in names]
    if not ARGS.load:
        print(table(cases, measure(cases, rounds, block_s)))
        return
    procs = _competitors(ARGS.load)
    try:
        quiet, loaded = measure(cases, rounds, block_s, procs)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    print(table(cases, quiet))
    print(f"\nwith {ARGS.load} competing CPU-bound process(es), in the rounds between:\n")
    print(table(cases, loaded))
    print("\ntrainlib's ratios, quiet and loaded (aim: loaded <= 1.25x quiet):")
    print(load_factors(cases, quiet, loaded))


if __name__ == "__main__":
    memory_child() if ARGS.memory_child else memory_main() if ARGS.memory else main()
