"""`tl.linalg`: TensorFlow's `tf.linalg` names (re-exports only; each op lives in `graph/ops/`).

`tl.linalg.svd` returns (s, u, v) as TensorFlow's does (v, not v^T).
"""
from .graph.ops.linalg import (  # noqa: F401 -- with the aliases linalg.py itself imports
    adjoint, band_part, cholesky, det, diag, diag_part, einsum, eye, global_norm, inv,
    l2_normalize, logdet, matmul, matrix_transpose, matvec, norm, set_diag, slogdet, solve,
    tensordot, trace, transpose)
from .graph.ops.decompositions import (  # noqa: F401
    cholesky_solve, cross, eigh, eigvals, eigvalsh, lstsq, lu, matrix_rank, normalize, pinv,
    qr, tensor_diag, tensor_diag_part, triangular_solve)
from .graph.ops.decompositions import lu_matrix_inverse, lu_reconstruct, lu_solve  # noqa: F401
from .graph.ops.decompositions import svd_tf as svd  # noqa: F401
from .graph.ops.complex import eig  # noqa: F401
