"""tl.linalg ops against numpy, their gradients by finite differences, traced == eager, errors.

One table, CASES, lists every case with the op types it exercises (the registry
and strict-array-module tests union it with the other op tables).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib.graph.ops import linalg
from trainlib.graph.op import REGISTRY
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

F = ("float32", "float64")


def _well_conditioned(a):
    """a + 4I: diagonally dominant for inputs in [-1, 1] and n <= 3 (works with None dims)."""
    return linalg.set_diag(a, linalg.diag_part(a) + 4.0)


def _spd(a):
    """a @ a^T + 3I: symmetric positive definite."""
    s = tl.matmul(a, a, transpose_b=True)
    return linalg.set_diag(s, linalg.diag_part(s) + 3.0)


def _np_well(a):
    return a + np.eye(a.shape[-1], dtype=a.dtype) * 4


def _np_spd(a):
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1], dtype=a.dtype) * 3


def _np_diag(d):
    out = np.zeros(d.shape + d.shape[-1:], d.dtype)
    i = np.arange(d.shape[-1])
    out[..., i, i] = d
    return out


def _np_set_diag(x, d):
    out = x.copy()
    i = np.arange(d.shape[-1])
    out[..., i, i] = d
    return out


def _np_band(x, lower, upper):
    m, n = x.shape[-2:]
    row, col = np.arange(m)[:, None], np.arange(n)[None]
    keep = ((lower < 0) | (row - col <= lower)) & ((upper < 0) | (col - row <= upper))
    return np.where(keep, x, 0).astype(x.dtype)


def _case(name, ops, fn, ref, shapes, **kw):
    kw.setdefault("low", -1.0)
    kw.setdefault("high", 1.0)
    kw.setdefault("dtypes", F)
    kw.setdefault("rtol", 1e-4)
    kw.setdefault("atol", 1e-5)
    return OpCase(name, ops, fn, ref, shapes, **kw)


CASES = [
    _case("diag", ["MatrixDiagV3", "MatrixDiagPartV3"], linalg.diag, _np_diag, [(2, 3)],
          dtypes=F + ("int32",)),
    _case("diag_part", ["MatrixDiagPartV3", "MatrixSetDiagV3"], linalg.diag_part,
          lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy(), [(2, 3, 4)], dtypes=F + ("int32",)),
    _case("set_diag", ["MatrixSetDiagV3", "MatrixDiagPartV3"], linalg.set_diag, _np_set_diag,
          [(2, 4, 3), (2, 3)]),
    _case("band_part", ["MatrixBandPart"], lambda x: linalg.band_part(x, 1, 0),
          lambda x: _np_band(x, 1, 0), [(2, 3, 4)], dtypes=F + ("int32",)),
    _case("band_part_upper", ["MatrixBandPart"], lambda x: linalg.band_part(x, 0, -1),
          lambda x: _np_band(x, 0, -1), [(4, 3)]),
    _case("trace", ["MatrixDiagPartV3", "Sum"], linalg.trace,
          lambda x: np.trace(x, axis1=-2, axis2=-1).astype(x.dtype), [(2, 3, 3)]),
    _case("inv", ["MatrixInverse"], lambda a: linalg.inv(_well_conditioned(a)),
          lambda a: np.linalg.inv(_np_well(a)), [(2, 3, 3)]),
    _case("inv_adjoint", ["MatrixInverse"], lambda a: linalg.inv(_well_conditioned(a), adjoint=True),
          lambda a: np.linalg.inv(np.swapaxes(_np_well(a), -1, -2)), [(3, 3)]),
    _case("det", ["MatrixDeterminant", "MatrixInverse"], linalg.det,
          lambda a: np.linalg.det(a).astype(a.dtype), [(2, 3, 3)]),
    _case("slogdet", ["MatrixDeterminant", "Log"], lambda a: linalg.slogdet(_well_conditioned(a)),
          lambda a: np.linalg.slogdet(_np_well(a)), [(2, 2)]),
    _case("solve", ["MatrixSolve"], lambda a, b: linalg.solve(_well_conditioned(a), b),
          lambda a, b: np.linalg.solve(_np_well(a), b), [(2, 3, 3), (2, 3, 2)]),
    _case("solve_adjoint", ["MatrixSolve"],
          lambda a, b: linalg.solve(_well_conditioned(a), b, adjoint=True),
          lambda a, b: np.linalg.solve(np.swapaxes(_np_well(a), -1, -2), b), [(3, 3), (3, 1)]),
    _case("cholesky", ["Cholesky", "MatrixInverse", "MatrixBandPart", "MatrixSetDiagV3"],
          lambda a: linalg.cholesky(_spd(a)), lambda a: np.linalg.cholesky(_np_spd(a)),
          [(2, 3, 3)]),
    _case("logdet", ["Cholesky", "Log"], lambda a: linalg.logdet(_spd(a)),
          lambda a: np.linalg.slogdet(_np_spd(a))[1].astype(a.dtype), [(3, 3)]),
    _case("matvec", ["MatMul"], linalg.matvec, lambda a, b: (a @ b[..., None])[..., 0],
          [(2, 3, 4), (2, 4)]),
    _case("matrix_transpose", ["Transpose"], linalg.matrix_transpose,
          lambda a: np.swapaxes(a, -1, -2), [(2, 3, 4)]),
    _case("linalg_norm", ["Sqrt"], lambda a: linalg.norm(a, axis=[-2, -1]),
          lambda a: np.linalg.norm(a, axis=(-2, -1)), [(2, 3, 4)]),
    _case("global_norm", ["AddN", "Sqrt"], lambda a, b: linalg.global_norm([a, b]),
          lambda a, b: np.sqrt((a * a).sum() + (b * b).sum()).astype(a.dtype), [(2, 2), (3,)]),
]

_PARAMS = [pytest.param(c, d, id=f"{c.name}-{d}") for c in CASES for d in c.dtypes]


@pytest.mark.parametrize("case,dtype", _PARAMS)
def test_against_numpy(case, dtype):
    check_against_numpy(case, make_inputs(case, dtype, np.random.default_rng(1)))


_GRAD_CASES = [c for c in CASES if c.grad]


@pytest.mark.parametrize("case", _GRAD_CASES, ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(2)))


def _leaves(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_with_unknown_dims_equals_eager(case):
    """Inference accepts None dims; the graph computes what eager execution computes,
    gradients included."""
    arrays = make_inputs(case, "float64", np.random.default_rng(3))
    xs = [tl.constant(a) for a in arrays]
    signature = [tl.TensorSpec([None] * a.ndim, tl.as_dtype(a.dtype)) for a in arrays]

    def run(*ts):
        with tl.GradientTape() as tape:
            for t in ts:
                tape.watch(t)
            outs = _leaves(case.fn(*ts))
            total = tl.add_n([tl.reduce_sum(o * o) for o in outs])
        return outs, tape.gradient(total, list(ts))

    want_outs, want_grads = run(*xs)
    got_outs, got_grads = tl.function(run, input_signature=signature)(*xs)
    for g, w in zip(got_outs + got_grads, want_outs + want_grads):
        assert (g is None) == (w is None)
        if w is None:
            continue
        assert g.dtype is w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)


def test_cases_cover_every_linalg_op():
    mine = {name for name, d in REGISTRY.items() if d.kernel.__module__ == linalg.__name__}
    covered = {op for c in CASES for op in c.ops}
    assert mine <= covered, mine - covered
    for name in mine:
        assert REGISTRY[name].grad is not None, name
        assert any(name in c.ops and c.grad for c in CASES), f"no gradient check for {name}"


@given(n=st.integers(1, 4), batch=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_inverse_and_solve_agree_any_size(n, batch, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (batch, n, n)) + n * np.eye(n)
    b = rng.uniform(-1, 1, (batch, n, 2))
    x = linalg.solve(tl.constant(a), tl.constant(b)).numpy()
    np.testing.assert_allclose(x, np.linalg.inv(a) @ b, rtol=1e-8, atol=1e-10)
    assert linalg.det(tl.constant(a)).shape.as_list() == [batch]


def test_errors_name_the_op_and_the_problem():
    with pytest.raises(tl.errors.InvalidArgumentError, match="MatrixInverse.*not invertible"):
        linalg.inv(tl.zeros([2, 2]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="Cholesky.*not successful"):
        linalg.cholesky(tl.constant([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="square"):
        linalg.det(tl.ones([2, 3]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="rows"):
        linalg.solve(tl.eye(2), tl.ones([3, 1]))
    with pytest.raises(TypeError, match="floating"):
        linalg.inv(tl.constant([[1, 0], [0, 1]]))
    with pytest.raises(tl.errors.UnimplementedError, match="k=1"):
        linalg.diag_part(tl.ones([2, 2]), k=1)


def test_aliases_follow_tensorflow():
    assert linalg.matmul is tl.matmul and linalg.einsum is tl.einsum and linalg.eye is tl.eye
    assert linalg.transpose is linalg.matrix_transpose and linalg.norm is tl.norm
    np.testing.assert_allclose(linalg.l2_normalize(tl.constant([3.0, 4.0])).numpy(), [0.6, 0.8])
    assert linalg.adjoint(tl.ones([2, 3])).shape.as_list() == [3, 2]
