"""tl.lookup without TensorFlow: static, vocabulary and mutable tables, eagerly, in
tl.function and in Dataset.map (tests/tf_compare/test_tf_lookup.py compares with TensorFlow)."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops.farmhash import fingerprint64


def _vocab(buckets):
    init = tl.lookup.KeyValueTensorInitializer(["a", "b"], tl.constant([0, 1], tl.int64))
    return tl.lookup.StaticVocabularyTable(init, num_oov_buckets=buckets)


@pytest.mark.parametrize("graph", [False, True])
def test_vocabulary_oov_ids_are_fingerprint_buckets_after_the_vocabulary(graph):
    table = _vocab(4)
    words = ["b", "xyz", "a", "hello", ""]

    def run():
        return table.lookup(tl.constant(words))
    got = (tl.function(run)() if graph else run()).numpy()
    want = [1, 2 + fingerprint64(b"xyz") % 4, 0, 2 + fingerprint64(b"hello") % 4,
            2 + fingerprint64(b"") % 4]
    assert got.tolist() == want
    assert int(table.size()) == 6


def test_static_hash_table_default_and_dtypes():
    init = tl.lookup.KeyValueTensorInitializer(tl.constant([1, 5], tl.int64), [2.5, 3.5])
    table = tl.lookup.StaticHashTable(init, default_value=-1.0)
    assert table.key_dtype is tl.int64 and table.value_dtype is tl.float32
    np.testing.assert_array_equal(table[tl.constant([[5, 0]], tl.int64)].numpy(), [[3.5, -1.0]])
    with pytest.raises(TypeError, match="int64"):
        table.lookup(tl.constant(["x"]))


def test_mutable_table_insert_remove_in_function_keeps_order():
    table = tl.lookup.experimental.MutableHashTable(tl.string, tl.int64, default_value=0)

    @tl.function
    def step(k, v):
        table.insert(k, v)
        before = table.lookup(k)
        table.remove(k[:1])
        return before, table.lookup(k), table.size()
    before, after, size = step(tl.constant(["p", "q"]), tl.constant([4, 9], tl.int64))
    assert before.numpy().tolist() == [4, 9] and after.numpy().tolist() == [0, 9]
    assert int(size) == 1
    keys, values = table.export()
    assert keys.numpy().tolist() == [b"q"] and values.numpy().tolist() == [9]


def test_vocabulary_table_in_dataset_map():
    table = _vocab(1)
    ds = tl.data.Dataset.from_tensor_slices(["a", "zz", "b"]).map(table.lookup)
    assert [int(x) for x in ds.as_numpy_iterator()] == [0, 2, 1]


def test_text_file_initializer_errors(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a\t1\nb\n")
    init = tl.lookup.TextFileInitializer(str(path), tl.string, 0, tl.int64, 1)
    with pytest.raises(tl.errors.InvalidArgumentError, match="expected 2 got 1"):
        tl.lookup.StaticHashTable(init, -1)
    with pytest.raises(ValueError, match="num_oov_buckets"):
        _vocab(0)


def test_tables_built_inside_a_function_from_constants():
    @tl.function
    def f(x):
        init = tl.lookup.KeyValueTensorInitializer(["a", "b"], tl.constant([1, 2], tl.int64))
        return tl.lookup.StaticHashTable(init, -1).lookup(x)
    assert f(tl.constant(["b", "c"])).numpy().tolist() == [2, -1]

    @tl.function
    def g(x):
        init = tl.lookup.KeyValueTensorInitializer(x, tl.constant([1], tl.int64))
        return tl.lookup.StaticHashTable(init, -1).lookup(x)
    with pytest.raises(ValueError, match="outside the function"):
        g(tl.constant(["b"]))


def test_text_file_with_a_repeated_identical_pair_loads_and_a_fifo_is_refused(tmp_path):
    import os
    path = tmp_path / "vocab.txt"
    path.write_text("a\t1\nb\t2\na\t1\n")
    init = tl.lookup.TextFileInitializer(str(path), tl.string, 0, tl.int64, 1)
    table = tl.lookup.StaticHashTable(init, -1)
    np.testing.assert_array_equal(table.lookup(tl.constant(["a", "b", "c"])).numpy(), [1, 2, -1])
    path.write_text("a\t1\na\t3\n")
    with pytest.raises(tl.errors.InvalidArgumentError, match="different value for same key"):
        tl.lookup.StaticHashTable(tl.lookup.TextFileInitializer(str(path), tl.string, 0,
                                                                tl.int64, 1), -1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        tl.lookup.StaticHashTable(tl.lookup.TextFileInitializer(str(fifo), tl.string, 0,
                                                                tl.int64, 1), -1)
