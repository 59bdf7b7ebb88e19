"""`keras.tree`: Keras 3's nested-structure API (flatten, pack_sequence_as, map_structure,
traverse...), with Keras's rules, which are optree's.

Owns: the one node rule these functions share (`_node`): lists, tuples, namedtuples, deques
and dicts nest; dicts (defaultdicts too) are walked in sorted key order (insertion order when
the keys do not sort) and rebuilt in their own key order; an OrderedDict is walked in its
insertion order; None, strings, arrays, tensors and every other object are leaves.
Why not graph/nest.py's walk: nest keeps TensorFlow's rules (OrderedDicts sorted too, deques
as leaves, composites walked into their components), which `tl.nest` and tracing rely on;
Keras's tree differs on exactly those, and programs written for Keras see Keras's order.
Errors are ValueErrors with optree's wording, as Keras raises them.
"""
import collections

__all__ = ["MAP_TO_NONE", "is_nested", "traverse", "flatten", "flatten_with_path",
           "map_structure", "map_structure_up_to", "assert_same_structure",
           "assert_same_paths", "pack_sequence_as", "lists_to_tuples", "map_shape_structure"]

_MISMATCH = "Structures don't have the same nested structure."


class MAP_TO_NONE:  # noqa: N801 -- Keras's name
    """Returned by a `traverse` function to put None in place of the subtree."""


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError:      # keys that do not sort keep their insertion order, as optree
        return list(mapping)


def _node(x):
    """(kind, keys, children) for a container, None for a leaf; `kind` is what two
    structures must share to match (`assert_same_structure`)."""
    if isinstance(x, dict):
        keys = list(x) if isinstance(x, collections.OrderedDict) else _sorted_keys(x)
        return dict, keys, [x[k] for k in keys]
    if isinstance(x, tuple):
        kind = type(x) if hasattr(x, "_fields") else tuple
        return kind, list(range(len(x))), list(x)
    if isinstance(x, (list, collections.deque)):
        return type(x), list(range(len(x))), list(x)
    return None


def _rebuild(x, keys, children):
    """A container like `x` holding `children` (in `_node`'s key order)."""
    if isinstance(x, dict):
        by_key = dict(zip(keys, children))
        items = [(k, by_key[k]) for k in x]          # the dict's own key order
        if isinstance(x, collections.defaultdict):
            return collections.defaultdict(x.default_factory, items)
        return type(x)(items)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*children)
    if isinstance(x, collections.deque):
        return collections.deque(children, maxlen=x.maxlen)
    return type(x)(children)


def is_nested(structure):
    """Whether `structure` is a list, tuple, namedtuple, deque or dict (not a leaf).

    Example:
        >>> keras.tree.is_nested([1]), keras.tree.is_nested(None)
        (True, False)
    """
    return _node(structure) is not None


def flatten(structure):
    """The leaves of `structure`, in order (dicts by sorted key, OrderedDicts in their order);
    a leaf gives `[leaf]`.

    Example:
        >>> keras.tree.flatten({100: 'world!', 6: 'Hello'})
        ['Hello', 'world!']
    """
    node = _node(structure)
    if node is None:
        return [structure]
    return [leaf for child in node[2] for leaf in flatten(child)]


