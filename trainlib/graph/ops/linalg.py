"""Linear-algebra ops (`tl.linalg`): diagonals, band parts, inverse, determinant, solve, Cholesky.

Owns: the OpDefs and public functions of `tl.linalg`, and its aliases of ops defined
elsewhere (matmul, einsum, eye, norm, l2_normalize). Matrices are the last two dims;
leading dims are a batch. Invariants: kernels use `xp.linalg` only (numpy or cupy);
inputs are floating; a singular or non-positive-definite input is an
InvalidArgumentError with TensorFlow's message (on numpy; cupy returns NaN/inf without
checking, as TensorFlow's GPU kernels may); diag/diag_part/set_diag cover k=0 only.
"""
from .. import dtypes as _dt
from ..errors import InvalidArgumentError, UnimplementedError
from ..op import apply, convert_same_dtype, convert_to_tensor, defop, broadcast_shapes, spec
from . import array as _array
from . import math as _math
from .array import eye  # noqa: F401 -- tl.linalg.eye, as TensorFlow
from .math import global_norm  # noqa: F401 -- tl.linalg.global_norm
from .nn import l2_normalize  # noqa: F401 -- tl.linalg.l2_normalize, as TensorFlow
from .math import einsum, matmul, norm, tensordot  # noqa: F401 -- TensorFlow's linalg aliases

__all__ = ["matmul", "matvec", "matrix_transpose", "transpose", "adjoint", "einsum", "tensordot",
           "eye", "norm", "global_norm", "l2_normalize", "diag", "diag_part", "set_diag",
           "band_part", "trace", "inv", "det", "logdet", "slogdet", "solve", "cholesky"]


# ------------------------------------------------------------------ helpers

def _matrix_spec(name, x, square=False):
    """Checks a [..., M, N] floating spec (square if asked); returns (batch dims, M, N)."""
    if not x.dtype.is_floating:
        raise TypeError(f"{name} needs a floating tensor, got {x.dtype.name}")
    if x.shape.rank is None:
        return None, None, None
    if x.shape.rank < 2:
        raise ValueError(f"{name} needs a tensor of rank >= 2 (matrices in the last two dims), "
                         f"got shape {x.shape}")
    m, n = x.shape[-2], x.shape[-1]
    if square and m is not None and n is not None and m != n:
        raise ValueError(f"{name} needs square matrices, got shape {x.shape}")
    return list(x.shape)[:-2], m, n


def _float_matrix(x, op_name):
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    if not x.dtype.is_floating:
        raise TypeError(f"{op_name}: needs a floating tensor, got {x.dtype.name}")
    return x


def _check_square(x):
    """For kernels: ValueError (before any numpy error) unless x holds square matrices."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"needs square matrices in the last two dims, got shape {list(x.shape)}")


def _only_main_diagonal(k, op_name):
    if k != 0:
        raise UnimplementedError(f"{op_name} supports the main diagonal only (k=0), got k={k}",
                                 op=op_name)


# ------------------------------------------------------------------ transposes, matvec

def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dims of `a` (`tl.linalg.matrix_transpose`, alias `transpose`).

    Example:
        >>> tl.linalg.matrix_transpose(tl.ones([2, 3, 4])).shape
        TensorShape([2, 4, 3])
    """
    a = convert_to_tensor(a)
    rank = a.shape.rank
    if rank is None:
        raise ValueError("matrix_transpose needs a tensor of known rank")
    if rank < 2:
        raise ValueError(f"matrix_transpose needs a tensor of rank >= 2, got shape {a.shape}")
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return _array.transpose(a, perm)


