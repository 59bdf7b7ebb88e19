"""tl.SparseTensor and tl.sparse against numpy, eager and traced."""
import numpy as np
import pytest

import trainlib as tl

DENSE = np.array([[1.0, 0, 0, 0], [0, 0, 2.0, 0], [0, 3.0, 0, 0]], np.float32)


def st():
    return tl.SparseTensor([[0, 0], [1, 2], [2, 1]], [1.0, 2.0, 3.0], [3, 4])


def test_round_trip_and_math():
    np.testing.assert_array_equal(tl.sparse.to_dense(st()).numpy(), DENSE)
    back = tl.sparse.from_dense(DENSE)
    assert np.asarray(back.indices).tolist() == [[0, 0], [1, 2], [2, 1]]
    assert st().shape == (3, 4) and st().dtype is tl.float32
    filled = tl.sparse.to_dense(st(), default_value=-1.0).numpy()
    np.testing.assert_array_equal(filled, np.where(DENSE != 0, DENSE, -1))
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(tl.sparse.sparse_dense_matmul(st(), b).numpy(), DENSE @ b)
    np.testing.assert_allclose(tl.sparse.reduce_sum(st(), axis=0).numpy(), DENSE.sum(0))
    both = tl.sparse.add(st(), tl.SparseTensor([[0, 0], [0, 3]], [5.0, 1.0], [3, 4]))
    want = DENSE.copy()
    want[0, 0] += 5
    want[0, 3] += 1
    np.testing.assert_array_equal(tl.sparse.to_dense(both).numpy(), want)


def test_traced_matmul_and_gradient():
    w = tl.Variable(np.ones((4, 2), np.float32))

    @tl.function
    def loss():
        return tl.reduce_sum(tl.sparse.sparse_dense_matmul(st(), w))
    with tl.GradientTape() as tape:
        y = loss()
    assert float(y) == DENSE.sum() * 2
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), DENSE.sum(0)[:, None] * np.ones((1, 2)))


def _cat64_reference(fp1, fp2):
    """FingerprintCat64 on numpy uint64 arrays (wrapping arithmetic), independent of the
    kernel's Python ints."""
    mul = np.uint64(0xC6A4A7935BD1E995)

    def shift_mix(v):
        return v ^ (v >> np.uint64(47))
    with np.errstate(over="ignore"):
        out = fp1 ^ mul
        out ^= shift_mix(fp2 * mul) * mul
        out = out * mul
        return shift_mix(shift_mix(out) * mul)


def test_cross_hashed_dense_chains_fingerprint_cat64():
    from trainlib.graph.ops.farmhash import fingerprint64
    a = np.array([[1], [-5], [3], [2 ** 40]], np.int64)
    b = np.array([[7], [8], [-9], [0]], np.int32)
    words = np.array([[b"x"], [b"yy"], [b""], [b"x"]], object)
    want = np.full((4, 1), 0xDECAFCAFFE, np.uint64)
    for column in (a.view(np.uint64), b.astype(np.int64).view(np.uint64),
                   np.array([[fingerprint64(w)] for w in words.ravel()], np.uint64)):
        want = _cat64_reference(want, column)
    got = tl.sparse.cross_hashed_dense([a, b, tl.constant(words)], num_buckets=17)
    assert got.dtype == tl.int64 and got.shape == (4, 1)
    np.testing.assert_array_equal(got.numpy(), (want % np.uint64(17)).astype(np.int64))
    unbounded = tl.sparse.cross_hashed_dense([a, b], hash_key=3)
    want = _cat64_reference(_cat64_reference(np.full((4, 1), 3, np.uint64), a.view(np.uint64)),
                            b.astype(np.int64).view(np.uint64))
    np.testing.assert_array_equal(unbounded.numpy(),
                                  (want % np.uint64(2 ** 63 - 1)).astype(np.int64))
    traced = tl.function(lambda x, y: tl.sparse.cross_hashed_dense([x, y], 17))
    np.testing.assert_array_equal(traced(a, b).numpy(),
                                  tl.sparse.cross_hashed_dense([a, b], 17).numpy())
    with pytest.raises(ValueError, match="one shape"):
        tl.sparse.cross_hashed_dense([a, a[:2]])
    np.testing.assert_array_equal(   # as TensorFlow: other numbers are cast to int64
        tl.sparse.cross_hashed_dense([a, np.abs(b) + 0.5], 17).numpy(),
        tl.sparse.cross_hashed_dense([a, np.abs(b)], 17).numpy())


