"""Nested structures: the one walk over lists, tuples, namedtuples, dicts and composites.

Owns: `flatten` (a structure to its leaves), `pack_as` / `unflatten` (leaves back into a
structure), `flatten_with_paths`, `map_structure`, `map_structure_up_to`, `fold` (a structure
folded bottom-up: descriptions, pretty-printed types), `structure_of`, and the registry of
composite values (`register_composite`, `register_dataclass`).
Invariants, as TensorFlow's nest: dicts (and dict subclasses) are walked in SORTED key order,
whatever their insertion order, and rebuilt with their original order; namedtuples are rebuilt
through their fields; strings are leaves; None is a leaf. A composite (a TensorArray, a
RaggedTensor) contributes the components it names, which are leaves (not walked further).

Composites come in two ways:
  * a class that defines `_tl_flatten(self) -> components`, `_tl_rebuild(self, components)`
    (a new value of the same static facts built of `components`) and `_tl_static_key(self)`
    (hashable facts that are not components, part of a tl.function trace key);
  * `register_composite(cls, flatten, rebuild, static_key=None)` for a class that cannot host
    those methods, with the same three meanings as functions of the value.
Nothing here imports the rest of the package: every layer may use it.
"""
import dataclasses

_REGISTERED = {}  # type -> (flatten, rebuild, static_key)


def register_composite(cls, flatten, rebuild, static_key=None):
    """Makes instances of `cls` composites: `flatten(value)` lists their components (leaves),
    `rebuild(value, components)` makes a like value of new components, `static_key(value)`
    gives hashable non-component facts (default: none). Returns `cls` (usable as a decorator
    through functools.partial)."""
    _REGISTERED[cls] = (flatten, rebuild, static_key or (lambda value: ()))
    return cls


def register_dataclass(cls):
    """Registers dataclass `cls` as a composite whose components are its fields, in order
    (use as a class decorator). Unregistered dataclasses are leaves, as in TensorFlow."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass expected a dataclass, got {cls!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    return register_composite(
        cls, lambda v: [getattr(v, n) for n in names],
        lambda v, parts: dataclasses.replace(v, **dict(zip(names, parts))))


def is_composite(value):
    """True if `value` is a composite (protocol methods or registered)."""
    kind = type(value)
    return kind in _REGISTERED or hasattr(kind, "_tl_flatten")


def components(value):
    """A composite's components, in order."""
    entry = _REGISTERED.get(type(value))
    return list(entry[0](value)) if entry else list(value._tl_flatten())


def rebuild(value, parts):
    """A composite like `value` made of `parts` (its components, in `components` order)."""
    entry = _REGISTERED.get(type(value))
    return entry[1](value, parts) if entry else value._tl_rebuild(parts)


def static_key(value):
    """A composite's hashable static facts (those that are not components)."""
    entry = _REGISTERED.get(type(value))
    return entry[2](value) if entry else value._tl_static_key()


def is_nested(value):
    """True if `value` is a list, tuple, dict or composite (walked into), not a leaf."""
    return isinstance(value, (list, tuple, dict)) or is_composite(value)


def _rebuild_sequence(s, items):
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*items)
    return type(s)(items)


# tf.data's element rule: tuples and dicts nest, a list is a value (a tensor to be)
ELEMENT = (tuple,)
# lists, tuples and dicts nest; a composite is one leaf, kept whole (not its components)
KEEP_COMPOSITES = (list, tuple)


def flatten(structure, sequences=None):
    """Leaves of nested lists/tuples/dicts, in order (dicts by sorted key); a composite
    contributes its components. `sequences=ELEMENT` walks tf.data elements (lists are leaves,
    composites too); `sequences=KEEP_COMPOSITES` walks lists, tuples and dicts only."""
    if sequences is not None:
        return _flatten_as(structure, sequences)
    kind = type(structure)
    if kind is list or kind is tuple:
        return [leaf for item in structure for leaf in flatten(item)]
    if kind is dict or isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    if kind in _REGISTERED or hasattr(kind, "_tl_flatten"):
        return components(structure)
    return [structure]


def _flatten_as(structure, sequences):
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in _flatten_as(structure[key], sequences)]
    if isinstance(structure, sequences):
        return [leaf for item in structure for leaf in _flatten_as(item, sequences)]
    return [structure]


def pack_as(structure, leaves, sequences=None):
    """Rebuilds `structure` with `leaves` in flatten order (composites through `rebuild`);
    `sequences` as for `flatten`."""
    it = iter(leaves)
    nested = (list, tuple) if sequences is None else sequences

    def build(s):
        if isinstance(s, dict):
            built = {key: build(s[key]) for key in sorted(s)}
            return type(s)((key, built[key]) for key in s) if type(s) is not dict else \
                {key: built[key] for key in s}
        if isinstance(s, nested):
            return _rebuild_sequence(s, [build(x) for x in s])
        if sequences is None and is_composite(s):
            return rebuild(s, [next(it) for _ in components(s)])
        return next(it)

    return build(structure)