transpose = matrix_transpose


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two dims (the transpose, for real dtypes)."""
    return matrix_transpose(matrix, conjugate=True)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """Matrix-vector product: [..., M, N] times [..., N] gives [..., M].

    Example:
        >>> tl.linalg.matvec(tl.eye(2), tl.constant([1.0, 2.0])).numpy()
        array([1., 2.], dtype=float32)
    """
    a, b = convert_same_dtype("MatMul", (a, b))
    product = matmul(a, _array.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return _array.squeeze(product, [-1])


# ------------------------------------------------------------------ diagonals and bands

def _diag_infer(x):
    if x.shape.rank == 0:
        raise ValueError("diag needs a tensor of rank >= 1, got a scalar")
    if x.shape.rank is None:
        return spec(None, x.dtype)
    n = x.shape[-1]
    return spec(list(x.shape) + [n], x.dtype)


@defop("MatrixDiagV3", infer=_diag_infer, grad=lambda op, dy: (diag_part(dy),))
def _diag(xp, x):
    n = x.shape[-1]
    out = xp.zeros(x.shape + (n,), dtype=x.dtype)
    i = xp.arange(n)
    out[..., i, i] = x
    return out


def _diag_part_infer(x):
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"diag_part needs a tensor of rank >= 2, got shape {x.shape}")
    if x.shape.rank is None:
        return spec(None, x.dtype)
    m, n = x.shape[-2], x.shape[-1]
    k = None if m is None or n is None else min(m, n)
    if k is None and (m == 0 or n == 0):
        k = 0
    return spec(list(x.shape)[:-2] + [k], x.dtype)


@defop("MatrixDiagPartV3", infer=_diag_part_infer,
       grad=lambda op, dy: (set_diag(_array.zeros_like(op.inputs[0]), dy),))
def _diag_part(xp, x):
    return xp.diagonal(x, axis1=-2, axis2=-1).copy()


def _set_diag_infer(x, d):
    if x.dtype is not d.dtype:
        raise TypeError(f"set_diag needs one dtype, got {x.dtype.name} and {d.dtype.name}")
    want = _diag_part_infer(x).shape
    if not want.is_compatible_with(d.shape):
        raise ValueError(f"the diagonal must have shape {want} for input {x.shape}, got {d.shape}")
    return spec(x.shape, x.dtype)


@defop("MatrixSetDiagV3", infer=_set_diag_infer,
       grad=lambda op, dy: (set_diag(dy, _array.zeros_like(op.inputs[1])), diag_part(dy)))
def _set_diag(xp, x, d):
    k = min(x.shape[-2], x.shape[-1])
    if d.shape != x.shape[:-2] + (k,):
        raise ValueError(f"the diagonal must have shape {list(x.shape[:-2]) + [k]}, got "
                         f"{list(d.shape)}")
    out = x.copy()
    i = xp.arange(k)
    out[..., i, i] = d
    return out


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Batched diagonal matrices: [..., N] gives [..., N, N] with `diagonal` on the diagonal.

    Example:
        >>> tl.linalg.diag(tl.constant([1, 2])).numpy()
        array([[1, 0],
               [0, 2]], dtype=int32)
    """
    _only_main_diagonal(k, "MatrixDiagV3")
    if num_rows != -1 or num_cols != -1 or padding_value != 0:
        raise UnimplementedError("diag supports square outputs only (num_rows, num_cols, "
                                 "padding_value at their defaults)", op="MatrixDiagV3")
    return apply("MatrixDiagV3", convert_to_tensor(diagonal))


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The main diagonals of the matrices in the last two dims: [..., M, N] gives [..., min(M, N)].

    Example:
        >>> tl.linalg.diag_part(tl.constant([[1, 2], [3, 4]])).numpy()
        array([1, 4], dtype=int32)
    """
    _only_main_diagonal(k, "MatrixDiagPartV3")
    return apply("MatrixDiagPartV3", convert_to_tensor(input))


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """A copy of `input` with its main diagonals replaced by `diagonal` ([..., min(M, N)])."""
    _only_main_diagonal(k, "MatrixSetDiagV3")
    x, d = convert_same_dtype("MatrixSetDiagV3", (input, diagonal))
    return apply("MatrixSetDiagV3", x, d)


def _band_part_infer(x, num_lower, num_upper):
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"band_part needs a tensor of rank >= 2, got shape {x.shape}")
    return spec(x.shape, x.dtype)


@defop("MatrixBandPart", infer=_band_part_infer,
       grad=lambda op, dy: (apply("MatrixBandPart", dy, **op.attrs),))
def _band_part(xp, x, num_lower, num_upper):
    m, n = x.shape[-2], x.shape[-1]
    below = xp.arange(m).reshape((m, 1)) - xp.arange(n).reshape((1, n))  # row - column
    keep = xp.ones((m, n), dtype=bool)
    if num_lower >= 0:
        keep &= below <= num_lower
    if num_upper >= 0:
        keep &= -below <= num_upper
    return xp.where(keep, x, xp.zeros((), dtype=x.dtype))


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps `num_lower` diagonals below and `num_upper` above the main one (-1: all of them),
    zeroing the rest.

    Example:
        >>> tl.linalg.band_part(tl.ones([3, 3]), 0, -1).numpy()  # upper triangle
        array([[1., 1., 1.],
               [0., 1., 1.],
               [0., 0., 1.]], dtype=float32)
    """
    x = convert_to_tensor(input)
    lower, upper = (int(v.numpy()) if hasattr(v, "numpy") else int(v) for v in (num_lower, num_upper))
    return apply("MatrixBandPart", x, num_lower=lower, num_upper=upper)


