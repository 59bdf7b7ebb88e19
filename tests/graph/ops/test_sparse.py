"""tl.SparseTensor and tl.sparse against numpy, eager and traced."""
import numpy as np

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
