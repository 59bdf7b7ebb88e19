"""Ops that call back into Python at run time: `tl.py_function`, `tl.numpy_function`.

Owns: the `EagerPyFunc` op (the Python function gets eager tensors, and is
differentiable: its gradient op `EagerPyFuncGrad` runs the function again under a
GradientTape and asks that tape), the `PyFunc` op (the Python function gets numpy
arrays; not differentiable), and `init_scope`.
Invariants: both ops are stateful (run on every graph call, in program order, never
folded, merged or pruned); their outputs have the declared dtypes (`Tout`) and an
unknown shape, and a result of another dtype or count raises InvalidArgumentError
naming the function.
"""
import contextlib

from .. import dtypes as _dt
from ..autodiff import GradientTape
from ..backend import to_numpy
from ..context import eager_scope, state
from ..errors import InvalidArgumentError, op_error
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import Tensor, is_tensor

__all__ = ["py_function", "numpy_function", "init_scope"]


def _declared(Tout):
    """(dtypes, single): `Tout` as a list of DTypes, and whether one was given bare."""
    single = not isinstance(Tout, (list, tuple))
    return [_dt.as_dtype(t) for t in ([Tout] if single else Tout)], single


def _infer(*inputs, func, Tout, op_label):
    return tuple(spec(None, t) for t in Tout)


def _results(xp, result, Tout, func, op_label):
    """The arrays of what `func` returned, each checked against its declared dtype."""
    if not Tout:
        return None
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(values) != len(Tout):
        raise op_error(InvalidArgumentError, op_label,
                       f"{_name(func)} returned {len(values)} values, Tout declares {len(Tout)}")
    out = []
    for i, (value, dtype) in enumerate(zip(values, Tout)):
        array = value._value if isinstance(value, Tensor) else xp.asarray(
            to_numpy(value) if is_tensor(value) else value)
        if _dt.from_numpy(array.dtype) is not dtype:
            if isinstance(value, Tensor) or op_label == "PyFunc" and hasattr(value, "dtype"):
                raise op_error(InvalidArgumentError, op_label,
                               f"{_name(func)} returned {_dt.from_numpy(array.dtype).name} for "
                               f"output {i}, Tout declares {dtype.name}")
            array = array.astype(dtype.as_numpy_dtype)   # Python numbers take the declared dtype
        out.append(array)
    return tuple(out)


def _name(func):
    return f"the function {getattr(func, '__name__', repr(func))!r}"


@defop("EagerPyFunc", infer=lambda *inputs, func, Tout: _infer(*inputs, func=func, Tout=Tout,
                                                                 op_label="EagerPyFunc"),
       stateful=True, num_outputs=None)
def _eager_py_func(xp, *arrays, func, Tout):
    with eager_scope():
        result = func(*[Tensor(a) for a in arrays])
    return _results(xp, result, Tout, func, "EagerPyFunc")


def _float_positions(dtypes):
    return [i for i, t in enumerate(dtypes) if t.is_floating or t.is_complex]


@defop("EagerPyFuncGrad", infer=lambda *values, func, n_inputs, Tin, n_outputs: tuple(
    spec(values[i].shape, Tin[i]) for i in _float_positions(Tin)), stateful=True,
    differentiable=False, num_outputs=None)
def _eager_py_func_grad(xp, *arrays, func, n_inputs, Tin, n_outputs):
    """Runs `func` again on the inputs under a tape; the tape's gradients given the dys."""
    picked = _float_positions(Tin)
    with eager_scope():
        inputs = [Tensor(a) for a in arrays[:n_inputs]]
        dys = [Tensor(a) for a in arrays[n_inputs:]]
        with GradientTape() as tape:
            for i in picked:
                tape.watch(inputs[i])
            result = func(*inputs)
        outputs = list(result) if isinstance(result, (list, tuple)) else [result]
        pairs = [(y, dy) for y, dy in zip(outputs, dys) if is_tensor(y)]
        grads = tape.gradient([y for y, _ in pairs], [inputs[i] for i in picked],
                              output_gradients=[dy for _, dy in pairs],
                              unconnected_gradients="zero")
    return tuple(g._value for g in grads)