# ---- the tf.sparse functions beyond the basics (TensorFlow comparison:
# tests/tf_compare/test_tf_sparse_ops.py); here against numpy on random sparse matrices

from hypothesis import given as _given, strategies as _st  # noqa: E402
from hypothesis.extra.numpy import arrays as _arrays  # noqa: E402


def _random_sparse(dense):
    idx = np.argwhere(dense != 0)
    perm = np.random.default_rng(0).permutation(len(idx))   # out of row-major order
    return tl.SparseTensor(idx[perm], dense[dense != 0][perm], dense.shape)


@_given(_arrays(np.float32, (3, 4), elements=_st.sampled_from([0.0, 1.5, -2.0, 3.0])))
def test_reorder_transpose_reshape_slice_match_dense(dense):
    sp = _random_sparse(dense)
    ordered = tl.sparse.reorder(sp)
    assert ordered.indices.numpy().tolist() == np.argwhere(dense != 0).tolist()
    np.testing.assert_array_equal(tl.sparse.to_dense(tl.sparse.transpose(sp)).numpy(), dense.T)
    np.testing.assert_array_equal(
        tl.sparse.to_dense(tl.sparse.reshape(ordered, [2, -1])).numpy(), dense.reshape(2, 6))
    np.testing.assert_array_equal(
        tl.sparse.to_dense(tl.sparse.slice(ordered, [1, 1], [5, 2])).numpy(), dense[1:, 1:3])
    parts = tl.sparse.split(sp_input=ordered, num_split=3, axis=1)
    assert [p.dense_shape.numpy().tolist() for p in parts] == [[3, 2], [3, 1], [3, 1]]
    joined = tl.sparse.concat(1, parts)
    np.testing.assert_array_equal(tl.sparse.to_dense(joined).numpy(), dense)


@_given(_arrays(np.float32, (3, 4), elements=_st.sampled_from([0.0, 1.0, -2.0, 0.5])))
def test_softmax_and_reduce_max_over_present_entries(dense):
    sp = tl.sparse.reorder(_random_sparse(dense))
    out = tl.sparse.to_dense(tl.sparse.softmax(sp)).numpy()
    for row, got in zip(dense, out):
        e = np.exp(row[row != 0] - (row[row != 0].max() if (row != 0).any() else 0))
        np.testing.assert_allclose(got[row != 0], e / e.sum() if e.size else e, rtol=1e-6)
    want = [row[row != 0].max() if (row != 0).any() else 0.0 for row in dense]
    np.testing.assert_array_equal(tl.sparse.reduce_max(sp, 1).numpy(), want)


def test_fill_empty_rows_and_indicator_in_function():
    sp = tl.SparseTensor([[1, 0], [3, 2]], tl.constant([4, 2], tl.int64), [4, 3])

    @tl.function
    def run(s):
        filled, empty = tl.sparse.fill_empty_rows(s, 9)
        return tl.sparse.to_dense(filled), empty, tl.sparse.to_indicator(s, 5)
    dense, empty, indicator = run(sp)
    assert dense.numpy().tolist() == [[9, 0, 0], [4, 0, 0], [9, 0, 0], [0, 0, 2]]
    assert empty.numpy().tolist() == [True, False, True, False]
    assert np.argwhere(indicator.numpy()).tolist() == [[1, 4], [3, 2]]
    with pytest.raises(ValueError, match="reset_shape"):
        tl.sparse.reset_shape(sp, [2, 2])


def test_to_dense_refuses_a_repeated_index_unless_told_to_sum():
    sp = tl.sparse.SparseTensor([[0, 1], [2, 0], [0, 1]], [1.0, 2.0, 3.0], [3, 2])
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"indices\[2\].*repeated"):
        tl.sparse.to_dense(sp)
    np.testing.assert_array_equal(tl.sparse.to_dense(sp, validate_indices=False).numpy(),
                                  [[0, 4], [0, 0], [2, 0]])


def test_a_sparse_tensor_whose_parts_disagree_is_refused():
    with pytest.raises(ValueError, match="2 indices but 3 values"):
        tl.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0, 3.0], [2, 2])
    with pytest.raises(ValueError, match="dense_shape must be a vector of the indices' rank"):
        tl.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2, 2])
