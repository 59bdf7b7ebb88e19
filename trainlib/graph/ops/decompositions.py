"""Matrix decompositions: QR, SVD, symmetric eigendecomposition and LU with partial pivoting.

Owns the OpDefs `Qr`, `Svd`, `SelfAdjointEigV2` and `Lu` and their public functions (used by
`tl.linalg` callers and `keras.ops.linalg`). Matrices are the last two dims, leading dims a batch.
Invariants: kernels use `xp.linalg` (numpy or cupy) except `Lu`, which is written on `xp`
(LAPACK getrf's pivoting: the largest magnitude in the column); gradients follow TensorFlow's
rules: `Qr` for reduced factors with M >= N, `Svd` for reduced factors (or singular values
only), `SelfAdjointEigV2` reading the lower triangle only, as the forward kernel does.
"""
from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop, spec
from . import array as _array
from . import complex as _complex
from . import linalg as _linalg
from . import math as _math

__all__ = ["qr", "svd", "eigh", "lu"]


def _matrix(x, name):
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    if not x.dtype.is_floating:
        raise TypeError(f"{name} needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"{name} needs matrices (rank >= 2), got shape {x.shape}")
    return x


def _t(x):
    r = x.shape.rank
    return _array.transpose(x, list(range(r - 2)) + [r - 1, r - 2])


def _mm(a, b):
    return _math.matmul(a, b)


def _zeros_if_none(g, like):
    return _array.zeros_like(like) if g is None else g


# ------------------------------------------------------------------ QR

def _qr_infer(x, full_matrices=False):
    if not x.dtype.is_floating:
        raise TypeError(f"Qr needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, x.dtype)
    batch, m, n = list(x.shape)[:-2], x.shape[-2], x.shape[-1]
    k = None if m is None or n is None else min(m, n)
    qc = m if full_matrices else k
    rr = m if full_matrices else k
    return spec(batch + [m, qc], x.dtype), spec(batch + [rr, n], x.dtype)


def _qr_grad(op, dq, dr):
    # TensorFlow's _QrGrad (reduced factors, M >= N)
    x = op.inputs[0]
    q, r = op.outputs
    m, n = x.shape[-2], x.shape[-1]
    if op.attrs["full_matrices"] and m != n or m is None or n is None or m < n:
        raise NotImplementedError("the gradient of qr is defined for reduced factors of matrices "
                                  f"with M >= N (static), got shape {x.shape}")
    dq, dr = _zeros_if_none(dq, q), _zeros_if_none(dr, r)
    qdq = _mm(_t(q), dq)
    qdq_ = qdq - _t(qdq)
    rdr = _mm(r, _t(dr))
    rdr_ = rdr - _t(rdr)
    tril = _linalg.band_part(qdq_ + rdr_, -1, 0)

    def tri_solve(a):  # a R^-T, by solving R Y = a^T
        return _t(_linalg.solve(r, _t(a)))
    return (_mm(q, dr + tri_solve(tril)) + tri_solve(dq - _mm(q, qdq)),)


@defop("Qr", infer=_qr_infer, grad=_qr_grad, num_outputs=2)
def _qr(xp, x, full_matrices=False):
    q, r = xp.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


def qr(x, full_matrices=False):
    """(q, r) with x = q @ r, q orthonormal columns, r upper triangular.

    Example:
        >>> q, r = tl.graph.ops.decompositions.qr(tl.eye(2))
        >>> r.shape
        TensorShape([2, 2])
    """
    return apply("Qr", _matrix(x, "qr"), full_matrices=bool(full_matrices))


# ------------------------------------------------------------------ SVD

def _svd_infer(x, full_matrices=False, compute_uv=True):
    if not x.dtype.is_floating:
        raise TypeError(f"Svd needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, x.dtype), spec(None, x.dtype)
    batch, m, n = list(x.shape)[:-2], x.shape[-2], x.shape[-1]
    k = None if m is None or n is None else min(m, n)
    s = spec(batch + [k], x.dtype)
    if not compute_uv:
        return s, spec([0], x.dtype), spec([0], x.dtype)
    return (s, spec(batch + [m, m if full_matrices else k], x.dtype),
            spec(batch + [n if full_matrices else k, n], x.dtype))


def _svd_grad(op, ds, du, dvh):
    x = op.inputs[0]
    s, u, vh = op.outputs
    if not op.attrs["compute_uv"]:
        # singular values only: recompute the vectors (their gradient is not needed)
        _, u, vh = apply("Svd", x, full_matrices=False, compute_uv=True)
        return (_mm(u * _array.expand_dims(ds, -2), vh),)
    m, n = x.shape[-2], x.shape[-1]
    if op.attrs["full_matrices"] and m != n:
        raise NotImplementedError("the gradient of svd with full_matrices=True is defined for "
                                  f"square matrices only, got shape {x.shape}")
    v = _t(vh)
    ds = _zeros_if_none(ds, s)
    du = _zeros_if_none(du, u)
    dv = _t(_zeros_if_none(dvh, vh))
    s2 = _math.square(s)
    diff = _array.expand_dims(s2, -2) - _array.expand_dims(s2, -1)  # s_j^2 - s_i^2
    k = s.shape[-1]
    eye = _array.eye(k, dtype=x.dtype)
    f = _math.divide_no_nan(1 - eye, diff + eye)
    s_row = _array.expand_dims(s, -2)
    s_col = _array.expand_dims(s, -1)
    utdu = _mm(_t(u), du)
    vtdv = _mm(_t(v), dv)
    inner = (f * (utdu - _t(utdu))) * s_row + eye * _array.expand_dims(ds, -1) + \
        s_col * (f * (vtdv - _t(vtdv)))
    out = _mm(_mm(u, inner), vh)
    s_inv = _math.divide_no_nan(_array.ones_like(s), s)
    # the parts of du, dv outside the spans of u, v (zero for square matrices)
    proj_u = du - _mm(u, utdu)
    proj_v = dv - _mm(v, vtdv)
    out = out + _mm(proj_u * _array.expand_dims(s_inv, -2), vh)
    return (out + _mm(u * _array.expand_dims(s_inv, -2), _t(proj_v)),)


@defop("Svd", infer=_svd_infer, grad=_svd_grad, num_outputs=3)
def _svd(xp, x, full_matrices=False, compute_uv=True):
    if not compute_uv:
        s = xp.linalg.svd(x, compute_uv=False)
        empty = xp.zeros((0,), dtype=x.dtype)
        return s.astype(x.dtype, copy=False), empty, empty
    u, s, vh = xp.linalg.svd(x, full_matrices=full_matrices)
    return s.astype(x.dtype, copy=False), u.astype(x.dtype, copy=False), vh.astype(x.dtype, copy=False)


def svd(x, full_matrices=False, compute_uv=True):
    """Singular values `s` and, if compute_uv, (s, u, vh) with x = u @ diag(s) @ vh.

    Example:
        >>> s = tl.graph.ops.decompositions.svd(tl.eye(2), compute_uv=False)
        >>> s.numpy()
        array([1., 1.], dtype=float32)
    """
    out = apply("Svd", _matrix(x, "svd"), full_matrices=bool(full_matrices),
                compute_uv=bool(compute_uv))
    return out if compute_uv else out[0]


# ------------------------------------------------------------------ symmetric eigendecomposition

def _eigh_infer(x):
    if not x.dtype.is_floating:
        raise TypeError(f"SelfAdjointEigV2 needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, x.dtype)
    if x.shape[-1] is not None and x.shape[-2] is not None and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"eigh needs square matrices, got shape {x.shape}")
    return spec(list(x.shape)[:-1], x.dtype), spec(x.shape, x.dtype)


def _eigh_grad(op, dw, dv):
    w, v = op.outputs
    dw = _zeros_if_none(dw, w)
    n = w.shape[-1]
    eye = _array.eye(n, dtype=w.dtype)
    diff = _array.expand_dims(w, -2) - _array.expand_dims(w, -1)  # w_j - w_i
    f = _math.divide_no_nan(1 - eye, diff + eye)
    inner = eye * _array.expand_dims(dw, -1)
    if dv is not None:
        inner = inner + f * _mm(_t(v), dv)
    g = _mm(_mm(v, inner), _t(v))
    # the kernel reads the lower triangle only: fold the upper part's sensitivity onto it
    sym = g + _t(g)
    return (_linalg.band_part(sym, -1, 0) - eye * sym * 0.5,)


@defop("SelfAdjointEigV2", infer=_eigh_infer, grad=_eigh_grad, num_outputs=2)
def _eigh(xp, x):
    w, v = xp.linalg.eigh(x, UPLO="L")
    return w.astype(x.dtype, copy=False), v.astype(x.dtype, copy=False)


def eigh(x):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric matrices (lower triangle read).

    Example:
        >>> w, v = tl.graph.ops.decompositions.eigh(tl.eye(2))
        >>> w.numpy()
        array([1., 1.], dtype=float32)
    """
    return apply("SelfAdjointEigV2", _matrix(x, "eigh"))


# ------------------------------------------------------------------ LU

def _lu_infer(x):
    if not x.dtype.is_floating:
        raise TypeError(f"Lu needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, _dt.int32)
    return spec(x.shape, x.dtype), spec(list(x.shape)[:-1], _dt.int32)


@defop("Lu", infer=_lu_infer, differentiable=False, num_outputs=2)
def _lu(xp, x):
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"lu needs square matrices, got shape {list(x.shape)}")
    n = x.shape[-1]
    batch = x.shape[:-2]
    a = x.reshape((-1, n, n)).copy()
    perm = xp.tile(xp.arange(n, dtype=xp.int32), (a.shape[0], 1))
    rows = xp.arange(a.shape[0])
    for k in range(n):
        p = k + xp.argmax(xp.abs(a[:, k:, k]), axis=1)
        a_k, a_p = a[rows, k].copy(), a[rows, p].copy()
        a[rows, k], a[rows, p] = a_p, a_k
        perm_k, perm_p = perm[rows, k].copy(), perm[rows, p].copy()
        perm[rows, k], perm[rows, p] = perm_p, perm_k
        pivot = a[:, k, k]
        safe = xp.where(pivot == 0, 1, pivot)
        a[:, k + 1:, k] = a[:, k + 1:, k] / safe[:, None]
        a[:, k + 1:, k + 1:] -= a[:, k + 1:, k:k + 1] * a[:, k:k + 1, k + 1:]
    return a.reshape(x.shape), perm.reshape(batch + (n,))


def lu(x):
    """(lu, perm): L (unit lower, below the diagonal) and U packed in one matrix, and the row
    permutation with x[perm] = L @ U (TensorFlow's `tf.linalg.lu`)."""
    return apply("Lu", _matrix(x, "lu"))


# ------------------------------------------------------------------ tf.linalg compositions
# TensorFlow's forms of the decompositions above and the solvers built on them; keras.ops.linalg
# calls these too (one definition each).

__all__ += ["svd_tf", "eigvalsh", "eigvals", "pinv", "matrix_rank", "lstsq", "triangular_solve",
            "cholesky_solve", "tensor_diag", "tensor_diag_part", "normalize", "cross"]


def svd_tf(tensor, full_matrices=False, compute_uv=True, name=None):
    """`tf.linalg.svd`: s, or (s, u, v) with tensor = u @ diag(s) @ v^T (v, not v^T).

    Example:
        >>> s, u, v = tl.linalg.svd(tl.eye(2))
        >>> s.numpy()
        array([1., 1.], dtype=float32)
    """
    out = svd(tensor, full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return out
    s, u, vh = out
    return s, u, _t(vh)


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of symmetric matrices.

    Example:
        >>> tl.linalg.eigvalsh([[2.0, 0.0], [0.0, 1.0]]).numpy()
        array([1., 2.], dtype=float32)
    """
    return eigh(tensor)[0]


def eigvals(tensor, name=None):
    """The eigenvalues of square real matrices, complex64 (no gradient)."""
    return _complex.eig(tensor)[0]


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse (singular values <= rcond * max(s) are dropped; default
    rcond 10 * max(M, N) * eps, as TensorFlow and Keras).

    Example:
        >>> tl.linalg.pinv([[2.0, 0.0], [0.0, 0.0]]).numpy()
        array([[0.5, 0. ],
               [0. , 0. ]], dtype=float32)
    """
    x = _matrix(a, "pinv")
    m, n = x.shape[-2], x.shape[-1]
    if rcond is None:
        if m is None or n is None:
            raise ValueError("pinv needs static matrix dims for the default rcond; pass rcond")
        rcond = 10.0 * max(m, n) * float(_finfo_eps(x.dtype))
    s, u, vh = svd(x, full_matrices=False)
    cutoff = _math.cast(rcond, x.dtype) * _math.reduce_max(s, -1, keepdims=True)
    s_inv = _math.where(_math.greater(s, cutoff), _math.divide_no_nan(_array.ones_like(s), s),
                        _array.zeros_like(s))
    return _mm(_t(vh) * _array.expand_dims(s_inv, -2), _t(u))


def _finfo_eps(dtype):
    return {_dt.float16: 2.0 ** -10, _dt.float32: 2.0 ** -23, _dt.float64: 2.0 ** -52}[dtype]


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above tol (default max(s) * max(M, N) * eps), int32.

    Example:
        >>> int(tl.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]]))
        1
    """
    x = _matrix(a, "matrix_rank")
    s = svd(x, compute_uv=False)
    if tol is None:
        m, n = x.shape[-2], x.shape[-1]
        tol = _math.reduce_max(s, -1, keepdims=True) * _math.cast(
            max(m, n) * _finfo_eps(x.dtype), x.dtype)
    else:
        tol = _math.cast(tol, x.dtype)
    return _math.reduce_sum(_math.cast(_math.greater(s, tol), _dt.int32), -1)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution x of matrix @ x = rhs, from the (regularized) normal equations
    (A^T A + l2 I) x = A^T b, TensorFlow's fast path; needs full column rank when l2 is 0.

    Example:
        >>> tl.linalg.lstsq([[1.0], [1.0]], [[1.0], [3.0]]).numpy()
        array([[2.]], dtype=float32)
    """
    a = _matrix(matrix, "lstsq")
    b = convert_to_tensor(rhs, dtype=a.dtype)
    n = a.shape[-1]
    gram = _mm(_t(a), a)
    if l2_regularizer:
        gram = gram + _math.cast(l2_regularizer, a.dtype) * _array.eye(n, dtype=a.dtype)
    return _linalg.solve(gram, _mm(_t(a), b))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """x with matrix @ x = rhs for triangular matrix (only its lower or upper triangle is read;
    `adjoint` solves with matrix^T).

    Example:
        >>> tl.linalg.triangular_solve([[2.0, 0.0], [1.0, 1.0]], [[2.0], [3.0]]).numpy()
        array([[1.],
               [2.]], dtype=float32)
    """
    a = _matrix(matrix, "triangular_solve")
    b = convert_to_tensor(rhs, dtype=a.dtype)
    tri = _linalg.band_part(a, -1, 0) if lower else _linalg.band_part(a, 0, -1)
    return _linalg.solve(tri, b, adjoint=adjoint)


def cholesky_solve(chol, rhs, name=None):
    """x with A @ x = rhs, given the lower Cholesky factor of A (A = chol @ chol^T).

    Example:
        >>> tl.linalg.cholesky_solve([[2.0, 0.0], [0.0, 1.0]], [[4.0], [1.0]]).numpy()
        array([[1.],
               [1.]], dtype=float32)
    """
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, y, lower=True, adjoint=True)


def tensor_diag(diagonal, name=None):
    """The tensor of rank 2k with `diagonal` (rank k) on its diagonal: out[i..., i...] = d[i...].

    Example:
        >>> tl.linalg.tensor_diag([1.0, 2.0]).numpy()
        array([[1., 0.],
               [0., 2.]], dtype=float32)
    """
    d = convert_to_tensor(diagonal)
    if not d.shape.is_fully_defined():
        raise ValueError(f"tensor_diag needs a static shape, got {d.shape}")
    dims = list(d.shape)
    size = 1
    for v in dims:
        size *= v
    flat = _linalg.diag(_array.reshape(d, [size]))
    return _array.reshape(flat, dims + dims)


def tensor_diag_part(input, name=None):  # noqa: A002 -- TensorFlow's name
    """The diagonal of a rank-2k tensor whose shape is dims + dims: out[i...] = x[i..., i...].

    Example:
        >>> tl.linalg.tensor_diag_part([[1.0, 5.0], [6.0, 2.0]]).numpy()
        array([1., 2.], dtype=float32)
    """
    x = convert_to_tensor(input)
    rank = x.shape.rank
    if rank is None or rank % 2 or not x.shape.is_fully_defined() or \
            list(x.shape)[: rank // 2] != list(x.shape)[rank // 2:]:
        raise ValueError(f"tensor_diag_part needs a static shape of the form dims + dims, got "
                         f"{x.shape}")
    dims = list(x.shape)[: rank // 2]
    size = 1
    for v in dims:
        size *= v
    return _array.reshape(_linalg.diag_part(_array.reshape(x, [size, size])), dims)


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 -- TensorFlow's name
    """(tensor / norm, norm) with `tl.norm`'s orders and axes.

    Example:
        >>> n, norm = tl.linalg.normalize([3.0, 4.0])
        >>> n.numpy(), norm.numpy()
        (array([0.6, 0.8], dtype=float32), array([5.], dtype=float32))
    """
    x = convert_to_tensor(tensor, dtype_hint=_dt.float32)
    norm = _math.norm(x, ord=ord, axis=axis, keepdims=True)
    return x / norm, norm


def cross(a, b, name=None):
    """The cross product of 3-vectors along the last axis (a and b broadcast).

    Example:
        >>> tl.linalg.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]).numpy()
        array([0., 0., 1.], dtype=float32)
    """
    a, b = _math.convert_same_dtype("Cross", (a, b))
    for v in (a, b):
        if v.shape.rank is not None and v.shape[-1] not in (3, None):
            raise ValueError(f"cross needs vectors of 3 elements on the last axis, got {v.shape}")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return _array.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


# ------------------------------------------------------------------ from an LU factorization

__all__ += ["lu_reconstruct", "lu_solve", "lu_matrix_inverse"]


def _lu_factors(lower_upper):
    lu_ = _matrix(lower_upper, "lu")
    n = lu_.shape[-1]
    eye = _array.eye(n, dtype=lu_.dtype)
    lower = _linalg.band_part(lu_, -1, 0) - _linalg.band_part(lu_, 0, 0) + eye
    return lower, _linalg.band_part(lu_, 0, -1)


def _rows(x, perm):
    """x[..., perm[i], :] for each i (perm [..., n])."""
    batch = perm.shape.rank - 1
    return _array.gather(x, perm, axis=batch, batch_dims=batch)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix whose `lu` is (lower_upper, perm): P^T L U.

    Example:
        >>> a = tl.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> tl.linalg.lu_reconstruct(*tl.linalg.lu(a)).numpy()
        array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    lower, upper = _lu_factors(lower_upper)
    perm = convert_to_tensor(perm)
    return _rows(_mm(lower, upper), _array.argsort(perm, axis=-1))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """x with A @ x = rhs, A given by its `lu` factorization (two triangular solves).

    Example:
        >>> a = tl.constant([[2.0, 1.0], [1.0, 3.0]])
        >>> tl.linalg.lu_solve(*tl.linalg.lu(a), [[3.0], [4.0]]).numpy()
        array([[1.],
               [1.]], dtype=float32)
    """
    lower, upper = _lu_factors(lower_upper)
    rhs = convert_to_tensor(rhs, dtype=lower.dtype)
    y = triangular_solve(lower, _rows(rhs, convert_to_tensor(perm)), lower=True)
    return triangular_solve(upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of A, given by its `lu` factorization."""
    lu_ = _matrix(lower_upper, "lu_matrix_inverse")
    n = lu_.shape[-1]
    eye = _array.eye(n, dtype=lu_.dtype)
    if lu_.shape.rank > 2:
        eye = _array.broadcast_to(eye, _array.shape(lu_))
    return lu_solve(lu_, perm, eye)
