"""tl.function vs eager vs hand-written numpy on the guide's power(x, 100); call and trace overhead.

Run: python bench/function_overhead.py
Aims (issue 3): Function within 1.15x of hand-written numpy; at least 2x faster than eager.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_us  # noqa: E402

import trainlib as tl  # noqa: E402


def power(x, y):
    result = tl.eye(10, dtype=tl.int32)
    for _ in range(y):
        result = tl.matmul(x, result)
    return result


def power_numpy(x, y):
    result = np.eye(10, dtype=np.int32)
    for _ in range(y):
        result = np.matmul(x, result)
    return result


def main():
    tl.random.set_seed(0)
    x = tl.random.uniform([10, 10], minval=-1, maxval=2, dtype=tl.int32)
    xn = x.numpy()
    graph = tl.function(power)
    start = time.perf_counter()
    graph(x, 100)
    trace_ms = (time.perf_counter() - start) * 1e3
    assert (graph(x, 100).numpy() == power_numpy(xn, 100)).all()
    t_np = median_us(lambda: power_numpy(xn, 100))
    t_graph = median_us(lambda: graph(x, 100))
    t_eager = median_us(lambda: power(x, 100))
    print(f"power(x, 100): numpy {t_np:.0f} us, tl.function {t_graph:.0f} us, eager {t_eager:.0f} us")
    print(f"  Function / numpy = {t_graph / t_np:.3f}x (aim <= 1.15)")
    print(f"  eager / Function = {t_eager / t_graph:.2f}x (aim >= 2)")
    print(f"  first call (trace + compile + run) = {trace_ms:.1f} ms")

    one = tl.function(lambda v: v + 1.0)
    v = tl.constant(1.0)
    one(v)
    vn = np.float32(1.0)
    t_hit = median_us(lambda: one(v))
    t_bare = median_us(lambda: np.add(vn, np.float32(1.0)))
    print(f"1-op Function cache hit: {t_hit:.2f} us per call (bare numpy add {t_bare:.2f} us, "
          f"overhead {t_hit - t_bare:.2f} us)")


if __name__ == "__main__":
    main()
