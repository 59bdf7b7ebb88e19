"""`trainlib.keras.ops` has Keras 3.15's public `keras.ops` names (the lists below, taken from
`dir(keras.ops)` and its groups), each covered by a row of the op table.

The names trainlib does not provide yet are listed in `table.MISSING` with the reason; their
checks are strict xfails, so providing one turns its check red until the list is updated.
"""
import pytest

from trainlib.keras import ops

from .table import CASES, MISSING, MISSING_IMAGE

KERAS_OPS = [
    "abs", "absolute", "adaptive_average_pool", "adaptive_max_pool", "add", "all", "allclose",
    "amax", "amin", "angle", "any", "append", "arange", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argpartition", "argsort",
    "array", "array_split", "associative_scan", "average", "average_pool", "bartlett",
    "batch_normalization", "binary_crossentropy", "bincount", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "blackman", "broadcast_to", "cast", "categorical_crossentropy", "cbrt", "cdist", "ceil",
    "celu", "cholesky", "cholesky_inverse", "clip", "concatenate", "cond", "conj", "conjugate",
    "conv", "conv_transpose", "convert_to_numpy", "convert_to_tensor", "copy", "corrcoef",
    "correlate", "cos", "cosh", "count_nonzero", "cross", "ctc_decode", "ctc_loss", "cumprod",
    "cumsum", "custom_gradient", "deg2rad", "depth_to_space", "depthwise_conv", "det", "diag",
    "diagflat", "diagonal", "diff", "digitize", "divide", "divide_no_nan", "dot",
    "dot_product_attention", "dsplit", "dstack", "dtype", "eig", "eigh", "einsum", "elu",
    "empty", "empty_like", "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expand_dims",
    "expm1", "extract_sequences", "eye", "fabs", "fft", "fft2", "flip", "fliplr", "flipud",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "fold", "fori_loop", "full", "full_like",
    "gcd", "gelu", "geomspace", "get_item", "glu", "greater", "greater_equal", "hamming",
    "hanning", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "heaviside", "histogram", "hsplit", "hstack", "hypot", "i0", "identity", "ifft2", "imag",
    "image", "in_top_k", "inner", "inv", "irfft", "is_tensor", "isclose", "isfinite", "isin",
    "isinf", "isnan", "isneginf", "isposinf", "isreal", "istft", "jvp", "kaiser", "kron",
    "layer_normalization", "lcm", "ldexp", "leaky_relu", "left_shift", "less", "less_equal",
    "linalg", "linspace", "log", "log10", "log1p", "log2", "log_sigmoid", "log_softmax",
    "logaddexp", "logaddexp2", "logdet", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logspace", "logsumexp", "lstsq", "lu_factor", "map", "matmul",
    "matrix_rank", "max", "max_pool", "maximum", "mean", "median", "meshgrid", "min", "minimum",
    "mod", "moments", "moveaxis", "multi_hot", "multiply", "nan_to_num", "nanargmax",
    "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "ndim", "negative",
    "nextafter", "nn", "nonzero", "norm", "normalize", "not_equal", "numpy", "one_hot", "ones",
    "ones_like", "outer", "pad", "percentile", "pinv", "polar", "power", "prod", "psnr", "ptp",
    "qr", "quantile", "rad2deg", "ravel", "real", "rearrange", "reciprocal", "relu", "relu6",
    "repeat", "reshape", "rfft", "right_shift", "rms_normalization", "roll", "rot90", "round",
    "rsqrt", "saturate_cast", "scan", "scatter", "scatter_update", "searchsorted",
    "segment_max", "segment_min", "segment_prod", "segment_sum", "select", "selu",
    "separable_conv", "shape", "sigmoid", "sign", "signbit", "silu", "sin", "sinc", "sinh",
    "size", "slice", "slice_update", "slogdet", "soft_shrink", "softmax", "softplus",
    "softsign", "solve", "solve_triangular", "sort", "space_to_depth",
    "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid", "sparsemax", "split",
    "sqrt", "square", "squareplus", "squeeze", "stack", "std", "stft", "stop_gradient",
    "subtract", "sum", "svd", "swapaxes", "swish", "switch", "take", "take_along_axis", "tan",
    "tanh", "tanh_shrink", "tensordot", "threshold", "tile", "top_k", "trace", "transpose",
    "trapezoid", "tri", "tril", "triu", "true_divide", "trunc", "unfold", "unique",
    "unravel_index", "unstack", "vander", "var", "vdot", "vectorize", "vectorized_map", "view",
    "view_as_complex", "view_as_real", "vsplit", "vstack", "where", "while_loop", "zeros",
    "zeros_like"
]

