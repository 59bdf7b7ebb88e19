"""`tl.types.experimental`: TensorFlow's `tf.types.experimental` names over trainlib's classes.

`TensorLike` (a `typing.Union` of what converts to a tensor, usable with isinstance),
`GenericFunction` / `PolymorphicFunction` (what `tl.function` returns) and
`ConcreteFunction` (one trace). Only names: the classes live in trainlib/graph.
"""
import typing

import numpy as np

from ..graph.function import ConcreteFunction, Function
from ..graph.tensor import SymbolicTensor, Tensor
from ..graph.variables import Variable

__all__ = ["TensorLike", "GenericFunction", "PolymorphicFunction", "ConcreteFunction",
           "Callable"]

TensorLike = typing.Union[Tensor, SymbolicTensor, Variable, np.ndarray, np.number, int, float,
                          bool, str, bytes, complex, tuple, list]
"""What `tl.convert_to_tensor` accepts: tensors, Variables, numpy values, Python scalars,
strings and (nested) lists and tuples of them."""

GenericFunction = Function
PolymorphicFunction = Function
Callable = typing.Callable
