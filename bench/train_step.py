"""An MLP train step (784-256-10, batch 128, forward + backward + SGD) as tl.function vs numpy vs eager.

Run: python bench/train_step.py
Aim (issue 5): the Function within 1.3x of the hand-written numpy step.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402

B, D, H, C, LR = 128, 784, 256, 10, 0.01


def numpy_step(params, x, y):
    w1, b1, w2, b2 = params
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(s[:, 0]) + m[:, 0] - logits[np.arange(B), y])
    d = e / s
    d[np.arange(B), y] -= 1
    d /= B
    dw2 = h.T @ d
    db2 = d.sum(axis=0)
    dh = d @ w2.T
    dh *= z > 0
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    w1 -= LR * dw1
    b1 -= LR * db1
    w2 -= LR * dw2
    b2 -= LR * db2
    return loss


def make_step(rng):
    """(tl.function step, its tensor arguments, numpy params, x, y, init, the eager step,
    variables) for the benchmark MLP, from the same initial values."""
    x = rng.standard_normal((B, D)).astype(np.float32)
    y = rng.integers(0, C, size=B).astype(np.int32)
    init = [rng.standard_normal((D, H)).astype(np.float32) * 0.05, np.zeros(H, np.float32),
            rng.standard_normal((H, C)).astype(np.float32) * 0.05, np.zeros(C, np.float32)]
    variables = [tl.Variable(p.copy()) for p in init]

    def step(x, y):
        w1, b1, w2, b2 = variables
        with tl.GradientTape() as tape:
            h = tl.nn.relu(tl.matmul(x, w1) + b1)
            logits = tl.matmul(h, w2) + b2
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(LR * g)
        return loss

    return (tl.function(step), (tl.constant(x), tl.constant(y)), [p.copy() for p in init], x, y,
            init, step, variables)


def main():
    graph, (tx, ty), np_params, x, y, init, step, variables = make_step(np.random.default_rng(0))
    start = time.perf_counter()
    graph(tx, ty)
    first_ms = (time.perf_counter() - start) * 1e3
    # same numbers as numpy after one step from the same start
    np_params2 = [p.copy() for p in init]
    for v, p in zip(variables, init):
        v.assign(p.copy())
    l_tl = float(graph(tx, ty))
    l_np = numpy_step(np_params2, x, y)
    assert abs(l_tl - l_np) < 1e-4, (l_tl, l_np)
    np.testing.assert_allclose(variables[0].numpy(), np_params2[0], rtol=1e-4, atol=1e-6)

    t_np = median_us(lambda: numpy_step(np_params, x, y), repeat=9)
    t_graph = median_us(lambda: graph(tx, ty), repeat=9)
    t_eager = median_us(lambda: step(tx, ty), repeat=5)
    print(f"MLP {D}-{H}-{C} SGD step, batch {B}: numpy {t_np:.0f} us, tl.function {t_graph:.0f} us, "
          f"eager {t_eager:.0f} us")
    print(f"  Function / numpy = {t_graph / t_np:.3f}x (aim <= 1.3); eager / Function = "
          f"{t_eager / t_graph:.2f}x; first call {first_ms:.0f} ms")


if __name__ == "__main__":
    main()
