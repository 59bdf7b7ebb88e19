"""tl.data against tf.data: each pipeline is built from the same source on both libraries and
compared element by element (structure, dtypes, shapes, values), with element_spec,
cardinality and len; errors must be raised by both. Shuffle orders cannot match TF's
random stream, so shuffles are compared as multisets and by their buffer locality."""
import collections

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402
from tests.tf_compare.compare import Raised, assert_same, outcome  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

X = np.arange(24, dtype=np.float32).reshape(12, 2)
Y = np.arange(12)
Point = collections.namedtuple("Point", "x y")


def ragged(lib):
    return lib.data.Dataset.range(1, 6).map(lambda n: lib.range(n))


PIPELINES = {
    "slices_tuple": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)),
    "slices_dict": lambda lib: lib.data.Dataset.from_tensor_slices({"a": X, "b": Y}),
    "slices_pylist_int": lambda lib: lib.data.Dataset.from_tensor_slices([1, 2, 3]),
    "slices_pylist_float": lambda lib: lib.data.Dataset.from_tensor_slices([[1.0, 2.0], [3, 4]]),
    "slices_bool": lambda lib: lib.data.Dataset.from_tensor_slices(np.array([True, False])),
    "slices_namedtuple": lambda lib: lib.data.Dataset.from_tensor_slices(Point(X, Y)).batch(5),
    "slices_nested": lambda lib: lib.data.Dataset.from_tensor_slices(({"a": X}, (Y, Y))),
    "from_tensors": lambda lib: lib.data.Dataset.from_tensors(([1, 2], 3.5)),
    "range": lambda lib: lib.data.Dataset.range(2, 11, 3),
    "range_dtype": lambda lib: lib.data.Dataset.range(4, output_type=lib.int32),
    "batch": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).batch(5),
    "batch_drop": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).batch(5, True),
    "range_batch": lambda lib: lib.data.Dataset.range(7).batch(3),
    "range_batch_drop": lambda lib: lib.data.Dataset.range(7).batch(3, drop_remainder=True),
    "repeat_batch": lambda lib: lib.data.Dataset.range(5).repeat(2).batch(3),
    "batch_repeat": lambda lib: lib.data.Dataset.range(5).batch(3).repeat(2),
    "repeat_take": lambda lib: lib.data.Dataset.range(3).repeat().take(7),
    "take_neg": lambda lib: lib.data.Dataset.range(4).take(-1),
    "take_more": lambda lib: lib.data.Dataset.range(4).take(10),
    "skip": lambda lib: lib.data.Dataset.range(6).skip(4),
    "skip_neg": lambda lib: lib.data.Dataset.range(6).skip(-1),
    "unbatch": lambda lib: lib.data.Dataset.from_tensor_slices(X).batch(5).unbatch(),
    "map_tuple_args": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: (x * 2.0, y + 1)),
    "map_dict_arg": lambda lib: lib.data.Dataset.from_tensor_slices({"a": X, "b": Y}).map(
        lambda d: d["a"][0] + lib.cast(d["b"], lib.float32)),
    "map_list_out": lambda lib: lib.data.Dataset.range(3).map(lambda v: [v, v * 2]),
    "map_python_const": lambda lib: lib.data.Dataset.range(3).map(lambda v: (v, 1.5, 2)),
    "map_to_dict": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: ({"feat": x}, y)).batch(4),
    "batch_map": lambda lib: lib.data.Dataset.from_tensor_slices(X).batch(5).map(
        lambda x: lib.reduce_sum(x, axis=1)),
    "filter": lambda lib: lib.data.Dataset.range(10).filter(lambda v: v % 3 == 0),
    "filter_tuple": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).filter(
        lambda x, y: y > 8),
    "filter_not_bool": lambda lib: lib.data.Dataset.range(4).filter(lambda v: v),
    "zip": lambda lib: lib.data.Dataset.zip(lib.data.Dataset.range(5),
                                            lib.data.Dataset.from_tensor_slices(X)),
    "zip_tuple": lambda lib: lib.data.Dataset.zip((lib.data.Dataset.range(3),
                                                   lib.data.Dataset.range(4).repeat())),
    "zip_dict": lambda lib: lib.data.Dataset.zip({"a": lib.data.Dataset.range(3),
                                                  "b": lib.data.Dataset.range(2)}),
    "enumerate": lambda lib: lib.data.Dataset.from_tensor_slices(Y[:4]).enumerate(start=3),
    "concatenate": lambda lib: lib.data.Dataset.range(3).concatenate(lib.data.Dataset.range(2)),
    "concatenate_shapes": lambda lib: lib.data.Dataset.from_tensors([1, 2]).concatenate(
        lib.data.Dataset.from_tensors([1, 2, 3])),
    "concatenate_bad": lambda lib: lib.data.Dataset.range(3).concatenate(
        lib.data.Dataset.from_tensor_slices([1.0])),
    "padded_batch": lambda lib: ragged(lib).padded_batch(2),
    "padded_batch_shapes": lambda lib: ragged(lib).padded_batch(2, padded_shapes=[6],
                                                                padding_values=np.int64(-1)),
    "padded_batch_drop": lambda lib: ragged(lib).map(lambda r: (r, lib.size(r))).padded_batch(
        2, padded_shapes=([None], []), drop_remainder=True),
    "padded_batch_too_small": lambda lib: ragged(lib).padded_batch(2, padded_shapes=[3]),
    "shard": lambda lib: lib.data.Dataset.range(10).shard(3, 1),
    "shard_last": lambda lib: lib.data.Dataset.range(10).shard(3, 2),
    "shard_bad": lambda lib: lib.data.Dataset.range(10).shard(3, 3),
    "apply": lambda lib: lib.data.Dataset.range(6).apply(lambda d: d.batch(4)),
    "batch_zero": lambda lib: lib.data.Dataset.range(6).batch(0),
    "shuffle_zero": lambda lib: lib.data.Dataset.range(6).shuffle(0),
    "batch_ragged": lambda lib: ragged(lib).batch(2),
    "unbatch_then_batch": lambda lib: lib.data.Dataset.range(8).batch(3).unbatch().batch(4),
    "generator": lambda lib: lib.data.Dataset.from_generator(
        lambda: iter([(1, [1.5, 2.0]), (2, [3.0, 4.0])]),
        output_signature=(lib.TensorSpec((), lib.int64), lib.TensorSpec((None,), lib.float32))),
    "generator_batch": lambda lib: lib.data.Dataset.from_generator(
        lambda: (np.full(3, i) for i in range(5)),
        output_signature=lib.TensorSpec((3,), lib.int32)).batch(2),
    "generator_bad_shape": lambda lib: lib.data.Dataset.from_generator(
        lambda: iter([[1, 2], [1, 2, 3]]), output_signature=lib.TensorSpec((2,), lib.int32)),
    "generator_bad_dtype": lambda lib: lib.data.Dataset.from_generator(
        lambda: iter(["a"]), output_signature=lib.TensorSpec((), lib.int32)),
    "generator_no_signature": lambda lib: lib.data.Dataset.from_generator(lambda: iter([1])),
    "prefetch_cache": lambda lib: lib.data.Dataset.range(4).cache().prefetch(
        lib.data.AUTOTUNE).batch(2),
    "fit_pipeline": lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: (x / 10.0, y)).batch(4, drop_remainder=True).prefetch(1),
}


