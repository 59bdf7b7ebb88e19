"""Flat-parameter (fused) optimizer vs per-variable updates, on the Dense 64-128-10 + Adam
step, batch 32: a `tl.function` train step and `Model.fit`, in interleaved rounds of one run;
with JAX importable (run it under ~/tfref/bin/python), the same step as `jax.jit` too.

Run: python bench/flat_optimizer.py [rounds] [--cpu]
Prints the medians over rounds and the ratios fused / per-variable and fused / JAX. With
--cpu the times are this process's CPU time (time.process_time) rather than wall time: steadier
on a loaded machine, but it counts the CPU time of every thread (JAX's and BLAS's pools too).
"""
import os
import statistics
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402
from _models import tl_step  # noqa: E402
from fit_step import B, C, D, H, NumpyAdamMLP, data, make_model  # noqa: E402

import trainlib as tl  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    import optax  # noqa: E402
except ImportError:
    jax = None


def function_step(params, fused):
    model = make_model(params)
    return tl_step(model, params, "sparse_ce", fused=fused), model


def fit_model(params, fused, x, y):
    model = make_model(params)
    model.compile(optimizer=tl.optim.Adam(1e-3, fused=fused),
                  loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=B, epochs=1, verbose=0, shuffle=False)  # trace
    return model


def jax_step(params):
    """The step as a JAX user writes it: value_and_grad and optax's Adam under one jit."""
    opt = optax.adam(1e-3, eps=1e-7)

    def loss_fn(p, x, y):
        hidden = jnp.maximum(x @ p[0] + p[1], 0)
        logp = jax.nn.log_softmax(hidden @ p[2] + p[3])
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(p, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        updates, opt_state = opt.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss
    p = [jnp.asarray(a) for a in params]
    state = [p, opt.init(p)]

    def run(x, y):
        p, opt_state, loss = step(*state, x, y)
        state[:] = [p, opt_state]
        loss.block_until_ready()
    return run


def cpu_median_us(fn, repeat=5):
    """Median CPU time (this process, all threads) of one call of `fn`, in microseconds."""
    number, total = 1, 0.0
    while total < 0.05:
        number *= 2
        total = timeit.Timer(fn, timer=time.process_time).timeit(number)
    runs = timeit.Timer(fn, timer=time.process_time).repeat(repeat=repeat, number=number)
    return statistics.median(runs) / number * 1e6


def main(rounds=5, cpu=False):
    clock = time.process_time if cpu else time.perf_counter
    measure = cpu_median_us if cpu else median_us
    x, y, params = data(16)
    xb, yb = tl.constant(x[:B]), tl.constant(y[:B])
    steps = {name: function_step(params, fused)[0] for name, fused in
             (("fused", True), ("per_variable", False))}
    for step in steps.values():
        step(xb, yb)
    fits = {name: fit_model(params, fused, x, y) for name, fused in
            (("fused", True), ("per_variable", False))}
    ref = NumpyAdamMLP(params)
    runners = {f"function_{k}": (lambda s=s: s(xb, yb)) for k, s in steps.items()}
    runners["numpy"] = lambda: ref.step(x[:B], y[:B])
    if jax is not None:
        run = jax_step(params)
        jx, jy = jnp.asarray(x[:B]), jnp.asarray(y[:B])
        run(jx, jy)
        runners["jax_jit"] = lambda: run(jx, jy)
    results = {k: [] for k in list(runners) + [f"fit_{k}" for k in fits]}
    n_fit_steps = len(x) // B
    for _ in range(rounds):
        for name, fn in runners.items():
            results[name].append(measure(fn, repeat=5))
        for name, model in fits.items():
            start = clock()
            model.fit(x, y, batch_size=B, epochs=2, verbose=0, shuffle=False)
            results[f"fit_{name}"].append((clock() - start) / (2 * n_fit_steps) * 1e6)
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"Dense {D}-{H}-{C} + Adam, batch {B}, medians of {rounds} interleaved rounds "
          f"({'CPU' if cpu else 'wall'} us/step):")
    for k, v in med.items():
        print(f"  {k:<24}{v:9.1f}")
    print(f"  tl.function fused / per-variable = "
          f"{med['function_fused'] / med['function_per_variable']:.2f}x; fit fused / per-variable "
          f"= {med['fit_fused'] / med['fit_per_variable']:.2f}x; tl.function fused / numpy = "
          f"{med['function_fused'] / med['numpy']:.2f}x")
    if "jax_jit" in med:
        print(f"  tl.function fused / JAX jit = {med['function_fused'] / med['jax_jit']:.2f}x "
              f"(per-variable: {med['function_per_variable'] / med['jax_jit']:.2f}x)")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    main(int(args[0]) if args else 5, cpu="--cpu" in sys.argv)
