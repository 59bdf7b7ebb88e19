"""graph/nest.py: one walk over nested structures (TensorFlow's nest order)."""
import collections
import dataclasses

import pytest
from hypothesis import given, strategies as st

from trainlib.graph import nest

Point = collections.namedtuple("Point", "x y")

leaves = st.one_of(st.integers(), st.none(), st.text(max_size=3))
structures = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=2), inner, max_size=3),
                            st.builds(Point, inner, inner)),
    max_leaves=12)


@given(structures)
def test_flatten_then_pack_as_rebuilds(structure):
    flat = nest.flatten(structure)
    assert nest.pack_as(structure, flat) == structure
    leaves_, treedef = nest.flatten_with_treedef(structure)
    assert treedef.unflatten(leaves_) == structure
    assert [leaf for _, leaf in nest.flatten_with_paths(structure)] == flat


def test_dicts_walk_in_sorted_key_order_and_keep_their_order():
    d = {"b": 1, "a": 2, "c": {"z": 3, "y": 4}}
    assert nest.flatten(d) == [2, 1, 4, 3]
    packed = nest.pack_as(d, [10, 20, 30, 40])
    assert list(packed) == ["b", "a", "c"] and packed == {"b": 20, "a": 10, "c": {"z": 40, "y": 30}}
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    out = nest.map_structure(lambda v: v * 10, od)
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]


def test_paths_name_indices_and_keys():
    assert nest.flatten_with_paths({"k": [5, Point(6, 7)]}) == \
        [(("k", 0), 5), (("k", 1, 0), 6), (("k", 1, 1), 7)]


def test_map_structure_checks_structures():
    assert nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    with pytest.raises(ValueError, match="same nested structure"):
        nest.map_structure(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match="same nested structure"):
        nest.map_structure(lambda a, b: a, {"a": 1}, {"b": 1})


def test_map_structure_up_to_stops_at_shallow_leaves():
    out = nest.map_structure_up_to(("s", ["t"]), lambda s, v: (s, v), (1, [[2, 3]]))
    assert out == (("s", 1), [("t", [2, 3])])
    assert nest.map_structure_up_to([1, 2], lambda s, v: v, [7], on_mismatch=lambda s, v: "x") == "x"
    with pytest.raises(ValueError, match="does not nest"):
        nest.map_structure_up_to([1, 2], lambda s, v: v, [7])


def test_element_rule_lists_are_leaves():
    element = ([1, 2], {"a": (3, [4])})
    assert nest.flatten(element, nest.ELEMENT) == [[1, 2], 3, [4]]
    assert nest.pack_as(element, ["p", "q", "r"], nest.ELEMENT) == ("p", {"a": ("q", "r")})
    assert nest.same_structure((1, [2]), (3, [4, 5]), nest.ELEMENT)
    assert not nest.same_structure((1, [2]), (3, [4, 5]))


class Box:
    """A composite through the protocol methods."""

    def __init__(self, parts, tag):
        self.parts, self.tag = list(parts), tag

    def _tl_flatten(self):
        return self.parts

    def _tl_rebuild(self, parts):
        return Box(parts, self.tag)

    def _tl_static_key(self):
        return (self.tag,)


class Pair:
    """A composite through register_composite."""

    def __init__(self, a, b):
        self.a, self.b = a, b


nest.register_composite(Pair, lambda p: [p.a, p.b], lambda p, parts: Pair(*parts),
                        static_key=lambda p: ("pair",))


@nest.register_dataclass
@dataclasses.dataclass
class Fields:
    x: object
    y: object


@dataclasses.dataclass
class Plain:
    x: object


def test_composites_contribute_their_components():
    s = [Box([1, 2], "t"), Pair(3, 4), Fields(5, 6), Plain(7)]
    assert nest.flatten(s) == [1, 2, 3, 4, 5, 6, s[3]]
    out = nest.pack_as(s, [10, 20, 30, 40, 50, 60, "p"])
    assert out[0].parts == [10, 20] and out[0].tag == "t"
    assert (out[1].a, out[1].b) == (30, 40)
    assert out[2] == Fields(50, 60) and out[3] == "p"
    assert nest.static_key(s[0]) == ("t",) and nest.static_key(s[1]) == ("pair",)
    assert nest.is_composite(s[2]) and not nest.is_composite(s[3])
    with pytest.raises(TypeError, match="dataclass"):
        nest.register_dataclass(Pair)


def test_fold_walks_sorted_and_hands_dicts_in_their_own_order():
    seen = []
    text = nest.fold({"b": [1, (2,)], "a": 3},
                     lambda v: seen.append(v) or str(v),
                     lambda c, ch: "{" + ",".join(f"{k}:{v}" for k, v in ch.items()) + "}"
                     if isinstance(ch, dict) else type(c).__name__ + "(" + ",".join(ch) + ")")
    assert seen == [3, 1, 2]  # sorted keys, as flatten
    assert text == "{b:list(1,tuple(2)),a:3}"


def test_structure_of_tells_container_types_and_keys_apart():
    assert nest.structure_of({"a": 1, "b": [2]}) == nest.structure_of({"b": [5], "a": 7})
    assert nest.structure_of([1, 2]) != nest.structure_of((1, 2))
    assert nest.structure_of(Point(1, 2)) != nest.structure_of((1, 2))
    assert nest.structure_of({"a": 1}) != nest.structure_of({"b": 1})
    none_aware = lambda v: v is not None  # noqa: E731
    assert nest.structure_of((1, None), none_aware) != nest.structure_of((1, 2), none_aware)
    hash(nest.structure_of({"a": [1, (2, 3)]}))


def test_map_structure_up_to_visits_dict_keys_sorted():
    order = []
    out = nest.map_structure_up_to({"b": 0, "a": 0}, lambda s, v: order.append(v) or v,
                                   {"b": "B", "a": "A"})
    assert order == ["A", "B"] and list(out) == ["b", "a"]


def test_keep_composites_walks_containers_only():
    ta = Pair(1, 2)  # a composite: flatten walks into it, KEEP_COMPOSITES keeps it whole
    assert nest.flatten([ta, {"b": 3, "a": (4,)}]) == [1, 2, 4, 3]
    assert nest.flatten([ta, {"b": 3, "a": (4,)}], nest.KEEP_COMPOSITES) == [ta, 4, 3]
    assert nest.pack_as([ta, {"b": 3, "a": (4,)}], ["x", "y", "z"], nest.KEEP_COMPOSITES) == \
        ["x", {"b": "z", "a": ("y",)}]
