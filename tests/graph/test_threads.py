"""Threads per op (`tl.config.threading`: numpy's BLAS and trainlib's own pool) and op
determinism (`tl.config.experimental.enable_op_determinism`)."""
import hashlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph import threads
from trainlib.graph.ops import fused

_PROGRAM = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import trainlib as tl
    from trainlib.graph.ops import fused

    tl.config.experimental.enable_op_determinism()
    try:
        tl.random.uniform([2])
        sys.exit("an unseeded random op ran")
    except RuntimeError:
        pass
    tl.keras.utils.set_random_seed(7)
    fused.BLOCK = 4096                # several blocks per thread: the pool splits the work
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 20)).astype(np.float32)
    y = rng.integers(0, 3, 256)
    model = tl.keras.Sequential([tl.keras.layers.Input((20,)), tl.keras.layers.Dense(64, "gelu"),
                                 tl.keras.layers.Dropout(0.3), tl.keras.layers.Dense(3)])
    model.compile("adam", tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=32, epochs=2, shuffle=True, verbose=0)
    chain = tl.function(lambda t: tl.tanh(t * 2.0 + 1.0) * tl.sigmoid(t) - t * t,
                        jit_compile=True)
    big = chain(tl.random.normal([200_000]))
    digest = hashlib.sha256()
    for w in model.get_weights() + [big.numpy()]:
        digest.update(np.ascontiguousarray(w).tobytes())
    print(digest.hexdigest())
""")


def _run(hash_seed):
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
    done = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_two_runs_of_a_seeded_program_are_bit_identical():
    first, second = _run(1), _run(2)   # other hash seeds: set and dict orders may differ
    assert len(first) == 64 and first == second


def test_determinism_refuses_unseeded_random_ops_and_can_be_switched_off():
    from trainlib.graph.ops import random as random_ops
    saved = random_ops._global_seed
    try:
        tl.random.set_seed(None)
        tl.config.experimental.enable_op_determinism()
        assert tl.config.experimental.is_op_determinism_enabled()
        with pytest.raises(RuntimeError, match="require a seed"):
            tl.random.normal([3])
        assert tl.random.normal([3], seed=5).shape == (3,)   # an op seed is enough
        tl.random.set_seed(3)
        a = tl.random.normal([3]).numpy()
        tl.random.set_seed(3)
        np.testing.assert_array_equal(tl.random.normal([3]).numpy(), a)
        tl.random.set_seed(None)
    finally:
        tl.config.experimental.disable_op_determinism()
        tl.random.set_seed(saved)
    assert not tl.config.experimental.is_op_determinism_enabled()
    assert tl.random.normal([2]).shape == (2,)


def test_intra_op_setting_caps_blas_and_the_pool():
    before = threads.blas_threads()
    try:
        tl.config.threading.set_intra_op_parallelism_threads(1)
        assert tl.config.threading.get_intra_op_parallelism_threads() == 1
        assert fused._threads() == 1 and fused._chunks(10_000, 1, 1) == [(0, 10_000)]
        if before:      # a BLAS whose thread count can be set (numpy's OpenBLAS)
            assert threads.blas_threads() == 1
        a = np.random.default_rng(0).normal(size=(200, 200))
        np.testing.assert_allclose((tl.constant(a) @ tl.constant(a)).numpy(), a @ a, rtol=1e-10)
    finally:
        tl.config.threading.set_intra_op_parallelism_threads(0)
    assert tl.config.threading.get_intra_op_parallelism_threads() == 0
    assert threads.blas_threads() == before
    assert fused._threads() == threads.cpu_count()
    tl.config.threading.set_inter_op_parallelism_threads(2)
    assert tl.config.threading.get_inter_op_parallelism_threads() == 2
    tl.config.threading.set_inter_op_parallelism_threads(0)
    with pytest.raises(ValueError, match="int >= 0"):
        tl.config.threading.set_intra_op_parallelism_threads(-1)


@pytest.fixture
def three_threads(monkeypatch):
    """trainlib's pool at three threads, and every batch slice worth a hand-off."""
    tl.config.threading.set_intra_op_parallelism_threads(3)
    monkeypatch.setattr(threads, "MIN_SPLIT_WORK", 1)
    try:
        yield
    finally:
        tl.config.threading.set_intra_op_parallelism_threads(0)


def test_split_gives_contiguous_ranges_only_for_work_worth_threads(three_threads):
    ranges = threads.split(64, 10 ** 6)
    assert len(ranges) == 6 and ranges[0][0] == 0 and ranges[-1][1] == 64
    assert all(hi == lo for (_, hi), (lo, _) in zip(ranges, ranges[1:]))
    assert threads.split(5, 10 ** 6) == [(i, i + 1) for i in range(5)]   # never an empty range
    assert threads.split(64, 1000, min_work=1000) == [(0, 64)]           # too little work
    tl.config.threading.set_intra_op_parallelism_threads(1)
    assert threads.split(64, 10 ** 6) == [(0, 64)]                       # threads off


