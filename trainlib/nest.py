"""`tl.nest`: TensorFlow's `tf.nest` (flatten, pack_sequence_as, map_structure...) on
`graph/nest.py`, the one walker of nested structures.

Owns only TensorFlow's signatures: `expand_composites=False` (the default) keeps a
RaggedTensor or SparseTensor as one leaf, True walks into its component tensors;
`assert_same_structure(check_types=True)` also requires the same container types
(a list is not a tuple). Dicts flatten by sorted key, as TensorFlow's.
"""
from .graph import nest as _nest

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure", "is_nested"]


def _sequences(expand_composites):
    return None if expand_composites else _nest.KEEP_COMPOSITES


def flatten(structure, expand_composites=False):
    """The leaves of `structure` in order (dicts by sorted key); None is one leaf.

    Example:
        >>> tl.nest.flatten({"b": [1, 2], "a": (3,)})
        [3, 1, 2]
    """
    return _nest.flatten(structure, _sequences(expand_composites))


def pack_sequence_as(structure, flat_sequence, expand_composites=False, sequence_fn=None):
    """`structure` rebuilt with the values of `flat_sequence`, in `flatten`'s order."""
    flat_sequence = list(flat_sequence)
    wanted = len(flatten(structure, expand_composites))
    if len(flat_sequence) != wanted:
        raise ValueError(f"Could not pack sequence. Structure had {wanted} atoms, but "
                         f"flat_sequence had {len(flat_sequence)} items. Structure: "
                         f"{structure!r}, flat_sequence: {flat_sequence!r}.")
    return _nest.pack_as(structure, flat_sequence, _sequences(expand_composites))


def _check_types(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
            raise TypeError(f"The two structures don't have the same sequence type. Input "
                            f"structure has type {type(a)}, while shallow structure has type "
                            f"{type(b)}.")
        for k in a:
            _check_types(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        if type(a) is not type(b):
            raise TypeError(f"The two structures don't have the same sequence type. Input "
                            f"structure has type {type(a)}, while shallow structure has type "
                            f"{type(b)}.")
        for x, y in zip(a, b):
            _check_types(x, y)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError unless the two nest alike (kinds, lengths, dict keys); with `check_types`,
    TypeError unless their containers have the same types too."""
    if not _nest.same_structure(nest1, nest2, _sequences(expand_composites)):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst "
                         f"structure: {nest1!r}\n\nSecond structure: {nest2!r}")
    if check_types:
        _check_types(nest1, nest2)


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """`structure[0]` rebuilt of `func(*leaves)` over the matching leaves of every structure."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types, expand_composites)
    flat = [flatten(s, expand_composites) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flat)],
                            expand_composites)


def is_nested(seq):
    """True for lists, tuples, dicts (and TensorFlow's other containers), False for leaves."""
    return isinstance(seq, (list, tuple, dict))