def same_spec(a, b, where="spec"):
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: tf={a} tl={b}"
        for k in a:
            same_spec(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, tuple):
        assert type(b).__name__ == type(a).__name__ and len(a) == len(b), f"{where}: {a} vs {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            same_spec(x, y, f"{where}[{i}]")
    else:
        assert isinstance(b, tl.TensorSpec), f"{where}: tf={a} tl={b}"
        assert a.dtype.name == b.dtype.name, f"{where}: tf={a} tl={b}"
        assert a.shape.as_list() == b.shape.as_list(), f"{where}: tf={a} tl={b}"


def elements(lib, build):
    ds = build(lib)
    return {"elements": list(ds), "cardinality": ds.cardinality()}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tf(name):
    build = PIPELINES[name]
    want, got = outcome(lambda lib: elements(lib, build), tf), \
        outcome(lambda lib: elements(lib, build), tl)
    assert_same(want, got, where=name)
    if isinstance(want, Raised):
        return
    for a, b in zip(want["elements"], got["elements"]):
        if isinstance(a, (tuple, dict)):   # tuple / dict / namedtuple
            assert type(a).__name__ == type(b).__name__, name
    tf_ds, tl_ds = build(tf), build(tl)
    same_spec(tf_ds.element_spec, tl_ds.element_spec, name)
    assert outcome(lambda lib: len(build(lib)), tf).__class__ is \
        outcome(lambda lib: len(build(lib)), tl).__class__
    for x, y in zip(tf_ds.as_numpy_iterator(), tl_ds.as_numpy_iterator()):
        same_numpy(x, y, name)


def same_numpy(a, b, where):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            same_numpy(a[k], b[k], where)
    elif isinstance(a, tuple):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b), where
        for x, y in zip(a, b):
            same_numpy(x, y, where)
    else:
        assert isinstance(b, (np.ndarray, np.generic)) and b.dtype == a.dtype, where
        np.testing.assert_array_equal(b, a, err_msg=where)


