"""`unsorted_segment_prod` (`trainlib.graph.ops.segment`) against numpy, its gradient (zeros in
a segment included) by finite differences, traced == eager.

One table, CASES (unioned by the registry and strict-array-module tests).
"""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops.segment import unsorted_segment_prod
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

IDS = np.array([1, 0, 1, 3, -1, 1], np.int32)


def _ref(data):
    out = np.ones((4,) + data.shape[1:], data.dtype)
    for row, seg in zip(data, IDS):
        if seg >= 0:
            out[seg] = out[seg] * row
    return out


CASES = [
    OpCase("segment_prod", ["UnsortedSegmentProd"], lambda d: unsorted_segment_prod(d, IDS, 4), _ref,
           [(6, 2)], dtypes=("float32", "float64", "int32"), low=-2, high=2),
]


@pytest.mark.parametrize("dtype", CASES[0].dtypes)
def test_against_numpy(dtype):
    check_against_numpy(CASES[0], make_inputs(CASES[0], dtype, np.random.default_rng(1)))


def test_gradient():
    check_gradient(CASES[0], make_inputs(CASES[0], "float64", np.random.default_rng(2)))


@pytest.mark.parametrize("zeros", [1, 2])
def test_gradient_with_zeros_in_a_segment(zeros):
    data = np.random.default_rng(3).uniform(0.5, 2, (6, 2))
    data[[0, 2][:zeros], 0] = 0.0  # segment 1 gets one or two zeros in column 0
    check_gradient(CASES[0], [data])


def test_traced_equals_eager():
    d = tl.constant(np.arange(12.0).reshape(6, 2))
    eager = unsorted_segment_prod(d, IDS, 4).numpy()
    traced = tl.function(lambda x: unsorted_segment_prod(x, IDS, 4))(d).numpy()
    np.testing.assert_array_equal(eager, traced)


def test_bad_ids():
    with pytest.raises(TypeError, match="segment_ids"):
        unsorted_segment_prod(tl.constant([1.0]), tl.constant([0.0]), 1)
    with pytest.raises(tl.errors.InvalidArgumentError, match="out of range"):
        unsorted_segment_prod(tl.constant([1.0]), [3], 2)
