"""The same programs on a real GPU (CuPy) as on the CPU: ops, gradients, tl.function, random, fit.

Every test carries `@pytest.mark.gpu`; tests/conftest.py skips them where CuPy
finds no GPU. The kernels' xp-only discipline is proven without a GPU by
tests/graph/test_strict_xp.py; these tests check CuPy's numbers and dtypes.
GPU math may round differently, so float comparisons allow a little slack.
"""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops import test_array, test_math, test_nn
from tests.graph.ops.harness import make_inputs
from tests.graph.test_devices import _tiny_fit
from trainlib.graph import backend

pytestmark = pytest.mark.gpu

# a sample across the tables: elementwise, reductions, matmul, indexing, conv/pool, softmax
_NAMES = {"add", "multiply", "truediv", "exp", "tanh", "sigmoid", "reduce_sum", "reduce_mean",
          "reduce_max", "argmax", "matmul", "cumsum", "where", "reshape", "transpose",
          "concat", "gather", "one_hot", "pad", "getitem", "relu", "softmax", "log_softmax",
          "sparse_ce", "conv2d_same", "max_pool_same", "avg_pool_same", "bias_add"}
_SAMPLE = [c for table in (test_math, test_array, test_nn) for c in table.CASES if c.name in _NAMES]


def _host(out):
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _close(got, want, dtype):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind == "f":
            tol = 1e-3 if w.dtype == np.float16 else 1e-4 if w.dtype == np.float32 else 1e-10
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, w)


def _gradients(case, arrays):
    xs = [tl.constant(a) for a in arrays]
    with tl.GradientTape() as tape:
        for x in xs:
            if x.dtype.is_floating:
                tape.watch(x)
        outs = case.fn(*xs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        total = tl.add_n([tl.reduce_sum(o) for o in outs if o.dtype.is_floating])
    watched = [x for x in xs if x.dtype.is_floating]
    return [g.numpy() for g in tape.gradient(total, watched) if g is not None]


@pytest.mark.parametrize("case", _SAMPLE, ids=str)
def test_op_sample_matches_cpu(case):
    for dtype in case.dtypes:
        arrays = make_inputs(case, dtype, np.random.default_rng(0))
        want = _host(case.fn(*[tl.constant(a) for a in arrays]))
        with tl.device("gpu"):
            inputs = [tl.constant(a) for a in arrays]
            out = case.fn(*inputs)
            assert all(o.device == "gpu" for o in (out if isinstance(out, (list, tuple)) else [out]))
        _close(_host(out), want, dtype)
    if case.grad and "float64" in case.dtypes:
        arrays = make_inputs(case, "float64", np.random.default_rng(1))
        want = _gradients(case, arrays)
        with tl.device("gpu"):
            got = _gradients(case, arrays)
        _close(got, want, "float64")


def test_function_and_gradients_on_gpu():
    def step(x, w):
        with tl.GradientTape() as tape:
            tape.watch(w)
            y = tl.reduce_mean(tl.tanh(tl.matmul(x, w)) ** 2)
        return y, tape.gradient(y, w)

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    want = _host(tl.function(step)(tl.constant(x), tl.constant(w)))
    with tl.device("gpu"):
        f = tl.function(step)
        got = f(tl.constant(x), tl.constant(w))
        assert all(t.device == "gpu" for t in got)
        got = _host(got)
    _close(got, want, "float64")


def test_control_flow_and_variables_on_gpu():
    def run():
        v = tl.Variable([1.0, 2.0])

        @tl.function
        def f(n):
            i, acc = tl.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * v), [0, v * 1.0])
            v.assign_add(tl.cond(acc[0] > 0, lambda: acc, lambda: -acc))
            return acc
        return f(tl.constant(3)).numpy(), v.numpy()

    want = run()
    with tl.device("gpu"):
        got = run()
    _close(list(got), list(want), "float32")


def test_random_on_gpu_uses_cupy_and_follows_set_seed():
    with tl.device("gpu"):
        tl.random.set_seed(11)
        a = tl.random.normal([1000])
        assert isinstance(a._value, backend.array_module("gpu").ndarray)
        tl.random.set_seed(11)
        b = tl.random.normal([1000])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert abs(a.numpy().mean()) < 0.15 and abs(a.numpy().std() - 1) < 0.15
    tl.random.set_seed(None)


def test_copies_between_devices():
    x = tl.constant([[1.0, 2.0]])
    g = x.gpu()
    assert g.device == "gpu" and g.cpu().device == "cpu"
    np.testing.assert_array_equal(g.numpy(), x.numpy())
    with tl.device("gpu"):
        assert tl.identity(x).device == "gpu"


def test_tiny_fit_on_gpu_matches_cpu():
    cpu_history, cpu_pred, start, _ = _tiny_fit("cpu")
    gpu_history, gpu_pred, _, devices = _tiny_fit("gpu", start)
    assert devices == ["gpu"] * 4
    np.testing.assert_allclose(gpu_history["loss"], cpu_history["loss"], rtol=1e-3)
    np.testing.assert_allclose(gpu_pred, cpu_pred, rtol=1e-3, atol=1e-4)
