"""Transcendental kernels and the plain-graph elementwise chain against numpy written by hand.

Run: python bench/kernels.py [--rounds 9] [--n 1000000]
1. Sigmoid, Softplus, Tanh, GELU (exact and tanh form) on n float32: trainlib's kernel (eager,
   the op itself) against the plain numpy formula, and inside a `tl.function`, where the
   memory plan hands the kernel a buffer kept between calls.
2. `tanh(x*2+1) * sigmoid(x) - x**2` on n float32 as a plain `tl.function` (no jit_compile)
   against the same numpy by hand, with the buffers kept between calls (the default) and
   without (`persistent=False`, a fresh array per intermediate as before).
Rounds are interleaved (every case once per round) and the medians and ratios printed, as
the machine is shared: read the ratios, not the absolute times.
"""
import argparse
import os
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import trainlib as tl  # noqa: E402
from trainlib.graph.exec.program import compile_graph  # noqa: E402


def chain(x):
    return tl.tanh(x * 2 + 1) * tl.sigmoid(x) - x ** 2


def numpy_chain(x):
    return np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - x ** 2


def _erf_free_gelu(x):
    """GELU's tanh form by hand (numpy has no erf)."""
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def cases(a):
    x = tl.constant(a)
    graph = tl.function(chain).get_concrete_function(x).graph
    unkept = compile_graph(graph, np, "chain_unkept", persistent=False).fn
    fns = {
        "sigmoid  numpy 1/(1+exp(-x))": lambda: 1 / (1 + np.exp(-a)),
        "sigmoid  tl eager": lambda: tl.sigmoid(x),
        "sigmoid  tl.function": _fn(lambda t: tl.sigmoid(t * 1.0), x),
        "softplus numpy log1p(exp(x))": lambda: np.log1p(np.exp(a)),
        "softplus tl eager": lambda: tl.nn.softplus(x),
        "tanh     numpy": lambda: np.tanh(a),
        "tanh     tl eager": lambda: tl.tanh(x),
        "gelu tanh-form numpy": lambda: _erf_free_gelu(a),
        "gelu tanh-form tl.function": _fn(lambda t: tl.nn.gelu(t, approximate=True), x),
        "gelu exact tl.function": _fn(lambda t: tl.nn.gelu(t), x),
        "chain numpy by hand": lambda: numpy_chain(a),
        "chain tl.function": _fn(chain, x),
        "chain tl.function, buffers not kept": lambda: unkept(a),
    }
    return fns


def _fn(f, x):
    traced = tl.function(f)
    traced(x)
    return lambda: traced(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    a = np.random.default_rng(0).standard_normal(args.n).astype(np.float32) * 3
    np.testing.assert_allclose(tl.function(chain)(tl.constant(a)).numpy(), numpy_chain(a),
                               rtol=1e-4, atol=1e-5)
    fns = cases(a)
    times = {name: [] for name in fns}
    with np.errstate(over="ignore"):
        for _ in range(args.rounds):
            for name, fn in fns.items():
                times[name].append(min(timeit.repeat(fn, number=3, repeat=3)) / 3)
    base = None
    print(f"{args.n:,} float32, median of {args.rounds} interleaved rounds")
    for name, runs in times.items():
        if "numpy" in name:
            base = runs
        ratio = statistics.median(t / b for t, b in zip(runs, base))
        print(f"  {name:40s} {statistics.median(runs) * 1e3:8.2f} ms  "
              f"{ratio:5.2f}x {'(numpy)' if runs is base else 'numpy'}")


if __name__ == "__main__":
    main()
