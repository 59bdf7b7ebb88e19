"""tl.data.Dataset: slicing, batching, shuffling, map, repeat, take, and iteration as tensors."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.data import Dataset

CASES = []  # Keras-level module: no op types of its own


def test_slices_batch_and_tensors():
    x, y = np.arange(10, dtype=np.float32).reshape(5, 2), np.arange(5)
    ds = Dataset.from_tensor_slices((x, y))
    first = next(iter(ds))
    assert isinstance(first[0], tl.Tensor) and first[0].shape == (2,)
    batches = list(ds.batch(2))
    assert [tuple(b[0].shape) for b in batches] == [(2, 2), (2, 2), (1, 2)]
    assert len(ds.batch(2)) == 3 and len(ds.batch(2, drop_remainder=True)) == 2
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), y)


def test_shuffle_map_repeat_take():
    ds = Dataset.from_tensor_slices(np.arange(20))
    a = [int(v) for v in ds.shuffle(20, seed=3)]
    b = [int(v) for v in ds.shuffle(20, seed=3)]
    assert sorted(a) == list(range(20)) and a != list(range(20)) and a == b
    doubled = ds.map(lambda v: v * 2).take(3)
    assert [int(v) for v in doubled] == [0, 2, 4]
    assert len(list(ds.take(4).repeat(3))) == 12
    assert [int(v) for v in ds.skip(18)] == [18, 19]
    assert ds.prefetch(tl.data.AUTOTUNE if hasattr(tl, "data") else -1) is ds
    s = ds.shuffle(5)
    assert sorted(int(v) for v in s) == list(range(20))
    mapped = Dataset.from_tensor_slices((np.ones((4, 2), np.float32), np.arange(4))).map(
        lambda x, y: (x + 1.0, y)).batch(2)
    xb, yb = next(iter(mapped))
    np.testing.assert_array_equal(xb.numpy(), np.full((2, 2), 2.0))


def test_errors():
    with pytest.raises(ValueError, match="different first dims"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError):
        Dataset.from_tensor_slices(np.zeros(3)).batch(0)
    with pytest.raises(TypeError):
        len(Dataset.from_tensor_slices(np.zeros(3)).repeat())


def test_structures_dtypes_and_spec():
    ds = Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0], [2.0], [3.0]]})
    spec = ds.element_spec
    assert spec["a"].dtype == tl.int32 and spec["b"].dtype == tl.float32
    assert spec["b"].shape.as_list() == [1]
    assert ds.batch(2).element_spec["b"].shape.as_list() == [None, 1]
    assert ds.batch(2, drop_remainder=True).element_spec["a"].shape.as_list() == [2]
    assert Dataset.from_tensor_slices(np.arange(3)).element_spec.dtype == tl.int64
    assert Dataset.range(3).map(lambda v: [v, 2.5]).element_spec[1].dtype == tl.float32


def test_zip_enumerate_concatenate_shard_reduce():
    a, b = Dataset.range(4), Dataset.range(10, 13)
    assert [(int(x), int(y)) for x, y in Dataset.zip(a, b)] == [(0, 10), (1, 11), (2, 12)]
    assert [int(i) for i, _ in b.enumerate(5)] == [5, 6, 7]
    assert [int(v) for v in a.concatenate(b)] == [0, 1, 2, 3, 10, 11, 12]
    assert [int(v) for v in Dataset.range(10).shard(4, 1)] == [1, 5, 9]
    assert int(Dataset.range(5).reduce(np.int64(0), lambda s, v: s + v)) == 10
    assert len(Dataset.range(10).shard(4, 1)) == 3 and len(a.apply(lambda d: d.batch(3))) == 2
    with pytest.raises(TypeError):
        a.concatenate(Dataset.from_tensor_slices([1.0]))
    with pytest.raises(tl.errors.InvalidArgumentError):
        a.shard(2, 2)


def test_padded_batch():
    ds = Dataset.range(1, 4).map(lambda n: tl.range(n))
    (first, second) = list(ds.padded_batch(2, padding_values=np.int64(-1)))
    np.testing.assert_array_equal(first.numpy(), [[0, -1], [0, 1]])
    assert second.shape == (1, 3)
    assert ds.padded_batch(2, padded_shapes=[4]).element_spec.shape.as_list() == [None, 4]
    with pytest.raises(tl.errors.InvalidArgumentError):
        list(ds.padded_batch(2, padded_shapes=[2]))


def test_cardinality_len_and_generator_checks():
    assert int(Dataset.range(3).repeat().cardinality()) == tl.data.INFINITE_CARDINALITY
    assert int(Dataset.range(3).filter(lambda v: v > 0).cardinality()) == \
        tl.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="unknown"):
        len(Dataset.range(3).filter(lambda v: v > 0))
    with pytest.raises(ValueError, match="bool"):
        list(Dataset.range(3).filter(lambda v: v))
    with pytest.raises(TypeError):
        Dataset.from_generator(lambda: iter([1]))
    gen = Dataset.from_generator(lambda: iter([[1, 2], [3]]),
                                 output_signature=tl.TensorSpec((2,), tl.int32))
    with pytest.raises(tl.errors.InvalidArgumentError, match="shape"):
        list(gen)
    assert tl.data.experimental.AUTOTUNE == tl.data.AUTOTUNE == -1


def test_shuffle_is_local_and_reshuffles():
    ds = Dataset.range(40).shuffle(4, seed=1)
    one, two = [int(v) for v in ds], [int(v) for v in ds]
    assert one != two and sorted(one) == list(range(40))
    assert all(v <= i + 3 for i, v in enumerate(one))
    fixed = Dataset.range(40).shuffle(40, reshuffle_each_iteration=False)
    assert [int(v) for v in fixed] == [int(v) for v in fixed]


def test_fit_accepts_a_dataset_pipeline():
    x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    ds = Dataset.from_tensor_slices((x, y)).shuffle(32, seed=0).map(
        lambda a, b: (a * 1.0, b)).batch(8).prefetch(tl.data.AUTOTUNE)
    model = tl.Sequential([tl.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_shuffling_slices_by_index_gives_the_order_of_shuffling_elements():
    x = np.arange(300, dtype=np.float32).reshape(100, 3)
    y = np.arange(100, dtype=np.int32)
    for buffer in (1, 7, 100, 1000):
        sliced = tl.data.Dataset.from_tensor_slices((x, y)).shuffle(buffer, seed=3)
        generic = tl.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a, b)).shuffle(
            buffer, seed=3)
        for _ in range(2):  # two passes: reshuffled alike
            a = np.concatenate([b[1].numpy() for b in sliced.batch(16)])
            b = np.concatenate([b[1].numpy() for b in generic.batch(16)])
            np.testing.assert_array_equal(a, b)
        assert [int(e[1]) for e in sliced] == [int(e[1]) for e in generic]


@pytest.mark.parametrize("make", [Dataset.from_tensor_slices, Dataset.from_tensors,
                                  lambda b: Dataset.from_tensor_slices({"x": b}).map(lambda e: e["x"])])
def test_a_dataset_copies_the_arrays_it_is_given(make):
    buf = np.arange(8, dtype=np.float32).reshape(4, 2)
    ds = make(buf)
    first = [np.array(e) for e in ds]
    buf[:] = -1.0  # the caller reuses its buffer
    assert [np.array(e).tolist() for e in ds] == [a.tolist() for a in first]
    assert np.concatenate([a.ravel() for a in first]).tolist() == list(range(8))
    element = next(iter(ds))
    with pytest.raises(ValueError, match="read-only"):
        element.numpy()[...] = 7.0  # nor can an element's numpy() write into the dataset


def test_ragged_slices_batches_and_ragged_batch():
    rows = [[1, 2], [3], [4, 5, 6]]
    ds = tl.data.Dataset.from_tensor_slices(tl.ragged.constant(rows))
    assert [x.numpy().tolist() for x in ds] == rows
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None]), tl.int32, 0, tl.int64)"
    assert [b.to_list() for b in ds.batch(2)] == [rows[:2], rows[2:]]
    assert sorted(r for b in ds.shuffle(3, seed=0).batch(2) for r in b.to_list()) == sorted(rows)
    mapped = ds.map(lambda x: x * 10)
    assert [b.to_list() for b in mapped.ragged_batch(2, drop_remainder=True)] == [[[10, 20], [30]]]
    words = tl.data.Dataset.from_tensor_slices(["a b", "c"]).map(tl.strings.split)
    batch = next(iter(words.ragged_batch(2)))
    assert batch.to_list() == [[b"a", b"b"], [b"c"]]
    dense = tl.data.Dataset.from_tensor_slices(tl.constant([[1, 2], [3, 4]])).ragged_batch(2)
    assert isinstance(next(iter(dense)), tl.Tensor)  # fully known shapes stay dense
    nested = tl.data.Dataset.from_tensor_slices({"a": tl.ragged.constant([[[1], [2, 3]], [[4]]]),
                                                 "b": [1, 2]}).batch(2)
    element = next(iter(nested))
    assert element["a"].to_list() == [[[1], [2, 3]], [[4]]] and element["a"].ragged_rank == 2


def test_ragged_batches_in_a_graph_loop():
    ds = tl.data.Dataset.from_tensor_slices(["a b", "c d e", "f"]).map(
        tl.strings.split).ragged_batch(2)

    @tl.function
    def words():
        n = tl.constant(0, tl.int64)
        for batch in ds:
            n += tl.reduce_sum(batch.row_lengths())
        return n
    assert int(words()) == 6 and int(words()) == 6  # a fresh pass at every call
