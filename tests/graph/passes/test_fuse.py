"""Elementwise fusion and the FusedElementwise op: clusters, plain / cache-blocked / CuPy runs."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.op import apply
from trainlib.graph import threads
from trainlib.graph.ops import fused
from trainlib.graph.passes import fuse, prune

from ..ops.harness import OpCase, check_against_numpy
from .randgraph import run_graph, trace_unoptimized

_PROGRAM = (("Mul", (0, 1), ()), ("Tanh", (2,), ()), ("Sub", (3, 0), ()))


@pytest.fixture(autouse=True)
def blocked_path(monkeypatch):
    """These tests are about the cache-blocked numpy path: native kernels (numba) off, as
    without the `jit` extra (tests/graph/exec/test_native.py tests them)."""
    from trainlib.graph.exec import native
    monkeypatch.setattr(native, "_numba", False)
    monkeypatch.setattr(native, "_WARNED", [True])


def _fused_op(x, y, jit_compile=False):
    return apply("FusedElementwise", x, y, program=_PROGRAM, jit_compile=jit_compile)


CASES = [
    OpCase("fused_plain", ["FusedElementwise"], _fused_op, lambda x, y: np.tanh(x * y) - x,
           [(3, 4), (4,)], grad=False),
    OpCase("fused_jit", ["FusedElementwise"], lambda x, y: _fused_op(x, y, True),
           lambda x, y: np.tanh(x * y) - x, [(300, 400), (400,)], grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_op_against_numpy(case, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-2, 2, s).astype(dtype) for s in case.shapes]
    check_against_numpy(case, arrays)


def test_inference_follows_the_program_and_reports_errors():
    g = tl.function(lambda x: _fused_op(x, tl.ones([2, 1]))).get_concrete_function(
        tl.TensorSpec([None, 3])).graph
    assert g.outputs[0].shape.as_list() == [2, 3]
    with pytest.raises(tl.errors.InvalidArgumentError, match="FusedElementwise"):
        tl.function(lambda x: _fused_op(x, tl.ones([2], tl.int32)))(tl.ones([2]))


def _chain(x):
    return tl.tanh(x * 2 + 1) * tl.sigmoid(x) - x ** 2


@pytest.mark.parametrize("jit", [False, True])
def test_chain_becomes_one_op(jit):
    x = np.random.default_rng(1).standard_normal(300_000).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, -100.0]
    graph = prune(trace_unoptimized(_chain, x))
    want = run_graph(graph, x)[0]
    fuse(graph, jit_compile=jit)
    graph.verify()
    assert [op.type for op in graph.operations].count("FusedElementwise") == 1
    assert not {"Tanh", "Sigmoid", "Mul", "Sub", "Pow"} & {op.type for op in graph.operations}
    got = run_graph(graph, x)[0]
    if jit:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def test_blocked_rows_with_broadcast_inputs_and_every_dtype_path():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((700, 300)).astype(np.float64)
    b = rng.standard_normal(300).astype(np.float64)

    def f(x, y):
        z = tl.maximum(x * y + 1.0, 0.5) - tl.abs(y)
        return tl.cast(tl.greater(tl.sigmoid(z), 0.7), tl.float64) + tl.square(z - y)
    graph = prune(trace_unoptimized(f, a, b))
    want = run_graph(graph, a, b)[0]
    fuse(graph, jit_compile=True)
    assert [op.type for op in graph.operations].count("FusedElementwise") == 1
    np.testing.assert_allclose(run_graph(graph, a, b)[0], want, rtol=1e-12, atol=1e-12)


def test_what_is_not_fused():
    x = np.ones((4, 5), np.float32)

    def f(x):
        t = tl.exp(x)
        u = tl.random.uniform([4, 5]) * t          # random: not fused, t has two uses
        s = tl.reduce_sum(t, axis=1, keepdims=True)  # a reduction ends a cluster
        return u + s, t
    graph = prune(trace_unoptimized(f, x))
    fuse(graph)
    types = [op.type for op in graph.operations]
    assert "RandomUniform" in types and "Exp" in types and "Sum" in types
    (op,) = [op for op in graph.operations if op.type == "FusedElementwise"]
    assert [step[0] for step in op.attrs["program"]] == ["Mul", "AddV2"]


def test_fused_ops_inside_branches():
    def f(x):
        return tl.cond(x[0] > 0, lambda: tl.tanh(x * 2.0) + 1.0, lambda: x)
    x = np.linspace(0.1, 1, 10).astype(np.float32)
    graph = prune(trace_unoptimized(f, x))
    fuse(graph)
    branch = [op for op in graph.operations if op.type == "If"][0].attrs["then_branch"]
    assert "FusedElementwise" in [op.type for op in branch.operations]
    np.testing.assert_allclose(run_graph(graph, x)[0], np.tanh(x * 2) + 1, rtol=1e-6)


@pytest.mark.gpu
def test_cupy_elementwise_kernel_is_compiled_once():
    import cupy  # noqa: PLC0415
    x = cupy.random.standard_normal(100_000, dtype=cupy.float32)
    c2, c1 = cupy.asarray(np.float32(2)), cupy.asarray(np.float32(1))
    program = (("Mul", (0, 1), ()), ("AddV2", (3, 2), ()), ("Tanh", (4,), ()),
               ("Sigmoid", (0,), ()), ("Mul", (5, 6), ()), ("Pow", (0, 1), ()), ("Sub", (7, 8), ()))
    kernel = fused._fused.__wrapped__ if hasattr(fused._fused, "__wrapped__") else fused._fused
    out = kernel(cupy, x, c2, c1, program=program, jit_compile=True)
    h = cupy.asnumpy(x)
    np.testing.assert_allclose(cupy.asnumpy(out), np.tanh(h * 2 + 1) / (1 + np.exp(-h)) - h ** 2,
                               rtol=1e-5, atol=1e-5)
    assert len([k for k in fused._CUPY if k[0] == program]) == 1
    kernel(cupy, x, c2, c1, program=program, jit_compile=True)
    assert len([k for k in fused._CUPY if k[0] == program]) == 1


def test_blocked_jit_runs_slices_on_threads_with_the_same_result():
    x = tl.constant(np.random.default_rng(3).standard_normal(300_000).astype(np.float32))
    fn = tl.function(lambda a: tl.tanh(a * 2.0 + 1.0) * tl.sigmoid(a) - a * a, jit_compile=True)
    saved = fused.THREADS, fused.BLOCK
    try:
        fused.BLOCK = 8192
        fused.THREADS = 1
        one = fn(x).numpy()
        fused.THREADS = 3
        threads.drop_pool()  # a pool sized for three threads
        assert len(fused._chunks(300_000, fused.BLOCK, 1)) == 3
        three = fn(x).numpy()
    finally:
        fused.THREADS, fused.BLOCK = saved
        threads.drop_pool()
    np.testing.assert_array_equal(one, three)


def test_a_forked_child_gets_its_own_thread_pool():
    import os

    x = tl.constant(np.random.default_rng(4).standard_normal(300_000).astype(np.float32))
    fn = tl.function(lambda a: tl.tanh(a) * a + 1.0, jit_compile=True)
    saved = fused.BLOCK
    fused.BLOCK = 8192
    try:
        want = fn(x).numpy()  # the parent's pool exists now
        pid, total = sum_in_forked_child(fn, x)
    finally:
        fused.BLOCK = saved
    assert pid != os.getpid() and total == float(np.sum(want))


def sum_in_forked_child(fn, x):
    """(the child's pid, sum of fn(x)) computed in a forked child process."""
    import multiprocessing
    import os

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=lambda: queue.put((os.getpid(), float(np.sum(fn(x).numpy())))))
    child.start()
    found = queue.get(timeout=120)
    child.join(timeout=60)
    return found


def test_the_fused_op_always_returns_a_new_array():
    """A last step that hands back its input (Round of integers) is copied: the memory plan
    relies on the op's fresh_output."""
    x = np.arange(6, dtype=np.int32)
    out = fused._fused(np, x, program=(("Round", (0,), ()),))
    assert out is not x and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x)
    assert fused._fresh(x[1:], [x]).base is None