def flatten_with_path(structure):
    """(path, leaf) pairs in `flatten` order; a path is the tuple of indices and dict keys
    leading to the leaf (namedtuples by index).

    Example:
        >>> keras.tree.flatten_with_path([{"foo": 42}])
        [((0, 'foo'), 42)]
    """
    def walk(x, path):
        node = _node(x)
        if node is None:
            return [(path, x)]
        return [pair for key, child in zip(node[1], node[2]) for pair in walk(child, path + (key,))]
    return walk(structure, ())


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` put into the shape of `structure` (in `flatten` order).

    Raises:
        ValueError: when `flat_sequence` has too few or too many leaves.

    Example:
        >>> keras.tree.pack_sequence_as({"b": 0, "a": 0}, [1, 2])
        {'b': 2, 'a': 1}
    """
    flat = list(flat_sequence)
    expected = len(flatten(structure))
    if len(flat) != expected:
        raise ValueError(f"Too {'few' if len(flat) < expected else 'many'} leaves for "
                         f"PyTreeSpec; expected: {expected}, got: {len(flat)}.")
    it = iter(flat)

    def build(x):
        node = _node(x)
        if node is None:
            return next(it)
        return _rebuild(x, node[1], [build(child) for child in node[2]])
    return build(structure)


def _zip_nodes(first, others, is_leaf):
    """Walks `first` and `others` together; at `first`'s leaves (is_leaf) yields the tuple of
    values; raises ValueError where another structure does not nest as `first`."""
    def walk(x, ys):
        node = None if is_leaf(x) else _node(x)
        if node is None:
            return [(x,) + tuple(ys)]
        kind, keys, children = node
        per_child = [[] for _ in children]
        for y in ys:
            other = _node(y)
            if other is None or (other[0] is not kind and not (kind is dict and other[0] is dict)):
                what = "collections.namedtuple" if hasattr(kind, "_fields") else kind.__name__
                raise ValueError(f"Expected an instance of {what}, got {y!r}.")
            if kind is dict and sorted(map(repr, other[1])) != sorted(map(repr, keys)):
                raise ValueError(f"dictionary key mismatch; expected key(s): {keys}, got "
                                 f"key(s): {other[1]}.")
            if len(other[2]) != len(children):
                raise ValueError(f"{kind.__name__} arity mismatch; expected: {len(children)}, "
                                 f"got: {len(other[2])}.")
            lookup = dict(zip(other[1], other[2])) if kind is dict else None
            for i, key in enumerate(keys):
                per_child[i].append(lookup[key] if lookup is not None else other[2][i])
        return [leaf for child, ys_child in zip(children, per_child)
                for leaf in walk(child, ys_child)]
    return walk(first, list(others))


def map_structure(func, *structures, none_is_leaf=True):
    """`structures[0]` rebuilt of `func(*leaves)` over the matching leaves of all structures.

    Args:
        func: called with one leaf of each structure.
        *structures: structures that nest alike.
        none_is_leaf: False keeps None leaves as None without calling `func` on them.

    Raises:
        ValueError: when the structures do not nest alike.

    Example:
        >>> keras.tree.map_structure(lambda v: v ** 2, [[1], [2], [3]])
        [[1], [4], [9]]
    """
    if not structures:
        raise ValueError("Must provide at least one structure")
    groups = _zip_nodes(structures[0], structures[1:], lambda x: False)
    for group in groups[:]:
        if len(group) > 1 and any(is_nested(v) for v in group[1:]):
            raise ValueError(_MISMATCH)
    results = [None if (not none_is_leaf and group[0] is None) else func(*group)
               for group in groups]
    return pack_sequence_as(structures[0], results)


def map_structure_up_to(shallow_structure, func, *structures):
    """`func(*subtrees)` at each leaf of `shallow_structure`, over the matching (possibly
    deeper) parts of `structures`; the result nests as `shallow_structure`.

    Raises:
        ValueError: when a structure is shallower than `shallow_structure`, or a leaf of
            `shallow_structure` is None (Keras 3.15's optree rule).

    Example:
        >>> keras.tree.map_structure_up_to({"a": 0}, len, {"a": [1, 2]})
        {'a': 2}
    """
    if not structures:
        raise ValueError("Must provide at least one structure")
    groups = _zip_nodes(shallow_structure, structures, lambda x: False)
    if any(group[0] is None for group in groups):
        raise ValueError(_MISMATCH)
    return pack_sequence_as(shallow_structure, [func(*group[1:]) for group in groups])


def assert_same_structure(a, b, check_types=None):
    """Raises ValueError unless `a` and `b` nest alike: the same container kinds (dict,
    OrderedDict and defaultdict count as one), lengths and dict keys.

    Example:
        >>> keras.tree.assert_same_structure([(0, 1)], [(2, 3)])
    """
    if check_types is not None:
        import warnings  # noqa: PLC0415
        warnings.warn("The `check_types` argument is deprecated and no longer has any effect, "
                      "please remove.", DeprecationWarning, stacklevel=2)
    for group in _zip_nodes(a, [b], lambda x: False):
        if is_nested(group[1]):
            raise ValueError(_MISMATCH)


def assert_same_paths(a, b):
    """Raises ValueError unless `a` and `b` have the same leaf paths (container kinds are not
    compared: a list matches a tuple or a namedtuple of the same length).

    Example:
        >>> keras.tree.assert_same_paths([0, 1], (2, 3))
    """
    a_paths = {path for path, _ in flatten_with_path(a)}
    b_paths = {path for path, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


def traverse(func, structure, top_down=True):
    """Calls `func` on every subtree (the whole structure, each container, each leaf).

    Top-down, a non-None result replaces the subtree and its children are not visited;
    bottom-up, `func` sees the subtree with its children already traversed, and a non-None
    result replaces it. `MAP_TO_NONE` as a result puts None there.

    Example:
        >>> keras.tree.traverse(lambda x: x * 10 if isinstance(x, int) else None, [1, [2]])
        [10, [20]]
    """
    def visit_children(x):
        node = _node(x)
        if node is None:
            return x
        return _rebuild(x, node[1], [traverse(func, c, top_down) for c in node[2]])

    if top_down:
        result = func(structure)
        if result is None:
            return visit_children(structure)
    else:
        visited = visit_children(structure)
        result = func(visited)
        if result is None:
            return visited
    return None if result is MAP_TO_NONE else result


def lists_to_tuples(structure):
    """`structure` with every list turned into a tuple.

    Example:
        >>> keras.tree.lists_to_tuples([1, [2]])
        (1, (2,))
    """
    return traverse(lambda x: tuple(x) if isinstance(x, list) else None, structure,
                    top_down=False)


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x)


def map_shape_structure(func, structure):
    """`map_structure` where each list or tuple of ints and Nones (a shape) is one leaf.

    Example:
        >>> keras.tree.map_shape_structure(len, {"a": (None, 3), "b": [(1, 2), [4]]})
        {'a': 2, 'b': [2, 1]}
    """
    if _is_shape(structure):
        return func(structure)
    node = _node(structure)
    if node is None:
        return func(structure)
    return _rebuild(structure, node[1], [map_shape_structure(func, c) for c in node[2]])
