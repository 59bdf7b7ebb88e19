"""tl.sets against Python's own sets (tests/tf_compare/test_tf_sets.py compares with
TensorFlow): every row's result is the sorted set operation of its rows, padded as a
SparseTensor whose last dimension is the largest result."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

import trainlib as tl

_OPS = {"intersection": lambda a, b: a & b, "union": lambda a, b: a | b,
        "difference": lambda a, b: a - b}


def _rows(st_result, n_rows):
    rows = [[] for _ in range(n_rows)]
    for (r, _), v in zip(st_result.indices.numpy(), st_result.values.numpy()):
        rows[r].append(int(v))
    return rows


@given(a=arrays(np.int32, (3, 4), elements=st.integers(0, 6)),
       b=arrays(np.int32, (3, 2), elements=st.integers(0, 6)),
       op=st.sampled_from(sorted(_OPS)))
def test_rows_are_python_set_operations(a, b, op):
    got = getattr(tl.sets, op)(a, b)
    want = [sorted(_OPS[op](set(x.tolist()), set(y.tolist()))) for x, y in zip(a, b)]
    assert _rows(got, 3) == want
    assert got.dense_shape.numpy().tolist() == [3, max(len(w) for w in want)]
    sizes = tl.sets.size(tl.sparse.from_dense(a + 1)).numpy()
    assert sizes.tolist() == [len(set(x.tolist())) for x in a]


def test_in_function_and_errors():
    f = tl.function(lambda a, b: tl.sets.difference(a, b, aminusb=False).values)
    assert f(tl.constant([[1, 2]]), tl.constant([[2, 3, 4]])).numpy().tolist() == [3, 4]
    with pytest.raises(tl.errors.InvalidArgumentError, match="group shapes"):
        tl.sets.union([[1], [2]], [[1]])
    with pytest.raises(TypeError, match="float32"):
        tl.sets.union([[1.0]], [[1.0]])
    with pytest.raises(TypeError, match="SparseTensor"):
        tl.sets.size([[1, 2]])
    with pytest.raises(tl.errors.InvalidArgumentError, match="row-major"):
        tl.sets.size(tl.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 2]))