def trace(x, name=None):
    """The sum of the main diagonal of each matrix in the last two dims.

    Example:
        >>> tl.linalg.trace(tl.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
        5.0
    """
    return _math.reduce_sum(diag_part(x), axis=-1)


# ------------------------------------------------------------------ inverse, determinant, solve

def _square_infer(name):
    def infer(x, **attrs):
        _matrix_spec(name, x, square=True)
        return spec(x.shape, x.dtype)
    return infer


def _det_infer(x):
    batch, _, _ = _matrix_spec("MatrixDeterminant", x, square=True)
    return spec(batch, x.dtype)


def _inverse_grad(op, dy):
    ainv = op.outputs[0]
    if op.attrs.get("adjoint"):  # y = inv(a^T): the transpose of the plain rule at a^T
        return (-matmul(ainv, matmul(dy, ainv, transpose_a=True)),)
    return (-matmul(ainv, matmul(dy, ainv, transpose_b=True), transpose_a=True),)


@defop("MatrixInverse", infer=_square_infer("MatrixInverse"), grad=_inverse_grad)
def _inverse(xp, x, adjoint=False):
    _check_square(x)
    if adjoint:
        x = xp.swapaxes(x, -1, -2)
    try:
        return xp.linalg.inv(x).astype(x.dtype, copy=False)
    except ValueError:  # numpy's LinAlgError
        raise InvalidArgumentError("Input is not invertible.") from None


def _det_grad(op, dy):
    a, det_a = op.inputs[0], op.outputs[0]
    scale = _array.expand_dims(_array.expand_dims(dy * det_a, -1), -1)
    return (scale * inv(a, adjoint=True),)


@defop("MatrixDeterminant", infer=_det_infer, grad=_det_grad)
def _det(xp, x):
    return xp.asarray(xp.linalg.det(x)).astype(x.dtype, copy=False)


def _solve_infer(a, b, adjoint=False):
    if a.dtype is not b.dtype:
        raise TypeError(f"MatrixSolve needs one dtype, got {a.dtype.name} and {b.dtype.name}")
    batch_a, m, _ = _matrix_spec("MatrixSolve", a, square=True)
    batch_b, rows, k = _matrix_spec("MatrixSolve", b)
    if batch_a is None or batch_b is None:
        return spec(None, a.dtype)
    if m is not None and rows is not None and m != rows:
        raise ValueError(f"rhs must have {m} rows for a matrix of shape {a.shape}, got {b.shape}")
    return spec(list(broadcast_shapes(batch_a, batch_b)) + [m if m is not None else rows, k],
                a.dtype)


def _solve_grad(op, dy):
    a, c = op.inputs[0], op.outputs[0]
    adjoint_a = op.attrs.get("adjoint", False)
    grad_b = solve(a, dy, adjoint=not adjoint_a)
    if adjoint_a:
        return -matmul(c, grad_b, transpose_b=True), grad_b
    return -matmul(grad_b, c, transpose_b=True), grad_b


