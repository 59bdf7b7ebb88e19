"""Bitwise ops and the & | ^ ~ operators (logical on bools, bitwise on integers, as TensorFlow)."""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops.harness import OpCase, check_against_numpy, make_inputs

INTS = ("int8", "int32", "int64", "uint8")

CASES = [
    OpCase("bitwise_and", ["BitwiseAnd"], tl.bitwise.bitwise_and, np.bitwise_and, [(3, 4), (4,)],
           low=0, high=100, dtypes=INTS, grad=False),
    OpCase("bitwise_or", ["BitwiseOr"], tl.bitwise.bitwise_or, np.bitwise_or, [(3, 4), (3, 4)],
           low=0, high=100, dtypes=INTS, grad=False),
    OpCase("bitwise_xor", ["BitwiseXor"], tl.bitwise.bitwise_xor, np.bitwise_xor, [(2, 3), ()],
           low=0, high=100, dtypes=INTS, grad=False),
    OpCase("invert", ["Invert"], tl.bitwise.invert, np.invert, [(5,)], low=0, high=100,
           dtypes=INTS, grad=False),
    OpCase("left_shift", ["LeftShift"], tl.bitwise.left_shift, np.left_shift, [(4,), (4,)],
           low=0, high=3, dtypes=("int32", "int64"), grad=False),
    OpCase("right_shift", ["RightShift"], tl.bitwise.right_shift, np.right_shift, [(4,), (4,)],
           low=0, high=3, dtypes=("int32", "int64"), grad=False),
]


@pytest.mark.parametrize("case,dtype", [(c, d) for c in CASES for d in c.dtypes])
def test_against_numpy_and_in_a_graph(case, dtype):
    arrays = make_inputs(case, dtype, np.random.default_rng(0))
    got = check_against_numpy(case, arrays)
    traced = tl.function(case.fn)(*[tl.constant(a) for a in arrays])
    np.testing.assert_array_equal(traced.numpy(), got.numpy())


def test_operators_are_bitwise_on_ints_and_logical_on_bools():
    a, b = tl.constant([12, 5]), tl.constant([10, 3])
    assert (a & b).numpy().tolist() == [8, 1] and (a | b).numpy().tolist() == [14, 7]
    assert (a ^ b).numpy().tolist() == [6, 6] and (~a).numpy().tolist() == [-13, -6]
    assert (3 & a).numpy().tolist() == [0, 1]
    t, f = tl.constant([True, True]), tl.constant([True, False])
    assert (t & f).numpy().tolist() == [True, False] and (~f).numpy().tolist() == [False, True]
    assert (t ^ f).numpy().tolist() == [False, True] and (f | False).numpy().tolist() == [True, False]


def test_floats_and_mixed_dtypes_are_refused():
    with pytest.raises(TypeError, match="integer"):
        tl.constant([1.0]) & tl.constant([2.0])
    with pytest.raises(TypeError, match="integer"):
        ~tl.constant(1.5)
    with pytest.raises(tl.errors.InvalidArgumentError, match="int32"):
        tl.constant([1]) | tl.constant([1], tl.int64)
