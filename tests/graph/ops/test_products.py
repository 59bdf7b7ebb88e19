"""The kernels of matrix products (graph/ops/products.py): which one a product takes, each
against a float64 (or exact integer) reference, eager against traced, and the threads they
run on."""
import types

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trainlib as tl
from trainlib.graph import threads
from trainlib.graph.ops import math as math_ops
from trainlib.graph.ops import products


@pytest.fixture
def pool_of_three(monkeypatch):
    """trainlib's pool at three threads, and every product over 64 multiply-adds a parallel
    one, in blocks of at least 16 (so that small arrays take every path)."""
    tl.config.threading.set_intra_op_parallelism_threads(3)
    monkeypatch.setattr(threads, "BLAS_SINGLE_BELOW", 8)
    monkeypatch.setattr(threads, "SMALL_PRODUCT", 64)
    monkeypatch.setattr(threads, "MIN_PRODUCT_BLOCK", 16)
    try:
        yield
    finally:
        tl.config.threading.set_intra_op_parallelism_threads(0)


def _reference(a, b):
    """The product in float64 (complex128 for complex inputs), exact for integers."""
    if a.dtype.kind in "iub":
        return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return np.matmul(a.astype(wide), b.astype(wide))


def _assert_product(got, a, b):
    want = _reference(a, b)
    assert got.dtype == a.dtype and got.shape == want.shape
    if a.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    # a sum of k products is off by about k * eps * sum |a||b| (float16: one rounding at the end)
    scale = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    eps = np.finfo(np.float32 if a.dtype == np.float16 else a.dtype).eps
    bound = a.shape[-1] * eps * scale + (np.finfo(np.float16).eps * np.abs(want)
                                         if a.dtype == np.float16 else 0)
    assert np.all(np.abs(got - want) <= bound + 1e-30)


def test_kernel_for_picks_blas_for_floats_the_pool_for_large_products_and_numpy_for_ints():
    tl.config.threading.set_intra_op_parallelism_threads(2)
    try:
        assert products.kernel_for(np.float16, (2, 3), (3, 4)) is products.half_matmul
        assert products.kernel_for(np.int32, (512, 512), (512, 512)) == "matmul"
        assert products.kernel_for(np.float32, (32, 64), (64, 128)) == "matmul"
        assert products.kernel_for(np.float32, (64, 1600), (1600, 10)) is products.small_matmul
        assert products.kernel_for(np.float32, (256, 1024), (1024, 1024)) is products.parallel_matmul
        assert products.kernel_for(np.complex64, (4, 256, 256), (256, 256)) is products.parallel_matmul
        assert products.kernel_for(np.float64, (None, 1024), (1024, 1024)) is products.product
        tl.config.threading.set_intra_op_parallelism_threads(1)   # no pool: BLAS as set
        assert products.kernel_for(np.float32, (256, 1024), (1024, 1024)) == "matmul"
    finally:
        tl.config.threading.set_intra_op_parallelism_threads(0)
    assert products.macs((5, 64, 1600), (1600, 10)) == 5 * 64 * 1600 * 10
    assert products.macs((2, 1, 4, 3), (6, 3, 5)) == 2 * 6 * 4 * 5 * 3


_SHAPES = st.sampled_from([((40, 30), (30, 20)), ((7, 33), (33, 50)), ((6, 9, 8), (6, 8, 11)),
                           ((2, 1, 17, 5), (3, 5, 12)), ((17, 5), (4, 5, 12)), ((0, 9), (9, 40)),
                           ((33, 1), (1, 64))])
_DTYPES = st.sampled_from(["float16", "float32", "float64", "complex64", "int32", "int8"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shapes=_SHAPES, dtype=_DTYPES, transposed=st.booleans(), data=st.data())
def test_every_kernel_matches_the_float64_reference(pool_of_three, shapes, dtype, transposed, data):
    a_shape, b_shape = shapes
    values = dict(elements=st.integers(-3, 3) if "int" in dtype else
                  st.complex_numbers(max_magnitude=4, width=64) if "complex" in dtype else
                  st.floats(-4, 4, width=16))
    a = data.draw(hnp.arrays(dtype, a_shape, **values))
    b = data.draw(hnp.arrays(dtype, b_shape, **values))
    if transposed:   # a view in Fortran order, as the generated code passes `x.T`
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    _assert_product(products.product(np, a, b), a, b)
    # into a planned buffer: a view of a larger one, as a joined gradient buffer's slice
    want = _reference(a, b)
    joined = np.full(want.size + 6, 7, a.dtype)
    out = joined[3:3 + want.size].reshape(want.shape)
    assert products.product(np, a, b, out=out) is out
    _assert_product(out, a, b)
    assert (joined[:3] == 7).all() and (joined[-3:] == 7).all()


def test_parallel_blocks_run_on_the_pool_with_blas_at_one_thread(pool_of_three):
    import threading
    seen = []

    def matmul(a, b, out=None):
        seen.append((threading.current_thread().name, threads.blas_threads(), a.shape, b.shape))
        return np.matmul(a, b, out=out)
    recording = types.SimpleNamespace(__name__="numpy", matmul=matmul, empty=np.empty)
    threads.set_blas_threads(2)
    a = np.random.default_rng(0).standard_normal((60, 8))
    b = np.random.default_rng(1).standard_normal((8, 5))
    _assert_product(products.parallel_matmul(recording, a, b), a, b)
    assert len(seen) == 6 and sum(s[2][0] for s in seen) == 60   # 2 blocks per thread, of rows
    if threads.blas_threads():   # a BLAS that could be asked: held at 1 inside, restored after
        assert {s[1] for s in seen} == {1} and threads.blas_threads() == 2
    seen.clear()
    _assert_product(products.parallel_matmul(recording, b.T, a.T), b.T, a.T)   # wide: columns
    assert {s[3][1] for s in seen} == {10} and sum(s[2][0] for s in seen) == 6 * 5
    seen.clear()
    batch = np.random.default_rng(2).standard_normal((12, 3, 4)), np.ones((12, 4, 2))
    _assert_product(products.parallel_matmul(recording, *batch), *batch)
    assert len(seen) == 6 and {s[2][1:] for s in seen} == {(3, 4)}   # blocks of batch entries


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_matmul_op_eager_equals_traced_and_the_reference(pool_of_three, dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((48, 40)) * 2).astype(dtype)
    b = (rng.standard_normal((40, 24)) * 2).astype(dtype)
    eager = tl.matmul(tl.constant(a), tl.constant(b), transpose_b=False).numpy()
    fn = tl.function(lambda a, b: tl.matmul(a, tl.transpose(b), transpose_b=True) + 0)
    traced = fn(tl.constant(a), tl.constant(b)).numpy()
    _assert_product(eager, a, b)
    _assert_product(traced, a, b)
    np.testing.assert_allclose(eager, traced, rtol=1e-3 if dtype == "float16" else 1e-6)
    source = fn.get_concrete_function(tl.constant(a), tl.constant(b)).python_source
    assert ("k_half_matmul" if dtype == "float16" else
            "xp_matmul" if dtype == "int32" else "k_parallel_matmul") in source


def test_float16_products_round_once_from_float32():
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((3, 70, 50)).astype(np.float16),
            rng.standard_normal((50, 30)).astype(np.float16))
    got = math_ops._matmul(np, a, b, transpose_a=False)
    np.testing.assert_array_equal(got, np.matmul(a.astype(np.float32), b.astype(np.float32))
                                  .astype(np.float16))
    _assert_product(got, a, b)
