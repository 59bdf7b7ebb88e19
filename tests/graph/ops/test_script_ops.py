"""py_function / numpy_function / init_scope: values against numpy, gradients through the
tape inside py_function (finite differences), runs on every graph call, declared dtypes."""
import numpy as np
import pytest

import trainlib as tl

from .harness import OpCase, check_against_numpy, check_gradient, make_inputs

CASES = [
    OpCase("py_function_sin_times", ["EagerPyFunc"],
           lambda x: tl.py_function(lambda a: tl.sin(a) * a, [x], x.dtype),
           lambda x: np.sin(x) * x, [(2, 3)]),
    OpCase("py_function_two_in_two_out", ["EagerPyFunc"],
           lambda x, y: tl.py_function(lambda a, b: [a * b, tl.exp(a) + b], [x, y],
                                       [x.dtype, x.dtype]),
           lambda x, y: [x * y, np.exp(x) + y], [(3,), (3,)]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_numpy(case, dtype):
    check_against_numpy(case, make_inputs(case, dtype, np.random.default_rng(1)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(2)))


def test_runs_on_every_graph_call_with_unknown_shape():
    calls = []

    def double(x):
        calls.append(x.numpy().copy())
        return x * 2

    @tl.function
    def f(x):
        y = tl.py_function(double, [x], tl.float32)
        assert y.shape.rank is None      # TensorFlow's outputs have an unknown shape too
        return y + 1

    for v in (1.0, 2.0, 3.0):
        assert float(f(tl.constant(v))) == 2 * v + 1
    assert [float(c) for c in calls] == [1.0, 2.0, 3.0]
    assert f.experimental_get_tracing_count() == 1


def test_gradient_in_a_function_equals_eager():
    x = tl.constant([0.5, 1.5])

    def run(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.reduce_sum(tl.py_function(lambda a: a ** 3, [x], tl.float32))
        return tape.gradient(y, x)

    np.testing.assert_allclose(run(x).numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(tl.function(run)(x).numpy(), 3 * x.numpy() ** 2)


def test_numpy_function_gets_arrays_and_converts_results():
    seen = []

    def fn(a, b):
        seen.append((type(a), type(b)))
        return a + b, np.int64(a.size)

    @tl.function
    def f(a, b):
        return tl.numpy_function(fn, [a, b], [tl.float64, tl.int64])

    total, size = f(tl.constant([1.0, 2.0], tl.float64), tl.constant([3.0, 4.0], tl.float64))
    np.testing.assert_array_equal(total.numpy(), [4.0, 6.0])
    assert int(size) == 2 and size.dtype is tl.int64
    assert seen == [(np.ndarray, np.ndarray)]
    with tl.GradientTape() as tape:   # not differentiable: no gradient
        x = tl.constant(1.0)
        tape.watch(x)
        y = tl.numpy_function(lambda a: a * 2, [x], tl.float32)
    assert tape.gradient(y, x) is None


def test_wrong_result_dtype_or_count_raises():
    x = tl.constant([1.0])
    with pytest.raises(tl.errors.InvalidArgumentError, match="returned int32.*declares float32"):
        tl.py_function(lambda a: tl.cast(a, tl.int32), [x], tl.float32)
    with pytest.raises(tl.errors.InvalidArgumentError, match="returned 1 values, Tout declares 2"):
        tl.py_function(lambda a: a, [x], [tl.float32, tl.float32])
    with pytest.raises(TypeError, match="callable"):
        tl.py_function(3, [x], tl.float32)


def test_init_scope_runs_eagerly_unseen_by_tapes():
    seen = []

    @tl.function
    def f(x):
        with tl.init_scope():
            seen.append(tl.executing_eagerly())
            c = tl.constant(2.0)
        seen.append(tl.executing_eagerly())
        return x * c

    assert float(f(tl.constant(3.0))) == 6.0
    assert seen == [True, False]
    x = tl.constant(1.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        with tl.init_scope():
            y = x * 3
    assert tape.gradient(y, x) is None