CARDINALITY = {
    "repeat_forever": lambda lib: lib.data.Dataset.range(3).repeat(),
    "repeat_empty": lambda lib: lib.data.Dataset.range(0).repeat(),
    "repeat_unknown": lambda lib: lib.data.Dataset.range(3).filter(lambda v: v > 0).repeat(),
    "repeat_unknown_twice": lambda lib: lib.data.Dataset.range(3).filter(lambda v: v > 0).repeat(2),
    "take_infinite": lambda lib: lib.data.Dataset.range(3).repeat().take(5),
    "take_unknown": lambda lib: lib.data.Dataset.range(3).filter(lambda v: v > 0).take(5),
    "skip_infinite": lambda lib: lib.data.Dataset.range(3).repeat().skip(5),
    "batch_infinite": lambda lib: lib.data.Dataset.range(3).repeat().batch(5),
    "zip_infinite": lambda lib: lib.data.Dataset.zip(lib.data.Dataset.range(4),
                                                     lib.data.Dataset.range(2).repeat()),
    "zip_unknown": lambda lib: lib.data.Dataset.zip(
        lib.data.Dataset.range(4), lib.data.Dataset.range(2).filter(lambda v: v > 0)),
    "concat_infinite": lambda lib: lib.data.Dataset.range(2).concatenate(
        lib.data.Dataset.range(2).repeat()),
    "concat_unknown": lambda lib: lib.data.Dataset.range(2).repeat().concatenate(
        lib.data.Dataset.range(2).filter(lambda v: v > 0)),
    "shard_infinite": lambda lib: lib.data.Dataset.range(2).repeat().shard(2, 1),
    "unbatch": lambda lib: lib.data.Dataset.range(6).batch(2).unbatch(),
    "generator": lambda lib: lib.data.Dataset.from_generator(
        lambda: iter([1]), output_signature=lib.TensorSpec((), lib.int32)),
    "shuffle": lambda lib: lib.data.Dataset.range(6).shuffle(2),
}


@pytest.mark.parametrize("name", sorted(CARDINALITY))
def test_cardinality_and_len_match_tf(name):
    build = CARDINALITY[name]
    assert_same(build(tf).cardinality(), build(tl).cardinality(), where=name)
    a, b = outcome(lambda lib: len(build(lib)), tf), outcome(lambda lib: len(build(lib)), tl)
    if isinstance(a, Raised):
        assert isinstance(b, Raised) and type(b.error) is type(a.error) and \
            str(b.error) == str(a.error), f"{name}: tf={a} tl={b}"
    else:
        assert a == b, name
    same_spec(build(tf).element_spec, build(tl).element_spec, name)


def test_constants():
    assert tl.data.AUTOTUNE == tf.data.AUTOTUNE == tl.data.experimental.AUTOTUNE
    assert tl.data.INFINITE_CARDINALITY == tf.data.INFINITE_CARDINALITY
    assert tl.data.UNKNOWN_CARDINALITY == tf.data.UNKNOWN_CARDINALITY


def test_reduce_matches_tf():
    def total(lib):
        return lib.data.Dataset.range(5).reduce(np.int64(0), lambda s, v: s + v)

    def pairs(lib):
        ds = lib.data.Dataset.from_tensor_slices(([1, 2], [3.0, 4.0]))
        return ds.reduce((0, 0.0), lambda s, e: (s[0] + e[0], s[1] + e[1]))

    def count(lib):
        return lib.data.Dataset.range(7).batch(2).reduce(np.int64(0), lambda s, _: s + 1)

    def too_many_args(lib):
        return lib.data.Dataset.from_tensor_slices(([1], [2])).reduce(0, lambda s, a, b: s + a)

    for program in (total, pairs, count, too_many_args):
        assert_same(outcome(program, tf), outcome(program, tl), where=program.__name__)


def _positions(order):
    return [abs(v - i) for i, v in enumerate(order)]


@pytest.mark.parametrize("buffer_size", [1, 3, 50])
def test_shuffle_semantics_match_tf(buffer_size):
    for lib in (tf, tl):
        ds = lib.data.Dataset.range(30).shuffle(buffer_size, seed=7)
        epochs = [[int(v) for v in ds] for _ in range(2)]
        assert all(sorted(e) == list(range(30)) for e in epochs)
        # the buffer bounds how early an element can come out
        assert all(v <= i + buffer_size - 1 for e in epochs for i, v in enumerate(e))
        if buffer_size == 1:
            assert epochs[0] == list(range(30))
        else:
            assert epochs[0] != epochs[1]   # reshuffled each iteration
        again = lib.data.Dataset.range(30).shuffle(buffer_size, seed=7)
        assert [int(v) for v in again] == epochs[0]   # same seed, same order
        fixed = lib.data.Dataset.range(30).shuffle(buffer_size, reshuffle_each_iteration=False)
        assert [int(v) for v in fixed] == [int(v) for v in fixed]


def test_shuffle_then_batch_shapes_match_tf():
    def build(lib):
        ds = lib.data.Dataset.from_tensor_slices((X, Y)).shuffle(12, seed=1).batch(5)
        return [(tuple(x.shape), tuple(y.shape), x.dtype.name, y.dtype.name) for x, y in ds]
    assert build(tf) == build(tl)
