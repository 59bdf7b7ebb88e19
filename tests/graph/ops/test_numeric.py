"""Special functions and bit-level ops (`trainlib.graph.ops.numeric`) against numpy/math,
gradients by finite differences, traced == eager.

One table, CASES (unioned by the registry and strict-array-module tests).
"""
import math

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.op import REGISTRY
from trainlib.graph.ops import numeric
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

F = ("float32", "float64")


def _erf(x):
    return np.vectorize(math.erf)(x).astype(x.dtype)


def _erfc(x):
    return np.vectorize(math.erfc)(x).astype(x.dtype)


def _i1(x):
    # the series, summed in float64 (|x| <= 5 here)
    half = x.astype(np.float64) / 2
    return sum(half ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
               for k in range(40)).astype(x.dtype)


CASES = [
    OpCase("i0", ["BesselI0", "BesselI1"], numeric.i0, lambda x: np.i0(x).astype(x.dtype), [(3, 4)],
           low=-5, high=5),
    OpCase("i0_large", ["BesselI0"], numeric.i0, lambda x: np.i0(x).astype(x.dtype), [(3,)],
           low=16, high=40, grad=False, rtol=1e-6),
    OpCase("i1", ["BesselI1"], numeric.i1, _i1, [(3, 4)], low=-5, high=5, grad=False),
    OpCase("erfc", ["Erfc"], numeric.erfc, _erfc, [(3, 4)], low=-4, high=6),
    OpCase("erfinv", ["Erfinv"], numeric.erfinv, None, [(3, 4)], low=-0.95, high=0.95),
    OpCase("signbit", ["Signbit"], numeric.signbit, np.signbit, [(3, 4)], grad=False),
    OpCase("nextafter", ["NextAfter"], numeric.nextafter, np.nextafter, [(3, 4), (4,)], grad=False),
    OpCase("gcd", ["Gcd"], numeric.gcd, np.gcd, [(3, 4), (4,)], low=0, high=30, grad=False,
           dtypes=("int32", "int64")),
    OpCase("lcm", ["Lcm"], numeric.lcm, np.lcm, [(3, 4), (4,)], low=0, high=12, grad=False,
           dtypes=("int32", "int64")),
    OpCase("bitcast", ["Bitcast"], lambda x: numeric.bitcast(x, tl.int32),
           lambda x: x.view(np.int32), [(3, 4)], grad=False, dtypes=("float32",)),
    OpCase("bitcast_wider", ["Bitcast"], lambda x: numeric.bitcast(x, tl.float64),
           lambda x: x.view(np.float64), [(3, 4)], grad=False, dtypes=("float32",)),
]


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c}-{d}") for c in CASES
                                        for d in c.dtypes if c.ref is not None])
def test_against_numpy(case, dtype):
    check_against_numpy(case, make_inputs(case, dtype, np.random.default_rng(1)))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(2)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_equals_eager(case):
    arrays = make_inputs(case, case.dtypes[-1], np.random.default_rng(3))
    eager = case.fn(*[tl.constant(a) for a in arrays]).numpy()
    traced = tl.function(case.fn)(*[tl.constant(a) for a in arrays]).numpy()
    np.testing.assert_array_equal(traced, eager)


def test_erfinv_inverts_erf():
    x = np.linspace(-0.999, 0.999, 41)
    y = numeric.erfinv(tl.constant(x)).numpy()
    np.testing.assert_allclose(_erf(y), x, rtol=0, atol=1e-14)
    edge = numeric.erfinv(tl.constant([-1.0, 1.0, 1.5])).numpy()
    assert edge[0] == -np.inf and edge[1] == np.inf and np.isnan(edge[2])


def test_erfc_keeps_the_tail():
    assert float(numeric.erfc(tl.constant(6.0, tl.float64))) == pytest.approx(math.erfc(6.0), rel=1e-13)


def test_type_errors_name_the_op():
    with pytest.raises(TypeError, match="gcd|Gcd"):
        numeric.gcd(tl.constant([1.0]), tl.constant([2.0]))
    with pytest.raises(ValueError, match="view"):
        numeric.bitcast(tl.constant([1.0, 2.0, 3.0]), tl.float64)


def test_cases_cover_every_numeric_op():
    from tests.graph.ops.test_tf_surface import CASES as SURFACE_CASES  # the gamma family
    cases = CASES + SURFACE_CASES
    mine = {name for name, d in REGISTRY.items() if d.kernel.__module__ == numeric.__name__}
    assert mine <= {op for c in cases for op in c.ops}
    for name in mine:
        if REGISTRY[name].differentiable:
            assert any(name in c.ops and c.grad for c in cases), name
