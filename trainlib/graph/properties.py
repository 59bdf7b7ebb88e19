"""Read-only properties declared in one line: `name = read_only("_name", "The name.")`.

Owns: `read_only`, the one way the package writes a property that only reads an
attribute, its own (`"_name"`) or one reached through another (`"strategy.rank"`,
`"_dtype_policy.compute_dtype"`).
Invariants: the property has no setter (assigning raises AttributeError, as a
getter-only `@property` does) and carries the docstring given; nothing here
imports from trainlib, so any module may use it.
"""
import operator


def read_only(path, doc):
    """A property that returns the attribute at `path` of the instance (dots walk through).

    Args:
        path: an attribute name, or a dotted path such as `"strategy.num_replicas_in_sync"`.
        doc: the property's docstring (what `help()` and the API reference show).

    Returns:
        A `property` without setter or deleter.

    Example:
        >>> class Point:
        ...     def __init__(self, x):
        ...         self._x = x
        ...     x = read_only("_x", "The x coordinate.")
        >>> Point(3).x
        3
    """
    return property(operator.attrgetter(path), doc=doc)
