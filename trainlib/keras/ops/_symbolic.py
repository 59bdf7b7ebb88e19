"""Functional-API support for `keras.ops`: an op called on `keras.Input` values records a layer.

Owns: `export`, which wraps each public `keras.ops` function once (in its group module, so
`ops.mean` and `ops.numpy.mean` are one object) so that a call whose arguments hold
KerasTensors becomes an `OpLayer` node of the functional graph, as Keras 3's `symbolic_call`
does; other calls go straight to the function. Invariant: the wrapped function itself is what
runs, on placeholders while the node's output specs are inferred and on tensors when the model
runs, so there is no second implementation.
"""
import functools

from ...layers.base import KerasTensor, Layer


class OpLayer(Layer):
    """A functional-graph node calling one `keras.ops` function (its non-tensor arguments fixed)."""

    def __init__(self, fn, **kwargs):
        super().__init__(name=kwargs.pop("name", None) or fn.__name__, **kwargs)
        self.fn = fn
        self._autocast = False

    def _convert_inputs(self, value):  # the op sees the arguments exactly as given
        return value

    def call(self, packed):
        args, kwargs = packed
        return self.fn(*args, **kwargs)

    def get_config(self):
        raise NotImplementedError(f"a model holding the op {self.fn.__name__} called on keras.Input "
                                  "values cannot be serialized by trainlib yet")


def _holds_keras_tensor(value):
    kind = type(value)
    if kind is list or kind is tuple:
        return any(_holds_keras_tensor(v) for v in value)
    if kind is dict:
        return any(_holds_keras_tensor(v) for v in value.values())
    return isinstance(value, KerasTensor)


def _has_keras_tensor(args, kwargs):
    return any(_holds_keras_tensor(a) for a in args) or \
        any(_holds_keras_tensor(v) for v in kwargs.values())


_SUSPECT = frozenset((KerasTensor, list, tuple, dict))
# decorators, queries answered from a KerasTensor's spec, and control flow over Python callables
_NOT_RECORDED = frozenset(("custom_gradient", "vectorize", "shape", "ndim", "dtype", "is_tensor",
                           "convert_to_numpy", "cond", "while_loop", "fori_loop", "scan", "map",
                           "switch", "associative_scan", "vectorized_map"))


def export(module, name):
    """The public `keras.ops` function `module.name`, wrapped for KerasTensor arguments (once)."""
    fn = getattr(module, name)
    if not callable(fn) or getattr(fn, "_keras_op", False) or isinstance(fn, type):
        return fn
    if name in _NOT_RECORDED:
        return fn

    @functools.wraps(fn)
    def op(*args, **kwargs):
        for a in args:  # a cheap scan first: eager dispatch pays for this on every call
            if type(a) in _SUSPECT:
                if _has_keras_tensor(args, kwargs):
                    return OpLayer(fn)((args, kwargs))
                break
        else:
            if kwargs and _has_keras_tensor((), kwargs):
                return OpLayer(fn)((args, kwargs))
        return fn(*args, **kwargs)
    op._keras_op = True
    setattr(module, name, op)
    return op


def install_operators(numpy_module):
    """Gives KerasTensor Python's arithmetic operators as `keras.ops` calls (`x * 2.0` on a
    `keras.Input` records a multiply node), as Keras 3's KerasTensor has; `==`/`!=` stay
    identity comparisons (functional models key KerasTensors by identity)."""
    binary = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
              "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
              "and": "logical_and", "or": "logical_or", "xor": "logical_xor"}
    for dunder, name in binary.items():
        fn = getattr(numpy_module, name)
        _install(f"__{dunder}__", lambda a, b, fn=fn: fn(a, b))
        _install(f"__r{dunder}__", lambda a, b, fn=fn: fn(b, a))
    for dunder, name in {"lt": "less", "le": "less_equal", "gt": "greater",
                         "ge": "greater_equal"}.items():
        fn = getattr(numpy_module, name)
        _install(f"__{dunder}__", lambda a, b, fn=fn: fn(a, b))
    for dunder, name in {"neg": "negative", "abs": "abs", "invert": "logical_not"}.items():
        fn = getattr(numpy_module, name)
        _install(f"__{dunder}__", lambda a, fn=fn: fn(a))
    get_item = numpy_module.get_item
    _install("__getitem__", lambda a, key: get_item(a, key))
    _install("__iter__", _not_iterable)


def _not_iterable(self):
    raise TypeError("a KerasTensor is symbolic and cannot be iterated; index it (x[0]) or use "
                    "keras.ops.unstack")


def _install(dunder, method):
    if dunder not in vars(KerasTensor):  # a definition in the layers package wins
        setattr(KerasTensor, dunder, method)
