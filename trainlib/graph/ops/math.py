"""Math ops: elementwise arithmetic, comparisons, logic, matmul/einsum, reductions, casts.

Owns: the OpDefs and public functions of `tl.math` (re-exported as `tl.*`),
with TensorFlow's op type names, dtypes and gradients.
Invariants: kernels produce exactly the dtype the inference rule says
(numpy would widen integer sums to int64; kernels pass dtype=);
multi-input ops take same-dtype inputs, converted by `convert_same_dtype`;
which dtypes an op accepts is said once, in `_ALLOWED`, and checked both by
the public function (TypeError, as TensorFlow) and by inference (graphs);
gradient rules ignore broadcasting (the autodiff driver sums it away).
"""
import builtins as _builtins
import collections as _collections
import inspect as _inspect
import math as _pymath
import operator as _operator

import numpy as _np

from .. import dtypes as _dt
from ..errors import InvalidArgumentError, UnimplementedError, op_error, user_location
from ..op import apply, broadcast_shapes, convert_same_dtype, convert_to_tensor, defop, defufunc, normalize_axis, same_dtype, spec
from ..tensor import Tensor, is_tensor
from . import array as _array
from . import einsum_plan as _einsum_plan
from . import products as _products
from .array import broadcast_to_shape_of
from .common import float_infer, float_tensor, stable_descending

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "pow",
    "negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "reciprocal",
    "sin", "cos", "tanh", "sigmoid", "maximum", "minimum", "squared_difference", "add_n",
    "matmul", "einsum",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all",
    "reduce_any", "reduce_logsumexp", "argmax", "argmin", "cumsum",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "is_nan", "is_finite", "is_inf",
    "where", "cast", "saturate_cast", "scalar_mul", "clip_by_value", "round", "floor", "ceil",
]

# ------------------------------------------------------------------ dtype rules


def _accepts(what):
    def mark(predicate):
        predicate.what = what
        return predicate
    return mark


@_accepts("a numeric dtype (float or integer)")
def _numeric(d):
    return (d.is_floating or d.is_integer or d.is_complex)


@_accepts("a floating dtype (float16, float32, float64)")
def _floating(d):
    return d.is_floating or d.is_complex


@_accepts("bool")
def _boolean(d):
    return d.is_bool


@_accepts("any dtype but resource")
def _any(d):
    return d is not _dt.resource


_ALLOWED = {}  # op type -> dtype predicate, shared by inference and the public functions


def _dtype_problem(name, d):
    allowed = _ALLOWED.get(name)
    if allowed is None or allowed(d):
        return None
    return f"dtype {d.name} is not supported; expected {allowed.what}"


def _require(name, *dtypes):
    """For inference rules: TypeError if op `name` does not take these dtypes."""
    for d in dtypes:
        problem = _dtype_problem(name, d)
        if problem:
            raise TypeError(problem)


def _type_error(op_name, message):
    """A TypeError worded as `op_error` words OpErrors: op, message, the user's line."""
    location = user_location()
    return TypeError(f"{op_name}: {message}" + (f" (at {location})" if location else ""))


_ACCEPTED = set()  # (op name, dtype) pairs already checked: the eager hot path asks once


def _check_dtypes(op_name, tensors):
    """For public functions: TypeError naming the op and the user's line, as TensorFlow."""
    for t in tensors:
        if (op_name, t.dtype) in _ACCEPTED:
            continue
        problem = _dtype_problem(op_name, t.dtype)
        if problem:
            raise _type_error(op_name, problem)
        _ACCEPTED.add((op_name, t.dtype))


# ------------------------------------------------------------------ helpers


def _binary_infer(name, out_dtype=None, allowed=None):
    if allowed is not None:
        _ALLOWED[name] = allowed

    def infer(a, b):
        d = same_dtype(name, a, b)
        _require(name, d)
        return spec(broadcast_shapes(a.shape, b.shape), out_dtype or d)
    return infer


def _unary_infer(name, allowed=None, out_dtype=None):
    if allowed is not None:
        _ALLOWED[name] = allowed

    def infer(x):
        _require(name, x.dtype)
        return spec(x.shape, out_dtype or x.dtype)
    return infer


# classes whose values elementwise functions map over (RaggedTensor: its flat values, through
# its `_tl_elementwise`), asked only when converting an argument failed; ops/ragged.py
# registers itself
ELEMENTWISE_COMPOSITES = set()


def _map_composite(error, fn, *operands):
    """`fn` mapped over the values of the operands when one is a registered composite (through
    its `_tl_elementwise`), else `error` (why the operands did not convert) raised again."""
    composite = next((o for o in operands if type(o) in ELEMENTWISE_COMPOSITES), None)
    if composite is None:
        raise error
    return composite._tl_elementwise(fn, *operands)


def binary(name, a, b, op_name):
    """Converts `a`, `b` with the weak-type rules, checks their dtype, applies `op_name`
    (a RaggedTensor operand: on its flat values, keeping its rows)."""
    try:
        a, b = convert_same_dtype(op_name, (a, b))
    except TypeError as e:  # (only then: the common path pays nothing for composites)
        return _map_composite(e, lambda x, y: binary(name, x, y, op_name), a, b)
    _check_dtypes(op_name, (a, b))
    return apply(op_name, a, b)


def unary(op_name, x):
    """Converts `x`, checks its dtype, applies `op_name` (a RaggedTensor: on its flat values)."""
    try:
        x = convert_to_tensor(x)
    except TypeError as e:
        return _map_composite(e, lambda v: unary(op_name, v), x)
    _check_dtypes(op_name, (x,))
    return apply(op_name, x)


# The public functions that only apply one op are declared in one line each, by these
# factories: `exp = _unary_api("Exp", "exp", "doc")`. Their `name` argument is TensorFlow's
# (ops take their names from the graph), accepted and unused.

def _public(api_name, doc, fn):
    fn.__name__ = fn.__qualname__ = api_name
    fn.__code__ = fn.__code__.replace(co_name=api_name)  # tracebacks say `exp`, not `<lambda>`
    fn.__doc__ = _inspect.cleandoc(doc)
    return fn


def _unary_api(op_name, api_name, doc):
    """`api_name(x, name=None)`: op `op_name` on x (see `unary`), documented by `doc`."""
    return _public(api_name, doc, lambda x, name=None: unary(op_name, x))


def _binary_api(op_name, api_name, doc):
    """`api_name(x, y, name=None)`: op `op_name` on x and y (see `binary`)."""
    return _public(api_name, doc, lambda x, y, name=None: binary(api_name, x, y, op_name))


def _register(name, kernel, infer, **fields):
    """`kernel` is a kernel function, or the name of the xp ufunc the op is exactly."""
    if isinstance(kernel, str):
        defufunc(name, kernel, infer=infer, elementwise=True, **fields)
    else:
        defop(name, infer=infer, elementwise=True, **fields)(kernel)


def _elementwise(name, kernel, allowed, grad=None, out_dtype=None, differentiable=True,
                 **lowering):
    """Registers a one-input elementwise op (`kernel`: a function or a ufunc's name)."""
    _register(name, kernel, _unary_infer(name, allowed, out_dtype), grad=grad,
              differentiable=differentiable, **lowering)


def _elementwise2(name, kernel, allowed, grad=None, out_dtype=None, differentiable=True,
                  **lowering):
    """Registers a two-input elementwise op, numpy broadcasting (`kernel` as `_elementwise`)."""
    _register(name, kernel, _binary_infer(name, out_dtype, allowed), grad=grad,
              differentiable=differentiable, **lowering)


# ------------------------------------------------------------------ arithmetic

_elementwise2("AddV2", "add", _numeric, grad=lambda op, dy: (dy, dy),
              c_expr="({0} + {1})", native="({0} + {1})", infix="plus")
_elementwise2("Sub", "subtract", _numeric, grad=lambda op, dy: (dy, -dy),
              c_expr="({0} - {1})", native="({0} - {1})", infix="minus")
_elementwise2("Mul", "multiply", _numeric,
              grad=lambda op, dy: (dy * op.inputs[1], dy * op.inputs[0]),
              c_expr="({0} * {1})", native="({0} * {1})", infix="times")


def add(x, y, name=None):
    """Elementwise x + y with broadcasting.

    Args:
        x, y: tensors or Python values of one dtype.

    Returns:
        A tensor of that dtype and the broadcast shape.

    Raises:
        InvalidArgumentError: if the dtypes differ or the shapes do not broadcast.

    Example:
        >>> tl.add(tl.constant([1.0, 2.0]), 1.0)
        <tl.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>

    Strings concatenate, as TensorFlow's (`tl.constant("a") + "b"` is `b"ab"`).
    """
    try:
        return binary("add", x, y, "AddV2")
    except TypeError:  # strings leave the numeric hot path only here, when AddV2 refuses them
        a, b = convert_same_dtype("AddV2", (x, y))
        if a.dtype is not _dt.string:
            raise
        return apply("StringJoin", a, b, separator="")


subtract = _binary_api("Sub", "subtract", "Elementwise x - y with broadcasting (see `add`).")
multiply = _binary_api("Mul", "multiply", "Elementwise x * y with broadcasting (see `add`).")


def _int_divisor_check(xp, y):
    if y.dtype.kind in "iu" and bool((y == 0).any()):
        raise InvalidArgumentError("Integer division by zero")


_elementwise2("RealDiv", "true_divide", _floating,
              grad=lambda op, dy: (dy / op.inputs[1],
                                   dy * (-op.inputs[0] / op.inputs[1] / op.inputs[1])),
              fresh_output=True, c_expr="({0} / {1})", native="({0} / {1})",
              infix="over")


def _floordiv_kernel(xp, a, b):
    _int_divisor_check(xp, b)
    return xp.floor_divide(a, b)


def _floormod_kernel(xp, a, b):
    _int_divisor_check(xp, b)
    return xp.remainder(a, b)


# TensorFlow's FloorDiv has no gradient (piecewise constant); FloorMod's is (dy, -dy * floor(x/y)).
_elementwise2("FloorDiv", _floordiv_kernel, _numeric, differentiable=False)
_elementwise2("FloorMod", _floormod_kernel, _numeric,
              grad=lambda op, dy: (dy, -dy * floordiv(op.inputs[0], op.inputs[1])))


def _pow_grad(op, dy):
    x, y = op.inputs
    z = op.outputs[0]
    # where x <= 0, log(x) is not real: TensorFlow gives y a zero gradient there
    positive = greater(x, 0)
    log_x = where(positive, log(where(positive, x, 1)), 0)
    return dy * y * pow(x, y - 1), dy * z * log_x


def _pow_kernel(xp, a, b):
    # x**2 (losses, Adam's g*g) as square: what numpy's own scalar fast path computes, but a
    # 0-d array exponent misses that path; x**3 (GELU's tanh form) as x*x*x, within an ulp
    # and ~20x faster than power. Host arrays only, so no device sync is forced.
    if b.ndim == 0 and hasattr(type(b), "__array_interface__"):   # the class: no dict made
        exponent = b.item()   # one conversion, then Python comparisons (no 0-d array ops)
        if exponent == 2:
            return xp.square(a)
        if exponent == 3 and a.dtype.kind in "iuf":
            return _cube(xp, a)
    return xp.power(a, b)


def _cube(xp, a, out=None):
    """a * a * a into `out` (a new value without one)."""
    if out is None:
        return a * a * a
    xp.multiply(a, a, out=out)
    return xp.multiply(out, a, out=out)


def _pow_into(xp, a, b, out, tmp):
    """Pow inside a fused loop: an exponent of 2 (one element, broadcast) as a * a, exactly."""
    if b.size == 1 and b.ndim <= out.ndim and float(b.reshape(())) == 2:
        xp.multiply(a, a, out=out)  # what numpy's x ** 2 does: exact, and 5x faster than power
    else:
        xp.power(a, b, out=out)


def _pow_direct(op):
    """x ** 2 by a constant scalar 2 as `xp.square(x)`, x ** 3 as x * x * x (both take out=);
    other powers are the kernel's."""
    y = op.inputs[1]
    if y.op.type != "Const" or y.shape.rank != 0:
        return None
    value = y.op.attrs["value"]
    if getattr(value, "dtype", None) is None or value.dtype.kind not in "iuf" or \
            value not in (2, 3):
        return None
    return ("square" if value == 2 else _cube), ("{}",)


_elementwise2("Pow", _pow_kernel, _numeric, grad=_pow_grad, fresh_output=True, into=_pow_into,
              direct=_pow_direct,
              infix="pow", native="({0} * {0} if {1} == 2 else np.power({0}, {1}))")


def _selector_grad(selector):
    # TensorFlow's _MaximumMinimumGrad: x gets the gradient where selector(x, y), ties included
    def grad(op, dy):
        mask = selector(op.inputs[0], op.inputs[1])
        return where(mask, dy, 0), where(mask, 0, dy)
    return grad


_elementwise2("Maximum", "maximum", _numeric,
              grad=_selector_grad(lambda x, y: greater_equal(x, y)),
              c_expr="(({0} >= {1} || {0} != {0}) ? {0} : {1})",
              native="({0} if ({0} >= {1} or {0} != {0}) else {1})")
_elementwise2("Minimum", "minimum", _numeric,
              grad=_selector_grad(lambda x, y: less_equal(x, y)),
              c_expr="(({0} <= {1} || {0} != {0}) ? {0} : {1})",
              native="({0} if ({0} <= {1} or {0} != {0}) else {1})")


def _squared_difference_grad(op, dy):
    gx = dy * (2 * (op.inputs[0] - op.inputs[1]))
    return gx, -gx


def _squared_difference(xp, a, b, out=None, tmp=None):
    """(a - b) ** 2; with `out`, written there (its fused form)."""
    if out is None:
        return xp.square(xp.subtract(a, b))
    xp.subtract(a, b, out=out)
    xp.square(out, out=out)


