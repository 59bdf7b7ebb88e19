"""`tl.linalg`: TensorFlow's `tf.linalg` names (re-exports only; each op lives in `graph/ops/`).

`tl.linalg.svd` returns (s, u, v) as TensorFlow's does (v, not v^T).
"""
from .graph.ops.array import (  # noqa: F401
    eye)
from .graph.ops.complex import (  # noqa: F401
    eig)
from .graph.ops.decompositions import (  # noqa: F401
    cholesky_solve, cross, eigh, eigvals, eigvalsh, lstsq, lu, lu_matrix_inverse,
    lu_reconstruct, lu_solve, matrix_rank, normalize, pinv, qr, tensor_diag,
    tensor_diag_part, triangular_solve)
from .graph.ops.linalg import (  # noqa: F401
    adjoint, band_part, cholesky, det, diag, diag_part, inv, logdet, matrix_transpose,
    matvec, set_diag, slogdet, solve, trace, transpose)
from .graph.ops.math import (  # noqa: F401
    einsum, global_norm, matmul, norm, tensordot)
from .graph.ops.nn import (  # noqa: F401
    l2_normalize)
from .graph.ops.decompositions import svd_tf as svd  # noqa: F401
