"""Per-op dispatch cost of eager trainlib vs the bare numpy call, on small tensors.

Run: python bench/eager_overhead.py
Prints microseconds per call and the overhead (trainlib - numpy) and ratio.
Aim (DESIGN.md / issue 2): under 3 us of overhead per op; `keras.ops` functions (issue 18)
stay at the level of the tl op they call.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402
from trainlib.keras import ops  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    m = rng.standard_normal((10, 10)).astype(np.float32)
    ta, tb, tm = tl.constant(a), tl.constant(b), tl.constant(m)
    cases = [
        ("add (16,)", lambda: np.add(a, b), lambda: tl.add(ta, tb)),
        ("a + b operator", lambda: a + b, lambda: ta + tb),
        ("matmul 10x10", lambda: np.matmul(m, m), lambda: tl.matmul(tm, tm)),
        ("reduce_sum (16,)", lambda: np.sum(a), lambda: tl.reduce_sum(ta)),
        # keras.ops (argument adaptation and Keras's dtype promotion over the same ops)
        ("ops.add (16,)", lambda: np.add(a, b), lambda: ops.add(ta, tb)),
        ("ops.matmul 10x10", lambda: np.matmul(m, m), lambda: ops.matmul(tm, tm)),
        ("ops.sum (16,)", lambda: np.sum(a), lambda: ops.sum(ta)),
        ("ops.mean (16,)", lambda: np.mean(a), lambda: ops.mean(ta)),
        ("ops.exp (16,)", lambda: np.exp(a), lambda: ops.exp(ta)),
    ]
    print(f"{'op':<18}{'numpy us':>10}{'trainlib us':>13}{'overhead us':>13}{'ratio':>8}")
    for name, ref, ours in cases:
        t_np, t_tl = median_us(ref), median_us(ours)
        print(f"{name:<18}{t_np:>10.2f}{t_tl:>13.2f}{t_tl - t_np:>13.2f}{t_tl / t_np:>8.2f}")


if __name__ == "__main__":
    main()