_elementwise2("SquaredDifference", _squared_difference, _numeric, grad=_squared_difference_grad,
              into=_squared_difference, c_expr="(({0} - {1}) * ({0} - {1}))",
              native="(({0} - {1}) * ({0} - {1}))")

# int8/int16/uint8 divide in float32, wider integers in float64, as TensorFlow's truediv
_TRUEDIV_DTYPE = {_dt.int8: _dt.float32, _dt.int16: _dt.float32, _dt.uint8: _dt.float32,
                  _dt.int32: _dt.float64, _dt.int64: _dt.float64}


def truediv(x, y, name=None):
    """Elementwise x / y; integers are first cast to float, as TensorFlow does.

    Args:
        x, y: tensors or Python values of one dtype.

    Returns:
        A tensor of the broadcast shape: floats keep their dtype, int8/int16/uint8
        give float32, int32/int64 give float64.

    Raises:
        InvalidArgumentError: if the dtypes differ or the shapes do not broadcast.
        TypeError: for bool inputs.

    Example:
        >>> tl.truediv(tl.constant([1, 2]), 2).dtype
        tl.float64
    """
    x, y = convert_same_dtype("RealDiv", (x, y))
    target = _TRUEDIV_DTYPE.get(x.dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    _check_dtypes("RealDiv", (x, y))
    return apply("RealDiv", x, y)


def divide(x, y, name=None):
    """Elementwise x / y (the same as `truediv`)."""
    return truediv(x, y)


floordiv = _binary_api("FloorDiv", "floordiv", """
    Elementwise floor(x / y), rounding toward -inf as Python's `//`.

    Example:
        >>> tl.floordiv(tl.constant([-7, 7]), 2).numpy()
        array([-4,  3], dtype=int32)

    Raises:
        InvalidArgumentError: on mixed dtypes, unbroadcastable shapes, or integer division by zero.
    """)

floormod = _binary_api("FloorMod", "floormod", """
    Elementwise remainder of floor division; the result has the sign of y, as Python's `%`.

    Example:
        >>> tl.floormod(tl.constant([-7, 7]), 3).numpy()
        array([2, 1], dtype=int32)

    Raises:
        InvalidArgumentError: on mixed dtypes, unbroadcastable shapes, or integer division by zero.
    """)


mod = floormod


pow = _binary_api("Pow", "pow", """
    Elementwise x ** y (integers with integers; a negative integer power raises).

    Example:
        >>> tl.pow(tl.constant([2, 3]), 2).numpy()
        array([4, 9], dtype=int32)
    """)  # noqa: A001 -- TensorFlow's name

maximum = _binary_api("Maximum", "maximum", """
    Elementwise max(x, y) with broadcasting; at ties the gradient goes to x.

    Example:
        >>> tl.maximum(0., tl.constant([-1.0, 2.0])).numpy()
        array([0., 2.], dtype=float32)
    """)

minimum = _binary_api("Minimum", "minimum", """
    Elementwise min(x, y) with broadcasting; at ties the gradient goes to x.""")

squared_difference = _binary_api("SquaredDifference", "squared_difference", """
    Elementwise (x - y) ** 2 with broadcasting.""")


def _add_n_infer(*xs):
    d = same_dtype("AddN", *xs)
    _require("AddN", d)
    shape = xs[0].shape
    for x in xs[1:]:
        if not shape.is_compatible_with(x.shape):
            raise ValueError(f"AddN needs inputs of one shape, got {xs[0].shape} and {x.shape}")
        shape = shape.merge_with(x.shape)
    return spec(shape, d)


_ALLOWED["AddN"] = _numeric


@defop("AddN", infer=_add_n_infer, elementwise=True, grad=lambda op, dy: (dy,) * len(op.inputs))
def _add_n(xp, *arrays):
    if len(arrays) == 1:
        return arrays[0]
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("AddN needs inputs of one shape")
    out = xp.add(arrays[0], arrays[1], out=xp.empty_like(arrays[0]))  # an array even for 0-d
    for a in arrays[2:]:
        xp.add(out, a, out=out)
    return out


def add_n(inputs, name=None):
    """Sums a list of tensors of one shape and dtype elementwise.

    Args:
        inputs: a non-empty list of tensors (no broadcasting).

    Raises:
        ValueError: if `inputs` is empty.
        InvalidArgumentError: if dtypes or shapes differ.

    Example:
        >>> tl.add_n([tl.ones([2]), tl.ones([2])]).numpy()
        array([2., 2.], dtype=float32)
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("add_n needs a non-empty list of tensors")
    tensors = convert_same_dtype("AddN", list(inputs))
    _check_dtypes("AddN", tensors)
    return apply("AddN", *tensors)


# ------------------------------------------------------------------ unary

def _stable_sigmoid_into(xp, x, out, tmp):
    # exp(min(x, 0)) / (1 + exp(-|x|)): never overflows, keeps the tails' relative precision;
    # max(e, x >= 0) is exp(min(x, 0)) and keeps NaN. In place over two buffers.
    xp.absolute(x, out=tmp)
    xp.negative(tmp, out=tmp)
    xp.exp(tmp, out=tmp)
    xp.greater_equal(x, 0, out=out)
    xp.maximum(tmp, out, out=out)
    xp.add(tmp, 1, out=tmp)
    xp.true_divide(out, tmp, out=out)


def _stable_sigmoid(xp, x, out=None):
    """Sigmoid into `out` (a new array without one): float32 as 1 / (1 + exp(-x)) in place,
    four passes, as fast as the plain formula without its temporaries and relatively
    accurate down to the subnormals (exp(-x) overflowing to inf below -88.7 gives the limit
    0, with numpy's overflow warning silenced); other dtypes by the stable formula."""
    if out is None:
        out = xp.empty_like(x)
    if x.dtype == _np.float32:
        with _np.errstate(over="ignore"):
            xp.negative(x, out=out)
            xp.exp(out, out=out)
        xp.add(out, _ONE32, out=out)
        xp.reciprocal(out, out=out)
        return out
    if x.ndim == 0:
        out.reshape((1,))[...] = _stable_sigmoid(xp, x.reshape((1,)))
        return out
    _stable_sigmoid_into(xp, x, out, xp.empty_like(x))
    return out


_ONE32 = _np.float32(1)


def _sigmoid_into(xp, x, out, tmp):
    """Sigmoid inside a fused loop: float32 as 1 / (1 + exp(-x)), relatively accurate
    everywhere, 4 passes with one exp (exp(-x) = inf gives the limit 0: the fused runner
    ignores that overflow); other dtypes by the stable formula of the kernel."""
    if out.dtype != xp.float32:
        _stable_sigmoid_into(xp, x, out, tmp)
        return
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    xp.add(out, 1, out=out)
    xp.reciprocal(out, out=out)


def _tanh_into(xp, x, out, tmp):
    """Tanh inside a fused loop: float32 as 2 / (1 + exp(-2x)) - 1, one exp instead of tanh
    (which numpy evaluates about twice as slowly); exp(-2x) = inf gives the limit -1;
    absolute error below 2e-7 (the relative error is larger only for |x| < 1e-3); NaN kept."""
    if out.dtype != xp.float32:
        xp.tanh(x, out=out)
        return
    xp.multiply(x, -2, out=out)
    xp.exp(out, out=out)
    xp.add(out, 1, out=out)
    xp.true_divide(2, out, out=out)
    xp.subtract(out, 1, out=out)


def _round_kernel(xp, x):
    return xp.round(x) if x.dtype.kind == "f" else x  # numpy rounds half to even, as TensorFlow


_elementwise("Abs", "abs", _numeric,
             grad=lambda op, dy: (dy * sign(op.inputs[0]),), c_expr="({0} < 0 ? -{0} : {0})",
             native="(-{0} if {0} < 0 else {0})")
_elementwise("Sign", "sign", _numeric,
             grad=lambda op, dy: (_array.zeros_like(op.inputs[0]),),
             c_expr="({0} > 0 ? ({T})1 : ({0} < 0 ? ({T})-1 : {0}))",
             native="({T}(1) if {0} > 0 else ({T}(-1) if {0} < 0 else {0}))")
_elementwise("Square", "square", _numeric,
             grad=lambda op, dy: (dy * (2 * op.inputs[0]),), fresh_output=True,
             c_expr="({0} * {0})", native="({0} * {0})")
_elementwise("Exp", "exp", _floating,
             grad=lambda op, dy: (dy * op.outputs[0],), c_expr="exp({0})",
             native="nm.exp({0})")
_elementwise("Log", "log", _floating,
             grad=lambda op, dy: (dy * reciprocal(op.inputs[0]),), c_expr="log({0})",
             native="nm.log({0})")
_elementwise("Log1p", "log1p", _floating,
             grad=lambda op, dy: (dy * reciprocal(1 + op.inputs[0]),), c_expr="log1p({0})",
             native="nm.log1p({0})")
_elementwise("Sqrt", "sqrt", _floating,
             grad=lambda op, dy: (dy * 0.5 / op.outputs[0],), fresh_output=True,
             c_expr="sqrt({0})", native="np.sqrt({0})")
_elementwise("Rsqrt", lambda xp, x: xp.reciprocal(xp.sqrt(x)), _floating,
             grad=lambda op, dy: (dy * (-0.5 * op.outputs[0] * op.outputs[0] * op.outputs[0]),),
             c_expr="(({T})1 / sqrt({0}))", native="({T}(1) / np.sqrt({0}))")
_elementwise("Reciprocal", "reciprocal", _floating,
             grad=lambda op, dy: (-dy * op.outputs[0] * op.outputs[0],), c_expr="(({T})1 / {0})",
             native="({T}(1) / {0})")
_elementwise("Sin", "sin", _floating,
             grad=lambda op, dy: (dy * cos(op.inputs[0]),), c_expr="sin({0})",
             native="np.sin({0})")
_elementwise("Cos", "cos", _floating,
             grad=lambda op, dy: (-dy * sin(op.inputs[0]),), c_expr="cos({0})",
             native="np.cos({0})")
_elementwise("Tanh", "tanh", _floating,
             grad=lambda op, dy: (dy * (1 - op.outputs[0] * op.outputs[0]),), fresh_output=True,
             into=_tanh_into, c_expr="tanh({0})", native="nm.tanh({0})")
_elementwise("Sigmoid", _stable_sigmoid, _floating,
             grad=lambda op, dy: (dy * op.outputs[0] * (1 - op.outputs[0]),), fresh_output=True,
             direct=lambda op: (_stable_sigmoid, None),
             into=_sigmoid_into, c_expr="(({T})1 / (({T})1 + exp(-{0})))",
             native="nm.sigmoid({0})")
# TensorFlow registers no gradient (None) for Round, Floor and Ceil
_elementwise("Round", _round_kernel, _numeric, differentiable=False)
_elementwise("Floor", "floor", _floating, differentiable=False, c_expr="floor({0})",
             native="np.floor({0})")
_elementwise("Ceil", "ceil", _floating, differentiable=False, c_expr="ceil({0})",
             native="np.ceil({0})")
_elementwise("IsNan", "isnan", _floating, out_dtype=_dt.bool, differentiable=False,
             c_expr="({0} != {0})", native="({0} != {0})")
_elementwise("IsFinite", "isfinite", _floating, out_dtype=_dt.bool,
             differentiable=False, native="np.isfinite({0})")
_elementwise("IsInf", "isinf", _floating, out_dtype=_dt.bool, differentiable=False,
             native="np.isinf({0})")


negative = _unary_api("Neg", "negative", """
    Elementwise -x.

    Example:
        >>> tl.negative(tl.constant([1, -2])).numpy()
        array([-1,  2], dtype=int32)
    """)


_elementwise("Neg", "negative", _numeric, grad=lambda op, dy: (negative(dy),), c_expr="(-{0})",
             native="(-{0})")


abs = _unary_api("Abs", "abs", """
    Elementwise |x|; the gradient at 0 is 0 (sign(x)), as TensorFlow.

    Example:
        >>> tl.abs(tl.constant([-1.5, 2.0])).numpy()
        array([1.5, 2. ], dtype=float32)
    """)  # noqa: A001 -- TensorFlow's name

sign = _unary_api("Sign", "sign", "Elementwise -1, 0 or 1 by the sign of x (its gradient is zero).")
square = _unary_api("Square", "square", "Elementwise x * x.")

exp = _unary_api("Exp", "exp", """
    Elementwise e ** x (floating dtypes only; TypeError for integers).

    Example:
        >>> tl.exp(tl.constant(0.0)).numpy()
        1.0
    """)

log = _unary_api("Log", "log", "Elementwise natural logarithm (floating dtypes only).")

log1p = _unary_api("Log1p", "log1p", """
    Elementwise log(1 + x), accurate for small x (floating dtypes only).""")

sqrt = _unary_api("Sqrt", "sqrt", """
    Elementwise square root (floating dtypes only; TypeError for integers).

    Example:
        >>> tl.sqrt(tl.constant([4.0, 9.0])).numpy()
        array([2., 3.], dtype=float32)
    """)

rsqrt = _unary_api("Rsqrt", "rsqrt", "Elementwise 1 / sqrt(x) (floating dtypes only).")
reciprocal = _unary_api("Reciprocal", "reciprocal", "Elementwise 1 / x (floating dtypes only).")
sin = _unary_api("Sin", "sin", "Elementwise sine (floating dtypes only).")
cos = _unary_api("Cos", "cos", "Elementwise cosine (floating dtypes only).")
tanh = _unary_api("Tanh", "tanh", "Elementwise hyperbolic tangent (floating dtypes only).")

sigmoid = _unary_api("Sigmoid", "sigmoid", """
    Elementwise 1 / (1 + exp(-x)), computed without overflow (floating dtypes only).

    Example:
        >>> tl.sigmoid(tl.constant(0.0)).numpy()
        0.5
    """)

round = _unary_api("Round", "round", """
    Elementwise rounding to the nearest integer, halves to even (banker's rounding).

    Example:
        >>> tl.round(tl.constant([0.5, 1.5, 2.5])).numpy()
        array([0., 2., 2.], dtype=float32)
    """)  # noqa: A001 -- TensorFlow's name

floor = _unary_api("Floor", "floor", """
    Elementwise largest integer not greater than x (floating dtypes only).""")

ceil = _unary_api("Ceil", "ceil", """
    Elementwise smallest integer not less than x (floating dtypes only).""")

is_nan = _unary_api("IsNan", "is_nan", """
    Elementwise x is NaN, as a bool tensor (floating dtypes only).""")

is_finite = _unary_api("IsFinite", "is_finite", """
    Elementwise x is neither infinite nor NaN, as a bool tensor (floating dtypes only).""")

is_inf = _unary_api("IsInf", "is_inf", """
    Elementwise x is +inf or -inf, as a bool tensor (floating dtypes only).""")


# ------------------------------------------------------------------ comparisons and logic

for _name, _fn, _allowed, _c_op in (
        ("Equal", "equal", _any, "({0} == {1})"), ("NotEqual", "not_equal", _any, "({0} != {1})"),
        ("Greater", "greater", _numeric, "({0} > {1})"),
        ("GreaterEqual", "greater_equal", _numeric, "({0} >= {1})"),
        ("Less", "less", _numeric, "({0} < {1})"),
        ("LessEqual", "less_equal", _numeric, "({0} <= {1})")):
    # numeric comparisons are the ufunc itself (a loop's condition is one call); Equal and
    # NotEqual also compare strings, through their kernel
    _elementwise2(_name, _fn if _allowed is _numeric else
                  (lambda f: lambda xp, a, b: getattr(xp, f)(a, b))(_fn), _allowed,
                  out_dtype=_dt.bool, differentiable=False, into=_fn, c_expr=_c_op,
                  native=_c_op)
del _name, _fn, _allowed, _c_op
_elementwise2("LogicalAnd", "logical_and", _boolean, differentiable=False, c_expr="({0} && {1})",
              native="({0} and {1})")
_elementwise2("LogicalOr", "logical_or", _boolean, differentiable=False, c_expr="({0} || {1})",
              native="({0} or {1})")
_elementwise("LogicalNot", "logical_not", _boolean, differentiable=False, c_expr="(!{0})",
             native="(not {0})")


equal = _binary_api("Equal", "equal", """
    Elementwise x == y as a bool tensor, with broadcasting.

    Raises:
        InvalidArgumentError: if the dtypes differ or the shapes do not broadcast.

    Example:
        >>> tl.equal(tl.constant([1, 2]), 2).numpy()
        array([False,  True])
    """)

not_equal = _binary_api("NotEqual", "not_equal", """
    Elementwise x != y as a bool tensor (see `equal`).""")

greater = _binary_api("Greater", "greater", "Elementwise x > y as a bool tensor (see `equal`).")

greater_equal = _binary_api("GreaterEqual", "greater_equal", """
    Elementwise x >= y as a bool tensor (see `equal`).""")

less = _binary_api("Less", "less", "Elementwise x < y as a bool tensor (see `equal`).")

less_equal = _binary_api("LessEqual", "less_equal", """
    Elementwise x <= y as a bool tensor (see `equal`).""")

logical_and = _binary_api("LogicalAnd", "logical_and", """
    Elementwise x AND y of bool tensors (TypeError for other dtypes; `&` uses it).

    Example:
        >>> tl.logical_and(tl.constant([True, True]), [True, False]).numpy()
        array([ True, False])
    """)

logical_or = _binary_api("LogicalOr", "logical_or", """
    Elementwise x OR y of bool tensors (TypeError for other dtypes; `|` uses it).""")

logical_not = _unary_api("LogicalNot", "logical_not", """
    Elementwise NOT x of a bool tensor (TypeError for other dtypes; `~` uses it).""")


def logical_xor(x, y, name=None):
    """Elementwise x XOR y of bool tensors, as TensorFlow: (x OR y) AND NOT (x AND y)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


# ------------------------------------------------------------------ select, cast, clip

def _select_infer(c, x, y):
    if not c.dtype.is_bool:
        raise TypeError(f"SelectV2 needs a bool condition, got {c.dtype.name}")
    d = same_dtype("SelectV2", x, y)
    return spec(broadcast_shapes(c.shape, x.shape, y.shape), d)


@defop("SelectV2", infer=_select_infer, elementwise=True,
       grad=lambda op, dy: (None, where(op.inputs[0], dy, 0), where(op.inputs[0], 0, dy)),
       c_expr="({0} ? {1} : {2})", native="({1} if {0} else {2})")
def _select(xp, c, x, y):
    return xp.where(c, x, y)


def _where_infer(c):
    _require("Where", c.dtype)
    return spec([None, c.shape.rank], _dt.int64)


_ALLOWED["Where"] = _any


@defop("Where", infer=_where_infer, differentiable=False)
def _where_indices(xp, c):
    return xp.argwhere(c).astype(xp.int64)


def where(condition, x=None, y=None, name=None):
    """Elementwise `x if condition else y` with broadcasting; or, with only a
    condition, the int64 coordinates [num_true, rank] of its true elements.

    Args:
        condition: a bool tensor (with one argument, non-zero counts as true).
        x, y: tensors or Python values of one dtype, or both None.

    Raises:
        ValueError: if only one of x and y is given.
        InvalidArgumentError: if x and y differ in dtype or the shapes do not broadcast.

    Example:
        >>> tl.where(tl.constant([True, False]), 1.0, 0.0).numpy()
        array([1., 0.], dtype=float32)
        >>> tl.where(tl.constant([False, True])).numpy()
        array([[1]])
    """
    if (x is None) != (y is None):
        raise ValueError("where needs both x and y, or neither")
    if x is None:
        return apply("Where", convert_to_tensor(condition))
    c = convert_to_tensor(condition)
    if not c.dtype.is_bool:
        raise _type_error("SelectV2", f"the condition must be bool, got {c.dtype.name}")
    x, y = convert_same_dtype("SelectV2", (x, y))
    return apply("SelectV2", c, x, y)


def _cast_infer(x, DstT):  # noqa: N803 -- TensorFlow's attr name
    if x.dtype is _dt.resource or DstT is _dt.resource:
        raise TypeError("Cast cannot convert resource handles")
    if (x.dtype is _dt.string) is not (DstT is _dt.string):
        raise UnimplementedError(f"Cast {x.dtype.name} to {DstT.name} is not supported; use "
                                 "tl.strings.to_number or tl.strings.as_string")
    return spec(x.shape, DstT)


def _cast_grad(op, dy):
    src = op.inputs[0].dtype
    if _floating(src) and _floating(op.attrs["DstT"]):
        return (cast(dy, src),)
    return (None,)


def _cast_into(xp, x, out, tmp, DstT):  # noqa: N803 -- TensorFlow's attr name
    xp.copyto(out, x, casting="unsafe")  # the C casts `astype` does


# C++ casts as TensorFlow: floats truncate toward zero; to bool, non-zero (NaN too) is true
@defop("Cast", infer=_cast_infer, grad=_cast_grad, elementwise=True, into=_cast_into,
       c_expr="(({T}){0})", native="{T}({0})")
def _cast(xp, x, DstT):  # noqa: N803
    if DstT is _dt.string or x.dtype.kind == "O":
        raise ValueError("string casts are not supported")  # the inference rule says why
    return x.astype(DstT.np)  # C casts: floats truncate toward zero, as TensorFlow


def cast(x, dtype, name=None):
    """`x` converted to `dtype` (floats to integers truncate toward zero; non-zero is True).

    Returns `x` itself when it already has `dtype`. Gradients flow between
    floating dtypes only.

    Example:
        >>> tl.cast(tl.constant([-1.7, 1.7]), tl.int32).numpy()
        array([-1,  1], dtype=int32)
    """
    dtype = _dt.as_dtype(dtype)
    try:
        x = convert_to_tensor(x)
    except TypeError as e:
        return _map_composite(e, lambda v: cast(v, dtype), x)
    if x.dtype is dtype:
        return x
    return apply("Cast", x, DstT=dtype)


def saturate_cast(value, dtype, name=None):
    """`value` converted to `dtype`, clipped first to what `dtype` holds (no wrap-around; a
    float narrowed to a smaller float saturates at its largest finite value).

    Example:
        >>> tl.saturate_cast(tl.constant([-5.0, 300.0]), tl.uint8).numpy()
        array([  0, 255], dtype=uint8)
    """
    x = convert_to_tensor(value)
    d = _dt.as_dtype(dtype)
    low = high = None
    if x.dtype.is_floating and d.is_integer:
        low, high = float(_np.iinfo(d.np).min), float(_np.iinfo(d.np).max)
        t = x.dtype.np.type
        # the largest float not above the bound, so the cast itself cannot overflow
        high = float(_np.nextafter(t(high), t(0))) if float(t(high)) > high else high
    elif x.dtype.is_integer and d.is_integer:
        low = max(int(_np.iinfo(d.np).min), int(_np.iinfo(x.dtype.np).min))
        high = min(int(_np.iinfo(d.np).max), int(_np.iinfo(x.dtype.np).max))
    elif x.dtype.is_floating and d.is_floating and d.size < x.dtype.size:
        low, high = float(_np.finfo(d.np).min), float(_np.finfo(d.np).max)
    if low is not None:
        x = minimum(maximum(x, cast(low, x.dtype)), cast(high, x.dtype))
    return cast(x, d)


def _clip_infer(t, lo, hi):
    d = same_dtype("ClipByValue", t, lo, hi)
    _require("ClipByValue", d)
    shape = broadcast_shapes(t.shape, lo.shape, hi.shape)
    if not shape.is_compatible_with(t.shape):
        raise ValueError(f"clip values of shapes {lo.shape} and {hi.shape} would broadcast t of "
                         f"shape {t.shape} to {shape}")
    return spec(t.shape.merge_with(shape), d)


def _clip_grad(op, dy):
    t, lo, hi = op.inputs
    below, above = less(t, lo), greater(t, hi)
    return (where(logical_or(below, above), 0, dy), where(below, dy, 0), where(above, dy, 0))


_ALLOWED["ClipByValue"] = _numeric


@defop("ClipByValue", infer=_clip_infer, grad=_clip_grad, elementwise=True,
       native="({1} if ({2} if {0} > {2} else {0}) < {1} else ({2} if {0} > {2} else {0}))")
def _clip(xp, t, lo, hi):
    out = xp.maximum(xp.minimum(t, hi), lo)  # as TensorFlow: lo wins when lo > hi
    if out.shape != t.shape:
        raise ValueError("the clip values would broadcast t")
    return out


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Elementwise max(min(t, clip_value_max), clip_value_min); the result has t's shape.

    Raises:
        InvalidArgumentError: if dtypes differ or the clip values would broadcast t.

    Example:
        >>> tl.clip_by_value(tl.constant([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy()
        array([-1. ,  0.5,  1. ], dtype=float32)
    """
    t, lo, hi = convert_same_dtype("ClipByValue", (t, clip_value_min, clip_value_max))
    _check_dtypes("ClipByValue", (t,))
    return apply("ClipByValue", t, lo, hi)


# ------------------------------------------------------------------ clipping by norm

__all__ += ["clip_by_norm", "clip_by_global_norm"]


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t` scaled so that its L2 norm over `axes` is at most `clip_norm`, as TensorFlow.

    Args:
        t: a floating tensor.
        clip_norm: a positive scalar.
        axes: the dims the norm runs over (default all).

    Example:
        >>> tl.clip_by_norm(tl.constant([3.0, 4.0]), 1.0).numpy()
        array([0.6, 0.8], dtype=float32)
    """
    t = convert_to_tensor(t)
    l2sum = reduce_sum(t * t, axes, keepdims=True)
    positive = greater(l2sum, 0)
    # the norm is 0 where the sum is 0, without sqrt's infinite gradient there
    l2norm = where(positive, sqrt(where(positive, l2sum, cast(1, t.dtype))), l2sum)
    clip_norm = convert_to_tensor(clip_norm, dtype_hint=t.dtype)
    return _array.identity(t * clip_norm / maximum(l2norm, clip_norm))


def global_norm(t_list, name=None):
    """sqrt(sum of the squared L2 norms of the tensors in `t_list`); None entries are skipped."""
    tensors = [convert_to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        raise ValueError("global_norm needs at least one tensor")
    dtype = tensors[0].dtype
    total = add_n([reduce_sum(square(cast(t, dtype))) for t in tensors])
    return sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor of `t_list` by clip_norm / max(global_norm, clip_norm), as TensorFlow.

    Args:
        t_list: a list of tensors (None entries stay None).
        clip_norm: a positive scalar.
        use_norm: the global norm to use (default: computed with `global_norm`).

    Returns:
        (list of clipped tensors, the global norm). If the norm is infinite or NaN,
        every entry becomes NaN.

    Example:
        >>> clipped, norm = tl.clip_by_global_norm([tl.constant([3.0]), tl.constant([4.0])], 1.0)
        >>> float(norm), clipped[1].numpy()
        (5.0, array([0.8], dtype=float32))
    """
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"clip_by_global_norm: t_list must be a list, got {type(t_list).__name__}")
    use_norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip_norm = convert_to_tensor(clip_norm, dtype_hint=use_norm.dtype)
    clip_norm = cast(clip_norm, use_norm.dtype)
    scale = clip_norm * minimum(1.0 / use_norm, 1.0 / clip_norm)
    scale = scale + (use_norm - use_norm)  # NaN when the norm is inf or NaN, as TensorFlow
    tensors = [None if t is None else convert_to_tensor(t) for t in t_list]
    clipped = [None if t is None else _array.identity(t * cast(scale, t.dtype)) for t in tensors]
    return clipped, use_norm


# ------------------------------------------------------------------ matmul

def _matmul_infer(a, b, transpose_a=False, transpose_b=False):
    d = same_dtype("MatMul", a, b)
    _require("MatMul", d)
    if a.shape.rank is not None and a.shape.rank < 2 or b.shape.rank is not None and b.shape.rank < 2:
        raise ValueError(f"MatMul needs inputs of rank >= 2, got shapes {a.shape} and {b.shape}")
    if a.shape.rank is None or b.shape.rank is None:
        return spec(None, d)
    m, k1 = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"MatMul inner dimensions differ: {a.shape} @ {b.shape} "
                         f"(contracting {k1} with {k2})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return spec(batch.concatenate([m, n]), d)


_ALLOWED["MatMul"] = _numeric


def _matmul_grad(op, dy):
    # batch dims may broadcast: these are full-shaped, the driver sums them back
    a, b = op.inputs
    ta, tb = op.attrs.get("transpose_a", False), op.attrs.get("transpose_b", False)
    if not ta and not tb:
        return (matmul(dy, b, transpose_b=True), matmul(a, dy, transpose_a=True))
    if not ta and tb:
        return (matmul(dy, b), matmul(dy, a, transpose_a=True))
    if ta and not tb:
        return (matmul(b, dy, transpose_b=True), matmul(a, dy))
    return (matmul(b, dy, transpose_a=True, transpose_b=True),
            matmul(dy, a, transpose_a=True, transpose_b=True))


def _matmul_direct(op):
    """The product's kernel (`products.kernel_for`, xp.matmul itself when BLAS threads it as
    it likes) when ranks are known >= 2 and nothing is transposed; in 2-D, the transposes as
    `.T` views of the arguments."""
    if not all(t.shape.rank is not None and t.shape.rank >= 2 for t in op.inputs):
        return None
    flags = (op.attrs.get("transpose_a"), op.attrs.get("transpose_b"))
    if any(flags) and not all(t.shape.rank == 2 for t in op.inputs):
        return None
    a, b = (t.shape.as_list()[::-1] if flag else t.shape.as_list()
            for t, flag in zip(op.inputs, flags))
    return (_products.kernel_for(op.inputs[0].dtype.np, a, b),
            tuple("{}.T" if flag else "{}" for flag in flags))


@defop("MatMul", infer=_matmul_infer, grad=_matmul_grad, direct=_matmul_direct, fresh_output=True)
def _matmul(xp, a, b, transpose_a=False, transpose_b=False):
    """Through the kernel `products.kernel_for` picks: BLAS for every floating dtype (float16
    in float32), on trainlib's pool for large products, on one BLAS thread for small ones."""
    if a.ndim < 2 or b.ndim < 2:  # numpy would take vectors; TensorFlow does not
        raise ValueError("MatMul needs inputs of rank >= 2")
    if transpose_a:
        a = xp.swapaxes(a, -1, -2)
    if transpose_b:
        b = xp.swapaxes(b, -1, -2)
    return _products.product(xp, a, b)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None):
    """Matrix product of the last two dims, batch dims broadcast.

    Args:
        a, b: tensors of rank >= 2 and one dtype.
        transpose_a, transpose_b: transpose the last two dims first.
        adjoint_a, adjoint_b: the same, for real dtypes.

    Returns:
        A tensor of shape batch + [m, n].

    Raises:
        InvalidArgumentError: on mismatched inner dims or dtypes.

    Example:
        >>> tl.matmul(tl.ones([2, 3]), tl.ones([3, 4])).shape
        TensorShape([2, 4])
    """
    a, b = convert_same_dtype("MatMul", (a, b))
    _check_dtypes("MatMul", (a, b))
    transpose_a, transpose_b = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
    if transpose_a or transpose_b:
        return apply("MatMul", a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    return apply("MatMul", a, b)


# ------------------------------------------------------------------ einsum

def _einsum_parse(equation):
    """(input terms, output term) of an explicit equation; '...' is kept as is."""
    lhs, out = equation.split("->")
    return lhs.split(","), out


def _einsum_labels(term):
    return term.replace("...", "")


def _einsum_explicit(equation, n_inputs):
    """The equation without spaces and with '->output' (numpy's implicit rule if missing)."""
    equation = equation.replace(" ", "")
    if "->" not in equation:
        lhs = equation
        labels = _einsum_labels(lhs.replace(",", ""))
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        equation = lhs + "->" + ("..." if "..." in lhs else "") + "".join(once)
    terms, out = _einsum_parse(equation)
    if len(terms) != n_inputs:
        raise ValueError(f"einsum equation {equation!r} has {len(terms)} input terms but "
                         f"{n_inputs} inputs were given")
    for term in terms + [out]:
        if not _einsum_labels(term).isalpha() and _einsum_labels(term):
            raise ValueError(f"einsum equation {equation!r}: labels must be letters, got {term!r}")
    return equation


def _einsum_infer(*xs, equation):
    d = same_dtype("Einsum", *xs)
    _require("Einsum", d)
    terms, out = _einsum_parse(equation)
    if any(x.shape.rank is None for x in xs):
        return spec(None, d)
    dims, ellipses = {}, []
    for i, (term, x) in enumerate(zip(terms, xs)):
        labels, shape = _einsum_labels(term), list(x.shape)
        n_ellipsis = len(shape) - len(labels)
        if n_ellipsis < 0 or (n_ellipsis and "..." not in term):
            raise ValueError(f"einsum term {term!r} has {len(labels)} labels but input {i} has "
                             f"shape {x.shape}")
        if "..." in term:
            at = term.index("...")
            ellipses.append(shape[at:at + n_ellipsis])
            shape = shape[:at] + shape[at + n_ellipsis:]
        for label, dim in zip(labels, shape):
            known = dims.get(label)
            if dim is not None and known is not None and dim != known:
                raise ValueError(f"einsum label {label!r} has size {known} in one input and {dim} "
                                 f"in input {i} (shape {x.shape}) of {equation!r}")
            if known is None:
                dims[label] = dim
    ellipsis = list(broadcast_shapes(*ellipses)) if ellipses else []
    shape = []
    for part in out.split("..."):
        shape += [dims.get(c) for c in part] + ellipsis
    shape = shape[:len(shape) - len(ellipsis)]
    for c in _einsum_labels(out):
        if c not in dims:
            raise ValueError(f"einsum output label {c!r} appears in no input of {equation!r}")
    return spec(shape, d)


def _einsum_name_ellipsis(terms, tensors, equation):
    """`terms` with each '...' replaced by the same fresh labels (one per dim it stands for);
    UnimplementedError when ranks are unknown or the terms' '...' cover different ranks."""
    counts = set()
    for term, t in zip(terms, tensors):
        if "..." in term:
            if t.shape.rank is None:
                raise UnimplementedError(f"no Einsum gradient of {equation!r} for an input of "
                                         "unknown rank", op="Einsum")
            counts.add(t.shape.rank - len(_einsum_labels(term)))
    if len(counts) != 1:
        raise UnimplementedError(f"no Einsum gradient of {equation!r}: its '...' stand for "
                                 f"different numbers of dims {sorted(counts)}", op="Einsum")
    used = set("".join(terms))
    fresh = "".join([c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used][:counts.pop()])
    return [term.replace("...", fresh) for term in terms]


def _einsum_grad(op, dy):
    terms, out = _einsum_parse(op.attrs["equation"])
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = terms[:i] + terms[i + 1:]
        seen = set(_einsum_labels(out + "".join(others)))
        labels = _einsum_labels(term)
        if len(set(labels)) != len(labels):
            raise UnimplementedError(f"no Einsum gradient for the repeated labels of {term!r}",
                                     op="Einsum")
        if "..." in term and "..." not in out + "".join(others):
            raise UnimplementedError(f"no Einsum gradient when {term!r} sums its '...' dims away",
                                     op="Einsum")
        kept = term.replace("...", ".")
        kept = "".join(c for c in kept if c == "." or c in seen).replace(".", "...")
        operands = [out] + others
        if "..." not in kept and any("..." in t for t in operands):
            # numpy refuses '...' in inputs but not in the output: name those dims, so
            # that the gradient sums over them
            operands = _einsum_name_ellipsis(operands, [dy, *op.inputs[:i], *op.inputs[i + 1:]],
                                             op.attrs["equation"])
        g = einsum(f"{operands[0]},{','.join(operands[1:])}->{kept}" if others else
                   f"{operands[0]}->{kept}", dy, *op.inputs[:i], *op.inputs[i + 1:])
        if kept != term:  # labels summed inside this input alone: put them back as size-1 dims
            rank = x.shape.rank
            if rank is None:
                raise UnimplementedError("no Einsum gradient for an input of unknown rank",
                                         op="Einsum")
            n_ellipsis = rank - len(labels)
            position = 0
            for token in (term.replace("...", ".")):
                if token == ".":
                    position += n_ellipsis
                    continue
                if token not in seen:
                    g = _array.expand_dims(g, position)
                position += 1
            g = broadcast_to_shape_of(g, x)
        grads.append(g)
    return tuple(grads)


_ALLOWED["Einsum"] = _numeric


@defop("Einsum", infer=_einsum_infer, grad=_einsum_grad)
def _einsum(xp, *arrays, equation):
    """Matrix products where the equation has them (`einsum_plan`), each run by MatMul's
    kernel (and its thread policy)."""
    return _einsum_plan.contract(xp, equation, arrays, matmul=_matmul)


def einsum(equation, *inputs, **kwargs):
    """Tensor contraction in Einstein notation, e.g. 'ij,jk->ik' (numpy's rules, '...' allowed).

    Args:
        equation: input terms separated by commas, then optionally '->' and the output term.
        *inputs: tensors of one dtype, one per term.

    Raises:
        InvalidArgumentError: if sizes of one label disagree or terms and ranks do not match.

    Example:
        >>> tl.einsum("ij,jk->ik", tl.ones([2, 3]), tl.ones([3, 4])).shape
        TensorShape([2, 4])
    """
    try:
        equation = _einsum_explicit(equation, len(inputs))
    except ValueError as e:
        raise op_error(InvalidArgumentError, "Einsum", str(e)) from None
    tensors = convert_same_dtype("Einsum", list(inputs))
    _check_dtypes("Einsum", tensors)
    return apply("Einsum", *tensors, equation=equation)


# ------------------------------------------------------------------ reductions

def _normalize_axes(axis, rank):
    """Sorted non-negative reduction axes (all for None); ValueError if out of range or repeated."""
    if axis is None:
        return tuple(range(rank))
    out = []
    for a in axis:
        if rank == 0:  # normalize_axis lets 0 through for scalars; reductions do not
            raise ValueError(f"axis {a} is out of range for a tensor of rank 0 (a scalar has no axes)")
        a = normalize_axis(a, rank)
        if a in out:
            raise ValueError(f"axis {a} is repeated in axis={list(axis)}")
        out.append(a)
    return tuple(sorted(out))


def _static_axis(axis):
    """`axis` as None or a tuple of Python ints (eager tensors allowed)."""
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    elif is_tensor(axis):
        raise TypeError("axis must be known while tracing: pass Python ints, not a graph tensor")
    try:
        if isinstance(axis, (list, tuple)):
            return tuple(_operator.index(a) for a in axis)
        return (_operator.index(axis),)
    except TypeError:
        raise TypeError(f"axis must be an int or a list of ints, got {axis!r}") from None


def _reduce_infer(name, allowed, out_dtype=None):
    _ALLOWED[name] = allowed

    def infer(x, axis=None, keepdims=False):
        _require(name, x.dtype)
        d = out_dtype or x.dtype
        if x.shape.rank is None:
            return spec(None, d)
        axes = _normalize_axes(axis, x.shape.rank)
        if keepdims:
            return spec([1 if i in axes else n for i, n in enumerate(x.shape)], d)
        return spec([n for i, n in enumerate(x.shape) if i not in axes], d)
    return infer


def _kept(op, g):
    """`g`, shaped like the reduction's output, with the reduced dims back as size 1."""
    x, axis = op.inputs[0], op.attrs.get("axis")
    if op.attrs.get("keepdims") or axis is None and x.shape.rank is None:
        return g  # a full reduction's scalar broadcasts as it is
    if x.shape.rank is None:
        if any(a < 0 for a in axis):
            raise UnimplementedError("no gradient for a reduction over negative axes of a tensor "
                                     "of unknown rank", op=op.opdef.name)
        axes = sorted(axis)
    else:
        axes = _normalize_axes(axis, x.shape.rank)
        kept = [1 if i in axes else n for i, n in enumerate(x.shape)]
        if kept.count(None) <= 1:
            return _array.reshape(g, [-1 if n is None else n for n in kept])
    for a in axes:
        g = _array.expand_dims(g, a)
    return g


def _broadcast_back(g, x):
    if x.shape.is_fully_defined():
        return _array.broadcast_to(g, x.shape.as_list())
    return broadcast_to_shape_of(g, x)


def _sum_grad(op, dy):
    return (_broadcast_back(_kept(op, dy), op.inputs[0]),)


def _mean_grad(op, dy):
    x, y = op.inputs[0], op.outputs[0]
    n_in, n_out = x.shape.num_elements(), y.shape.num_elements()
    if n_in is not None and n_out is not None:
        count = n_in // n_out if n_out else 1
        return (_broadcast_back(_kept(op, dy) / float(count or 1), x),)
    count = reduce_sum(_array.ones_like(x), op.attrs.get("axis"), keepdims=True)
    return (broadcast_to_shape_of(_kept(op, dy) / count, x),)


def _extremum_grad(op, dy):
    # TensorFlow's _MinOrMaxGrad: ties share the gradient equally
    x = op.inputs[0]
    selected = cast(equal(_kept(op, op.outputs[0]), x), dy.dtype)
    count = reduce_sum(selected, op.attrs.get("axis"), keepdims=True)
    return (selected / count * _kept(op, dy),)


def _prod_grad(op, dy):
    # product of the other elements of each group, exact with zeros in the group:
    # no zero -> prod / x; one zero -> the product of the rest at the zero, 0 elsewhere
    x, axis = op.inputs[0], op.attrs.get("axis")
    is_zero = equal(x, 0)
    zeros = reduce_sum(cast(is_zero, x.dtype), axis, keepdims=True)
    safe = where(is_zero, 1, x)
    rest = reduce_prod(safe, axis, keepdims=True)
    local = where(equal(zeros, 0), rest / safe, where(logical_and(is_zero, equal(zeros, 1)), rest, 0))
    return (local * _kept(op, dy),)


def _full(xp, shape, value, dtype):
    return xp.full(shape, value, dtype=dtype)


def _reduced_shape(x, axis, keepdims):
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in axis]
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return tuple(n for i, n in enumerate(x.shape) if i not in axes)


def _sum_kernel(xp, x, axis=None, keepdims=False):
    if type(x) is _np.ndarray:   # the ufunc's reduce: what the method calls, without its wrapper
        return _np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    return x.sum(axis=axis, keepdims=keepdims, dtype=x.dtype)  # the method skips np.sum's wrapper


def _mean_kernel(xp, x, axis=None, keepdims=False):
    shape = _reduced_shape(x, axis, keepdims)
    count = _pymath.prod(x.shape[a] for a in (range(x.ndim) if axis is None else axis))
    if x.size == 0 and axis is not None:
        _normalize_axes(axis, x.ndim)  # numpy would not check the axes of an empty reduction
    if x.dtype.kind in "iu":
        if count == 0:  # TensorFlow's integer mean of nothing is 0
            return _full(xp, shape, 0, x.dtype)
        total = xp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        # integer mean truncates toward zero (C division), as TensorFlow
        q = xp.floor_divide(xp.abs(total), count).astype(x.dtype)
        return xp.where(total < 0, -q, q).astype(x.dtype, copy=False)
    if x.size == 0:
        return _full(xp, shape, float("nan"), x.dtype)
    return xp.mean(x, axis=axis, keepdims=keepdims).astype(x.dtype, copy=False)


def _extremum_kernel(fn):
    def kernel(xp, x, axis=None, keepdims=False):
        if x.size == 0:  # TensorFlow gives the reduction's identity where numpy raises
            if axis is not None:
                _normalize_axes(axis, x.ndim)
            if x.dtype.kind == "f":
                value = float("-inf") if fn == "max" else float("inf")
            else:
                value = xp.iinfo(x.dtype).min if fn == "max" else xp.iinfo(x.dtype).max
            return _full(xp, _reduced_shape(x, axis, keepdims), value, x.dtype)
        return getattr(xp, fn)(x, axis=axis, keepdims=keepdims)
    return kernel


# reductions always return new arrays (fresh_output)
defop("Sum", infer=_reduce_infer("Sum", _numeric), grad=_sum_grad, fresh_output=True)(_sum_kernel)
defop("Mean", infer=_reduce_infer("Mean", _numeric), grad=_mean_grad, fresh_output=True)(
    _mean_kernel)
defop("Max", infer=_reduce_infer("Max", _numeric), grad=_extremum_grad, fresh_output=True)(
    _extremum_kernel("max"))
defop("Min", infer=_reduce_infer("Min", _numeric), grad=_extremum_grad, fresh_output=True)(
    _extremum_kernel("min"))
defop("Prod", fresh_output=True, infer=_reduce_infer("Prod", _numeric), grad=_prod_grad)(
    lambda xp, x, axis=None, keepdims=False: xp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype))
defop("All", fresh_output=True, infer=_reduce_infer("All", _boolean), differentiable=False)(
    lambda xp, x, axis=None, keepdims=False: xp.all(x, axis=axis, keepdims=keepdims))
defop("Any", fresh_output=True, infer=_reduce_infer("Any", _boolean), differentiable=False)(
    lambda xp, x, axis=None, keepdims=False: xp.any(x, axis=axis, keepdims=keepdims))


def _reduce(op_name, input_tensor, axis, keepdims):
    try:
        x = convert_to_tensor(input_tensor)
    except TypeError:  # a RaggedTensor reduces by its own rule (over its rows)
        if type(input_tensor) not in ELEMENTWISE_COMPOSITES:
            raise
        return input_tensor._tl_reduce(op_name, axis, keepdims)
    _check_dtypes(op_name, (x,))
    return apply(op_name, x, axis=_static_axis(axis), keepdims=bool(keepdims))


def _reduce_api(op_name, api_name, doc):
    """`api_name(input_tensor, axis=None, keepdims=False, name=None)`: op `op_name` over axis."""
    return _public(api_name, doc, lambda input_tensor, axis=None, keepdims=False, name=None:
                   _reduce(op_name, input_tensor, axis, keepdims))


reduce_sum = _reduce_api("Sum", "reduce_sum", """
    Sum over `axis` (all axes if None), in the input's dtype.

    Args:
        input_tensor: a numeric tensor.
        axis: None, an int or a list of ints (negative counts from the end).
        keepdims: keep reduced axes as size 1.

    Raises:
        InvalidArgumentError: if an axis is out of range or repeated.
        TypeError: for bool inputs.

    Example:
        >>> tl.reduce_sum(tl.constant([[1, 2], [3, 4]]), axis=0).numpy()
        array([4, 6], dtype=int32)
    """)

reduce_mean = _reduce_api("Mean", "reduce_mean", """
    Mean over `axis` (see `reduce_sum`); integer means truncate toward zero, as TensorFlow.

    Example:
        >>> tl.reduce_mean(tl.constant([1, 2])).numpy()
        1
    """)

reduce_max = _reduce_api("Max", "reduce_max", """
    Maximum over `axis` (see `reduce_sum`); -inf (or the lowest integer) over nothing.""")

reduce_min = _reduce_api("Min", "reduce_min", """
    Minimum over `axis` (see `reduce_sum`); +inf (or the highest integer) over nothing.""")

reduce_prod = _reduce_api("Prod", "reduce_prod", "Product over `axis` (see `reduce_sum`).")

reduce_all = _reduce_api("All", "reduce_all", """
    Logical AND over `axis` of a bool tensor (TypeError for other dtypes).""")

reduce_any = _reduce_api("Any", "reduce_any", """
    Logical OR over `axis` of a bool tensor (TypeError for other dtypes).""")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over `axis`, computed without overflow, as TensorFlow.

    Example:
        >>> float(tl.reduce_logsumexp(tl.constant([1000.0, 1000.0])))
        1000.6931...
    """
    x = convert_to_tensor(input_tensor)
    axis = _static_axis(axis)
    raw_max = reduce_max(x, axis, keepdims=True)
    # shifting by the max is exact math, so it carries no gradient (TensorFlow's stop_gradient)
    shift = _array.stop_gradient(where(is_finite(raw_max), raw_max, 0))
    result = log(reduce_sum(exp(x - shift), axis, keepdims=keepdims))
    # summing the kept size-1 dims away is the reshape to the result's shape
    return result + (shift if keepdims else reduce_sum(shift, axis))


def _arg_infer(name):
    _ALLOWED[name] = _any  # bools too, as TensorFlow (argmax of [False, True] is 1)

    def infer(x, axis=0, output_type=_dt.int64):
        _require(name, x.dtype)
        if output_type not in (_dt.int32, _dt.int64):
            raise TypeError(f"{name} output_type must be int32 or int64, got {output_type!r}")
        if x.shape.rank is None:
            return spec(None, output_type)
        (axis,) = _normalize_axes((axis,), x.shape.rank)
        return spec([n for i, n in enumerate(x.shape) if i != axis], output_type)
    return infer


defop("ArgMax", fresh_output=True, infer=_arg_infer("ArgMax"), differentiable=False)(
    lambda xp, x, axis=0, output_type=_dt.int64: xp.argmax(x, axis=axis).astype(output_type.np))
defop("ArgMin", fresh_output=True, infer=_arg_infer("ArgMin"), differentiable=False)(
    lambda xp, x, axis=0, output_type=_dt.int64: xp.argmin(x, axis=axis).astype(output_type.np))


def _arg(op_name, input, axis, output_type):  # noqa: A002
    x = convert_to_tensor(input)
    _check_dtypes(op_name, (x,))
    if x.shape.rank == 0:  # checked now: numpy's argmax of a scalar is 0, TensorFlow's an error
        raise op_error(InvalidArgumentError, op_name, "Expected dimension in the range [0, 0), but got 0")
    axis = 0 if axis is None else _operator.index(axis)
    output_type = _dt.as_dtype(output_type)
    if output_type not in (_dt.int32, _dt.int64):
        raise _type_error(op_name, f"output_type must be int32 or int64, got {output_type!r}")
    return apply(op_name, x, axis=axis, output_type=output_type)


def argmax(input, axis=None, output_type=_dt.int64, name=None):  # noqa: A002
    """Index of the largest value along `axis` (0 if None); the first one on ties.

    Example:
        >>> tl.argmax(tl.constant([[1, 5], [7, 2]]), axis=1).numpy()
        array([1, 0])
    """
    return _arg("ArgMax", input, axis, output_type)


def argmin(input, axis=None, output_type=_dt.int64, name=None):  # noqa: A002
    """Index of the smallest value along `axis` (0 if None); the first one on ties."""
    return _arg("ArgMin", input, axis, output_type)


# Cumsum and Cumprod: one scan, by its xp function and its identity (the exclusive scan's first)

def _scan_infer(op_name):
    def infer(x, axis=0, exclusive=False, reverse=False):
        _require(op_name, x.dtype)
        if x.shape.rank is not None:
            _normalize_axes((axis,), x.shape.rank)
        return spec(x.shape, x.dtype)
    return infer


def _scan_kernel(scan, identity):
    """The kernel of a cumulative op: `xp.<scan>` along the axis, shifted one place with
    `identity` first when exclusive, run from the end when reverse."""
    def kernel(xp, x, axis=0, exclusive=False, reverse=False):
        if reverse:
            x = xp.flip(x, axis)
        out = getattr(xp, scan)(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            out = xp.roll(out, 1, axis)
            first = [slice(None)] * x.ndim
            first[axis] = 0
            out[tuple(first)] = identity
        return xp.flip(out, axis) if reverse else out
    kernel.__name__ = scan
    return kernel


def _scan(op_name, x, axis, exclusive, reverse):
    x = convert_to_tensor(x)
    _check_dtypes(op_name, (x,))
    if x.shape.rank == 0:  # numpy flattens a scalar; TensorFlow has no axis to scan
        raise op_error(InvalidArgumentError, op_name,
                       "Expected scan axis in the range [0, 0), but got 0")
    return apply(op_name, x, axis=_operator.index(axis), exclusive=bool(exclusive),
                 reverse=bool(reverse))


_ALLOWED["Cumsum"] = _numeric
defop("Cumsum", infer=_scan_infer("Cumsum"),
      grad=lambda op, dy: (cumsum(dy, op.attrs["axis"], op.attrs["exclusive"],
                                  not op.attrs["reverse"]),))(_scan_kernel("cumsum", 0))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis`.

    Args:
        exclusive: element i sums the elements before it, not including it.
        reverse: sum from the end.

    Example:
        >>> tl.cumsum(tl.constant([1, 2, 3]), exclusive=True).numpy()
        array([0, 1, 3], dtype=int32)
    """
    return _scan("Cumsum", x, axis, exclusive, reverse)


# W. J. Cody-style rational approximations as in Cephes `ndtr.c` (erf for
# |x| <= 1, erfc = exp(-x^2) P(x)/Q(x) beyond): relative error ~1e-16 in float64.
_ERF_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
          7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF_U = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
          2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
           4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
           9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
           9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
           1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
           6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
           1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)
_TWO_OVER_SQRT_PI = 2.0 / _pymath.sqrt(_pymath.pi)


def _poly(x, coefficients):
    y = x * 0 + coefficients[0]
    for c in coefficients[1:]:
        y = y * x + c
    return y


def _poly_into(x, coefficients, out):
    """`_poly` in place: Horner's rule written into `out`, two passes per coefficient."""
    out.fill(coefficients[0])
    for c in coefficients[1:]:
        out *= x
        out += c
    return out


def _erf_float32(xp, x):
    """Erf of float32 `x` by the same rational forms as the float64 kernel, in five buffers
    instead of ~80 temporaries: past |x| = 4 erf is +-1 in float32 (erfc(4) < 2**-26), so
    the clamp is 4 and the far-tail form is never needed."""
    t = x.dtype.type
    a = xp.absolute(x)
    xp.minimum(a, t(4), out=a)
    z = xp.minimum(a, t(1))
    z *= z
    num, den = xp.empty_like(x), xp.empty_like(x)
    small = _poly_into(z, _ERF_T, num)
    small /= _poly_into(z, _ERF_U, den)
    small *= x                               # x * T(z) / U(z), for |x| <= 1
    tail = _poly_into(a, _ERFC_P, den)
    tail /= _poly_into(a, _ERFC_Q, z)
    xp.multiply(a, a, out=z)
    xp.negative(z, out=z)
    xp.exp(z, out=z)
    tail *= z                                # erfc(|x|), for 1 < |x| <= 4
    xp.subtract(t(1), tail, out=tail)
    xp.copysign(tail, x, out=tail)
    return xp.where(a <= 1, small, tail)


@defop("Erf", infer=float_infer("Erf"), elementwise=True,
       grad=lambda op, dy: (dy * (_TWO_OVER_SQRT_PI * exp(-square(op.inputs[0]))),),
       native="nm.erf({0})")
def _erf(xp, x):
    if x.dtype == xp.float32 and x.ndim:
        return _erf_float32(xp, x)
    a = xp.minimum(xp.abs(x), x.dtype.type(30))  # erfc(30) underflows: past it erf is +-1
    z = xp.minimum(a, x.dtype.type(1))
    z = z * z
    small = x * _poly(z, _ERF_T) / _poly(z, _ERF_U)
    tail = xp.exp(-a * a) * xp.where(a < 8, _poly(a, _ERFC_P) / _poly(a, _ERFC_Q),
                                     _poly(a, _ERFC_R) / _poly(a, _ERFC_S))
    return xp.where(a <= 1, small, xp.sign(x) * (1 - tail)).astype(x.dtype, copy=False)


def erf(x, name=None):
    """The Gauss error function, elementwise (float64 accurate to ~1e-16; `tl.math.erf`,
    `tl.nn.erf`).

    Example:
        >>> round(float(tl.nn.erf(1.0)), 6)
        0.842701
    """
    return apply("Erf", float_tensor(x, "Erf"))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Variance over `axis` (population variance, as `tf.math.reduce_variance`); floats only.

    Example:
        >>> tl.math.reduce_variance(tl.constant([1.0, 3.0]))
        <tl.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    x = convert_to_tensor(input_tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"reduce_variance needs a floating tensor, got {x.dtype.name}")
    mean = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(squared_difference(x, mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation over `axis` (sqrt of `reduce_variance`); floats only."""
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


# ------------------------------------------------------------------ more of tf.math
# Trigonometric and hyperbolic functions, expm1, the safe divisions, truncating division,
# cumprod, top_k / in_top_k, segment reductions, bincount, norms and a few compositions.
# Names TensorFlow has only under tf.math (expm1, xlogy, top_k...) stay out of __all__.

__all__ += ["tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh",
            "truncatediv", "truncatemod", "norm"]

_elementwise("Tan", "tan", _floating,
             grad=lambda op, dy: (dy * (1 + op.outputs[0] * op.outputs[0]),))
_elementwise("Asin", "arcsin", _floating,
             grad=lambda op, dy: (dy * rsqrt(1 - square(op.inputs[0])),))
_elementwise("Acos", "arccos", _floating,
             grad=lambda op, dy: (-dy * rsqrt(1 - square(op.inputs[0])),))
_elementwise("Atan", "arctan", _floating,
             grad=lambda op, dy: (dy / (1 + square(op.inputs[0])),))
_elementwise("Sinh", "sinh", _floating,
             grad=lambda op, dy: (dy * cosh(op.inputs[0]),))
_elementwise("Cosh", "cosh", _floating,
             grad=lambda op, dy: (dy * sinh(op.inputs[0]),))
_elementwise("Asinh", "arcsinh", _floating,
             grad=lambda op, dy: (dy / cosh(op.outputs[0]),))
_elementwise("Acosh", "arccosh", _floating,
             grad=lambda op, dy: (dy / sinh(op.outputs[0]),))
_elementwise("Atanh", "arctanh", _floating,
             grad=lambda op, dy: (dy / (1 - square(op.inputs[0])),))
_elementwise("Expm1", "expm1", _floating,
             grad=lambda op, dy: (dy * exp(op.inputs[0]),), native="nm.expm1({0})")


tan = _unary_api("Tan", "tan", "Elementwise tangent (floating dtypes only).")

asin = _unary_api("Asin", "asin", """
    Elementwise arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1] (floating dtypes only).""")

acos = _unary_api("Acos", "acos", """
    Elementwise arccosine, in [0, pi]; NaN outside [-1, 1] (floating dtypes only).""")

atan = _unary_api("Atan", "atan", """
    Elementwise arctangent, in (-pi/2, pi/2) (floating dtypes only).""")

sinh = _unary_api("Sinh", "sinh", "Elementwise hyperbolic sine (floating dtypes only).")
cosh = _unary_api("Cosh", "cosh", "Elementwise hyperbolic cosine (floating dtypes only).")
asinh = _unary_api("Asinh", "asinh", "Elementwise inverse hyperbolic sine (floating dtypes only).")

acosh = _unary_api("Acosh", "acosh", """
    Elementwise inverse hyperbolic cosine; NaN below 1 (floating dtypes only).""")

atanh = _unary_api("Atanh", "atanh", """
    Elementwise inverse hyperbolic tangent; +-inf at +-1, NaN outside (floating dtypes only).""")

expm1 = _unary_api("Expm1", "expm1", """
    Elementwise exp(x) - 1, accurate for small x (floating dtypes only; `tl.math.expm1`).

    Example:
        >>> tl.math.expm1(tl.constant(0.0)).numpy()
        0.0
    """)


def _atan2_grad(op, dy):
    y, x = op.inputs
    scale = dy / (square(x) + square(y))
    return scale * x, -scale * y


_elementwise2("Atan2", "arctan2", _floating, grad=_atan2_grad)


def atan2(y, x, name=None):
    """Elementwise arctangent of y / x with the quadrant from both signs, in [-pi, pi].

    Example:
        >>> round(float(tl.atan2(1.0, -1.0)), 4)
        2.3562
    """
    return binary("atan2", y, x, "Atan2")


def _xlogy_kernel(xp, x, y):
    zero = xp.zeros((), dtype=x.dtype)
    with_log = x * xp.log(xp.where(x == 0, xp.ones((), dtype=y.dtype), y))
    return xp.where(x == 0, zero, with_log).astype(x.dtype, copy=False)


def _xdivy_kernel(xp, x, y):
    zero = xp.zeros((), dtype=x.dtype)
    quotient = x / xp.where(x == 0, xp.ones((), dtype=y.dtype), y)
    return xp.where(x == 0, zero, quotient).astype(x.dtype, copy=False)


def _div_no_nan_kernel(xp, x, y):
    zero = xp.zeros((), dtype=x.dtype)
    quotient = x / xp.where(y == 0, xp.ones((), dtype=y.dtype), y)
    return xp.where(y == 0, zero, quotient).astype(x.dtype, copy=False)


def _not_zero(x):
    return cast(not_equal(x, 0), x.dtype)


# TensorFlow's _XLogyGrad, _XDivyGrad and _DivNoNanGrad
_elementwise2("Xlogy", _xlogy_kernel, _floating,
              grad=lambda op, dy: (dy * xlogy(_not_zero(op.inputs[0]), op.inputs[1]),
                                   dy * xdivy(op.inputs[0], op.inputs[1])))
_elementwise2("Xdivy", _xdivy_kernel, _floating,
              grad=lambda op, dy: (dy * xdivy(_not_zero(op.inputs[0]), op.inputs[1]),
                                   dy * xdivy(-op.inputs[0], square(op.inputs[1]))))
_elementwise2("DivNoNan", _div_no_nan_kernel, _floating,
              grad=lambda op, dy: (divide_no_nan(dy, op.inputs[1]),
                                   dy * divide_no_nan(divide_no_nan(-op.inputs[0], op.inputs[1]),
                                                      op.inputs[1])),
              native="({T}(0) if {1} == 0 else {0} / {1})")


xlogy = _binary_api("Xlogy", "xlogy", """
    x * log(y), and 0 wherever x is 0 (even where y is 0 or NaN); `tl.math.xlogy`.

    Example:
        >>> tl.math.xlogy(tl.constant([0.0, 2.0]), [0.0, 1.0]).numpy()
        array([0., 0.], dtype=float32)
    """)

xdivy = _binary_api("Xdivy", "xdivy", "x / y, and 0 wherever x is 0 (`tl.math.xdivy`).")

divide_no_nan = _binary_api("DivNoNan", "divide_no_nan", """
    x / y, and 0 wherever y is 0 (`tl.math.divide_no_nan`); floating dtypes.

    Example:
        >>> tl.math.divide_no_nan(tl.constant([3.0, 1.0]), [0.0, 2.0]).numpy()
        array([0. , 0.5], dtype=float32)
    """)


def _truncatediv_kernel(xp, x, y):
    if x.dtype.kind == "f":
        return xp.trunc(x / y).astype(x.dtype, copy=False)
    _int_divisor_check(xp, y)
    q = xp.floor_divide(x, y)
    inexact = (q * y != x) & ((x < 0) != (y < 0))  # floor went one below zero's side
    return xp.where(inexact, q + 1, q).astype(x.dtype, copy=False)


def _truncatemod_kernel(xp, x, y):
    if x.dtype.kind != "f":
        _int_divisor_check(xp, y)
    return xp.fmod(x, y).astype(x.dtype, copy=False)


# TensorFlow registers no gradient for TruncateDiv and TruncateMod
_elementwise2("TruncateDiv", _truncatediv_kernel, _numeric, differentiable=False)
_elementwise2("TruncateMod", _truncatemod_kernel, _numeric, differentiable=False)


truncatediv = _binary_api("TruncateDiv", "truncatediv", """
    Elementwise x / y rounded toward zero, as C (`tl.truncatediv`).

    Raises:
        InvalidArgumentError: on integer division by zero or mixed dtypes.

    Example:
        >>> tl.truncatediv(tl.constant([-7, 7]), 2).numpy()
        array([-3,  3], dtype=int32)
    """)

truncatemod = _binary_api("TruncateMod", "truncatemod", """
    Elementwise remainder of truncating division; the result has the sign of x, as C's fmod.

    Example:
        >>> tl.truncatemod(tl.constant([-7, 7]), 3).numpy()
        array([-1,  1], dtype=int32)
    """)


def log_sigmoid(x, name=None):
    """Elementwise log(sigmoid(x)) = -softplus(-x), without overflow (`tl.math.log_sigmoid`).

    Example:
        >>> round(float(tl.math.log_sigmoid(0.0)), 4)
        -0.6931
    """
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    return negative(softplus(negative(x)))


@defop("Softplus", infer=float_infer("Softplus"), elementwise=True,
       grad=lambda op, dy: (dy * sigmoid(op.inputs[0]),),
       direct=lambda op: (_softplus, None), native="nm.softplus({0})")
def _softplus(xp, x, out=None):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which never overflows, into `out` (a new
    array without one). numpy's float32 log1p is ~6x slower than its log, so float32 takes
    log1p(e) = log(u) - ((u - 1) - e) / u with u = 1 + e (the correction restores what
    rounding 1 + e lost: e itself when u rounds to 1), within 4 ulp of the exact value as
    the float64 formula rounded to float32 is within 2.5, in two buffers."""
    if out is None:
        out = xp.empty_like(x)
    zero = x.dtype.type(0)
    if x.dtype != xp.float32:
        xp.add(xp.maximum(x, zero), xp.log1p(xp.exp(-xp.abs(x))), out=out)
        return out
    one = x.dtype.type(1)
    e, u = out, xp.empty_like(x)
    xp.absolute(x, out=e)
    xp.negative(e, out=e)
    xp.exp(e, out=e)               # e in (0, 1]
    xp.add(e, one, out=u)          # u = 1 + e, rounded
    xp.subtract(u, one, out=u)     # u - 1: exact
    xp.subtract(u, e, out=e)       # (u - 1) - e: the rounding error, exact
    xp.add(u, one, out=u)          # u again, exactly
    xp.true_divide(e, u, out=e)
    xp.log(u, out=u)
    xp.subtract(u, e, out=u)       # log1p(e)
    xp.maximum(x, zero, out=e)
    return xp.add(u, e, out=out)


def softplus(features, name=None):
    """log(exp(features) + 1), computed without overflow (`tl.math.softplus`, `tl.nn.softplus`).

    Example:
        >>> round(float(tl.nn.softplus(0.0)), 4)
        0.6931
    """
    return apply("Softplus", float_tensor(features, "Softplus"))


@defop("Softsign", infer=float_infer("Softsign"), elementwise=True,
       grad=lambda op, dy: (dy / square(1 + abs(op.inputs[0])),),
       native="({0} / (abs({0}) + {T}(1)))")
def _softsign(xp, x):
    return x / (xp.abs(x) + x.dtype.type(1))


def softsign(features, name=None):
    """features / (abs(features) + 1), elementwise (floating dtypes; `tl.math.softsign`,
    `tl.nn.softsign`).

    Example:
        >>> tl.nn.softsign(tl.constant([-3.0, 1.0])).numpy()
        array([-0.75,  0.5 ], dtype=float32)
    """
    return apply("Softsign", float_tensor(features, "Softsign"))


# ------------------------------------------------------------------ cumprod

_ALLOWED["Cumprod"] = _numeric


def _cumprod_grad(op, dy):
    # TensorFlow's _CumprodGrad: exact where x has no zeros (TensorFlow shares that limit)
    x, attrs = op.inputs[0], op.attrs
    prod = cumprod(x, attrs["axis"], attrs["exclusive"], attrs["reverse"])
    out = cumsum(prod * dy, attrs["axis"], attrs["exclusive"], not attrs["reverse"])
    return (out / x,)


defop("Cumprod", infer=_scan_infer("Cumprod"), grad=_cumprod_grad)(_scan_kernel("cumprod", 1))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis` (`tl.math.cumprod`).

    Args:
        exclusive: element i multiplies the elements before it, not including it (the first is 1).
        reverse: multiply from the end.

    Example:
        >>> tl.math.cumprod(tl.constant([2, 3, 4]), exclusive=True).numpy()
        array([1, 2, 6], dtype=int32)
    """
    return _scan("Cumprod", x, axis, exclusive, reverse)


# ------------------------------------------------------------------ norms, counting

def _euclidean_norm_kernel(xp, x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":  # TensorFlow takes the integer square root of the integer sum
        total = xp.sum(x.astype(xp.float64) ** 2, axis=axis, keepdims=keepdims)
        return xp.floor(xp.sqrt(total)).astype(x.dtype)
    return xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdims, dtype=x.dtype))


def _euclidean_norm_grad(op, dy):
    x = op.inputs[0]
    return (x / _kept(op, op.outputs[0]) * _kept(op, dy),)


defop("EuclideanNorm", infer=_reduce_infer("EuclideanNorm", _numeric),
      grad=_euclidean_norm_grad)(_euclidean_norm_kernel)


reduce_euclidean_norm = _reduce_api("EuclideanNorm", "reduce_euclidean_norm", """
    sqrt(sum(x ** 2)) over `axis` (see `reduce_sum`); integers give the truncated root.

    Example:
        >>> tl.math.reduce_euclidean_norm(tl.constant([[1, 2, 3], [1, 1, 1]])).numpy()
        4
    """)


def count_nonzero(input, axis=None, keepdims=None, dtype=_dt.int64, name=None):  # noqa: A002
    """The number of non-zero (non-False) elements over `axis`, as `dtype` (int64 by default).

    Example:
        >>> tl.math.count_nonzero(tl.constant([[0, 1], [2, 0]]), axis=1).numpy()
        array([1, 1])
    """
    x = convert_to_tensor(input)
    nonzero = not_equal(x, False if x.dtype.is_bool else 0)
    return reduce_sum(cast(nonzero, dtype), axis=axis, keepdims=bool(keepdims))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """The vector norm (or matrix norm, for a pair of axes) of `tensor`, as `tl.norm`.

    Args:
        tensor: a floating tensor.
        ord: 'euclidean' (the 2-norm of the entries), or a positive number p (1, 2,
            np.inf...) for vectors; 'euclidean', 'fro', 1 or np.inf for matrices.
        axis: None (all entries as one vector), an int (vectors along it) or a pair of
            ints (matrices).
        keepdims: keep the reduced dims as size 1.

    Raises:
        ValueError: for an unsupported `ord` or `axis`.

    Example:
        >>> tl.norm(tl.constant([3.0, 4.0])).numpy()
        5.0
    """
    x = convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise _type_error("norm", f"needs a floating tensor, got {x.dtype.name}")
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if axis is not None and not is_matrix:
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
            axis = axis[0]
        axis = _operator.index(axis)
    inf = float("inf")
    if ord in ("euclidean", "fro") or (not is_matrix and ord == 2):
        if ord == "fro" and not is_matrix:  # as TensorFlow: 'fro' is no vector norm
            raise ValueError("norm: ord='fro' is a matrix norm; pass axis as a pair of ints")
        result = sqrt(reduce_sum(square(x), axis=axis, keepdims=True))
    elif is_matrix:
        rows, cols = (normalize_axis(a, x.shape.rank) for a in axis)
        if rows == cols:
            raise ValueError(f"norm: the two axes must differ, got {axis!r}")
        if ord == 1:   # the largest column sum
            result = reduce_max(reduce_sum(abs(x), rows, keepdims=True), cols, keepdims=True)
        elif ord == inf:  # the largest row sum
            result = reduce_max(reduce_sum(abs(x), cols, keepdims=True), rows, keepdims=True)
        else:
            raise ValueError(f"norm: ord={ord!r} is not supported for matrices; use 'euclidean', "
                             "'fro', 1 or np.inf")
    elif isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 0:
        if ord == inf:
            result = reduce_max(abs(x), axis=axis, keepdims=True)
        elif ord == 1:
            result = reduce_sum(abs(x), axis=axis, keepdims=True)
        else:
            result = pow(reduce_sum(pow(abs(x), float(ord)), axis=axis, keepdims=True),
                         1.0 / ord)
    else:
        raise ValueError(f"norm: ord must be 'euclidean', 'fro' or a positive number, got {ord!r}")
    if keepdims:
        return result
    if axis is None:
        return _array.reshape(result, [])
    return _array.squeeze(result, list(axis) if is_matrix else [axis])


# ------------------------------------------------------------------ top_k, in_top_k

def _top_k_infer(x, k, sorted=True, index_type=_dt.int32):  # noqa: A002
    _require("TopKV2", x.dtype)
    if x.shape.rank == 0:
        raise ValueError("top_k needs an input of rank >= 1, got a scalar")
    if k < 0:
        raise ValueError(f"top_k needs k >= 0, got {k}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, index_type)
    n = x.shape[-1]
    if n is not None and k > n:
        raise ValueError(f"top_k needs k <= the last dim, got k={k} for shape {x.shape}")
    shape = list(x.shape)[:-1] + [k]
    return spec(shape, x.dtype), spec(shape, index_type)


_ALLOWED["TopKV2"] = _numeric


def _top_k_grad(op, dy, _):
    x, indices = op.inputs[0], op.outputs[1]
    rank = x.shape.rank
    if rank is None:
        raise UnimplementedError("no TopKV2 gradient for an input of unknown rank", op="TopKV2")
    return (apply("GatherV2Grad", dy, indices, x, axis=rank - 1, batch_dims=rank - 1),)


@defop("TopKV2", infer=_top_k_infer, grad=_top_k_grad, num_outputs=2)
def _top_k(xp, x, k, sorted=True, index_type=_dt.int32):  # noqa: A002
    if k > x.shape[-1]:
        raise ValueError(f"input must have at least k={k} columns, got shape {list(x.shape)}")
    order = stable_descending(xp, x)[..., :k]
    return xp.take_along_axis(x, order, axis=-1), order.astype(index_type.np)


def top_k(input, k=1, sorted=True, index_type=_dt.int32, name=None):  # noqa: A002
    """The `k` largest entries along the last dim and their indices (`tl.math.top_k`, `tl.nn.top_k`).

    Ties are broken by the lower index first; values are always in descending order.

    Args:
        input: a tensor of rank >= 1.
        k: how many entries (0 <= k <= input.shape[-1]).
        index_type: int32 (default) or int64.

    Returns:
        A namedtuple `TopKV2(values, indices)`.

    Raises:
        InvalidArgumentError: if k is negative or larger than the last dim.

    Example:
        >>> tl.math.top_k(tl.constant([1, 3, 2, 3]), k=2).indices.numpy()
        array([1, 3], dtype=int32)
    """
    x = convert_to_tensor(input)
    _check_dtypes("TopKV2", (x,))
    if isinstance(k, Tensor):
        k = int(k.numpy())
    elif is_tensor(k):
        raise TypeError("top_k: k must be known while tracing (a Python int)")
    index_type = _dt.as_dtype(index_type)
    if index_type not in (_dt.int32, _dt.int64):
        raise _type_error("TopKV2", f"index_type must be int32 or int64, got {index_type.name}")
    values, indices = apply("TopKV2", x, k=_operator.index(k), sorted=bool(sorted),
                            index_type=index_type)
    return TopKV2(values, indices)


TopKV2 = _collections.namedtuple("TopKV2", ["values", "indices"])


def _in_top_k_infer(predictions, targets, k):
    if not predictions.dtype.is_floating:
        raise TypeError(f"in_top_k needs float predictions, got {predictions.dtype.name}")
    if targets.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"in_top_k needs int32 or int64 targets, got {targets.dtype.name}")
    if predictions.shape.rank not in (None, 2):
        raise ValueError(f"predictions must be 2-D [batch, classes], got shape {predictions.shape}")
    if targets.shape.rank not in (None, 1):
        raise ValueError(f"targets must be 1-D [batch], got shape {targets.shape}")
    batch = predictions.shape[0] if predictions.shape.rank else None
    if targets.shape.rank and batch is not None and targets.shape[0] not in (None, batch):
        raise ValueError(f"targets has {targets.shape[0]} entries but predictions has {batch} rows")
    return spec([batch if batch is not None else (targets.shape[0] if targets.shape.rank else None)],
                _dt.bool)


@defop("InTopKV2", infer=_in_top_k_infer, differentiable=False)
def _in_top_k(xp, predictions, targets, k):
    n = predictions.shape[1]
    valid = (targets >= 0) & (targets < n)
    safe = xp.where(valid, targets, 0).astype(xp.int64)
    target_value = xp.take_along_axis(predictions, safe[:, None], axis=1)
    # ties at the boundary all count as in the top k, as TensorFlow
    above = xp.sum(predictions > target_value, axis=1)
    return valid & xp.isfinite(target_value[:, 0]) & (above < k)


def in_top_k(targets, predictions, k, name=None):
    """Whether each target class is among the `k` largest predictions of its row.

    Classes tied with the k-th largest all count as in the top k; a target out of
    range or with a non-finite prediction gives False (`tl.math.in_top_k`, `tl.nn.in_top_k`).

    Args:
        targets: int32/int64 [batch] class ids.
        predictions: float [batch, classes].
        k: an int.

    Example:
        >>> tl.math.in_top_k([1, 0], tl.constant([[0.1, 0.9], [0.3, 0.7]]), 1).numpy()
        array([ True, False])
    """
    p = convert_to_tensor(predictions)
    t = convert_to_tensor(targets)
    if isinstance(k, Tensor):
        k = int(k.numpy())
    return apply("InTopKV2", p, t, k=_operator.index(k))


# ------------------------------------------------------------------ segment reductions

def _segment_infer(name, sorted_ids):
    def infer(data, segment_ids, num_segments=None):
        if name.endswith("Sum"):
            _require("Sum", data.dtype)
        elif not (data.dtype.is_floating or data.dtype.is_integer):
            raise TypeError(f"{name} needs a real numeric tensor, got {data.dtype.name}")
        if segment_ids.dtype not in (_dt.int32, _dt.int64):
            raise TypeError(f"segment_ids must be int32 or int64, got {segment_ids.dtype.name}")
        if sorted_ids and segment_ids.shape.rank not in (None, 1):
            raise ValueError(f"segment_ids must be 1-D, got shape {segment_ids.shape}")
        ids, d = segment_ids.shape, data.shape
        if ids.rank is None or d.rank is None:
            return spec(None, data.dtype)
        if ids.rank > d.rank or not d[:ids.rank].is_compatible_with(ids):
            raise ValueError(f"segment_ids of shape {ids} must be a prefix of data's shape {d}")
        return spec([num_segments] + list(d)[ids.rank:], data.dtype)
    return infer


def _segment_layout(xp, data, ids, num_segments, sorted_ids, name):
    """data as [n, rest], ids as [n], the number of segments; value errors as TensorFlow's."""
    flat_ids = ids.reshape(-1)
    if sorted_ids:
        if flat_ids.size and bool((flat_ids < 0).any()):
            raise InvalidArgumentError(f"{name}: segment ids must be >= 0")
        if flat_ids.size > 1 and bool((flat_ids[1:] < flat_ids[:-1]).any()):
            raise InvalidArgumentError(f"{name}: segment ids are not increasing")
        num_segments = int(flat_ids[-1]) + 1 if flat_ids.size else 0
    elif flat_ids.size and bool((flat_ids >= num_segments).any()):
        bad = int(flat_ids[flat_ids >= num_segments][0])
        raise InvalidArgumentError(f"{name}: segment id {bad} is out of range [0, {num_segments})")
    rest = data.shape[ids.ndim:]
    return data.reshape((flat_ids.size,) + rest), flat_ids, num_segments, rest


def _segment_kernel(name, sorted_ids, reducer):
    def kernel(xp, data, segment_ids, num_segments=None):
        values, ids, n, rest = _segment_layout(xp, data, segment_ids, num_segments, sorted_ids,
                                               name)
        keep = ids >= 0  # unsorted ops drop negative ids, as TensorFlow
        values, ids = values[keep], ids[keep].astype(xp.int64)
        if reducer == "sum":
            out = xp.zeros((n,) + rest, dtype=data.dtype)
            xp.add.at(out, ids, values)
            return out
        # empty segments hold numeric_limits<T>::lowest() (max) or max() (min), as TensorFlow
        info = xp.finfo(data.dtype) if data.dtype.kind == "f" else xp.iinfo(data.dtype)
        lowest = info.min if reducer == "max" else info.max
        out = xp.full((n,) + rest, lowest, dtype=data.dtype)
        getattr(xp, "maximum" if reducer == "max" else "minimum").at(out, ids, values)
        if sorted_ids:  # empty segments of the sorted ops are 0, not the identity
            counts = xp.zeros((n,), dtype=xp.int64)
            xp.add.at(counts, ids, 1)
            out[counts == 0] = 0
        return out
    return kernel


def _gather_segments(g, ids):
    """g gathered at ids; rows of negative ids (dropped by the forward op) get zeros."""
    arr = _array
    safe = maximum(ids, 0)
    gathered = arr.gather(g, safe)
    keep = greater_equal(ids, 0)
    for _ in _builtins.range(g.shape.rank - 1 if g.shape.rank is not None else 0):
        keep = arr.expand_dims(keep, -1)
    return where(keep, gathered, 0)


def _segment_sum_grad(op, dy):
    return _gather_segments(dy, op.inputs[1]), None


def _segment_extremum_grad(op, dy):
    # TensorFlow's _SegmentMinOrMaxGrad: the gradient is split equally among tied values
    data, ids = op.inputs
    chosen = cast(equal(data, _gather_segments(op.outputs[0], ids)), data.dtype)
    counts = _segment_sum_like(op, chosen, ids)
    return chosen * _gather_segments(divide_no_nan(dy, counts), ids), None


def _segment_sum_like(op, values, ids):
    if op.type.startswith("Unsorted"):
        return unsorted_segment_sum(values, ids, op.attrs["num_segments"])
    return segment_sum(values, ids)


for _op_name, _sorted, _reducer, _grad in (
        ("SegmentSum", True, "sum", _segment_sum_grad),
        ("UnsortedSegmentSum", False, "sum", _segment_sum_grad),
        ("SegmentMax", True, "max", _segment_extremum_grad),
        ("UnsortedSegmentMax", False, "max", _segment_extremum_grad),
        ("SegmentMin", True, "min", _segment_extremum_grad),
        ("UnsortedSegmentMin", False, "min", _segment_extremum_grad)):
    defop(_op_name, infer=_segment_infer(_op_name, _sorted), grad=_grad)(
        _segment_kernel(_op_name, _sorted, _reducer))
del _op_name, _sorted, _reducer, _grad


def _segment_args(name, data, segment_ids):
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    if ids.dtype not in (_dt.int32, _dt.int64):
        raise _type_error(name, f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    return data, ids


def _num_segments(num_segments):
    if isinstance(num_segments, Tensor):
        num_segments = num_segments.numpy().item()
    elif is_tensor(num_segments):
        raise TypeError("num_segments must be known while tracing (a Python int)")
    n = _operator.index(num_segments)
    if n < 0:
        raise ValueError(f"num_segments must be >= 0, got {n}")
    return n


def segment_sum(data, segment_ids, name=None):
    """Sums the rows of `data` that share a segment id (`tl.math.segment_sum`).

    Args:
        data: a numeric tensor.
        segment_ids: sorted, non-negative 1-D int ids, one per row of data.

    Returns:
        A tensor of shape [segment_ids[-1] + 1] + data.shape[1:]; missing ids give 0.

    Raises:
        InvalidArgumentError: if the ids are negative or not sorted.

    Example:
        >>> tl.math.segment_sum(tl.constant([1, 2, 3]), [0, 0, 2]).numpy()
        array([3, 0, 3], dtype=int32)
    """
    return apply("SegmentSum", *_segment_args("SegmentSum", data, segment_ids))


def segment_max(data, segment_ids, name=None):
    """The maximum of the rows of `data` sharing a (sorted) segment id; empty segments give 0."""
    return apply("SegmentMax", *_segment_args("SegmentMax", data, segment_ids))


def segment_min(data, segment_ids, name=None):
    """The minimum of the rows of `data` sharing a (sorted) segment id; empty segments give 0."""
    return apply("SegmentMin", *_segment_args("SegmentMin", data, segment_ids))


def segment_mean(data, segment_ids, name=None):
    """The mean of the rows of `data` sharing a (sorted) segment id; empty segments give 0.

    Example:
        >>> tl.math.segment_mean(tl.constant([1.0, 3.0, 5.0]), [0, 0, 1]).numpy()
        array([2., 5.], dtype=float32)
    """
    data, ids = _segment_args("SegmentMean", data, segment_ids)
    total = apply("SegmentSum", data, ids)
    count = apply("SegmentSum", _array.ones_like(data), ids)
    return _mean_of(total, count)


def _mean_of(total, count):
    if total.dtype.is_integer:  # integer means truncate toward zero, as TensorFlow
        return truncatediv(total, maximum(count, 1))
    return total / maximum(count, 1)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the entries of `data` by segment id, ids in any order (`tl.math.unsorted_segment_sum`).

    Args:
        data: a numeric tensor.
        segment_ids: an int tensor whose shape is a prefix of data's; negative ids are dropped.
        num_segments: the number of segments (a Python int).

    Returns:
        A tensor of shape [num_segments] + data.shape[segment_ids.ndim:].

    Raises:
        InvalidArgumentError: for an id >= num_segments.

    Example:
        >>> tl.math.unsorted_segment_sum(tl.constant([1, 2, 3]), [1, 0, 1], 2).numpy()
        array([2, 4], dtype=int32)
    """
    data, ids = _segment_args("UnsortedSegmentSum", data, segment_ids)
    return apply("UnsortedSegmentSum", data, ids, num_segments=_num_segments(num_segments))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The maximum by segment id (see `unsorted_segment_sum`); empty segments give the lowest
    value of the dtype, as TensorFlow."""
    data, ids = _segment_args("UnsortedSegmentMax", data, segment_ids)
    return apply("UnsortedSegmentMax", data, ids, num_segments=_num_segments(num_segments))


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The minimum by segment id (see `unsorted_segment_sum`); empty segments give the highest
    value of the dtype."""
    data, ids = _segment_args("UnsortedSegmentMin", data, segment_ids)
    return apply("UnsortedSegmentMin", data, ids, num_segments=_num_segments(num_segments))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean by segment id (see `unsorted_segment_sum`); empty segments give 0."""
    data, ids = _segment_args("UnsortedSegmentSum", data, segment_ids)
    n = _num_segments(num_segments)
    total = apply("UnsortedSegmentSum", data, ids, num_segments=n)
    count = apply("UnsortedSegmentSum", _array.ones_like(data), ids, num_segments=n)
    return _mean_of(total, count)


# ------------------------------------------------------------------ bincount, confusion_matrix

def _bincount_infer(arr, *weights, minlength=None, maxlength=None, dtype=_dt.int32,
                    binary_output=False):
    if arr.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"bincount needs int32 or int64 values, got {arr.dtype.name}")
    if weights and not weights[0].shape.is_compatible_with(arr.shape):
        raise ValueError(f"weights of shape {weights[0].shape} must match arr's shape {arr.shape}")
    return spec([None], weights[0].dtype if weights else dtype)


@defop("Bincount", infer=_bincount_infer, differentiable=False)
def _bincount(xp, arr, *weights, minlength=None, maxlength=None, dtype=_dt.int32,
              binary_output=False):
    flat = arr.reshape(-1)
    if flat.size and bool((flat < 0).any()):
        raise InvalidArgumentError("bincount: input arr must be non-negative")
    length = int(flat.max()) + 1 if flat.size else 0
    if minlength is not None:
        length = _builtins.max(length, minlength)
    if maxlength is not None:
        length = _builtins.min(length, maxlength)
    keep = flat < length
    out_dtype = weights[0].dtype if weights else dtype.np
    out = xp.zeros((length,), dtype=out_dtype)
    if binary_output:
        out[flat[keep].astype(xp.int64)] = 1
        return out
    values = weights[0].reshape(-1)[keep] if weights else xp.ones((int(keep.sum()),), out_dtype)
    xp.add.at(out, flat[keep].astype(xp.int64), values)
    return out


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dt.int32, name=None,
             axis=None, binary_output=False):
    """Counts how often each value occurs in the non-negative int tensor `arr` (`tl.math.bincount`).

    Args:
        arr: an int32/int64 tensor of non-negative values (flattened).
        weights: optional, same shape as arr: sums the weights instead of counting.
        minlength: the output has at least this many bins.
        maxlength: at most this many bins; values >= maxlength are ignored.
        dtype: the output dtype without weights (int32).
        axis: None only (all of arr).
        binary_output: 1 for each value present instead of counts.

    Returns:
        A 1-D tensor of length max(max(arr) + 1, minlength), capped at maxlength.

    Raises:
        InvalidArgumentError: for negative values.

    Example:
        >>> tl.math.bincount(tl.constant([1, 1, 3]), minlength=5).numpy()
        array([0, 2, 0, 1, 0], dtype=int32)
    """
    if axis is not None:
        raise UnimplementedError(f"bincount supports axis=None only, got {axis!r}", op="Bincount")
    a = convert_to_tensor(arr)
    if a.dtype not in (_dt.int32, _dt.int64):
        raise _type_error("Bincount", f"arr must be int32 or int64, got {a.dtype.name}")
    inputs = [a]
    if weights is not None:
        inputs.append(convert_to_tensor(weights, dtype_hint=_dt.float32))
    attrs = {"minlength": None if minlength is None else _operator.index(minlength),
             "maxlength": None if maxlength is None else _operator.index(maxlength),
             "dtype": _dt.as_dtype(dtype), "binary_output": bool(binary_output)}
    return apply("Bincount", *inputs, **attrs)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dt.int32,
                     name=None):
    """The [num_classes, num_classes] matrix counting (label, prediction) pairs (`tl.math`).

    Row i, column j counts the examples of label i predicted as j (weighted by `weights`).

    Args:
        labels, predictions: 1-D int tensors of class ids.
        num_classes: the number of classes (default: the largest id + 1, known eagerly).
        weights: optional per-example weights.
        dtype: the output dtype (int32).

    Raises:
        InvalidArgumentError: for negative ids or ids >= num_classes.

    Example:
        >>> tl.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy()[2]
        array([0, 0, 1, 0, 0], dtype=int32)
    """
    arr = _array
    dtype = _dt.as_dtype(dtype)
    labels = cast(convert_to_tensor(labels), _dt.int64)
    predictions = cast(convert_to_tensor(predictions), _dt.int64)
    if num_classes is None:
        num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        if isinstance(num_classes, Tensor):
            num_classes = int(num_classes.numpy())
    if isinstance(num_classes, Tensor):
        num_classes = int(num_classes.numpy())
    if isinstance(num_classes, int):
        for what, ids in (("labels", labels), ("predictions", predictions)):
            if isinstance(ids, Tensor):
                values = ids.numpy()
                if values.size and (values.min() < 0 or values.max() >= num_classes):
                    raise op_error(InvalidArgumentError, "confusion_matrix",
                                   f"{what} must be in [0, {num_classes}), got {values.tolist()}")
        shape = [num_classes, num_classes]
    else:
        shape = arr.stack([cast(num_classes, _dt.int64)] * 2)
    indices = arr.stack([labels, predictions], axis=1)
    values = arr.ones_like(labels, dtype=dtype) if weights is None else \
        cast(convert_to_tensor(weights), dtype)
    return arr.scatter_nd(indices, values, shape)


def polyval(coeffs, x, name=None):
    """The polynomial coeffs[0] * x**(n-1) + ... + coeffs[n-1] at x, by Horner's rule.

    Example:
        >>> tl.math.polyval([1.0, 0.0, -1.0], tl.constant(3.0)).numpy()
        8.0
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"polyval: coeffs must be a list of tensors, got {type(coeffs).__name__}")
    x = convert_to_tensor(x)
    if not coeffs:
        return _array.zeros_like(x)
    result = convert_to_tensor(coeffs[0], dtype_hint=x.dtype)
    for c in coeffs[1:]:
        result = c + result * x
    return result


def is_non_decreasing(x, name=None):
    """True if each element of the flattened `x` is >= the one before it (True for < 2 elements).

    Example:
        >>> bool(tl.math.is_non_decreasing([1, 1, 2]))
        True
    """
    arr = _array
    flat = arr.reshape(convert_to_tensor(x), [-1])
    return reduce_all(greater_equal(flat[1:], flat[:-1]))


__all__ += ["tensordot"]


def tensordot(a, b, axes, name=None):
    """Sums the products of `a` and `b` over the given axes (an einsum; ranks must be known).

    Args:
        a, b: tensors of one dtype.
        axes: N (the last N dims of a with the first N of b), or [a_axes, b_axes]
            (two ints or two equal-length lists of ints).

    Raises:
        ValueError: for malformed axes.

    Example:
        >>> tl.tensordot(tl.ones([2, 3]), tl.ones([3, 4]), axes=1).shape
        TensorShape([2, 4])
    """
    a, b = convert_same_dtype("Einsum", (a, b))
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None:
        raise ValueError("tensordot needs inputs of known rank")
    if isinstance(axes, Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, int):
        if not 0 <= axes <= _builtins.min(ra, rb):
            raise ValueError(f"tensordot: axes={axes} must be in [0, {_builtins.min(ra, rb)}]")
        a_axes, b_axes = list(_builtins.range(ra - axes, ra)), list(_builtins.range(axes))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        a_axes, b_axes = ([x] if isinstance(x, int) else list(x) for x in axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot: the two axis lists must have equal lengths, got {axes!r}")
    else:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes = [normalize_axis(x, ra) for x in a_axes]
    b_axes = [normalize_axis(x, rb) for x in b_axes]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    a_labels = list(letters[:ra])
    b_labels = list(letters[ra:ra + rb])
    for i, j in zip(a_axes, b_axes):
        b_labels[j] = a_labels[i]
    out = [c for i, c in enumerate(a_labels) if i not in a_axes] + \
        [c for j, c in enumerate(b_labels) if j not in b_axes]
    return einsum(f"{''.join(a_labels)},{''.join(b_labels)}->{''.join(out)}", a, b)


# ------------------------------------------------------------------ tf.math compositions
# Names of tf.math that are short compositions of the ops above (no OpDef of their own).

def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y == 0 even if x is inf or NaN.

    Example:
        >>> float(tl.math.multiply_no_nan(float("inf"), 0.0))
        0.0
    """
    x, y = convert_same_dtype("MulNoNan", (x, y))
    return where(equal(y, 0), y * 0, x) * y  # no inf * 0 computed where y == 0


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x == 0.

    Example:
        >>> tl.math.reciprocal_no_nan([0.0, 2.0]).numpy()
        array([0. , 0.5], dtype=float32)
    """
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    return divide_no_nan(_array.ones_like(x), x)


def rint(x, name=None):
    """The nearest integer value, halves to even (the same op as `round`).

    Example:
        >>> tl.math.rint([0.5, 1.5, -2.5]).numpy()
        array([ 0.,  2., -2.], dtype=float32)
    """
    return round(x)


def scalar_mul(scalar, x, name=None):
    """scalar * x, the scalar converted to x's dtype."""
    x = convert_to_tensor(x)
    return multiply(convert_to_tensor(scalar, dtype=x.dtype), x)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The elementwise sum of a list of tensors (the same op as `add_n`)."""
    return add_n(inputs)


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, a float32 scalar.

    Example:
        >>> float(tl.math.zero_fraction([0, 1, 0, 3]))
        0.5
    """
    value = convert_to_tensor(value)
    return reduce_mean(cast(equal(value, cast(0, value.dtype)), _dt.float32))


def is_strictly_increasing(x, name=None):
    """True if each element of the flattened `x` is > the one before it (True for < 2 elements).

    Example:
        >>> bool(tl.math.is_strictly_increasing([1, 1, 2]))
        False
    """
    flat = _array.reshape(convert_to_tensor(x), [-1])
    return reduce_all(greater(flat[1:], flat[:-1]))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed stably (shifted by the maximum).

    Example:
        >>> tl.math.cumulative_logsumexp([0.0, 0.0]).numpy()
        array([0.       , 0.6931472], dtype=float32)
    """
    x = convert_to_tensor(x, dtype_hint=_dt.float32)
    if not x.dtype.is_floating:
        raise TypeError(f"cumulative_logsumexp needs a floating tensor, got {x.dtype.name}")
    top = _array.stop_gradient(reduce_max(x, axis=axis, keepdims=True))
    top = where(is_finite(top), top, top * 0)
    with_exp = cumsum(exp(x - top), axis=axis, exclusive=exclusive, reverse=reverse)
    return log(with_exp) + top
