"""tl.RaggedTensor and tl.ragged: construction, to_tensor, to_list, rows, math on flat values."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl

rows = st.lists(st.lists(st.integers(-5, 5), max_size=4), min_size=1, max_size=5)


@settings(max_examples=30, deadline=None)
@given(rows)
def test_constructors_agree_with_python(lists):
    lengths = [len(r) for r in lists]
    flat = [v for r in lists for v in r]
    splits = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    ids = [i for i, n in enumerate(lengths) for _ in range(n)]
    assert tl.ragged.constant(lists).to_list() == lists
    assert tl.RaggedTensor.from_row_lengths(flat, lengths).to_list() == lists
    assert tl.RaggedTensor.from_row_splits(flat, splits).to_list() == lists
    assert tl.RaggedTensor.from_value_rowids(flat, ids, nrows=len(lists)).to_list() == lists
    rt = tl.RaggedTensor.from_row_lengths(tl.constant(flat, dtype=tl.int32), lengths)
    width = max(lengths)
    dense = rt.to_tensor(default_value=9).numpy()
    assert dense.tolist() == [r + [9] * (width - len(r)) for r in lists]
    assert rt.row_lengths().numpy().tolist() == lengths
    assert rt.shape.as_list() == [len(lists), None]
    for i, r in enumerate(lists):
        assert rt[i].numpy().tolist() == r


def test_to_tensor_shape_nested_and_math():
    rt = tl.ragged.constant([[1, 2, 3], [4]])
    assert rt.to_tensor(shape=[3, 2]).numpy().tolist() == [[1, 2], [4, 0], [0, 0]]
    nested = tl.ragged.constant([[[1], [2, 3]], [[4]]])
    assert nested.ragged_rank == 2 and nested.to_list() == [[[1], [2, 3]], [[4]]]
    assert nested.to_tensor().numpy().tolist() == [[[1, 0], [2, 3]], [[4, 0], [0, 0]]]
    assert (rt * 2).to_list() == [[2, 4, 6], [8]]
    assert tl.ragged.map_flat_values(tl.square, rt).to_list() == [[1, 4, 9], [16]]
    assert rt[1:].to_list() == [[4]]
    with pytest.raises(ValueError, match="row_splits"):
        tl.RaggedTensor.from_row_splits([1, 2], [0, 3])


def test_to_tensor_traced():
    @tl.function
    def pad(x):
        return tl.strings.split(x).to_tensor(default_value="-")
    out = pad(tl.constant(["a b c", "d"]))
    assert out.numpy().tolist() == [[b"a", b"b", b"c"], [b"d", b"-", b"-"]]


@settings(max_examples=20, deadline=None)
@given(rows, rows)
def test_concat_and_stack_agree_with_python(a, b):
    ra, rb = tl.ragged.constant(a, dtype=tl.int32), tl.ragged.constant(b, dtype=tl.int32)
    assert tl.concat([ra, rb], axis=0).to_list() == a + b
    assert tl.stack([ra, rb], axis=0).to_list() == [a, b]
    if len(a) == len(b):
        assert tl.concat([ra, rb], axis=1).to_list() == [x + y for x, y in zip(a, b)]
        assert tl.stack([ra, rb], axis=1).to_list() == [[x, y] for x, y in zip(a, b)]
    else:
        with pytest.raises(ValueError, match="equal numbers of rows"):
            tl.concat([ra, rb], axis=1)


def test_ragged_function_arguments_trace_by_spec():
    @tl.function
    def f(x):
        return x * 2, tl.concat([x, x], axis=1)
    doubled, joined = f(tl.ragged.constant([[1, 2], [3]]))
    assert doubled.to_list() == [[2, 4], [6]] and joined.to_list() == [[1, 2, 1, 2], [3, 3]]
    assert f(tl.ragged.constant([[1], [2, 3, 4]]))[0].to_list() == [[2], [4, 6, 8]]
    assert f.experimental_get_tracing_count() == 1  # other row lengths: the same trace
    f(tl.ragged.constant([[1], [2], [3]]))
    assert f.experimental_get_tracing_count() == 2  # another number of rows: a new one
    assert "RaggedTensorSpec(TensorShape([2, None]), tl.int32, 1, tl.int64)" in \
        f.pretty_printed_concrete_signatures()


def test_ragged_signature_and_string_results():
    @tl.function(input_signature=[tl.RaggedTensorSpec([None, None], tl.string)])
    def f(words):
        return tl.strings.upper(words), words.to_tensor(default_value="-")
    upper, dense = f(tl.strings.split(["a bc", "", "d"]))
    assert upper.to_list() == [[b"A", b"BC"], [], [b"D"]]
    assert dense.numpy().tolist() == [[b"a", b"bc"], [b"-", b"-"], [b"d", b"-"]]
    with pytest.raises(TypeError, match="input_signature"):
        f(tl.ragged.constant([[1]]))


def test_stack_gradient_flows_to_flat_values():
    x = tl.Variable([1., 2., 3.])
    with tl.GradientTape() as tape:
        r = tl.RaggedTensor.from_row_lengths(x * 2, [2, 1])
        c = tl.concat([r, r], axis=1)
        y = tl.reduce_sum(c.flat_values * tl.constant([1., 2., 3., 4., 5., 6.]))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [8., 12., 22.])


@settings(max_examples=20, deadline=None)
@given(rows, st.integers(-6, 6), st.integers(-6, 6))
def test_graph_indexing_agrees_with_python(lists, i, j):
    rt = tl.ragged.constant(lists, dtype=tl.int32)
    n = len(lists)

    @tl.function
    def pick(x, i, j):
        return x[i:j], x[i % n]
    sliced, row = pick(rt, tl.constant(i), tl.constant(j))
    assert sliced.to_list() == lists[i:j] and row.numpy().tolist() == lists[i % n]
    assert (-rt).to_list() == [[-v for v in r] for r in lists]
    assert (3 - rt).to_list() == [[3 - v for v in r] for r in lists]
    assert (rt >= 0).to_list() == [[v >= 0 for v in r] for r in lists]


def test_math_functions_map_flat_values_and_refuse_dense_rows():
    rt = tl.ragged.constant([[1., 4.], [], [9.]])
    assert tl.sqrt(rt).to_list() == [[1., 2.], [], [3.]]
    assert tl.maximum(rt, 2.).to_list() == [[2., 4.], [], [9.]]
    assert tl.cast(rt, tl.int32).to_list() == [[1, 4], [], [9]]
    assert tl.add(rt, rt).to_list() == [[2., 8.], [], [18.]]
    with pytest.raises(ValueError, match="scalars or RaggedTensors"):
        rt + tl.constant([1., 2., 3.])
    with pytest.raises(TypeError, match="Cannot convert"):
        tl.sqrt(object())  # other conversion failures stay what they were


@settings(max_examples=20, deadline=None)
@given(rows)
def test_reductions_along_rows_agree_with_python(lists):
    rt = tl.ragged.constant(lists, dtype=tl.int32)
    assert tl.reduce_sum(rt, axis=1).numpy().tolist() == [sum(r) for r in lists]
    assert tl.reduce_max(rt, axis=-1).numpy().tolist() == [max(r, default=-2 ** 31) for r in lists]
    means = tl.reduce_mean(tl.cast(rt, tl.float32), axis=1).numpy()
    for m, r in zip(means, lists):
        assert (np.isnan(m) and not r) or m == pytest.approx(sum(r) / len(r))
    assert int(tl.reduce_sum(rt)) == sum(map(sum, lists))
    assert rt.value_rowids().numpy().tolist() == [i for i, r in enumerate(lists) for _ in r]


@pytest.mark.parametrize("ids, nrows", [([1, 0, 2], None), ([-1, 0], None), ([0, 3], 2)])
def test_from_value_rowids_refuses_unsorted_or_out_of_range_ids(ids, nrows):
    with pytest.raises(tl.errors.InvalidArgumentError, match="value_rowids must be sorted"):
        tl.RaggedTensor.from_value_rowids([1.0, 2.0, 3.0][:len(ids)], ids, nrows=nrows)
