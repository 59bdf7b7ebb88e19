"""Shared checks for op tests: numpy reference, finite-difference gradients, eager vs graph.

Each ops test module keeps ONE table of cases (`CASES`) of `OpCase` entries;
`tests/graph/ops/test_registry.py` unions the tables to prove every registered
differentiable op has a gradient rule and a gradient check.
"""
import dataclasses
from typing import Callable, Optional, Sequence

import numpy as np

import trainlib as tl


@dataclasses.dataclass
class OpCase:
    """One row of an op table.

    name: a readable id; ops: the op types it exercises (registry coverage);
    fn: the trainlib call on tensors; ref: the numpy reference on arrays;
    shapes: input shapes; low/high: the value domain; dtypes: dtypes to try;
    grad: whether to check gradients (float64 finite differences);
    rtol/atol: tolerances.
    """
    name: str
    ops: Sequence[str]
    fn: Callable
    ref: Optional[Callable]
    shapes: Sequence[tuple]
    low: float = -2.0
    high: float = 2.0
    dtypes: Sequence[str] = ("float32", "float64")
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    ints: Optional[Sequence[int]] = None   # indices of inputs that stay integer (indices, ...)

    def __str__(self):
        return self.name


def make_inputs(case, dtype, rng, shapes=None):
    shapes = shapes or case.shapes
    out = []
    for i, shape in enumerate(shapes):
        if case.ints and i in case.ints:
            out.append(rng.integers(int(case.low), int(case.high), size=shape).astype(np.int32))
        elif np.dtype(dtype).kind in "iu":
            out.append(rng.integers(int(case.low), int(case.high) + 1, size=shape).astype(dtype))
        elif np.dtype(dtype).kind == "b":
            out.append(rng.random(size=shape) > 0.5)
        else:
            out.append(rng.uniform(case.low, case.high, size=shape).astype(dtype))
    return out


def check_against_numpy(case, arrays):
    """The op's eager result equals the numpy reference (value, shape and dtype)."""
    got = case.fn(*[tl.constant(a) for a in arrays])
    want = case.ref(*arrays)
    _assert_same(got, want, case)
    return got


def _assert_same(got, want, case):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, case)
        return
    want = np.asarray(want)
    g = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    g = np.asarray(g)
    assert g.shape == want.shape, f"{case}: shape {g.shape} != {want.shape}"
    assert g.dtype == want.dtype, f"{case}: dtype {g.dtype} != {want.dtype}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(g, want, rtol=case.rtol * (1000 if want.dtype == np.float16 else 1),
                                   atol=case.atol * (1000 if want.dtype == np.float16 else 1),
                                   err_msg=str(case))
    else:
        np.testing.assert_array_equal(g, want, err_msg=str(case))


def numeric_gradient(f, arrays, index, eps=1e-6):
    """Central differences of sum(f(arrays)) w.r.t. arrays[index] (float64)."""
    x = arrays[index]
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    gflat = grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        plus = f(arrays)
        flat[i] = old - eps
        minus = f(arrays)
        flat[i] = old
        gflat[i] = (plus - minus) / (2 * eps)
    return grad


def check_gradient(case, arrays, rtol=1e-4, atol=1e-5):
    """Tape gradients of sum(fn(x) * w) equal central differences, in float64.

    A fixed random weighting `w` makes every output element matter differently.
    """
    rng = np.random.default_rng(0)
    arrays = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
    out0 = case.fn(*[tl.constant(a) for a in arrays])
    outs0 = out0 if isinstance(out0, (list, tuple)) else [out0]
    weights = [rng.uniform(0.5, 1.5, size=tuple(o.shape)) for o in outs0]

    def scalar(arrs):
        out = case.fn(*[tl.constant(a) for a in arrs])
        outs = out if isinstance(out, (list, tuple)) else [out]
        return sum(float(np.sum(o.numpy() * w)) for o, w in zip(outs, weights))

    xs = [tl.constant(a) for a in arrays]
    with tl.GradientTape(persistent=True) as tape:
        for i, x in enumerate(xs):
            if arrays[i].dtype.kind == "f":
                tape.watch(x)
        out = case.fn(*xs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        total = None
        for o, w in zip(outs, weights):
            term = tl.reduce_sum(o * tl.constant(w))
            total = term if total is None else total + term
    for i, x in enumerate(xs):
        if arrays[i].dtype.kind != "f":
            continue
        g = tape.gradient(total, x)
        want = numeric_gradient(scalar, [a.copy() for a in arrays], i)
        got = np.zeros_like(want) if g is None else g.numpy()
        assert got.shape == want.shape, f"{case}: gradient shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{case}: gradient of input {i}")


def table_tests(cases):
    """The three tests of an op table, for a module to bind as its own:
    `test_against_reference, test_gradient, test_traced_equals_eager = table_tests(CASES)`:
    each case against its numpy reference in each of its dtypes, its gradient against finite
    differences (float64, cases with `grad`), and its traced result equal to the eager one."""
    import pytest  # noqa: PLC0415 -- only test modules call this

    @pytest.mark.parametrize("case", cases, ids=str)
    def test_against_reference(case):
        rng = np.random.default_rng(0)
        for dtype in case.dtypes:
            check_against_numpy(case, make_inputs(case, dtype, rng))

    @pytest.mark.parametrize("case", [c for c in cases if c.grad], ids=str)
    def test_gradient(case):
        check_gradient(case, make_inputs(case, "float64", np.random.default_rng(1)))

    @pytest.mark.parametrize("case", cases, ids=str)
    def test_traced_equals_eager(case):
        arrays = make_inputs(case, case.dtypes[-1], np.random.default_rng(2))
        eager = tl.nest.flatten(case.fn(*[tl.constant(a) for a in arrays]))
        traced = tl.nest.flatten(tl.function(case.fn, autograph=False)(
            *[tl.constant(a) for a in arrays]))
        assert len(eager) == len(traced)
        for e, t in zip(eager, traced):
            np.testing.assert_array_equal(e.numpy(), t.numpy())

    return test_against_reference, test_gradient, test_traced_equals_eager
