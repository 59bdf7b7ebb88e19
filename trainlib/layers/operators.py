"""Operators on KerasTensors (`x + y`, `x * 2`, `-x`, `x[:, 0]`): operations of the functional API.

Owns: one small Layer class per Python operator, named as Keras 3 names the
op it records (`Add`, `Multiply`, `GetItem`, ... in `keras.src.ops.numpy`),
which `KerasTensor`'s operator methods (installed here) call; the constant operand of
`x * 2` and the key of `x[...]` are part of the layer's config, so a
functional model that uses them saves, clones and rebuilds from JSON.
Invariant: these layers have no weights; functional models run them but do
not list them in `layers` (as Keras 3 lists only layers, not operations).
"""
import operator

import numpy as np

from .base import KerasTensor, Layer, register

__all__ = ["symbolic_operator"]


class _Operation(Layer):
    """A weightless layer applying one Python operator (base of the operator classes)."""

    _is_operation = True
    _keras_module = "keras.src.ops.numpy"
    _function = None

    @classmethod
    def _registry_key(cls):
        # beside Keras's merge layers of the same names (keras.layers.Add...), keyed by module
        return f"{cls._keras_module}>{cls.__name__}"


class _Binary(_Operation):
    """`a OP b` for two KerasTensors (inputs [a, b]) or a KerasTensor and a constant."""

    def __init__(self, constant=None, reverse=False, **kwargs):
        super().__init__(**kwargs)
        self.constant, self.reverse = constant, bool(reverse)

    def call(self, inputs):
        if isinstance(inputs, (list, tuple)):
            a, b = inputs
        else:
            a, b = (self.constant, inputs) if self.reverse else (inputs, self.constant)
        return type(self)._function(a, b)

    def get_config(self):
        config = {"name": self.name}
        if self.constant is not None:
            config["constant"] = self.constant
            config["reverse"] = self.reverse
        return config


class _Unary(_Operation):
    def call(self, inputs):
        return type(self)._function(inputs)

    def get_config(self):
        return {"name": self.name}


def _encode_key(key):
    if isinstance(key, tuple):
        return [_encode_key(k) for k in key]
    if isinstance(key, slice):
        return {"class_name": "__slice__", "config": {"start": key.start, "stop": key.stop,
                                                       "step": key.step}}
    if key is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if key is None or isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return None if key is None else int(key)
    raise TypeError(f"Indexing a KerasTensor takes ints, slices, None and Ellipsis; got "
                    f"{type(key).__name__} {key!r}")


def _decode_key(key):
    if isinstance(key, list):
        return tuple(_decode_key(k) for k in key)
    if isinstance(key, dict):
        if key.get("class_name") == "__slice__":
            c = key["config"]
            return slice(c.get("start"), c.get("stop"), c.get("step"))
        if key.get("class_name") == "__ellipsis__":
            return Ellipsis
        raise ValueError(f"Unknown index entry {key!r}")
    return key


@register
class GetItem(_Operation):
    """`x[key]` on a KerasTensor (ints, slices, None, Ellipsis)."""

    def __init__(self, key=None, **kwargs):
        super().__init__(**kwargs)
        self.key = _decode_key(key)

    def call(self, inputs):
        return inputs[self.key]

    def get_config(self):
        return {"name": self.name, "key": _encode_key(self.key)}


def _make(name, base, function, doc):
    cls = type(name, (base,), {"_function": staticmethod(function), "__doc__": doc,
                               "__module__": __name__})
    return register(cls)


_BINARY = {name: _make(name, _Binary, fn, f"`{symbol}` on KerasTensors.") for name, fn, symbol in (
    ("Add", operator.add, "a + b"), ("Subtract", operator.sub, "a - b"),
    ("Multiply", operator.mul, "a * b"), ("TrueDivide", operator.truediv, "a / b"),
    ("FloorDivide", operator.floordiv, "a // b"), ("Mod", operator.mod, "a % b"),
    ("Power", operator.pow, "a ** b"), ("Matmul", operator.matmul, "a @ b"),
    ("Less", operator.lt, "a < b"), ("LessEqual", operator.le, "a <= b"),
    ("Greater", operator.gt, "a > b"), ("GreaterEqual", operator.ge, "a >= b"),
    ("LogicalAnd", operator.and_, "a & b"), ("LogicalOr", operator.or_, "a | b"))}
_UNARY = {name: _make(name, _Unary, fn, f"`{symbol}` on a KerasTensor.") for name, fn, symbol in (
    ("Negative", operator.neg, "-x"), ("Absolute", operator.abs, "abs(x)"),
    ("LogicalNot", operator.invert, "~x"))}


def _constant(value):
    """A JSON-able constant operand (numbers and nested lists), from numbers, arrays, tensors."""
    if isinstance(value, (bool, int, float)):
        return value
    if hasattr(value, "numpy"):
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"Cannot use {type(value).__name__} as an operand of a KerasTensor")
    return array.tolist()


def symbolic_operator(name, x, other=None, reverse=False):
    """The KerasTensor of operator `name` ("Add", "GetItem", ...) applied to `x` (and `other`).

    Args:
        name: the operation's class name.
        x: the KerasTensor the operator was called on.
        other: the second operand (a KerasTensor or a constant), or the index for GetItem.
        reverse: the operator was reflected (`2 - x`): `other` is the left operand.
    """
    if name == "GetItem":
        return GetItem(key=_encode_key(other))(x)
    if name in _UNARY:
        return _UNARY[name]()(x)
    cls = _BINARY[name]
    if isinstance(other, KerasTensor):
        return cls()([other, x] if reverse else [x, other])
    return cls(constant=_constant(other), reverse=reverse)(x)


def _install_operators():
    """KerasTensor's Python operators, each recording its operation: installed from here
    because the operations subclass Layer (base.py, where KerasTensor lives, sits below)."""
    def binary(name, reverse):
        return lambda self, other: symbolic_operator(name, self, other, reverse)

    for dunder, name in (("add", "Add"), ("sub", "Subtract"), ("mul", "Multiply"),
                         ("truediv", "TrueDivide"), ("floordiv", "FloorDivide"), ("mod", "Mod"),
                         ("pow", "Power"), ("matmul", "Matmul"), ("and", "LogicalAnd"),
                         ("or", "LogicalOr"), ("lt", "Less"), ("le", "LessEqual"),
                         ("gt", "Greater"), ("ge", "GreaterEqual")):
        setattr(KerasTensor, f"__{dunder}__", binary(name, False))
        if name not in ("Less", "LessEqual", "Greater", "GreaterEqual"):
            setattr(KerasTensor, f"__r{dunder}__", binary(name, True))
    for dunder, name in (("neg", "Negative"), ("abs", "Absolute"), ("invert", "LogicalNot")):
        setattr(KerasTensor, f"__{dunder}__", lambda self, name=name: symbolic_operator(name, self))
    KerasTensor.__getitem__ = lambda self, key: symbolic_operator("GetItem", self, key)


_install_operators()