def test_run_split_runs_ranges_in_order_with_blas_at_one_thread(three_threads):
    import threading

    threads.set_blas_threads(2)
    seen = []

    def part(lo, hi):
        seen.append((threading.current_thread().name, threads.blas_threads()))
        return np.arange(lo, hi)

    ranges = threads.split(40, 10 ** 6)
    parts = threads.run_split(part, ranges)
    np.testing.assert_array_equal(np.concatenate(parts), np.arange(40))
    if threads.blas_threads():   # a BLAS that could be asked: held at 1 inside, restored after
        assert {blas for _, blas in seen} == {1} and threads.blas_threads() == 2


def test_run_split_from_a_worker_of_the_pool_does_not_wait_on_itself(three_threads):
    # every worker runs an outer range that splits again: the inner ranges queue behind the
    # outer ones, and each caller runs the ones no worker took
    inner = lambda lo, hi: hi - lo   # noqa: E731
    outer = lambda lo, hi: sum(threads.run_split(inner, threads.split(100, 10 ** 6)))  # noqa: E731
    assert threads.run_split(outer, threads.split(9, 10 ** 6)) == [100] * len(threads.split(9, 10 ** 6))


def test_run_split_raises_the_first_error_after_the_other_ranges_end(three_threads):
    def part(lo, hi):
        if lo == 0:
            raise ValueError("range 0")
        return lo

    with pytest.raises(ValueError, match="range 0"):
        threads.run_split(part, threads.split(12, 10 ** 6))


def test_small_matrix_products_run_on_one_blas_thread(three_threads):
    from trainlib.graph.ops import math as math_ops

    assert threads.small_product(64 * 1600 * 10)
    assert not threads.small_product(32 * 64 * 128)       # BLAS keeps it on one thread itself
    assert not threads.small_product(256 * 1024 * 1024)   # big enough for BLAS's threads
    a = np.random.default_rng(0).standard_normal((64, 1600)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((1600, 10)).astype(np.float32)
    seen = []
    one = threads.one_blas_thread(lambda: seen.append(threads.blas_threads()) or a @ b)
    if threads.blas_threads():
        assert seen == [1]
    # one BLAS thread may sum in another order than several
    np.testing.assert_allclose(one, a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(math_ops._matmul(np, a, b), one)


def test_a_small_product_in_a_graph_keeps_its_planned_buffer_on_one_blas_thread(three_threads):
    a = tl.constant(np.ones((64, 1600), np.float32))
    b = tl.constant(np.ones((1600, 10), np.float32))
    fn = tl.function(lambda a, b: tl.tanh(tl.matmul(a, b) * 2.0))
    source = fn.get_concrete_function(a, b).python_source
    assert "k_small_matmul(xp, a, b" in source
    np.testing.assert_array_equal(fn(a, b).numpy(), np.tanh(np.full((64, 10), 3200.0, np.float32)))


def test_run_elementwise_slices_equal_one_call_and_may_write_into_an_input(three_threads):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((40, 25)), rng.standard_normal((40, 25))
    out = np.empty_like(a)
    assert threads.run_elementwise(np.subtract, a, b, out=out) is out
    np.testing.assert_array_equal(out, a - b)
    want = a * 0.5
    threads.run_elementwise(np.multiply, a, np.float64(0.5), out=a)   # into its input
    np.testing.assert_array_equal(a, want)
    threads.run_elementwise(np.sqrt, np.abs(b), out=out)
    np.testing.assert_array_equal(out, np.sqrt(np.abs(b)))
    # a broadcast row and a transposed view cannot be sliced flat: one call
    row, view = rng.standard_normal(25), rng.standard_normal((25, 40)).T
    threads.run_elementwise(np.add, b, row, out=out)
    np.testing.assert_array_equal(out, b + row)
    threads.run_elementwise(np.add, view, b, out=out)
    np.testing.assert_array_equal(out, view + b)


def test_a_large_elementwise_call_in_a_graph_runs_as_slices(monkeypatch):
    monkeypatch.setattr(threads, "SPLIT_ELEMENTWISE", 1000)
    x = tl.constant(np.linspace(-2, 2, 4096, dtype=np.float32).reshape(64, 64))
    fn = tl.function(lambda x: tl.sqrt(tl.abs(x * 3.0 - 1.0)) + x)
    source = fn.get_concrete_function(x).python_source
    assert "k_run_elementwise(xp_" in source
    a = x.numpy()
    np.testing.assert_allclose(fn(x).numpy(), np.sqrt(np.abs(a * 3.0 - 1.0)) + a, rtol=1e-6)


def test_a_large_in_place_variable_update_runs_as_slices(monkeypatch):
    monkeypatch.setattr(threads, "SPLIT_ELEMENTWISE", 1000)
    calls = []
    run = threads.run_elementwise
    monkeypatch.setattr(threads, "run_elementwise",
                        lambda fn, *a, **k: calls.append(fn) or run(fn, *a, **k))
    v = tl.Variable(np.ones(4096, np.float32))

    @tl.function
    def step(g):
        v.assign_sub(g * 0.5)
        return tl.constant(0.0)

    g = tl.constant(np.arange(4096, dtype=np.float32))
    for _ in range(3):
        step(g)
    np.testing.assert_allclose(v.numpy(), 1.0 - 1.5 * np.arange(4096), rtol=1e-6)
    assert np.subtract in calls   # the in-place write (once the Variable owns its array)
