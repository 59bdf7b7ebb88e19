"""Graph optimization: a fused elementwise chain vs numpy, and what each pass does to a train step.

Run: python bench/optimize.py
1. `tanh(x*2+1) * sigmoid(x) - x**2` on 1,000,000 float32: tl.function without
   and with jit_compile vs hand-written numpy, medians and ratios in one run.
   Aim (issue 6): jit_compile at most 0.7x numpy's time.
2. Op counts before/after each pass for a small MLP train step graph
   (forward, loss, gradients, SGD update), with and without fusion.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib.graph.exec.program import compile_graph  # noqa: E402
from trainlib.graph.passes import PIPELINE, fuse  # noqa: E402

N = 1_000_000


def chain(x):
    return tl.tanh(x * 2 + 1) * tl.sigmoid(x) - x ** 2


def numpy_chain(x):
    return np.tanh(x * 2 + 1) * (1 / (1 + np.exp(-x))) - x ** 2


def jit_callable(x):
    """The chain as a jit_compile Function; fused by hand while ConcreteFunction does not pass
    jit_compile to `optimize` (then the Function's own graph is used as it is)."""
    concrete = tl.function(chain, jit_compile=True).get_concrete_function(x)
    if any(op.type == "FusedElementwise" for op in concrete.graph.operations):
        return concrete, concrete.graph
    graph = fuse(concrete.graph, jit_compile=True)
    program = compile_graph(graph, np, "chain_jit")
    return (lambda t: program.fn(t._value)[0]), graph


def bench_chain():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    x = tl.constant(a)
    plain = tl.function(chain)
    jit, graph = jit_callable(x)
    want = numpy_chain(a)
    for name, fn in (("graph", plain), ("jit", jit)):
        got = np.asarray(fn(x))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
    t_np = median_us(lambda: numpy_chain(a), repeat=11)
    t_graph = median_us(lambda: plain(x), repeat=11)
    t_jit = median_us(lambda: jit(x), repeat=11)
    print(f"1. tanh(x*2+1)*sigmoid(x)-x**2, {N:,} float32 (fused graph: "
          f"{[op.type for op in graph.operations]})")
    print(f"   numpy {t_np / 1e3:7.2f} ms")
    print(f"   tl.function {t_graph / 1e3:7.2f} ms   {t_graph / t_np:5.2f}x numpy")
    print(f"   tl.function(jit_compile=True) {t_jit / 1e3:7.2f} ms   {t_jit / t_np:5.2f}x numpy "
          f"(aim <= 0.7x)")


def train_step_graph():
    rng = np.random.default_rng(0)
    w1 = tl.Variable(rng.standard_normal((16, 32)).astype(np.float32) * 0.1)
    b1 = tl.Variable(np.zeros(32, np.float32))
    w2 = tl.Variable(rng.standard_normal((32, 4)).astype(np.float32) * 0.1)
    b2 = tl.Variable(np.zeros(4, np.float32))
    variables = [w1, b1, w2, b2]

    def step(x, y):
        with tl.GradientTape() as tape:
            h = tl.nn.relu(tl.matmul(x, w1) + b1)
            logits = tl.matmul(h, w2) + b2
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(0.01 * g)
        return loss

    # passes off while tracing: the graph is optimized below, pass by pass
    off = {option: False for _, option, _ in PIPELINE}
    from trainlib.graph import optimizer_config  # noqa: PLC0415
    optimizer_config.set_experimental_options(off)
    try:
        concrete = tl.function(step).get_concrete_function(
            tl.constant(rng.standard_normal((8, 16)).astype(np.float32)),
            tl.constant(rng.integers(0, 4, 8).astype(np.int32)))
    finally:
        optimizer_config.reset_experimental_options()
    return concrete.graph


def bench_passes():
    graph = train_step_graph()
    print("2. MLP 16-32-4 + SGD train step graph, ops before -> after each pass (jit_compile=True)")
    options = {"jit_compile": True}
    for name, _, run in PIPELINE:
        before = len(graph.operations)
        graph = run(graph, options)
        graph.verify()
        print(f"   {name:34s} {before:4d} -> {len(graph.operations):4d}")
    print(f"   final op types: {sorted(set(op.type for op in graph.operations))}")


def bench_memory():
    """Peak memory (tracemalloc, which sees numpy's allocations) of one MLP 784-256-10 SGD step."""
    import tracemalloc  # noqa: PLC0415
    from train_step import numpy_step, make_step  # noqa: PLC0415
    rng = np.random.default_rng(0)
    args = make_step(rng)
    graph, tensors, np_params, x, y = args[:5]
    graph(*tensors)  # traced and warm
    numpy_step(np_params, x, y)

    def peak(fn):
        tracemalloc.start()
        fn()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    p_np, p_tl = peak(lambda: numpy_step(np_params, x, y)), peak(lambda: graph(*tensors))
    print(f"3. peak memory of one MLP 784-256-10 SGD step (batch 128): numpy {p_np / 1e6:.2f} MB, "
          f"tl.function {p_tl / 1e6:.2f} MB = {p_tl / p_np:.2f}x (aim <= 1.2)")


def bench_passes_do_not_slow_down():
    """power(x, 100) and the MLP step with every pass switched off vs the default pipeline."""
    from function_overhead import power  # noqa: PLC0415
    from train_step import make_step  # noqa: PLC0415
    from trainlib.graph import optimizer_config  # noqa: PLC0415
    off = {name: False for name in optimizer_config.OPTIONS}
    x = tl.random.uniform([10, 10], minval=-1, maxval=2, dtype=tl.int32)
    results = {}
    for label, options in (("passes off", off), ("passes on", {})):
        tl.config.optimizer.set_experimental_options({**{n: True for n in off}, **options})
        try:
            pw = tl.function(power)
            pw(x, 100)
            step, tensors = make_step(np.random.default_rng(0))[:2]
            step(*tensors)
            results[label] = (median_us(lambda: pw(x, 100)), median_us(lambda: step(*tensors)))
        finally:
            tl.config.optimizer.set_experimental_options({n: True for n in off})
    (p0, s0), (p1, s1) = results["passes off"], results["passes on"]
    print(f"4. with the passes vs without: power(x, 100) {p1:.0f} vs {p0:.0f} us ({p1 / p0:.2f}x), "
          f"MLP step {s1:.0f} vs {s0:.0f} us ({s1 / s0:.2f}x) (aim: not slower)")


if __name__ == "__main__":
    bench_chain()
    bench_passes()
    bench_memory()
    bench_passes_do_not_slow_down()
