"""Trace keys: the typed, hashable part of a tl.function cache key for one argument.

Owns: `key_of(value)` (tensors and arrays by dtype and shape, Python scalars, strings and
None by value, lists/tuples/dicts by structure, composites by static facts and components,
Variables and other objects by identity), `describe(key)` (the text of a retrace
reason) and `relax(key, value, older_keys)` (the argument with the dims that changed since the
older traces made None, for `reduce_retracing`), and `SIGNATURE`, the one key of a Function
with an `input_signature`.
Invariants: a key is a plain tuple whose first item is its kind, a class below (never
instantiated: it holds the kind's `describe` and `relax`), so keys are built, hashed and
compared at C speed (the cache lookup of every call) and keys of different kinds never
compare equal;
dict items are in sorted key order, as graph/nest.py walks them.
"""
import weakref

from numpy import ndarray as _ndarray

from . import dtypes as _dt, nest
from .tensor import SymbolicTensor, Tensor, TensorShape, TensorSpec
from .variables import Variable


class _Weak:
    """Identity key for an object, held weakly when possible."""

    __slots__ = ("id", "ref", "type")

    def __init__(self, obj):
        self.id = id(obj)
        self.type = type(obj).__name__
        try:
            self.ref = weakref.ref(obj)
        except TypeError:
            self.ref = obj

    def __eq__(self, other):
        return isinstance(other, _Weak) and other.id == self.id

    def __hash__(self):
        return self.id

    def __repr__(self):
        return f"<{self.type} object at {self.id:#x}>"


class ArgKey:
    """A kind of argument key: keys of this kind are tuples `(this class, facts...)`."""

    @staticmethod
    def describe(key):
        """The key as a retrace reason names it."""
        return repr(key[1:])

    @staticmethod
    def relax(key, value, older):
        """`value` with what changed since the `older` keys (of the same argument) relaxed."""
        return value


class TensorKey(ArgKey):
    """(TensorKey, dtype, shape tuple): a tensor, TensorSpec, symbolic tensor or array."""

    @staticmethod
    def describe(key):
        return f"TensorSpec(shape={TensorShape(key[2])}, dtype={key[1]!r})"

    @staticmethod
    def relax(key, value, older):
        if is_array_like(value):  # numpy arrays relax like the tensors they become
            value = TensorSpec(TensorShape(value.shape), _dt.from_numpy(value.dtype))
        if not isinstance(value, (Tensor, TensorSpec)):
            return value
        shape = TensorShape(value.shape)
        for k in older:
            if k[0] is TensorKey and k[1] is value.dtype:
                # another rank (or an unknown one) relaxes to an unknown rank, as TensorFlow
                shape = shape.most_specific_compatible_shape(TensorShape(k[2]))
        return TensorSpec(shape, value.dtype) if shape != TensorShape(value.shape) else value


class ValueKey(ArgKey):
    """(ValueKey, type, value): a Python scalar (all as float: f(1), f(1.0), f(True) share a
    trace, as TensorFlow; NaNs one), string or None."""

    @staticmethod
    def describe(key):
        return repr(key[2])


class SequenceKey(ArgKey):
    """(SequenceKey, list or tuple type, item keys)."""

    @staticmethod
    def describe(key):
        inner = ", ".join(describe(k) for k in key[2])
        return f"[{inner}]" if key[1] is list else f"({inner},)" if len(key[2]) == 1 else \
            f"({inner})"

    @staticmethod
    def relax(key, value, older):
        if not isinstance(value, (list, tuple)):
            return value
        olds = [k for k in older if k[0] is SequenceKey and k[1] is type(value)
                and len(k[2]) == len(value)]
        items = [relax(item, v, [k[2][i] for k in olds])
                 for i, (v, item) in enumerate(zip(value, key[2]))]
        return nest._rebuild_sequence(value, items)


class DictKey(ArgKey):
    """(DictKey, ((key, item key), ...) in sorted key order)."""

    @staticmethod
    def describe(key):
        return "{" + ", ".join(f"{name!r}: {describe(k)}" for name, k in key[1]) + "}"


class CompositeKey(ArgKey):
    """(CompositeKey, type, static facts, component keys): a TensorArray, a RaggedTensor."""

    @staticmethod
    def describe(key):
        return f"{key[1].__name__}{key[2]!r}"


class IdentityKey(ArgKey):
    """(its class, identity): an object keyed by identity."""

    label = "object"

    @classmethod
    def describe(cls, key):
        return f"{key[0].label} {key[1]!r}"


class VariableKey(IdentityKey):
    """(VariableKey, identity): a Variable (by identity, as TensorFlow)."""

    label = "Variable"


class ObjectKey(IdentityKey):
    """(ObjectKey, identity): any other object."""


class SignatureKey(ArgKey):
    """The key of every call of a Function with an input_signature."""

    @staticmethod
    def describe(key):
        return "input_signature"


SIGNATURE = ((SignatureKey,),)


def is_array_like(value):
    """A numpy (or CuPy) array argument, which a Function treats as the tensor it becomes."""
    return hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape") \
        and not isinstance(value, (Tensor, TensorSpec, SymbolicTensor, Variable))


def key_of(value):
    """The key of one argument (hashable, comparable)."""
    if type(value) is Tensor:  # the hot case first
        return (TensorKey, value.dtype, value._value.shape)
    if type(value) is _ndarray:  # then numpy arrays (fit's batches): as the general rule below
        return (TensorKey, _dt.from_numpy(value.dtype), value.shape)
    if isinstance(value, (bool, int, float)):
        return (ValueKey, float, value if value == value else "nan")
    if isinstance(value, (str, type(None))):
        return (ValueKey, type(value), value)
    if isinstance(value, (list, tuple)):
        return (SequenceKey, type(value), tuple(key_of(v) for v in value))
    if isinstance(value, dict):
        return (DictKey, tuple((k, key_of(value[k])) for k in sorted(value)))
    if isinstance(value, (TensorSpec, SymbolicTensor)):
        return (TensorKey, value.dtype, value.shape.as_tuple())
    if isinstance(value, Variable):
        return (VariableKey, _Weak(value))
    if hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape"):
        return (TensorKey, _dt.from_numpy(value.dtype), tuple(value.shape))
    if nest.is_composite(value):  # its static facts + its components (of its spec, if it names one)
        if hasattr(type(value), "_tl_type_spec"):
            value = value._tl_type_spec()
        return (CompositeKey, type(value), nest.static_key(value),
                tuple(key_of(x) for x in nest.components(value)))
    return (ObjectKey, _Weak(value))


def describe(key):
    """The text of an argument key in a retrace reason."""
    return key[0].describe(key)


def relax(key, value, older):
    """`value` (whose key is `key`) relaxed against the `older` keys of the same argument."""
    return key[0].relax(key, value, older)


def relax_args(args, key, older_keys):
    """`args` (whose key is `key`) with tensor dims that differ from the `older_keys`' traces
    made None (TensorSpecs in their places)."""
    olds = [k for k in older_keys if k != SIGNATURE and len(k) == len(args)]
    return tuple(relax(k, a, [old[i] for old in olds]) for i, (a, k) in enumerate(zip(args, key)))
