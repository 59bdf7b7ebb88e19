"""`keras.ops.scan`, `map`, `vectorized_map`, `fori_loop` and `while_loop` are tl's While-based
loops in graphs: the traced graph holds one `While` whatever the trip count (nothing unrolled),
works with unknown lengths, and matches eager execution and the gradients of the unrolled math.
"""
import numpy as np

import trainlib as tl
from trainlib.keras import ops


def _graph_ops(fn, *specs):
    graph = tl.function(fn, autograph=False).get_concrete_function(*specs).graph
    return [op.type for op in graph.get_operations()]


def test_scan_and_map_trace_to_one_while_loop_for_any_length():
    def scan(xs):
        return ops.scan(lambda c, x: (c + x, c * x), tl.constant(0.0), xs)

    def mapped(xs):
        return ops.map(lambda v: v * v + 1.0, xs)

    for fn in (scan, mapped):
        short = _graph_ops(fn, tl.TensorSpec([3], tl.float32))
        long = _graph_ops(fn, tl.TensorSpec([500], tl.float32))
        unknown = _graph_ops(fn, tl.TensorSpec([None], tl.float32))
        assert short.count("While") == unknown.count("While") == 1 and len(long) == len(short)
        assert len(unknown) < len(short) + 10  # the length read at run time, nothing unrolled


def test_scan_matches_the_python_loop_eagerly_and_traced():
    xs = np.random.default_rng(0).normal(size=(7, 2)).astype(np.float32)
    c, ys = np.zeros(2, np.float32), []
    for x in xs[::-1]:
        ys.append(c * x)
        c = c + x
    ys = np.stack(ys[::-1])

    def fn(v):
        return ops.scan(lambda c, x: (c + x, c * x), tl.zeros([2]), v, reverse=True)

    for run in (fn, tl.function(fn, input_signature=[tl.TensorSpec([None, 2], tl.float32)])):
        carry, out = run(tl.constant(xs))
        np.testing.assert_allclose(carry.numpy(), c, rtol=1e-6)
        np.testing.assert_allclose(out.numpy(), ys, rtol=1e-6)
    carry, none = ops.scan(lambda c, _: (c * 2.0, None), tl.constant(1.0), length=5)
    assert float(carry) == 32.0 and none is None


def test_scan_gradient_through_the_while_loop():
    x = tl.constant([1.0, 2.0, 3.0])

    @tl.function
    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            carry, ys = ops.scan(lambda c, v: (c * v, c), tl.constant(1.0), x)
            total = carry + ops.sum(ys)
        return tape.gradient(total, x)

    # total = x0 x1 x2 + 1 + x0 + x0 x1
    np.testing.assert_allclose(grad(x).numpy(), [2 * 3 + 1 + 2, 1 * 3 + 1, 1 * 2])


def test_fori_loop_and_while_loop_build_while_ops_with_tensor_bounds():
    def fori(n):
        return ops.fori_loop(0, n, lambda i, v: v * 2.0, tl.constant(1.0))

    def loop(n):
        return ops.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v + 1.0),
                              (tl.constant(0), tl.constant(0.0)))

    for fn in (fori, loop):
        assert _graph_ops(fn, tl.TensorSpec([], tl.int32)).count("While") == 1
    assert float(tl.function(fori)(tl.constant(10))) == 1024.0
    assert float(tl.function(loop)(tl.constant(4))[1]) == 4.0
    assert float(tl.function(lambda: ops.fori_loop(0, 300, lambda i, v: v + 1.0,
                                                   tl.constant(0.0)))()) == 300.0
