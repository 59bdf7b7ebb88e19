"""tl.debugging: each assertion passes and fails with its message, eagerly and in graphs;
check_numerics passes values and gradients through and stops NaN/Inf."""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

CASES = [
    OpCase("check_numerics", ["CheckNumerics"], lambda x: tl.debugging.check_numerics(x, "m"),
           lambda x: x, [(3, 2)]),
]

Error = tl.errors.InvalidArgumentError


@pytest.mark.parametrize("case", CASES, ids=str)
def test_case(case):
    rng = np.random.default_rng(0)
    for dtype in case.dtypes:
        arrays = make_inputs(case, dtype, rng)
        check_against_numpy(case, arrays)
        if dtype == "float64":
            check_gradient(case, arrays)


COMPARISONS = [
    # (function, passing x, y, failing x, y, symbol)
    (tl.debugging.assert_equal, [1, 2], [1, 2], [1, 2], [1, 3], "=="),
    (tl.debugging.assert_none_equal, [1, 2], [3, 4], [1, 2], [3, 2], "!="),
    (tl.debugging.assert_less, [1, 2], [2, 3], [1, 2], [2, 2], "<"),
    (tl.debugging.assert_less_equal, [1, 2], [1, 3], [1, 4], [1, 3], "<="),
    (tl.debugging.assert_greater, [2, 3], [1, 2], [2, 3], [1, 3], ">"),
    (tl.debugging.assert_greater_equal, [2, 3], [2, 2], [2, 1], [2, 2], ">="),
]


@pytest.mark.parametrize("fn, px, py, fx, fy, symbol", COMPARISONS, ids=lambda v: getattr(v, "__name__", ""))
def test_comparison_assertions_eagerly(fn, px, py, fx, fy, symbol):
    assert fn(tl.constant(px), tl.constant(py)) is None
    with pytest.raises(Error) as info:
        fn(tl.constant(fx), tl.constant(fy), message="my check")
    text = str(info.value)
    assert fn.__name__ in text and f"x {symbol} y" in text and "my check" in text
    assert str(np.array(fx)).replace(",", "") in text and str(np.array(fy)) in text


def test_assertion_broadcasts_and_checks_dtypes():
    tl.debugging.assert_less(tl.constant([[1.0, 2.0]]), 5.0)
    with pytest.raises(Error, match="int32"):
        tl.debugging.assert_equal(tl.constant([1]), tl.constant([1.0]))


def test_assertions_run_on_every_graph_call():
    @tl.function
    def f(x):
        tl.debugging.assert_greater(x, 0.0, message="x must be positive")
        return x * 2

    assert float(f(tl.constant(1.0))) == 2.0
    with pytest.raises(Error, match="x must be positive"):
        f(tl.constant(-1.0))  # same trace, the assertion runs again
    assert f.experimental_get_tracing_count() == 1


def test_summarize_limits_the_values_shown():
    with pytest.raises(Error) as info:
        tl.debugging.assert_equal(tl.range(100), tl.zeros([100], tl.int32), summarize=4)
    assert "[0 1 2 3 ...]" in str(info.value) and "99" not in str(info.value)


def test_assert_near():
    tl.debugging.assert_near(tl.constant([1.0, 2.0]), tl.constant([1.0, 2.0000001]))
    tl.debugging.assert_near(tl.constant(1.0), 1.05, atol=0.1)
    with pytest.raises(Error, match="(?s)assert_near.*close.*tolerance"):
        tl.debugging.assert_near(tl.constant([1.0, 2.0]), tl.constant([1.0, 2.1]), message="close?")


def test_assert_rank():
    tl.debugging.assert_rank(tl.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match=r"rank 3.*Received rank 2.*shape \(2, 3\)"):
        tl.debugging.assert_rank(tl.zeros([2, 3]), 3, message="need 3-D")


def test_assert_shapes():
    x, y = tl.zeros([2, 3]), tl.zeros([2])
    tl.debugging.assert_shapes([(x, ("N", 3)), (y, ("N",))])
    with pytest.raises(ValueError, match="tensor 1 has shape"):
        tl.debugging.assert_shapes([(x, ("N", 3)), (tl.zeros([3]), ("N",))])
    with pytest.raises(ValueError, match="rank 1"):
        tl.debugging.assert_shapes([(x, ("N",))])


def test_check_numerics():
    x = tl.constant([1.0, 2.0])
    np.testing.assert_array_equal(tl.debugging.check_numerics(x, "fine").numpy(), [1.0, 2.0])
    with pytest.raises(Error, match="weights : Tensor had NaN values"):
        tl.debugging.check_numerics(tl.constant([1.0, np.nan]), "weights")
    with pytest.raises(Error, match="Inf"):
        tl.debugging.check_numerics(tl.constant([np.inf]), "w")
    with pytest.raises(Error, match="floating-point"):
        tl.debugging.check_numerics(tl.constant([1]), "w")


def test_check_numerics_checks_the_gradient_too():
    x = tl.constant([0.0, 1.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.debugging.check_numerics(x, "x")
        z = tl.sqrt(y)
    with pytest.raises(Error, match="in gradient"):
        tape.gradient(z, x)


def test_check_numerics_in_a_graph():
    f = tl.function(lambda x: tl.debugging.check_numerics(tl.math.log(x), "log"))
    assert float(f(tl.constant(1.0))) == 0.0
    with pytest.raises(Error, match="log : Tensor had Inf values"):
        f(tl.constant(0.0))


def test_assert_op_with_strings_and_tensors():
    tl.debugging.Assert(tl.constant(True), ["never"])
    with pytest.raises(Error, match=r"value is: \[5 6\]"):
        tl.debugging.Assert(tl.constant(False), ["value is: ", tl.constant([5, 6])])
