"""QR, SVD, eigh and LU (`trainlib.graph.ops.decompositions`): factors reproduce the input,
match numpy's up to the signs numpy leaves free, gradients by finite differences, traced == eager.

One table, CASES (unioned by the registry and strict-array-module tests); the rows return
sign-free quantities (reconstructions, |vectors|, values) so they can be checked exactly.
"""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops import decompositions as dec
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

F = ("float32", "float64")


def _sym(a):
    return (a + tl.transpose(a)) * 0.5 + tl.eye(a.shape[-1], dtype=a.dtype) * 3.0


def _np_sym(a):
    return (a + a.T) * 0.5 + np.eye(a.shape[-1], dtype=a.dtype) * 3


def _qr_parts(x):
    q, r = dec.qr(x)
    return q @ r, tl.abs(q), tl.abs(r)


def _np_qr_parts(x):
    q, r = np.linalg.qr(x)
    return x, np.abs(q), np.abs(r)


def _svd_parts(x):
    s, u, vh = dec.svd(x)
    return s, (u * s[None, :]) @ vh, tl.abs(u), tl.abs(vh)


def _np_svd_parts(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return s, x, np.abs(u), np.abs(vh)


def _eigh_parts(x):
    w, v = dec.eigh(_sym(x))
    return w, tl.abs(v)


def _np_eigh_parts(x):
    w, v = np.linalg.eigh(_np_sym(x))
    return w, np.abs(v)


def _case(name, ops, fn, ref, shapes, **kw):
    kw.setdefault("low", -1.0)
    kw.setdefault("high", 1.0)
    kw.setdefault("rtol", 1e-4)
    kw.setdefault("atol", 1e-5)
    return OpCase(name, ops, fn, ref, shapes, **kw)


CASES = [
    _case("qr", ["Qr"], _qr_parts, _np_qr_parts, [(4, 3)]),
    _case("qr_square_batch", ["Qr"], _qr_parts, lambda x: (x, np.abs(np.linalg.qr(x)[0]),
                                                           np.abs(np.linalg.qr(x)[1])), [(2, 3, 3)]),
    _case("qr_complete", ["Qr"], lambda x: tuple(tl.abs(t) for t in dec.qr(x, full_matrices=True)),
          lambda x: tuple(np.abs(t) for t in np.linalg.qr(x, mode="complete")), [(4, 2)],
          grad=False),
    _case("svd", ["Svd"], _svd_parts, _np_svd_parts, [(4, 3)]),
    _case("svd_wide", ["Svd"], _svd_parts, _np_svd_parts, [(2, 5)]),
    _case("svd_values", ["Svd"], lambda x: dec.svd(x, compute_uv=False),
          lambda x: np.linalg.svd(x, compute_uv=False), [(2, 4, 3)]),
    _case("eigh", ["SelfAdjointEigV2"], _eigh_parts, _np_eigh_parts, [(3, 3)]),
    _case("eigh_lower_triangle", ["SelfAdjointEigV2"],
          lambda x: dec.eigh(x + tl.eye(3, dtype=x.dtype) * 3.0)[0],
          lambda x: np.linalg.eigh(x + np.eye(3, dtype=x.dtype) * 3, UPLO="L")[0], [(3, 3)]),
    _case("lu", ["Lu"], lambda x: dec.lu(x)[0], lambda x: _np_lu(x)[0], [(2, 4, 4)], grad=False),
]


def _np_lu(x):
    """Doolittle with partial pivoting (LAPACK getrf's choices), batched."""
    a = x.astype(np.float64).copy()
    n = a.shape[-1]
    perm = np.tile(np.arange(n), a.shape[:-2] + (1,))
    for b in np.ndindex(a.shape[:-2]):
        for k in range(n):
            p = k + int(np.argmax(np.abs(a[b][k:, k])))
            a[b][[k, p]] = a[b][[p, k]]
            perm[b][[k, p]] = perm[b][[p, k]]
            a[b][k + 1:, k] /= a[b][k, k]
            a[b][k + 1:, k + 1:] -= np.outer(a[b][k + 1:, k], a[b][k, k + 1:])
    return a.astype(x.dtype), perm.astype(np.int32)


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c}-{d}") for c in CASES
                                        for d in c.dtypes])
def test_against_numpy(case, dtype):
    check_against_numpy(case, make_inputs(case, dtype, np.random.default_rng(1)))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(2)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_equals_eager(case):
    arrays = make_inputs(case, "float64", np.random.default_rng(3))
    eager = case.fn(*[tl.constant(a) for a in arrays])
    traced = tl.function(case.fn)(*[tl.constant(a) for a in arrays])
    for e, t in zip(eager if isinstance(eager, tuple) else (eager,),
                    traced if isinstance(traced, tuple) else (traced,)):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_lu_reconstructs_the_permuted_input():
    x = np.random.default_rng(4).uniform(-1, 1, (3, 4, 4))
    lu, perm = (t.numpy() for t in dec.lu(tl.constant(x)))
    lower = np.tril(lu, -1) + np.eye(4)
    upper = np.triu(lu)
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(x, perm[..., None], 1), atol=1e-12)
    np.testing.assert_array_equal(perm, _np_lu(x)[1])


def test_gradient_limits_are_explained():
    x = tl.constant(np.random.default_rng(5).uniform(-1, 1, (2, 4)))
    with tl.GradientTape() as tape:
        tape.watch(x)
        q, r = dec.qr(x)
        y = tl.reduce_sum(r)
    with pytest.raises(NotImplementedError, match="M >= N"):
        tape.gradient(y, x)


def test_non_float_input_is_rejected():
    with pytest.raises(TypeError, match="floating"):
        dec.svd(tl.constant([[1, 2], [3, 4]]))
