"""`tl.math`: TensorFlow's `tf.math` names (re-exports only; each op lives in `graph/ops/`).

`tl.math.top_k`, `tl.math.segment_prod`, `tl.math.lgamma`... Most names are also top-level
(`tl.add`); the ones TensorFlow keeps under `tf.math` only are here only.
"""
from .graph.ops.array import (  # noqa: F401
    invert_permutation)
from .graph.ops.complex import (  # noqa: F401
    angle, conj, imag, real)
from .graph.ops.math import (  # noqa: F401
    abs, accumulate_n, acos, acosh, add, add_n, argmax, argmin, asin, asinh, atan, atan2,
    atanh, bincount, cast, ceil, clip_by_value, confusion_matrix, cos, cosh, count_nonzero,
    cumprod, cumsum, cumulative_logsumexp, divide, divide_no_nan, einsum, equal, erf, exp,
    expm1, floor, floordiv, floormod, greater, greater_equal, in_top_k, is_finite, is_inf,
    is_nan, is_non_decreasing, is_strictly_increasing, less, less_equal, log, log1p,
    log_sigmoid, logical_and, logical_not, logical_or, logical_xor, matmul, maximum,
    minimum, mod, multiply, multiply_no_nan, negative, norm, not_equal, polyval, pow,
    reciprocal, reciprocal_no_nan, reduce_all, reduce_any, reduce_euclidean_norm,
    reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std,
    reduce_sum, reduce_variance, rint, round, rsqrt, scalar_mul, segment_max, segment_mean,
    segment_min, segment_sum, sigmoid, sign, sin, sinh, softplus, softsign, sqrt, square,
    squared_difference, subtract, tan, tanh, tensordot, top_k, truediv, truncatediv,
    truncatemod, unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
    unsorted_segment_sum, where, xdivy, xlogy, zero_fraction)
from .graph.ops.nn import (  # noqa: F401
    l2_normalize, log_softmax, softmax)
from .graph.ops.numeric import (  # noqa: F401
    bessel_i0e, bessel_i1e, digamma, erfc, erfcinv, erfinv, lbeta, lgamma, ndtri, nextafter,
    polygamma, xlog1py, zeta)
from .graph.ops.segment import (  # noqa: F401
    segment_prod, unsorted_segment_prod, unsorted_segment_sqrt_n)
from .graph.ops.numeric import i0 as bessel_i0  # noqa: F401
from .graph.ops.numeric import i1 as bessel_i1  # noqa: F401
