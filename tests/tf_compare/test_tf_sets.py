"""TensorFlow vs trainlib for `tf.sets`: difference (both directions), intersection, union
and size over dense and sparse inputs of integers and strings; the SparseTensor results
(indices, values, dense_shape) must be identical, eagerly and inside a function, and bad
inputs must raise alike.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check, in_function  # noqa: E402

A = np.array([[[1, 2, 3], [4, 4, 1]], [[9, 8, 7], [0, 0, 0]]], np.int32)
B = np.array([[[3, 5], [1, 4]], [[7, 7], [6, 2]]], np.int32)
S = np.array([["a", "b", "c"], ["q", "a", "a"]])
T = np.array([["c", "zz"], ["a", "b"]])


def _sp_a(lib):
    return lib.SparseTensor([[0, 0, 0], [0, 0, 2], [0, 1, 0], [1, 0, 1], [1, 0, 2]],
                            lib.constant([5, 1, 4, 2, 9], lib.int64), [2, 2, 3])


def _sp_b(lib):
    return lib.SparseTensor([[0, 0, 0], [1, 0, 0], [1, 1, 0]],
                            lib.constant([1, 9, 3], lib.int64), [2, 2, 4])


def _parts(st):
    return st.indices, st.values, st.dense_shape


PROGRAMS = {
    "intersection_dense": lambda lib: _parts(lib.sets.intersection(A, B)),
    "union_dense": lambda lib: _parts(lib.sets.union(A, B)),
    "difference_dense": lambda lib: _parts(lib.sets.difference(A, B)),
    "difference_b_minus_a": lambda lib: _parts(lib.sets.difference(A, B, aminusb=False)),
    "strings_union": lambda lib: _parts(lib.sets.union(S, T)),
    "strings_difference": lambda lib: _parts(lib.sets.difference(S, T)),
    "sparse_sparse_union": lambda lib: _parts(lib.sets.union(_sp_a(lib), _sp_b(lib))),
    "sparse_sparse_intersection": lambda lib: _parts(lib.sets.intersection(_sp_a(lib),
                                                                           _sp_b(lib))),
    "dense_sparse_difference": lambda lib: _parts(lib.sets.difference(
        lib.constant(A[:, :, :2], lib.int64), _sp_b(lib))),
    "sparse_dense_difference_flips": lambda lib: _parts(lib.sets.difference(
        _sp_b(lib), lib.constant(A[:, :, :2], lib.int64))),
    "sparse_dense_intersection": lambda lib: _parts(lib.sets.intersection(
        _sp_a(lib), lib.constant(B, lib.int64))),
    "empty_result": lambda lib: _parts(lib.sets.intersection([[1, 2]], [[3, 4]])),
    "size": lambda lib: lib.sets.size(_sp_a(lib)),
    "size_strings": lambda lib: lib.sets.size(lib.sparse.from_dense(S)),
    "size_of_a_result": lambda lib: lib.sets.size(lib.sets.union(A, B)),
    "group_shapes_differ": lambda lib: lib.sets.union(A, B[:1]),
    "types_differ": lambda lib: lib.sets.union(A, lib.constant(B, lib.int64)),
    "float_invalid": lambda lib: lib.sets.union([[1.0]], [[2.0]]),
    "size_of_dense": lambda lib: lib.sets.size(A),
    "unsorted_indices": lambda lib: lib.sets.size(lib.SparseTensor(
        [[1, 0], [0, 0]], [1, 2], [2, 2])),
    "unsorted_not_validated": lambda lib: lib.sets.size(lib.SparseTensor(
        [[1, 0], [0, 0]], [1, 2], [2, 2]), validate_indices=False),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph))