def _eager_py_func_gradient(op, *dys):
    Tin = tuple(x.dtype for x in op.inputs)
    picked = _float_positions(Tin)
    if not picked:
        return [None] * len(op.inputs)
    dys = [dy if dy is not None else apply("ZerosLike", y) for dy, y in zip(dys, op.outputs)]
    grads = apply("EagerPyFuncGrad", *op.inputs, *dys, func=op.attrs["func"],
                  n_inputs=len(op.inputs), Tin=Tin, n_outputs=len(dys))
    grads = list(grads) if isinstance(grads, tuple) else [grads]
    out = [None] * len(op.inputs)
    for i, g in zip(picked, grads):
        out[i] = g
    return out


from ..op import set_gradient  # noqa: E402 -- the rule refers to the grad op defined above
set_gradient("EagerPyFunc", _eager_py_func_gradient)


@defop("PyFunc", infer=lambda *inputs, func, Tout: _infer(*inputs, func=func, Tout=Tout,
                                                           op_label="PyFunc"),
       stateful=True, differentiable=False, num_outputs=None)
def _py_func(xp, *arrays, func, Tout):
    result = func(*[to_numpy(a) for a in arrays])
    return _results(xp, result, Tout, func, "PyFunc")


def _call(op_name, func, inp, Tout, stateful=True):
    if not callable(func):
        raise TypeError(f"{op_name}: func must be callable, got {type(func).__name__}")
    dtypes, single = _declared(Tout if Tout is not None else [])
    inputs = [convert_to_tensor(x) for x in (inp if isinstance(inp, (list, tuple)) else [inp])]
    out = apply(op_name, *inputs, func=func, Tout=tuple(dtypes))
    if out is None:
        return None if single and Tout is None else []
    out = list(out) if isinstance(out, tuple) else [out]
    return out[0] if single else out


def py_function(func, inp, Tout, name=None):
    """Calls the Python function `func` on eager tensors when the op runs (on every call of a
    tl.function, not only while tracing), as TensorFlow's `tf.py_function`.

    Differentiable: the gradient runs `func` again under a GradientTape.

    Args:
        func: a Python function of tensors (eager, with `.numpy()`).
        inp: a list of tensors (or one tensor), `func`'s arguments.
        Tout: a dtype, or a list of dtypes, of what `func` returns (None: nothing).

    Returns:
        A tensor (for a single `Tout`) or a list of tensors, shapes unknown.

    Raises:
        InvalidArgumentError: when `func` returns another count or dtype than declared.

    Example:
        >>> tl.py_function(lambda x: x * 2, [tl.constant(3.0)], tl.float32)
        <tl.Tensor: shape=(), dtype=float32, numpy=6.0>
    """
    return _call("EagerPyFunc", func, inp, Tout)


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """Calls `func` on numpy arrays when the op runs, as TensorFlow's `tf.numpy_function`
    (no gradient; `stateful` is accepted: the call always runs, in program order).

    Example:
        >>> tl.numpy_function(lambda x: x + 1, [tl.constant([1, 2])], tl.int32)
        <tl.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>
    """
    return _call("PyFunc", func, inp, Tout)


@contextlib.contextmanager
def init_scope():
    """Runs the block eagerly, outside any graph being traced and unseen by tapes, as
    TensorFlow's `tf.init_scope` (for creating state once from inside a tl.function).

    Example:
        >>> @tl.function
        ... def f(x):
        ...     with tl.init_scope():
        ...         print(tl.executing_eagerly())   # True, while tracing
        ...     return x
    """
    tapes = state.tapes
    state.tapes = []
    try:
        with eager_scope():
            yield
    finally:
        state.tapes = tapes