KERAS_OPS_NUMPY = [
    "abs", "absolute", "add", "all", "allclose", "amax", "amin", "angle", "any", "append",
    "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "argmax", "argmin", "argpartition", "argsort", "array", "array_split", "average",
    "bartlett", "bincount", "bitwise_and", "bitwise_invert", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "blackman",
    "broadcast_to", "cbrt", "ceil", "clip", "concatenate", "conj", "conjugate", "copy",
    "corrcoef", "correlate", "cos", "cosh", "count_nonzero", "cross", "cumprod", "cumsum",
    "deg2rad", "diag", "diagflat", "diagonal", "diff", "digitize", "divide", "divide_no_nan",
    "dot", "dsplit", "dstack", "einsum", "empty", "empty_like", "equal", "exp", "exp2",
    "expand_dims", "expm1", "eye", "fabs", "flip", "fliplr", "flipud", "floor", "floor_divide",
    "fmax", "fmin", "fmod", "full", "full_like", "gcd", "geomspace", "get_item", "greater",
    "greater_equal", "hamming", "hanning", "heaviside", "histogram", "hsplit", "hstack",
    "hypot", "i0", "identity", "imag", "inner", "isclose", "isfinite", "isin", "isinf", "isnan",
    "isneginf", "isposinf", "isreal", "kaiser", "kron", "lcm", "ldexp", "left_shift", "less",
    "less_equal", "linspace", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logspace", "matmul", "max",
    "maximum", "mean", "median", "meshgrid", "min", "minimum", "mod", "moveaxis", "multiply",
    "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum",
    "nanvar", "ndim", "negative", "nextafter", "nonzero", "not_equal", "ones", "ones_like",
    "outer", "pad", "percentile", "power", "prod", "ptp", "quantile", "rad2deg", "ravel",
    "real", "reciprocal", "repeat", "reshape", "right_shift", "roll", "rot90", "round",
    "searchsorted", "select", "sign", "signbit", "sin", "sinc", "sinh", "size", "slogdet",
    "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum", "swapaxes",
    "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace", "transpose",
    "trapezoid", "tri", "tril", "triu", "true_divide", "trunc", "unique", "unravel_index",
    "vander", "var", "vdot", "vectorize", "view", "vsplit", "vstack", "where", "zeros",
    "zeros_like"
]

KERAS_OPS_NN = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss", "depth_to_space", "depthwise_conv", "dot_product_attention",
    "elu", "fold", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish",
    "hard_tanh", "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax", "max_pool",
    "moments", "multi_hot", "normalize", "one_hot", "polar", "psnr", "relu", "relu6",
    "rms_normalization", "selu", "separable_conv", "sigmoid", "silu", "soft_shrink", "softmax",
    "softplus", "softsign", "space_to_depth", "sparse_categorical_crossentropy", "sparse_plus",
    "sparse_sigmoid", "sparsemax", "squareplus", "swish", "tanh_shrink", "threshold", "unfold"
]

KERAS_OPS_LINALG = [
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "lstsq", "lu_factor",
    "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular", "svd"
]

KERAS_OPS_IMAGE = [
    "affine_transform", "crop_images", "elastic_transform", "extract_patches",
    "extract_patches_3d", "gaussian_blur", "hsv_to_rgb", "map_coordinates", "pad_images",
    "perspective_transform", "resize", "rgb_to_grayscale", "rgb_to_hsv", "scale_and_translate",
    "sobel_edges", "ssim"
]

_GROUPS = {"numpy": KERAS_OPS_NUMPY, "nn": KERAS_OPS_NN, "linalg": KERAS_OPS_LINALG,
           "image": KERAS_OPS_IMAGE}


def _param(name, missing):
    marks = [pytest.mark.xfail(reason=missing[name], strict=True)] if name in missing else []
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_param(n, MISSING) for n in KERAS_OPS])
def test_keras_ops_name_is_provided(name):
    assert hasattr(ops, name), f"keras.ops.{name} is missing from trainlib.keras.ops"


@pytest.mark.parametrize("group,name", [
    pytest.param(g, n, marks=[pytest.mark.xfail(reason=(MISSING | MISSING_IMAGE)[n], strict=True)]
                 if n in MISSING or (g == "image" and n in MISSING_IMAGE) else [], id=f"{g}.{n}")
    for g, names in _GROUPS.items() for n in names])
def test_group_name_is_provided(group, name):
    assert hasattr(getattr(ops, group), name), f"keras.ops.{group}.{name} is missing"


def test_group_names_are_the_top_level_functions():
    for group, names in _GROUPS.items():
        if group == "image":
            continue
        for name in names:
            if hasattr(ops, name) and hasattr(getattr(ops, group), name):
                assert getattr(ops, name) is getattr(getattr(ops, group), name), f"{group}.{name}"


def test_every_provided_name_has_a_table_row():
    rows = {c.name.split(".")[-1] for c in CASES} | {c.name for c in CASES}
    provided = [n for n in KERAS_OPS if hasattr(ops, n) and n not in _GROUPS]
    provided += [f"image.{n}" for n in KERAS_OPS_IMAGE if hasattr(ops.image, n)]
    untested = [n for n in provided if n not in rows]
    assert not untested, f"keras.ops names without a table row: {untested}"


def test_missing_list_is_exactly_what_is_absent():
    absent = sorted(n for n in KERAS_OPS if not hasattr(ops, n))
    assert absent == sorted(MISSING)
    absent_image = sorted(n for n in KERAS_OPS_IMAGE if not hasattr(ops.image, n))
    assert absent_image == sorted(MISSING_IMAGE)
