"""keras.tree (trainlib/tree.py): Keras 3's order and containers, written out by hand here;
tests/keras_compare/test_utils_config_tree.py checks the same calls against Keras itself."""
import collections

import pytest
from hypothesis import given, strategies as st

from trainlib.keras import tree

Point = collections.namedtuple("Point", ["b", "a"])

leaves = st.integers(-5, 5) | st.none() | st.text(max_size=2)
structures = st.recursive(
    leaves,
    lambda inner: (st.lists(inner, max_size=3) | st.tuples(inner, inner)
                   | st.dictionaries(st.text("abcz", min_size=1, max_size=2), inner, max_size=3)
                   | st.builds(Point, inner, inner)),
    max_leaves=8)


def test_flatten_orders_dicts_by_sorted_key_and_ordered_dicts_by_insertion():
    assert tree.flatten({"b": 1, "a": [2, None], "c": (3,)}) == [2, None, 1, 3]
    assert tree.flatten(collections.OrderedDict([("z", 1), ("a", 2)])) == [1, 2]
    assert tree.flatten(collections.defaultdict(list, {"z": 1, "a": 2})) == [2, 1]
    assert tree.flatten(None) == [None] and tree.flatten("ab") == ["ab"]
    assert tree.flatten(collections.deque([1, [2]])) == [1, 2]
    assert tree.flatten([[], {}, ()]) == []


def test_flatten_with_path_names_indices_and_keys():
    assert tree.flatten_with_path([1, (2, {"b": 3, "a": [4]})]) == [
        ((0,), 1), ((1, 0), 2), ((1, 1, "a", 0), 4), ((1, 1, "b"), 3)]
    assert tree.flatten_with_path(Point(1, [2])) == [((0,), 1), ((1, 0), 2)]


def test_pack_keeps_the_containers_and_each_dicts_own_key_order():
    packed = tree.pack_sequence_as({"key3": "", "key1": "", "key2": ""}, ["v1", "v2", "v3"])
    assert packed == {"key3": "v3", "key1": "v1", "key2": "v2"}
    assert list(packed) == ["key3", "key1", "key2"]
    dd = tree.pack_sequence_as(collections.defaultdict(list, {"z": 0, "a": 0}), [1, 2])
    assert isinstance(dd, collections.defaultdict) and dd.default_factory is list
    assert dict(dd) == {"z": 2, "a": 1}
    q = tree.pack_sequence_as(collections.deque([0, [0]], maxlen=4), [5, 6])
    assert q == collections.deque([5, [6]]) and q.maxlen == 4
    assert tree.pack_sequence_as(Point(0, 0), [1, 2]) == Point(1, 2)
    assert tree.pack_sequence_as(1, [5]) == 5
    with pytest.raises(ValueError, match="Too few leaves"):
        tree.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError, match="Too many leaves"):
        tree.pack_sequence_as([1, 2], [1, 2, 3])


@given(structures)
def test_pack_of_flatten_is_the_structure(structure):
    assert tree.pack_sequence_as(structure, tree.flatten(structure)) == structure
    assert [leaf for _, leaf in tree.flatten_with_path(structure)] == tree.flatten(structure)
    tree.assert_same_structure(structure, tree.map_structure(lambda x: 0, structure))


def test_map_structure_rules():
    assert tree.map_structure(lambda v: v ** 2, [[1], [2], [3]]) == [[1], [4], [9]]
    assert tree.map_structure(lambda x, y: x * y, {"a": 2, "b": 3},
                              collections.OrderedDict([("b", 5), ("a", 7)])) == {"a": 14, "b": 15}
    assert tree.map_structure(lambda x: 5, [1, None], none_is_leaf=False) == [5, None]
    assert tree.map_structure(lambda x: 5, [1, None]) == [5, 5]
    with pytest.raises(ValueError, match="same nested structure"):
        tree.map_structure(lambda x, y: x, [1, 2], [1, [2]])
    with pytest.raises(ValueError, match="Expected an instance of list"):
        tree.map_structure(lambda x, y: x, [1, 2], (1, 2))
    with pytest.raises(ValueError, match="at least one structure"):
        tree.map_structure(len)


def test_map_structure_up_to_calls_func_on_the_deeper_parts():
    assert tree.map_structure_up_to({"a": 0}, lambda x, y: (x, y), {"a": [1]}, {"a": [2]}) == {
        "a": ([1], [2])}
    assert tree.map_structure_up_to([0, 0], len, [[1, 1], [2, 2, 2]]) == [2, 3]
    with pytest.raises(ValueError):   # Keras 3.15 refuses None leaves in the shallow structure
        tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2]])


def test_assert_same_structure_and_paths():
    tree.assert_same_structure([(0, 1)], [(2, 3)])
    tree.assert_same_structure({"a": 1}, collections.OrderedDict(a=2))
    tree.assert_same_structure([None], [1])
    for a, b in [([1, 2], (1, 2)), (Point(1, 2), (1, 2)), ([1, [2]], [1, 2]),
                 ({"a": 1}, {"a": 1, "z": 2})]:
        with pytest.raises(ValueError):
            tree.assert_same_structure(a, b)
    tree.assert_same_paths([0, 1], (2, 3))
    tree.assert_same_paths(Point(0, 1), (2, 3))
    with pytest.raises(ValueError, match=r"Paths in `b` missing in `a`:\n\{\('z',\)\}"):
        tree.assert_same_paths({"a": 1}, {"a": 1, "z": 2})


def test_traverse_top_down_bottom_up_and_map_to_none():
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if x == 2 else None, [1, [2, 3]]) == [
        1, [None, 3]]
    seen = []
    tree.traverse(lambda x: seen.append(x) or ("X" if x == [2, 3] else None), [1, [2, 3]])
    assert seen == [[1, [2, 3]], 1, [2, 3]]      # the replaced subtree's children not visited
    assert tree.traverse(lambda x: x * 10 if isinstance(x, int) else None, [1, [2, 3]],
                         top_down=False) == [10, [20, 30]]


def test_lists_to_tuples_and_shapes():
    assert tree.lists_to_tuples([1, {"a": [2, None]}]) == (1, {"a": (2, None)})
    assert tree.map_shape_structure(len, {"a": (None, 3), "b": [(1, 2), [4]]}) == {
        "a": 2, "b": [2, 1]}
    assert tree.is_nested([1]) and tree.is_nested({}) and not tree.is_nested(None)
    assert not tree.is_nested("abc")
