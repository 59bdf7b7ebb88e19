"""Keras 3's `keras.Variable`: the Variable layers create, with a `path`, autocasting and
the regularizer and constraint `add_weight` attaches.

Owns: the name-scope stack that gives a Variable its `path` ("sequential/dense/kernel":
the layers being built or called when it was made, then its name), Keras 3's printing
(`<Variable path=dense/kernel, shape=(3, 4), dtype=float32, value=...>`) and names
without TensorFlow's ":0". Invariants: a Keras Variable is a `tl.Variable` (every op,
tape and graph treats it as one); it autocasts (reads as the compute dtype inside a
mixed-precision layer's call, see `graph.variables.autocast_scope`) unless made with
`autocast=False`.
"""
import itertools
import collections

from ..graph.dtypes import as_dtype
from .. import initializers
from ..graph.context import state
from ..graph.properties import read_only
from ..graph.variables import Variable as _BaseVariable

__all__ = ["Variable", "name_scope", "current_path"]

_scope = []           # (name, owner) of the layers being built or called, innermost last
_counters = collections.defaultdict(itertools.count)


def current_path():
    """The enclosing name scopes joined by "/" ("" outside any layer)."""
    return "/".join(name for name, _ in _scope)


class name_scope:  # noqa: N801 -- used as a function, as Keras's name_scope
    """Opens the name scope `name` (a layer's name) for the Variables made inside; a no-op
    when `owner` (the layer) already holds the innermost scope (its build inside its call).
    A plain class, not a generator: layers enter one on every call."""

    __slots__ = ("entry", "pushed")

    def __init__(self, name, owner=None, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"name_scope: the name must be a string without '/', got {name!r}")
        if override_parent is not None:
            raise NotImplementedError("keras.name_scope(override_parent=...) is not supported: "
                                      "trainlib's scopes always nest in the enclosing ones")
        owner = caller if owner is None else owner   # Keras's `caller`: the layer opening it
        self.entry, self.pushed = (name, owner), False

    def __enter__(self):
        owner = self.entry[1]
        if owner is None or not _scope or _scope[-1][1] is not owner:
            _scope.append(self.entry)
            self.pushed = True
        return self

    def __exit__(self, *exc):
        if self.pushed:
            _scope.pop()
            self.pushed = False
        return False


def _auto_name():
    n = next(_counters["variable"])
    return "variable" if n == 0 else f"variable_{n}"


class Variable(_BaseVariable):
    """A layer's state, as Keras 3's `keras.Variable`.

    Args:
        initializer: an initial value (array, tensor, number) or an initializer
            (a callable taking `shape` and `dtype`, or its Keras name) used with `shape`.
        shape: the shape, needed with an initializer.
        dtype: the dtype (default float32 for an initializer, else the value's).
        trainable: whether optimizers train it.
        autocast: whether it reads as the compute dtype inside a mixed-precision layer.
        name: its name (default "variable", numbered); the `path` adds the enclosing layers.

    Example:
        >>> v = tl.keras.Variable([[1.0, 2.0]], name="w")
        >>> v
        <Variable path=w, shape=(1, 2), dtype=float32, value=[[1. 2.]]>
    """

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None):
        name = name or _auto_name()
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={name}")
        if isinstance(initializer, str) or (callable(initializer) and shape is not None):
            init = initializers.get(initializer)
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` "
                                 f"argument should be specified. Received: initializer={init} "
                                 "and shape=None")
            shape = tuple(int(d) for d in shape)
            dtype = as_dtype(dtype or "float32")
            value = lambda: init(shape, dtype=dtype)  # noqa: E731 -- runs eagerly, in __init__
        else:
            value = initializer
        super().__init__(value, trainable=trainable, name=name, dtype=dtype)
        self._name = name   # a Keras name has no tl.name_scope prefix (its path has the layers)
        parent = current_path()
        self._path = f"{parent}/{name}" if parent else name
        self._autocast = bool(autocast)
        self.aggregation, self.synchronization = aggregation, synchronization
        self.regularizer = None
        self.constraint = None

    name = read_only("_name", 'The name given (no ":0").')
    path = read_only("_path", 'The enclosing layers\' names and the variable\'s name, "/"-joined.')
    autocast = read_only("_autocast", "Whether it reads as the compute dtype inside a "
                                      "mixed-precision layer.")

    def __repr__(self):
        shape = tuple(self.shape.as_list()) if self.shape.rank is not None else None
        value = "" if state.graph is not None else f", value={self.numpy()}"
        return f"<Variable path={self.path}, shape={shape}, dtype={self.dtype.name}{value}>"

