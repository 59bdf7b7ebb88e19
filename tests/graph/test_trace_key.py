"""graph/trace_key.py: typed cache keys of tl.function arguments."""
import collections

import numpy as np

import trainlib as tl
from trainlib.graph.trace_key import (SIGNATURE, DictKey, ObjectKey, SequenceKey, TensorKey,
                                      ValueKey, VariableKey, key_of, relax_args)

Point = collections.namedtuple("Point", "x y")


def test_keys_are_typed_and_compare_by_kind_and_facts():
    k = key_of(tl.constant([1.0, 2.0]))
    assert type(k) is TensorKey and k == key_of(tl.TensorSpec([2], tl.float32))
    assert k == key_of(np.zeros(2, np.float32))
    assert k != key_of(tl.constant([1, 2]))
    assert key_of(1) == key_of(1.0) == key_of(True) and type(key_of(1)) is ValueKey
    assert key_of(float("nan")) == key_of(float("nan"))
    assert type(key_of([1, 2])) is SequenceKey and key_of([1, 2]) != key_of((1, 2))
    assert type(key_of({"b": 1, "a": 2})) is DictKey
    assert key_of({"b": 1, "a": 2}) == key_of({"a": 2, "b": 1})  # sorted, as nest walks dicts
    v = tl.Variable(1.0)
    assert type(key_of(v)) is VariableKey and key_of(v) != key_of(tl.Variable(1.0))
    assert type(key_of(object())) is ObjectKey
    hash(key_of([tl.constant(1.0), {"k": "s"}, None]))


def test_describe_names_the_argument():
    assert key_of(tl.constant([1.0])).describe() == "TensorSpec(shape=(1,), dtype=tl.float32)"
    assert key_of([1, "a"]).describe() == "[1, 'a']"
    assert key_of({"k": (None,)}).describe() == "{'k': (None,)}"
    assert SIGNATURE[0].describe() == "input_signature"


def test_relax_makes_changed_dims_none():
    old = (key_of(tl.zeros([2, 3])), key_of(Point(tl.zeros([4]), 1)))
    args = (tl.zeros([5, 3]), Point(tl.zeros([4]), 1))
    key = tuple(map(key_of, args))
    relaxed = relax_args(args, key, [old, SIGNATURE])
    assert isinstance(relaxed[0], tl.TensorSpec) and relaxed[0].shape.as_list() == [None, 3]
    assert type(relaxed[1]) is Point and relaxed[1].x is args[1].x  # unchanged: kept as given
    rank = relax_args((tl.zeros([2]),), (key_of(tl.zeros([2])),), [(key_of(tl.zeros([2, 2])),)])
    assert rank[0].shape.rank is None
