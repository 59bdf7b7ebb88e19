"""`trainlib.keras.ops.linalg`: Keras 3's linear-algebra ops over trainlib's linalg ops.

Owns: Keras's signatures for cholesky, det, inv, solve, solve_triangular, qr, svd, eigh, lu_factor,
norm (NumPy's vector and matrix orders), lstsq, pinv, matrix_rank, cholesky_inverse and jvp.
Invariants: compositions of trainlib ops only (decompositions are the OpDefs of
`trainlib.graph.ops.decompositions`); `jvp` is the transpose of a vector-Jacobian product
(two nested tapes), exact for any differentiable function; `eig` returns complex64 values.
"""
import numpy as _np

from ...graph import dtypes as _dt
from ...graph.autodiff import GradientTape as _Tape
from ...graph.nest import flatten as _flatten_nest, pack_as as _pack_as
from ...graph.ops import array as _a
from ...graph.ops import complex as _cx
from ...graph.ops import decompositions as _dec
from ...graph.ops import linalg as _la
from ...graph.ops import math as _m
import functools as _functools

from ._convert import floating as _float, promote as _promote, tensor as _t

__all__ = ["cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "lstsq", "lu_factor",
           "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular", "svd"]


def _is_half(a):
    d = getattr(a, "dtype", None)
    return d is not None and str(getattr(d, "name", d)) == "float16"


def _half_in_float32(fn):
    """fn computed in float32 for float16 inputs, its floating results cast back to float16
    (the array modules' linalg kernels have no float16)."""
    @_functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if not args or not _is_half(args[0]):
            return fn(*args, **kwargs)
        out = fn(*[_m.cast(_t(a), _dt.float32) if _is_half(a) else a for a in args], **kwargs)
        return _cast_floats(out, _dt.float16)
    return wrapped


def _cast_floats(out, dtype):
    if isinstance(out, (tuple, list)):
        return type(out)(_cast_floats(o, dtype) for o in out)
    return _m.cast(out, dtype) if out.dtype.is_floating else out


def _swap(x):
    r = x.shape.rank
    return _a.transpose(x, list(range(r - 2)) + [r - 1, r - 2])


@_half_in_float32
def cholesky(x, upper=False):
    """The Cholesky factor of positive-definite matrices (lower, or upper if asked)."""
    low = _la.cholesky(_float(x))
    return _swap(low) if upper else low


@_half_in_float32
def cholesky_inverse(x, upper=False):
    """The inverse of A from its Cholesky factor x (A = L L^T, or U^T U if upper)."""
    f = _float(x)
    n = f.shape[-1]
    inv_f = solve_triangular(f, _a.eye(n, dtype=f.dtype), lower=not upper)
    return _m.matmul(inv_f, inv_f, transpose_b=True) if upper else \
        _m.matmul(inv_f, inv_f, transpose_a=True)


@_half_in_float32
def det(x):
    """The determinant of square matrices."""
    return _la.det(_float(x))


@_half_in_float32
def inv(x):
    """The inverse of square matrices."""
    return _la.inv(_float(x))


@_half_in_float32
def solve(a, b):
    """x with a @ x = b (b may be a vector: one rank less than a)."""
    a, b = _promote(a, b, floating=True)
    if b.shape.rank == a.shape.rank - 1:
        return _a.squeeze(_la.solve(a, _a.expand_dims(b, -1)), [-1])
    return _la.solve(a, b)


@_half_in_float32
def solve_triangular(a, b, lower=False):
    """x with a @ x = b for triangular a (only its lower or upper triangle is read)."""
    a, b = _promote(a, b, floating=True)
    if b.shape.rank == a.shape.rank - 1:
        return _a.squeeze(_dec.triangular_solve(a, _a.expand_dims(b, -1), lower=lower), [-1])
    return _dec.triangular_solve(a, b, lower=lower)