def flatten_with_paths(structure, path=()):
    """(path, leaf) pairs in flatten order; a path is the tuple of indices and dict keys
    leading to the leaf (a composite's components by index)."""
    if isinstance(structure, dict):
        return [pair for key in sorted(structure)
                for pair in flatten_with_paths(structure[key], path + (key,))]
    if isinstance(structure, (list, tuple)):
        return [pair for i, item in enumerate(structure)
                for pair in flatten_with_paths(item, path + (i,))]
    if is_composite(structure):
        return [(path + (i,), leaf) for i, leaf in enumerate(components(structure))]
    return [(path, structure)]


class TreeDef:
    """The shape of a structure without its leaves: `unflatten` puts new leaves into it."""

    __slots__ = ("_structure", "num_leaves")

    def __init__(self, structure, num_leaves):
        self._structure = structure
        self.num_leaves = num_leaves

    def unflatten(self, leaves):
        """The structure rebuilt of `leaves` (exactly `num_leaves` of them)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"unflatten: the structure has {self.num_leaves} leaves, "
                             f"got {len(leaves)}")
        return pack_as(self._structure, leaves)

    def __repr__(self):
        return f"TreeDef({self.num_leaves} leaves)"


def flatten_with_treedef(structure):
    """(leaves, treedef) of `structure`: `treedef.unflatten(leaves)` rebuilds it."""
    leaves = flatten(structure)
    return leaves, TreeDef(structure, len(leaves))


def unflatten(treedef, leaves):
    """`leaves` put back into the structure `treedef` describes."""
    return treedef.unflatten(leaves)


def same_structure(a, b, sequences=None):
    """True if `a` and `b` nest alike (same kinds, lengths and dict keys); `sequences` as for
    `flatten`."""
    nested = (list, tuple) if sequences is None else sequences
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(same_structure(a[k], b[k], sequences) for k in a))
    if isinstance(a, nested) or isinstance(b, nested):
        return (isinstance(a, nested) and isinstance(b, nested) and len(a) == len(b)
                and all(same_structure(x, y, sequences) for x, y in zip(a, b)))
    return sequences is not None or is_composite(a) == is_composite(b)


def assert_same_structure(a, b):
    """Raises ValueError unless `a` and `b` nest alike (same kinds, lengths and dict keys)."""
    if not same_structure(a, b):
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{a!r} and {b!r}")


def map_structure(fn, *structures):
    """`structures[0]` rebuilt of `fn(*leaves)` for the corresponding leaves of all structures."""
    if not structures:
        raise ValueError("map_structure needs at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flat = [flatten(s) for s in structures]
    return pack_as(structures[0], [fn(*leaves) for leaves in zip(*flat)])


def fold(structure, leaf, node):
    """`structure` folded bottom-up: `leaf(value)` at each leaf (composites are leaves here:
    they fold as one value), `node(container, children)` at each list, tuple or dict, where
    `children` is the list of the folded items or, for a dict, {key: folded value} in the
    dict's own key order (the walk itself visits keys sorted, as everywhere in this module)."""
    if isinstance(structure, dict):
        folded = {key: fold(structure[key], leaf, node) for key in sorted(structure)}
        return node(structure, {key: folded[key] for key in structure})
    if isinstance(structure, (list, tuple)):
        return node(structure, [fold(item, leaf, node) for item in structure])
    return leaf(structure)


def _describe_node(container, children):
    if isinstance(children, dict):
        return ("dict", tuple(sorted(children)), tuple(children[k] for k in sorted(children)))
    return (type(container).__name__, tuple(children))


def structure_of(structure, leaf=lambda value: "leaf"):
    """A hashable description of how `structure` nests, equal for two structures exactly when
    they nest alike with the same container types (list, tuple, each namedtuple type, dict
    keys): (type name, children) for sequences, ("dict", sorted keys, children) for dicts,
    `leaf(value)` for each leaf (composites included, not walked)."""
    return fold(structure, leaf, _describe_node)


def map_structure_up_to(shallow, fn, structure, on_mismatch=None):
    """Walks `shallow` and `structure` together down to `shallow`'s leaves, calling
    `fn(shallow_leaf, sub_structure)` there (dicts in sorted key order, as `flatten`); the result
    has `structure`'s containers.
    Where `structure` does not nest as `shallow` (another kind, length or key set),
    `on_mismatch(shallow_part, structure_part)` gives the value (default: ValueError)."""
    def walk(s, v):
        if isinstance(s, (list, tuple)):
            if isinstance(v, (list, tuple)) and len(s) == len(v):
                return _rebuild_sequence(v, [walk(x, y) for x, y in zip(s, v)])
        elif isinstance(s, dict):
            if isinstance(v, dict) and s.keys() == v.keys():
                walked = {k: walk(s[k], v[k]) for k in sorted(v)}
                return {k: walked[k] for k in v}
        else:
            return fn(s, v)
        if on_mismatch is None:
            raise ValueError(f"The structure {v!r} does not nest as {s!r}")
        return on_mismatch(s, v)
    return walk(shallow, structure)
