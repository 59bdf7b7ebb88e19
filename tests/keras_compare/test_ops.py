"""Keras 3 (TensorFlow backend) vs trainlib: every row of the `keras.ops` table, same inputs.

Values, shapes and dtypes must agree; rows marked `keras=False` differ by design (an
`empty` that trainlib fills with zeros, `argpartition`'s free order inside the partitions).
"""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from trainlib.keras import ops as tl_ops  # noqa: E402
from tests.keras.ops.table import CASES, make_args  # noqa: E402
from tests.keras.ops.test_table import assert_close, call, resolve, to_numpy  # noqa: E402

CASES_ = [pytest.param(c, d, id=f"{c}-{d}") for c in CASES if c.keras
          for d in (c.keras_dtypes or c.dtypes)]


def _keras_numpy(value):
    if isinstance(value, (tuple, list)):
        return (list if isinstance(value, list) else tuple)(_keras_numpy(v) for v in value)
    if isinstance(value, (str, bool, int, float)) and not hasattr(value, "dtype"):
        return value
    return np.asarray(keras.ops.convert_to_numpy(value))


@pytest.mark.parametrize("case,dtype", CASES_)
def test_same_as_keras(case, dtype):
    args = make_args(case, dtype)
    want = _keras_numpy(call(case, resolve(keras.ops, case.name), [
        keras.ops.convert_to_tensor(a) if isinstance(a, np.ndarray) else a for a in args]))
    got = to_numpy(call(case, resolve(tl_ops, case.name), args))
    if isinstance(want, np.ndarray) and want.ndim == 0 and not isinstance(got, np.ndarray):
        got = np.asarray(got)
    if case.unordered:  # e.g. eigenvalues: LAPACK and Eigen order them differently
        got, want = np.sort_complex(got).astype(got.dtype), np.sort_complex(want).astype(want.dtype)
    assert_close(got, want, case, dtype, " vs keras", exact_dtype=True)


# Where trainlib's result dtype differs from Keras's on integer inputs: Keras on TensorFlow keeps
# the integer dtype through convolutions, pooling, resizing, attention and moments; trainlib
# computes these in float32 (its conv/pool kernels are floating only).
INTEGER_INPUT_DIFFERENCES = {
    "nn.conv", "nn.conv_transpose", "nn.max_pool", "nn.adaptive_max_pool", "nn.moments",
    "nn.dot_product_attention", "nn.psnr", "image.resize", "image.extract_patches", "image.ssim",
    "select", "jvp",
}


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [leaf for x in v for leaf in _leaves(x)]
    return [v]


@pytest.mark.parametrize("case", [pytest.param(c, id=str(c)) for c in CASES if c.keras])
@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_same_as_keras_in_other_dtypes(case, dtype):
    """Each row again with float16 or int32 inputs (where the row does not already cover them):
    where Keras accepts them, trainlib gives the same dtype, shape and (loosely) values."""
    if dtype in case.dtypes or (dtype == "int32" and case.name in INTEGER_INPUT_DIFFERENCES):
        pytest.skip("covered elsewhere / a listed difference")
    args = make_args(case, dtype)
    try:
        want = _keras_numpy(call(case, resolve(keras.ops, case.name), [
            keras.ops.convert_to_tensor(a) if isinstance(a, np.ndarray) else a for a in args]))
    except Exception:  # noqa: BLE001 -- Keras refuses these inputs: nothing to compare
        pytest.skip("Keras rejects these inputs")
    got = to_numpy(call(case, resolve(tl_ops, case.name), args))
    for g, w in zip(_leaves(got), _leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, f"{case}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        if case.unordered:
            g, w = np.sort_complex(g), np.sort_complex(w)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128), rtol=2e-2,
                                       atol=2e-2, equal_nan=True, err_msg=str(case))
        else:
            np.testing.assert_array_equal(g, w, err_msg=str(case))