@_half_in_float32
def qr(x, mode="reduced"):
    """(q, r) with x = q @ r; mode 'reduced' or 'complete'."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr mode must be 'reduced' or 'complete', got {mode!r}")
    return tuple(_dec.qr(_float(x), full_matrices=mode == "complete"))


@_half_in_float32
def svd(x, full_matrices=True, compute_uv=True):
    """(u, s, vh) with x = u @ diag(s) @ vh, or s only (compute_uv=False)."""
    out = _dec.svd(_float(x), full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return out
    s, u, vh = out
    return u, s, vh


def eig(x):
    """(eigenvalues, eigenvectors) of square real matrices, complex64 (no gradient)."""
    return tuple(_cx.eig(_m.cast(_float(x), _dt.float32)))


@_half_in_float32
def eigh(x):
    """(eigenvalues ascending, eigenvectors) of symmetric matrices."""
    return tuple(_dec.eigh(_float(x)))


@_half_in_float32
def lu_factor(x):
    """(lu, pivots) of square matrices: L and U packed, and the row permutation (as Keras on
    TensorFlow: the inverse of the permutation with x[p] = L @ U)."""
    lu, perm = _dec.lu(_float(x))
    return lu, _a.argsort(perm)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 -- NumPy's name
    """Vector norms (one axis) and matrix norms (two axes), NumPy's `ord` values."""
    x = _float(x)
    rank = x.shape.rank
    if axis is None:
        axis = tuple(range(rank))
    elif isinstance(axis, int):
        axis = (axis,)
    axis = tuple(int(a) % rank for a in axis)
    if len(axis) == 1:
        a = axis[0]
        if ord is None or ord == 2:
            return _m.sqrt(_m.reduce_sum(x * x, a, keepdims))
        if ord == float("inf"):
            return _m.reduce_max(_m.abs(x), a, keepdims)
        if ord == float("-inf"):
            return _m.reduce_min(_m.abs(x), a, keepdims)
        if ord == 0:
            return _m.reduce_sum(_m.cast(_m.not_equal(x, 0), x.dtype), a, keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid `ord` argument for vector norm: {ord!r}")
        p = _m.cast(ord, x.dtype)
        return _m.pow(_m.reduce_sum(_m.pow(_m.abs(x), p), a, keepdims), 1 / p)
    if len(axis) != 2:
        raise ValueError(f"norm needs one or two axes, got {axis}")
    row, col = axis
    if ord is None or ord == "fro":
        return _m.sqrt(_m.reduce_sum(x * x, list(axis), keepdims))
    if ord in (1, -1):
        red = _m.reduce_max if ord == 1 else _m.reduce_min
        c = col - 1 if not keepdims and col > row else col
        return red(_m.reduce_sum(_m.abs(x), row, keepdims), c, keepdims)
    if ord in (float("inf"), float("-inf")):
        red = _m.reduce_max if ord > 0 else _m.reduce_min
        r = row - 1 if not keepdims and row > col else row
        return red(_m.reduce_sum(_m.abs(x), col, keepdims), r, keepdims)
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(rank) if i not in axis]
        s = _dec.svd(_a.transpose(x, rest + [row, col]), compute_uv=False)
        out = _m.reduce_sum(s, -1) if ord == "nuc" else \
            _m.reduce_max(s, -1) if ord == 2 else _m.reduce_min(s, -1)
        if keepdims:
            for a in sorted(axis):
                out = _a.expand_dims(out, a)
        return out
    raise ValueError(f"Invalid `ord` argument for matrix norm: {ord!r}")


@_half_in_float32
def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse (singular values <= rcond * max dropped): tl.linalg.pinv."""
    return _dec.pinv(_float(x), rcond=rcond)


@_half_in_float32
def matrix_rank(x, tol=None):
    """The number of singular values above tol (default: max(s) * max(M, N) * eps), int32:
    tl.linalg.matrix_rank."""
    return _dec.matrix_rank(_float(x), tol=tol)


@_half_in_float32
def lstsq(a, b, rcond=None):
    """The least-squares solution x of a @ x = b (a 2-D, b 1-D or 2-D), by SVD."""
    a, b = _promote(a, b, floating=True)
    if a.shape.rank != 2:
        raise TypeError(f"{a.shape.rank}-dimensional array given. Array must be two-dimensional")
    vector = b.shape.rank == 1
    if vector:
        b = _a.expand_dims(b, 1)
    m, n = a.shape
    eps = float(_np.finfo(a.dtype.np).eps)
    rcond = eps * max(n, m) if rcond is None or rcond < 0 else rcond
    s, u, vh = _dec.svd(a, full_matrices=False)
    cutoff = _m.cast(rcond, a.dtype) * s[0]
    keep = _m.greater_equal(s, cutoff)
    s_inv = _m.where(keep, _m.divide_no_nan(_a.ones_like(s), s), _a.zeros_like(s))
    x = _m.matmul(vh, _a.expand_dims(s_inv, 1) * _m.matmul(u, b, transpose_a=True), transpose_a=True)
    return _a.reshape(x, [-1]) if vector else x


def jvp(fun, primals, tangents, has_aux=False):
    """(outputs, tangents of the outputs) of `fun(*primals)` in the direction `tangents`.

    Forward mode as the transpose of reverse mode: with u a dummy cotangent,
    g(u) = J^T u is linear in u, so J t = d<g(u), t>/du.
    """
    flat_p = [_t(p) for p in _flatten_nest(primals)]
    flat_t = [_m.cast(_t(t), p.dtype) for t, p in zip(_flatten_nest(tangents), flat_p)]
    with _Tape(persistent=True) as outer:
        with _Tape(persistent=True) as inner:
            for p in flat_p:
                inner.watch(p)
            result = fun(*_pack_as(primals, flat_p))
            out, aux = result if has_aux else (result, None)
            flat_o = [_t(o) for o in _flatten_nest(out)]
            us = [_a.zeros_like(o) for o in flat_o]
            for u in us:
                outer.watch(u)
            total = None
            for o, u in zip(flat_o, us):
                term = _m.reduce_sum(o * u)
                total = term if total is None else total + term
        grads = inner.gradient(total, flat_p)
        dot = None
        for g, t in zip(grads, flat_t):
            if g is None:
                continue
            term = _m.reduce_sum(g * t)
            dot = term if dot is None else dot + term
    if dot is None:
        tangents_out = [_a.zeros_like(o) for o in flat_o]
    else:
        tangents_out = [_a.zeros_like(o) if g is None else g
                        for g, o in zip(outer.gradient(dot, us), flat_o)]
    packed = _pack_as(out, tangents_out)
    return (out, packed, aux) if has_aux else (out, packed)
