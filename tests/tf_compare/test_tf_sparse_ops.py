"""TensorFlow vs trainlib for the `tf.sparse` functions beyond the basics: reorder, reshape,
expand_dims, transpose, eye, to_indicator, retain, reset_shape, map_values, maximum/minimum,
reduce_max, softmax, slice, split, concat, fill_empty_rows, the segment reductions and
bincount. Indices, values and dense shapes must agree, eagerly and inside a function, bad
inputs must raise alike, and the gradients TensorFlow defines must match.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check, in_function  # noqa: E402

IND = [[0, 3], [2, 1], [0, 0], [3, 4], [2, 2]]   # not in row-major order
VAL = np.array([1.0, -2.0, 3.0, 0.5, -1.0], np.float32)


def _sp(lib):
    return lib.SparseTensor(IND, VAL, [4, 5])


def _sorted_sp(lib):
    return lib.sparse.reorder(_sp(lib))


def _sp3(lib):
    return lib.SparseTensor([[0, 0, 1], [0, 1, 0], [1, 2, 3]], lib.constant([1, 2, 3]), [2, 3, 4])


def _parts(st):
    return st.indices, st.values, st.dense_shape


DATA = np.arange(12, dtype=np.float32).reshape(4, 3)

PROGRAMS = {
    "reorder": lambda lib: _parts(_sorted_sp(lib)),
    "reshape": lambda lib: _parts(lib.sparse.reshape(_sorted_sp(lib), [2, -1])),
    "reshape_3d": lambda lib: _parts(lib.sparse.reshape(_sp3(lib), [4, 3, 2])),
    "reshape_bad": lambda lib: lib.sparse.reshape(_sp(lib), [3, 3]),
    "expand_dims": lambda lib: _parts(lib.sparse.expand_dims(_sorted_sp(lib), 1)),
    "expand_dims_last": lambda lib: _parts(lib.sparse.expand_dims(_sp3(lib), -1)),
    "transpose": lambda lib: _parts(lib.sparse.transpose(_sorted_sp(lib))),
    "transpose_perm": lambda lib: _parts(lib.sparse.transpose(_sp3(lib), [1, 2, 0])),
    "eye": lambda lib: _parts(lib.sparse.eye(3, 5, dtype=lib.int32)),
    "eye_square": lambda lib: _parts(lib.sparse.eye(4)),
    "to_indicator": lambda lib: lib.sparse.to_indicator(lib.SparseTensor(
        [[0, 0], [0, 1], [1, 0], [2, 2]], lib.constant([3, 1, 0, 3], lib.int64), [3, 4]), 5),
    "retain": lambda lib: _parts(lib.sparse.retain(_sp(lib), [True, False, True, True, False])),
    "reset_shape": lambda lib: _parts(lib.sparse.reset_shape(_sp(lib), [6, 7])),
    "reset_shape_tight": lambda lib: _parts(lib.sparse.reset_shape(_sp(lib))),
    "map_values": lambda lib: _parts(lib.sparse.map_values(lib.math.multiply, _sp(lib),
                                                           _sp(lib))),
    "map_values_scalar": lambda lib: _parts(lib.sparse.map_values(lib.add, _sp(lib), 1.0)),
    "maximum": lambda lib: _parts(lib.sparse.maximum(
        _sorted_sp(lib), lib.SparseTensor([[0, 0], [1, 1]], [5.0, -4.0], [4, 5]))),
    "minimum": lambda lib: _parts(lib.sparse.minimum(
        _sorted_sp(lib), lib.SparseTensor([[0, 0], [1, 1]], [5.0, -4.0], [4, 5]))),
    "reduce_max_all": lambda lib: lib.sparse.reduce_max(_sp(lib)),
    "reduce_max_rows": lambda lib: lib.sparse.reduce_max(_sp(lib), 1),
    "reduce_max_keepdims": lambda lib: lib.sparse.reduce_max(_sp(lib), 0, keepdims=True),
    "reduce_max_sparse": lambda lib: _parts(lib.sparse.reduce_max(_sp(lib), 1,
                                                                  output_is_sparse=True)),
    "softmax": lambda lib: _parts(lib.sparse.softmax(_sorted_sp(lib))),
    "slice": lambda lib: _parts(lib.sparse.slice(_sorted_sp(lib), [0, 1], [3, 3])),
    "slice_past_end": lambda lib: _parts(lib.sparse.slice(_sorted_sp(lib), [2, 3], [5, 5])),
    "split_rows": lambda lib: [_parts(s) for s in lib.sparse.split(
        sp_input=_sorted_sp(lib), num_split=3, axis=0)],
    "split_cols": lambda lib: [_parts(s) for s in lib.sparse.split(
        sp_input=_sorted_sp(lib), num_split=2, axis=1)],
    "concat": lambda lib: _parts(lib.sparse.concat(1, [_sorted_sp(lib), _sorted_sp(lib)])),
    "concat_rows": lambda lib: _parts(lib.sparse.concat(0, [_sorted_sp(lib), lib.SparseTensor(
        [[1, 1]], [9.0], [2, 5])])),
    "concat_expand": lambda lib: _parts(lib.sparse.concat(0, [_sorted_sp(lib), lib.SparseTensor(
        [[1, 6]], [9.0], [2, 7])], expand_nonconcat_dims=True)),
    "fill_empty_rows": lambda lib: (_parts(lib.sparse.fill_empty_rows(_sorted_sp(lib), 7.0)[0]),
                                    lib.sparse.fill_empty_rows(_sorted_sp(lib), 7.0)[1]),
    "fill_empty_rows_3d": lambda lib: _parts(lib.sparse.fill_empty_rows(lib.SparseTensor(
        [[1, 0, 1]], [4], [3, 2, 2]), -1)[0]),
    "segment_sum": lambda lib: lib.sparse.segment_sum(DATA, [0, 2, 3, 1], [0, 0, 1, 2]),
    "segment_sum_num": lambda lib: lib.sparse.segment_sum(DATA, [0, 2, 3], [0, 1, 3],
                                                          num_segments=5),
    "segment_mean": lambda lib: lib.sparse.segment_mean(DATA, [0, 2, 3, 1], [0, 0, 1, 3]),
    "segment_sqrt_n": lambda lib: lib.sparse.segment_sqrt_n(DATA, [0, 2, 3, 1], [0, 0, 0, 2]),
    "segment_sqrt_n_num": lambda lib: lib.sparse.segment_sqrt_n(DATA, [0, 1], [0, 0],
                                                                num_segments=3),
    "bincount": lambda lib: _parts(lib.sparse.bincount(lib.constant([1, 3, 3, 7, 1, 3]))),
    "bincount_rows": lambda lib: _parts(lib.sparse.bincount(
        lib.constant([[1, 3, 3], [0, 0, 2]]), axis=-1)),
    "bincount_weights": lambda lib: _parts(lib.sparse.bincount(
        lib.constant([1, 3, 3, 7]), weights=lib.constant([0.5, 1.0, 2.0, 3.0]))),
    "bincount_minlength_binary": lambda lib: _parts(lib.sparse.bincount(
        lib.constant([1, 3, 3]), minlength=6, binary_output=True)),
    "sampled_addmm": lambda lib: lib.sparse.sampled_addmm(
        lib.constant([[0, 0], [1, 1]]), lib.constant([0.5, 0.5]), lib.constant([2, 2]),
        lib.constant(np.arange(6.0).reshape(2, 3), lib.float32),
        lib.constant(np.arange(7.0, 13.0).reshape(3, 2), lib.float32), alpha=0.75, beta=0.25),
    "sampled_addmm_batch": lambda lib: lib.sparse.sampled_addmm(
        lib.constant([0, 1, 1, 0, 0, 0, 1, 0], shape=[2, 2, 2]),
        lib.constant([3.0, 5.0, 2.0, 7.0], shape=[2, 2]), lib.constant([2, 2]),
        lib.constant(np.arange(1.0, 13.0).reshape(2, 2, 3), lib.float32),
        lib.constant(np.arange(13.0, 25.0).reshape(2, 3, 2), lib.float32), alpha=0.75, beta=0.25),
    "sampled_addmm_bad_shape": lambda lib: lib.sparse.sampled_addmm(
        lib.constant([[0, 0]]), lib.constant([0.5]), lib.constant([3, 2]),
        lib.ones([2, 3]), lib.ones([3, 2])),
    "cross": lambda lib: _parts(lib.sparse.cross(
        [_words(lib), lib.constant([["d", "e"], ["f", "g"]]), lib.constant([[1], [2]], lib.int64)])),
    "cross_separator": lambda lib: _parts(lib.sparse.cross(
        [_words(lib), lib.constant([["d", "e"], ["f", "g"]])], separator="-")),
    "cross_hashed": lambda lib: _parts(lib.sparse.cross_hashed(
        [_words(lib), lib.constant([[5, 6], [7, 8]], lib.int64)], num_buckets=10)),
    "cross_hashed_key": lambda lib: _parts(lib.sparse.cross_hashed(
        [_words(lib), lib.constant([["x"], ["y"]])], hash_key=7)),
}


def _words(lib):
    return lib.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph))


def _grad(fn):
    def run(lib):
        v = lib.Variable(VAL)
        with lib.GradientTape() as tape:
            out = fn(lib, lib.SparseTensor([[0, 0], [0, 3], [2, 1], [2, 2], [3, 4]],
                                           lib.gather(v, [2, 0, 1, 4, 3]), [4, 5]))
            loss = lib.reduce_sum(out * lib.range(1.0, 1.0 + lib.cast(lib.size(out),
                                                                        lib.float32)))
        return lib.convert_to_tensor(tape.gradient(loss, v))
    return run


GRADS = {
    "reshape": lambda lib, s: lib.sparse.to_dense(lib.sparse.reshape(s, [10, 2])),
    "expand_dims": lambda lib, s: lib.sparse.to_dense(lib.sparse.expand_dims(s, 1)),
    "retain": lambda lib, s: lib.sparse.retain(s, [True, False, True, True, False]).values,
    "map_values": lambda lib, s: lib.sparse.map_values(lib.square, s).values,
    "segment_mean": lambda lib, s: lib.sparse.segment_mean(
        lib.reshape(s.values, [5, 1]), [0, 2, 4, 1], [0, 0, 1, 1]),
    "softmax": lambda lib, s: lib.sparse.softmax(s).values,
    "slice": lambda lib, s: lib.sparse.slice(s, [0, 1], [3, 3]).values,
    "reorder": lambda lib, s: lib.sparse.reorder(lib.sparse.transpose(s)).values,
    "fill_empty_rows": lambda lib, s: lib.sparse.fill_empty_rows(s, 2.0)[0].values,
    "segment_sqrt_n": lambda lib, s: lib.sparse.segment_sqrt_n(
        lib.reshape(s.values, [5, 1]), [0, 2, 4, 1], [0, 0, 1, 1]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_tensorflows(name):
    check(_grad(GRADS[name]), rtol=1e-5, atol=1e-6)


def test_concat_of_mismatched_shapes_raises_as_tensorflow():
    check(lambda lib: lib.sparse.concat(0, [_sp(lib), lib.SparseTensor([[1, 6]], [9.0], [2, 7])]))
