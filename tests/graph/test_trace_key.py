"""graph/trace_key.py: typed cache keys of tl.function arguments (tuples tagged by their kind)."""
import collections

import numpy as np

import trainlib as tl
from trainlib.graph.trace_key import (SIGNATURE, DictKey, ObjectKey, SequenceKey, TensorKey,
                                      ValueKey, VariableKey, describe, key_of, relax_args)

Point = collections.namedtuple("Point", "x y")


def test_keys_are_typed_and_compare_by_kind_and_facts():
    k = key_of(tl.constant([1.0, 2.0]))
    assert k[0] is TensorKey and k == key_of(tl.TensorSpec([2], tl.float32))
    assert k == key_of(np.zeros(2, np.float32))
    assert k != key_of(tl.constant([1, 2]))
    assert key_of(1) == key_of(1.0) == key_of(True) and key_of(1)[0] is ValueKey
    assert key_of(float("nan")) == key_of(float("nan"))
    assert key_of([1, 2])[0] is SequenceKey and key_of([1, 2]) != key_of((1, 2))
    assert key_of({"b": 1, "a": 2})[0] is DictKey
    assert key_of({"b": 1, "a": 2}) == key_of({"a": 2, "b": 1})  # sorted, as nest walks dicts
    v = tl.Variable(1.0)
    assert key_of(v)[0] is VariableKey and key_of(v) != key_of(tl.Variable(1.0))
    assert key_of(object())[0] is ObjectKey
    hash(key_of([tl.constant(1.0), {"k": "s"}, None]))


def test_describe_names_the_argument():
    assert describe(key_of(tl.constant([1.0]))) == "TensorSpec(shape=(1,), dtype=tl.float32)"
    assert describe(key_of([1, "a"])) == "[1, 'a']"
    assert describe(key_of({"k": (None,)})) == "{'k': (None,)}"
    assert describe(SIGNATURE[0]) == "input_signature"


def test_relax_makes_changed_dims_none():
    old = (key_of(tl.zeros([2, 3])), key_of(Point(tl.zeros([4]), 1)))
    args = (tl.zeros([5, 3]), Point(tl.zeros([4]), 1))
    key = tuple(map(key_of, args))
    relaxed = relax_args(args, key, [old, SIGNATURE])
    assert isinstance(relaxed[0], tl.TensorSpec) and relaxed[0].shape.as_list() == [None, 3]
    assert type(relaxed[1]) is Point and relaxed[1].x is args[1].x  # unchanged: kept as given
    rank = relax_args((tl.zeros([2]),), (key_of(tl.zeros([2])),), [(key_of(tl.zeros([2, 2])),)])
    assert rank[0].shape.rank is None