@defop("MatrixSolve", infer=_solve_infer, grad=_solve_grad)
def _solve(xp, a, b, adjoint=False):
    _check_square(a)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"rhs must have {a.shape[-1]} rows for a matrix of shape "
                         f"{list(a.shape)}, got shape {list(b.shape)}")
    if adjoint:
        a = xp.swapaxes(a, -1, -2)
    try:
        return xp.linalg.solve(a, b).astype(a.dtype, copy=False)
    except ValueError:
        raise InvalidArgumentError("Input matrix is not invertible.") from None


def _cholesky_grad(op, dy):
    # TensorFlow's _CholeskyGrad (an inverse stands in for its triangular solve)
    l = op.outputs[0]  # noqa: E741 -- the factor's usual name
    l_inverse = inv(l)
    middle = matmul(l, dy, transpose_a=True)
    middle = set_diag(middle, 0.5 * diag_part(middle))
    middle = band_part(middle, -1, 0)
    grad_a = matmul(matmul(l_inverse, middle, transpose_a=True), l_inverse)
    grad_a = grad_a + matrix_transpose(grad_a)
    return (grad_a * 0.5,)


@defop("Cholesky", infer=_square_infer("Cholesky"), grad=_cholesky_grad)
def _cholesky(xp, x):
    _check_square(x)
    try:
        return xp.linalg.cholesky(x).astype(x.dtype, copy=False)
    except ValueError:
        raise InvalidArgumentError("Cholesky decomposition was not successful. The input might "
                                   "not be valid.") from None


def inv(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each square matrix in the last two dims (of its transpose with `adjoint`).

    Raises:
        InvalidArgumentError: for a singular matrix (numpy backend).

    Example:
        >>> tl.linalg.inv(tl.constant([[2.0, 0.0], [0.0, 4.0]])).numpy()
        array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    x = _float_matrix(input, "MatrixInverse")
    return apply("MatrixInverse", x, adjoint=bool(adjoint)) if adjoint else \
        apply("MatrixInverse", x)


def det(input, name=None):  # noqa: A002
    """The determinant of each square matrix in the last two dims: [..., M, M] gives [...].

    Example:
        >>> tl.linalg.det(tl.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
        -2.0
    """
    return apply("MatrixDeterminant", _float_matrix(input, "MatrixDeterminant"))


def slogdet(input, name=None):  # noqa: A002
    """(sign, log|det|) of each square matrix, computed from the determinant."""
    d = det(input)
    return _math.sign(d), _math.log(_math.abs(d))


def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive-definite matrices, via the Cholesky factor."""
    chol = cholesky(matrix)
    return 2.0 * _math.reduce_sum(_math.log(diag_part(chol)), axis=-1)


def solve(matrix, rhs, adjoint=False, name=None):
    """X with matrix @ X = rhs, for square [..., M, M] matrices and [..., M, K] right-hand sides.

    Raises:
        InvalidArgumentError: for a singular matrix (numpy backend) or mismatched shapes.

    Example:
        >>> tl.linalg.solve(tl.constant([[2.0, 0.0], [0.0, 4.0]]), tl.constant([[2.0], [2.0]])).numpy()
        array([[1. ],
               [0.5]], dtype=float32)
    """
    a, b = convert_same_dtype("MatrixSolve", (matrix, rhs))
    _float_matrix(a, "MatrixSolve")
    return apply("MatrixSolve", a, b, adjoint=bool(adjoint)) if adjoint else \
        apply("MatrixSolve", a, b)


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with L @ L^T = input, for symmetric positive-definite matrices.

    Raises:
        InvalidArgumentError: if a matrix is not positive definite (numpy backend).

    Example:
        >>> tl.linalg.cholesky(tl.constant([[4.0, 2.0], [2.0, 2.0]])).numpy()
        array([[2., 0.],
               [1., 1.]], dtype=float32)
    """
    return apply("Cholesky", _float_matrix(input, "Cholesky"))
