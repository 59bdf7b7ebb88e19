"""trainlib against TensorFlow, JAX and hand-written numpy, per training step of the same model,
batch, optimizer (Adam) and initial weights, measured in interleaved rounds in one run.

Cases (bench/_models.py): MLP 64-128-10 batch 32, MLP 784-1024-1024-10 batch 256, the CNN (2
Conv2D 3x3 + 2 MaxPool 2 + Dense, 28x28x1, batch 64), SimpleRNN 64 units over 50 steps of 32
features batch 32, `tanh(x*2+1)*sigmoid(x)-x**2` on 1M float32 (plain graph and compiled),
the guide's `power(x, 100)`, and `fit` per step of the small MLP against Keras 3 on JAX.
TensorFlow runs raw ops in a `tf.function` (Keras is loaded on its JAX backend for the `fit`
row), JAX a `jax.jit` of `value_and_grad` plus Keras 3's Adam by hand.

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
(default: each library's own default, all cores). --load N runs N competing CPU-bound
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

CASES = ("mlp", "mlp_jit", "mlp_large", "cnn", "rnn", "chain", "chain_jit", "power", "fit")


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 20 ms blocks")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7, quick 3)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for BLAS, trainlib's pool, TensorFlow and XLA (default: their own)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time blocks by the process's CPU time (all its threads) instead "
                             "of the wall clock: steadier on a machine other jobs load")
    parser.add_argument("--load", type=int, default=0,
                        help="also measure with N competing CPU-bound processes running")
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated subset of {','.join(CASES)}")
    return parser.parse_args()


ARGS = _parse()
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
    import tensorflow as tf  # noqa: E402
    if ARGS.threads:
        tf.config.threading.set_intra_op_parallelism_threads(ARGS.threads)
        tf.config.threading.set_inter_op_parallelism_threads(ARGS.threads)
except ImportError:
    tf = None
try:
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


BUILDERS = {"mlp": mlp_case, "mlp_jit": mlp_jit_case, "mlp_large": mlp_large_case, "cnn": cnn_case, "rnn": rnn_case,
            "chain": chain_case, "chain_jit": chain_jit_case, "power": power_case,
            "fit": fit_case}


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


def main():
    names = [n.strip() for n in ARGS.cases.split(",") if n.strip()]
    unknown = sorted(set(names) - set(BUILDERS))
    if unknown:
        sys.exit(f"unknown cases {unknown}; choose from {','.join(CASES)}")
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
    main()
