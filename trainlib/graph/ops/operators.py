"""Python operators on tensors (`+ - * / // % ** @ -x`, comparisons, `[]`).

Owns: the binding of each Python operator to the public op function that
implements it, installed on Tensor, SymbolicTensor and Variable so eager and
traced code behave alike, and Tensor's other op-calling methods (iteration,
`cpu()`/`gpu()` copies), which tensor.py cannot define below the op layer. Invariant: operators add no logic of their own;
each forwards to exactly one public function (weak typing happens there),
except TensorFlow's one quirk: `==`/`!=` of unbroadcastable shapes is a scalar.
"""
import numpy as _np  # the shape of a Python list operand, never array math

from ..backend import device
from ..op import apply, broadcast_shapes
from ..tensor import SymbolicTensor, Tensor, TensorShape
from ..variables import Variable
from . import array, bitwise, math

# Python operator -> the public function it forwards to
_BINARY = {
    "__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "truediv",
    "__floordiv__": "floordiv", "__mod__": "floormod", "__pow__": "pow", "__matmul__": "matmul",
    "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
    "__eq__": "equal", "__ne__": "not_equal",
    "__and__": "and_operator", "__or__": "or_operator",
    "__xor__": "xor_operator",
}
_REFLECTED = {"__radd__": "add", "__rsub__": "subtract", "__rmul__": "multiply",
              "__rtruediv__": "truediv", "__rfloordiv__": "floordiv", "__rmod__": "floormod",
              "__rpow__": "pow", "__rmatmul__": "matmul", "__rand__": "and_operator",
              "__ror__": "or_operator", "__rxor__": "xor_operator"}
_UNARY = {"__neg__": "negative", "__abs__": "abs", "__invert__": "invert_operator", "__pos__": "identity"}


def _resolve(fname):
    for module in (math, array, bitwise):
        fn = getattr(module, fname, None)
        if fn is not None:
            return fn
    def missing(*args):
        raise NotImplementedError(f"the tensor operator for {fname} is not defined yet")
    return missing


def _make_binary(fname):
    if fname in ("equal", "not_equal"):
        def operator(self, other):
            if other is None:
                return fname == "not_equal"
            # as TensorFlow's `==` (incompatible_shape_error=False): shapes that cannot
            # broadcast compare unequal as a whole, a scalar False (True for `!=`)
            try:
                broadcast_shapes(self.shape, TensorShape(getattr(other, "shape", None) or _np.shape(other)))
            except (ValueError, TypeError):
                return array.constant(fname == "not_equal")
            return _resolve(fname)(self, other)
    else:
        def operator(self, other):
            return fn(self, other)
        fn = _resolve(fname)
    operator.__name__ = fname
    return operator


def _make_reflected(fname):
    fn = _resolve(fname)

    def operator(self, other):
        return fn(other, self)
    operator.__name__ = "r" + fname
    return operator


def _make_unary(fname):
    fn = _resolve(fname)

    def operator(self):
        return fn(self)
    operator.__name__ = fname
    return operator


def _getitem(self, key):
    return array.getitem(self, key)


def _iter_eager(self):
    if not self._value.shape:
        raise TypeError("Cannot iterate over a scalar (0-d) tensor")
    return iter(apply("Unpack", self, axis=0, num=self._value.shape[0]))


def _iter_symbolic(self):
    d = self.shape[0] if self.shape.rank else None
    if d is None:
        raise TypeError(f"Cannot iterate over the symbolic tensor {self.name}: its first dim is "
                        "unknown at trace time. Use tl.range(tl.shape(x)[0]) or a for loop "
                        "with autograph.")
    return iter(apply("Unpack", self, axis=0, num=d))


def _copy_to(self, name):
    if self.device == name:
        return self
    with device(name):
        return apply("Identity", self)  # Identity's kernel moves its input to the scope's device


def install(cls):
    """Installs the operators on `cls`."""
    for dunder, fname in _BINARY.items():
        setattr(cls, dunder, _make_binary(fname))
    for dunder, fname in _REFLECTED.items():
        setattr(cls, dunder, _make_reflected(fname))
    for dunder, fname in _UNARY.items():
        setattr(cls, dunder, _make_unary(fname))
    cls.__getitem__ = _getitem
    # == is elementwise, so tensors are unhashable; ref() gives a key
    cls.__hash__ = cls.__base__.__hash__


install(Tensor)
install(SymbolicTensor)
install(Variable)
Variable.__hash__ = lambda self: id(self)  # hashable by identity, `==` elementwise
Variable.__eq__ = _make_binary("equal")
# the op-calling methods (tensor.py sits below the op layer)
Tensor.__iter__, Tensor._copy_to = _iter_eager, _copy_to
SymbolicTensor.__iter__ = _iter_symbolic
