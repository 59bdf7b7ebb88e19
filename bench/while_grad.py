"""Gradient of a `tl.while_loop` of n steps inside a tl.function: the cost per step must not grow.

Run: python bench/while_grad.py          (figures for this checkout)
     PYTHONPATH=/work/main python bench/while_grad.py   (figures for another checkout)
Aim (issue 17.7): the forward loop saves each iteration's values in a buffer that grows
geometrically and is written in place, so the gradient of n steps costs O(n): the time of
n=4000 is at most 5x the time of n=1000 (the old rule grew each history with concat: O(n^2)).
Two loops: a vector state (the saved values have a fixed shape) and a TensorArray the loop
fills (a saved value whose shape changes from one iteration to the next; the gradient saves
only its shape). The TensorArray loop keeps some O(n * size) copies that are TensorArray's
own, not the While gradient's: a dynamic array grows by one row per write, and the gradient
of a write copies the array's gradient; with 4000 elements of 8 bytes they stay small.

Figures (2 shared cores, noisy; ms for n = 250 / 1000 / 4000, ratio t(4000)/t(1000)):
  main (concat histories)   vector 12 / 52 / 297 (5.7)      TensorArray 82 / 400 / 21773 (54)
  this change               vector 31 / 131 / 513 (3.9)     TensorArray 167 / 615 / 3073 (5.0)
  (best of 15 at n=1000, vector: main 165 ms, this change 92-118 ms)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402


def vector_loop():
    @tl.function(autograph=False)
    def grad(x, n):
        with tl.GradientTape() as tape:
            tape.watch(x)
            _, y = tl.while_loop(lambda i, y: i < n,
                                 lambda i, y: (i + 1, y * 0.999 + 0.001 * tl.sin(y)),
                                 (tl.constant(0), x))
            loss = tl.reduce_sum(y)
        return tape.gradient(loss, x)

    return grad, tl.constant(np.linspace(-1.0, 1.0, 32))


def tensor_array_loop():
    @tl.function(autograph=False)
    def grad(x, n):
        with tl.GradientTape() as tape:
            tape.watch(x)
            ta = tl.TensorArray(tl.float64, size=0, dynamic_size=True)
            _, y, ta = tl.while_loop(lambda i, y, ta: i < n,
                                     lambda i, y, ta: (i + 1, y * 0.999, ta.write(i, tl.reduce_sum(y))),
                                     (tl.constant(0), x, ta))
            loss = tl.reduce_sum(ta.stack()) + tl.reduce_sum(y)
        return tape.gradient(loss, x)

    return grad, tl.constant(np.linspace(-1.0, 1.0, 32))


def main():
    print(f"{'loop':>14} {'n':>6} {'ms':>10} {'us/step':>9}")
    for label, make in (("vector", vector_loop), ("TensorArray", tensor_array_loop)):
        grad, x = make()
        times = {}
        for n in (250, 1000, 4000):
            steps = tl.constant(n)
            grad(x, steps)  # trace and warm up
            times[n] = median_us(lambda: grad(x, steps), number=1, repeat=3)
            print(f"{label:>14} {n:>6} {times[n] / 1e3:>10.1f} {times[n] / n:>9.1f}")
        print(f"{label:>14} ratio t(4000)/t(1000) = {times[4000] / times[1000]:.2f} (aim: <= 5)")


if __name__ == "__main__":
    main()
