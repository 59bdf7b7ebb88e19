"""TensorFlow vs trainlib for `tf.lookup`: static hash tables, vocabulary tables (the OOV
hash buckets must be TensorFlow's exactly), text-file initializers and mutable hash tables,
eagerly, inside a function, and through `Dataset.map`.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check  # noqa: E402

WORDS = ["emerson", "lake", "palmer", "", "king", "crimson", "emerson"]


def _static(lib):
    init = lib.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"], [0, 1, 2],
                                                value_dtype=lib.int64)
    return lib.lookup.StaticHashTable(init, default_value=-1)


def _vocab(lib, buckets=5):
    init = lib.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
                                                lib.constant([0, 1, 2], lib.int64))
    return lib.lookup.StaticVocabularyTable(init, num_oov_buckets=buckets)


def _int_vocab(lib):
    init = lib.lookup.KeyValueTensorInitializer(lib.constant([10, 20], lib.int64),
                                                lib.constant([0, 1], lib.int64))
    return lib.lookup.StaticVocabularyTable(init, num_oov_buckets=7)


def _float_table(lib):
    init = lib.lookup.KeyValueTensorInitializer(lib.constant([3, 1], lib.int64), [0.5, 1.5])
    return lib.lookup.StaticHashTable(init, default_value=-2.0)


# (make the table(s) outside any function, use them): the use runs eagerly and in a function
PROGRAMS = {
    "static_lookup": (_static, lambda lib, t: t.lookup(lib.constant(WORDS))),
    "static_getitem_2d": (_static, lambda lib, t: t[lib.constant([WORDS[:3], WORDS[3:6]])]),
    "static_size": (_static, lambda lib, t: t.size()),
    "static_float_values": (_float_table, lambda lib, t: t.lookup(lib.constant([1, 2, 3],
                                                                              lib.int64))),
    "static_sparse_keys": (_static, lambda lib, t: lib.sparse.to_dense(t.lookup(
        lib.SparseTensor([[0, 0], [1, 2]], ["lake", "zz"], [2, 3])))),
    "static_ragged_keys": (_static, lambda lib, t: t.lookup(
        lib.ragged.constant([["lake"], ["palmer", "x", "emerson"]])).flat_values),
    "static_wrong_key_dtype": (_static, lambda lib, t: t.lookup(lib.constant([1, 2]))),
    "vocab_lookup": (_vocab, lambda lib, t: t.lookup(lib.constant(WORDS))),
    "vocab_one_bucket": (lambda lib: _vocab(lib, 1), lambda lib, t: t[lib.constant(WORDS)]),
    "vocab_size": (_vocab, lambda lib, t: t.size()),
    "vocab_int_keys": (_int_vocab, lambda lib, t: t.lookup(
        lib.constant([10, 20, 30, -4, 123456789], lib.int64))),
    "vocab_no_initializer": (lambda lib: lib.lookup.StaticVocabularyTable(None, 11),
                             lambda lib, t: t.lookup(lib.constant(WORDS))),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    make, use = PROGRAMS[name]

    def run(lib):
        table = make(lib)

        def body():
            return use(lib, table)
        return lib.function(body)() if graph else body()
    check(run)


def test_static_export_holds_every_entry():
    def run(lib):
        keys, values = _static(lib).export()
        order = np.argsort(keys.numpy())
        return lib.constant(keys.numpy()[order]), lib.constant(values.numpy()[order])
    check(run)


def test_bad_arguments_raise_as_tensorflow():
    check(lambda lib: _vocab(lib, 0))
    check(lambda lib: lib.lookup.StaticVocabularyTable(
        lib.lookup.KeyValueTensorInitializer(["a"], [1.0]), 2))


@pytest.mark.parametrize("key_index,value_index", [(0, 1), (-2, -1), (1, 0)])
def test_text_file_initializer(tmp_path, key_index, value_index):
    path = tmp_path / "vocab.txt"
    path.write_text("apple\t7\nbanana\t8\ncherry\t9\n")

    def run(lib):
        kd = lib.int64 if key_index == 1 else lib.string
        vd = lib.string if value_index == 0 else lib.int64
        init = lib.lookup.TextFileInitializer(str(path), kd, key_index, vd, value_index)
        table = lib.lookup.StaticHashTable(init, "?" if vd == lib.string else -1)
        keys = lib.constant([8, 9, 1], lib.int64) if key_index == 1 else \
            lib.constant(["banana", "x", "apple\t7"])
        return table.lookup(keys), table.size()
    check(run)


def test_text_file_vocab_size_and_line_numbers(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\nc\nd\n")

    def run(lib):
        init = lib.lookup.TextFileInitializer(
            str(path), lib.string, lib.lookup.TextFileIndex.WHOLE_LINE, lib.int64,
            lib.lookup.TextFileIndex.LINE_NUMBER, vocab_size=3)
        table = lib.lookup.StaticVocabularyTable(init, num_oov_buckets=2)
        return table.lookup(lib.constant(["c", "d", "a", "zz"])), table.size()
    check(run)


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_mutable_hash_table(graph):
    def run(lib):
        table = lib.lookup.experimental.MutableHashTable(lib.string, lib.float32, -1.0)

        def step():
            table.insert(lib.constant(["a", "b", "c"]), lib.constant([1.0, 2.0, 3.0]))
            table.insert(lib.constant(["b"]), lib.constant([20.0]))
            first = table.lookup(lib.constant(["a", "b", "z"]))
            table.remove(lib.constant(["a", "q"]))
            return first, table.lookup(lib.constant(["a", "b", "c"])), table.size()
        return lib.function(step)() if graph else step()
    check(run)


def test_mutable_hash_table_vector_values():
    def run(lib):
        table = lib.lookup.experimental.MutableHashTable(lib.int64, lib.int32, [0, 0])
        table.insert(lib.constant([5, 6], lib.int64), lib.constant([[1, 2], [3, 4]]))
        keys, values = table.export()
        order = np.argsort(keys.numpy())
        return (table.lookup(lib.constant([[6, 7]], lib.int64)), lib.constant(keys.numpy()[order]),
                lib.constant(values.numpy()[order]))
    check(run)


def test_vocabulary_table_in_dataset_map():
    def run(lib):
        table = _vocab(lib)
        ds = lib.data.Dataset.from_tensor_slices(WORDS).map(table.lookup)
        return [int(x) for x in ds.as_numpy_iterator()]
    check(run)


def test_mutable_hash_table_dynamic_defaults():
    def run(lib):
        table = lib.lookup.experimental.MutableHashTable(lib.string, lib.int64, -1)
        table.insert(lib.constant(["a"]), lib.constant([5], lib.int64))
        return table.lookup(lib.constant(["a", "b", "c"]),
                            dynamic_default_values=lib.constant([10, 20, 30], lib.int64))
    check(run)
