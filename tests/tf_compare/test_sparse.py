"""tl.sparse basics against TensorFlow."""
from .compare import check, tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow


def sparse(lib):
    return lib.SparseTensor(indices=[[0, 0], [1, 2], [2, 1]], values=[1.0, 2.0, 3.0],
                            dense_shape=[3, 4])


def parts(st):
    return st.indices, st.values, st.dense_shape


def test_to_dense_and_from_dense():
    check(lambda lib: lib.sparse.to_dense(sparse(lib)))
    check(lambda lib: lib.sparse.to_dense(sparse(lib), default_value=-1.0))
    check(lambda lib: parts(lib.sparse.from_dense([[0, 3], [4, 0]])))


def test_add_matmul_reduce():
    other = lambda lib: lib.SparseTensor([[0, 0], [0, 1]], [5.0, 6.0], [3, 4])  # noqa: E731
    check(lambda lib: parts(lib.sparse.add(sparse(lib), other(lib))))
    check(lambda lib: lib.sparse.add(sparse(lib), lib.ones([3, 4])))
    check(lambda lib: lib.sparse.sparse_dense_matmul(sparse(lib), lib.ones([4, 2])))
    check(lambda lib: lib.sparse.reduce_sum(sparse(lib)))
    check(lambda lib: lib.sparse.reduce_sum(sparse(lib), axis=1))


def test_gradient_reaches_values_and_dense():
    def program(lib):
        v = lib.Variable([1.0, 2.0, 3.0])
        w = lib.Variable(lib.ones([4, 2]))
        with lib.GradientTape() as tape:
            st = lib.SparseTensor([[0, 0], [1, 2], [2, 1]], v * 1.0, [3, 4])
            y = lib.reduce_sum(lib.sparse.sparse_dense_matmul(st, w) ** 2)
        return tape.gradient(y, [v, w])
    check(program)


def test_cross_hashed_dense_equals_tensorflow():
    import numpy as np  # noqa: PLC0415
    ints = np.array([[1], [-5], [3], [2 ** 40]], np.int64)
    small = np.array([[7], [8], [-9], [0]], np.int32)
    words = np.array([[b"x"], [b"yy"], [b""], [b"a long word to hash"]], object)
    for columns, buckets in (([ints, small], 17), ([ints, words, small], 1000),
                             ([words, words], 0)):
        want = tf.sparse.to_dense(tf.sparse.cross_hashed([tf.constant(c) for c in columns],
                                                         buckets)).numpy()
        got = tl.sparse.cross_hashed_dense([tl.constant(c) for c in columns], buckets).numpy()
        np.testing.assert_array_equal(got, want)
