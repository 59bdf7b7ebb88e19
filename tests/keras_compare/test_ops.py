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
