"""Ops with outside effects: `tl.print`, the assertions of `tl.debugging`, and the file
ops of `tl.io` (`ReadFile`, `WriteFile`).

Owns: the `PrintV2`, `Assert` and `CheckNumerics` ops and the `assert_*`
functions built on `Assert`. All are stateful: they run on every graph call,
in program order, and are never pruned. Eagerly an assertion raises at once
(its `Assert` runs now); in a graph, every call that breaks it raises.
Invariant: a failed assertion raises InvalidArgumentError naming the
assertion, the condition, the user's message and a summary of the values.
"""
import os
import stat
import sys
import time

import numpy as np  # formatting host copies for printing only, never kernel math

from ..backend import to_numpy
from .. import dtypes as _dt, nest
from ..errors import InvalidArgumentError, NotFoundError, op_error
from ..op import apply, convert_same_dtype, convert_to_tensor, defop, spec
from ..tensor import is_tensor
from . import array as _array, math as _math

__all__ = ["print", "Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_greater",
           "assert_less_equal", "assert_greater_equal", "assert_near", "assert_rank", "assert_shapes",
           "check_numerics"]


def _format(value):
    array = to_numpy(value)
    if array.ndim == 0:
        if array.dtype.kind == "f":  # TensorFlow prints 1.0 as 1, 0.5 as 0.5
            return np.format_float_positional(array.item(), trim="-")
        return str(array.item())
    return np.array2string(array, separator=" ", threshold=1000, edgeitems=3)


def _float_text(value, digits, more_digits):
    """TensorFlow's float printing: %g with 6 (15) digits when that reads back exactly, else 9 (17)."""
    if value != value:
        return "nan"
    text = "%.*g" % (digits, value)
    return text if type(value)(float(text)) == value else "%.*g" % (more_digits, value)


def _element_text(x):
    kind = x.dtype.kind
    if kind == "f":
        if x.dtype.itemsize == 8:
            return _float_text(x.item(), 15, 17)
        return _float_text(np.float32(x), 6, 9)  # float16 prints as its float32 value
    if kind == "b":
        return "1" if x else "0"
    return str(x.item())


def summarize_value(value, summarize=3):
    """A tensor's value as TensorFlow's PrintV2 writes it: elements separated by one space, at
    most `summarize` values at each end of every dimension (all when negative), floats as %g."""
    array = to_numpy(value)
    n = array.size
    limit = n if summarize is None or summarize < 0 else min(summarize, n)
    flat = array.reshape(-1)
    if array.ndim == 0:
        return (_element_text(flat[0]) if limit else "") + ("..." if n > limit else "")
    shape, rank, out = array.shape, array.ndim, []

    def spacing(dim):
        out.append(" " if dim == rank - 1 else "\n" * (rank - dim - 1) + " " * (dim + 1))

    def one_dim(dim, start):
        if dim == rank:
            out.append(_element_text(flat[start]))
            return
        out.append("[")
        count, step = shape[dim], int(np.prod(shape[dim + 1:], dtype=np.int64))
        for i in range(min(limit, count)):
            if i:
                spacing(dim)
            one_dim(dim + 1, start + step * i)
        if count > 2 * limit:
            spacing(dim)
            out.append("...")
        for i in range(max(limit, count - limit), count):
            spacing(dim)
            one_dim(dim + 1, start + step * i)
        out.append("]")

    one_dim(0, 0)
    return "".join(out)


def _print_infer(*inputs, template, sep, end, output_stream, summarize=3):
    return None


@defop("PrintV2", infer=_print_infer, stateful=True, differentiable=False, num_outputs=0)
def _print(xp, *values, template, sep, end, output_stream, summarize=3):
    # `template` holds the text with `sep` already joined in; None marks each tensor's place
    parts = []
    it = iter(values)
    for piece in template:
        parts.append(summarize_value(next(it), summarize) if piece is None else piece)
    stream = sys.stdout if output_stream is None else output_stream
    stream.write("".join(parts) + end)
    return None


def print(*inputs, sep=" ", end="\n", output_stream=None, summarize=3, name=None):  # noqa: A001
    """Prints tensors and Python values every time it runs, also inside graphs.

    Unlike Python's print, which runs only while a tl.function traces,
    `tl.print` becomes a graph op and prints on every call. Tensors print as
    TensorFlow's `tf.print` prints them (`[1 2.5]`, at most `summarize`
    values at each end of a dimension); Python values and structures as
    `pprint.pformat` writes them, with the tensors inside them in place.

    Args:
        *inputs: tensors, Variables, Python values and nested lists/tuples/dicts of them.
        sep, end: as Python's print.
        output_stream: a file object; by default sys.stdout at the time it runs
            (TensorFlow's default is stderr).
        summarize: values shown at each end of every dimension (3 if None; -1 for all).

    Example:
        >>> tl.print("value:", tl.constant([1.0, 2.5]))
        value: [1 2.5]
    """
    import pprint  # noqa: PLC0415

    tensors, templates = [], []

    def is_value(x):
        return is_tensor(x) or hasattr(x, "_array")  # tensors and Variables

    def leaves(x):  # composites (a RaggedTensor...) print whole: they are leaves here
        return nest.flatten(x, nest.KEEP_COMPOSITES)

    def pack(x, marks):
        return nest.pack_as(x, marks, nest.KEEP_COMPOSITES)

    free = " ".join(pprint.pformat(pack(v, ["" if is_value(x) else x for x in leaves(v)]))
                    for v in inputs)
    placeholder = "{}" if "{}" not in free else "{tl_print_value}"
    for value in inputs:
        marks = []
        for x in leaves(value):
            if is_value(x):
                tensors.append(convert_to_tensor(x))
                marks.append(placeholder)
            else:
                marks.append(x)
        templates.append(value if isinstance(value, str) else pprint.pformat(pack(value, marks)))
    text = sep.join(templates).replace(f"'{placeholder}'", placeholder)
    template = []
    for i, piece in enumerate(text.split(placeholder)):
        if i:
            template.append(None)
        if piece:
            template.append(piece)
    if output_stream is sys.stdout:
        output_stream = None  # resolve at run time, so redirection works as with print
    apply("PrintV2", *tensors, template=tuple(template), sep=sep, end=end,
          output_stream=output_stream, summarize=3 if summarize is None else int(summarize))


def _assert_infer(condition, *data, message, template=None, summarize=None):
    if condition.shape.rank not in (0, None):
        raise ValueError(f"Assert needs a scalar condition, got shape {condition.shape}")
    return None


def _summary(value, summarize):
    """The first `summarize` values of an array (all when negative), as TF's Assert shows them."""
    array = to_numpy(value)
    n = 3 if summarize is None else summarize
    if array.ndim == 0 or n < 0 or array.size <= n:
        return _format(array)
    return _format(array.ravel()[:n])[:-1] + " ...]"


@defop("Assert", infer=_assert_infer, stateful=True, differentiable=False, num_outputs=0)
def _assert(xp, condition, *data, message, template=None, summarize=None):
    if not bool(condition):
        if template is None:
            template = (None,) * len(data)
        values = iter(data)
        shown = "".join(_summary(next(values), summarize) if piece is None else piece
                        for piece in template)
        if template and all(piece is None for piece in template):
            shown = " [" + ", ".join(_summary(d, summarize) for d in data) + "]"
        head = f"assertion failed: {message}" if message else "assertion failed:"
        raise InvalidArgumentError(head + shown, op="Assert")
    return None


def Assert(condition, data=(), summarize=None, name=None, message=""):  # noqa: N802 -- tf.debugging.Assert
    """Raises InvalidArgumentError when `condition` is False (checked every time it runs).

    Args:
        condition: a scalar bool tensor.
        data: tensors (their first `summarize` values are shown) and strings, shown in order.
        summarize: how many values of each tensor to show (default 3, negative for all).
        message: text that starts the error message.

    Raises:
        InvalidArgumentError: when the condition is False as the op runs.

    Example:
        >>> tl.debugging.Assert(tl.constant(True), ["never shown"])
    """
    condition = convert_to_tensor(condition)
    template, tensors = [], []
    for d in data:
        if isinstance(d, str):
            template.append(d)
        else:
            template.append(None)
            tensors.append(convert_to_tensor(d))
    attrs = {"message": str(message)}
    if any(piece is not None for piece in template):
        attrs["template"] = tuple(template)
    if summarize is not None:
        attrs["summarize"] = int(summarize)
    apply("Assert", condition, *tensors, **attrs)


# ------------------------------------------------------------------ assertions

def _comparison(fn_name, symbol, compare, x, y, message, summarize):
    """Asserts compare(x, y) for every element (after broadcasting)."""
    x, y = convert_same_dtype(fn_name, (x, y))
    held = _math.reduce_all(getattr(_math, compare)(x, y))
    prefix = f"{message}\n" if message else ""
    data = ["x (shape=" + str(x.shape) + ") = ", x, "\ny (shape=" + str(y.shape) + ") = ", y]
    Assert(held, data, summarize=10 if summarize is None else summarize,
           message=f"{fn_name}: {prefix}Condition x {symbol} y did not hold element-wise:\n")


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Asserts x == y element-wise (with broadcasting), every time it runs.

    Args:
        x, y: tensors (or Python values) of one dtype.
        message: text to start the error message with.
        summarize: how many values of each tensor the message shows (default 10).

    Raises:
        InvalidArgumentError: if some element differs (eagerly: at once).

    Example:
        >>> tl.debugging.assert_equal(tl.constant([1, 2]), [1, 2])
    """
    _comparison("assert_equal", "==", "equal", x, y, message, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    """Asserts x != y for every element (see `assert_equal`)."""
    _comparison("assert_none_equal", "!=", "not_equal", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """Asserts x < y element-wise (see `assert_equal`).

    Example:
        >>> tl.debugging.assert_less(tl.constant([1, 2]), 3)
    """
    _comparison("assert_less", "<", "less", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """Asserts x <= y element-wise (see `assert_equal`)."""
    _comparison("assert_less_equal", "<=", "less_equal", x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """Asserts x > y element-wise (see `assert_equal`)."""
    _comparison("assert_greater", ">", "greater", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """Asserts x >= y element-wise (see `assert_equal`)."""
    _comparison("assert_greater_equal", ">=", "greater_equal", x, y, message, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Asserts |x - y| <= atol + rtol * |y| element-wise (floats; default tolerances 10 * eps).

    Example:
        >>> tl.debugging.assert_near(tl.constant(1.0), 1.0 + 1e-7)
    """
    x, y = convert_same_dtype("assert_near", (x, y))
    eps = float(np.finfo(x.dtype.np).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    tolerance = _math.add(_math.multiply(_math.abs(y), rtol), atol)
    held = _math.reduce_all(_math.less_equal(_math.abs(_math.subtract(x, y)), tolerance))
    prefix = f"{message}\n" if message else ""
    Assert(held, ["x (shape=" + str(x.shape) + ") = ", x, "\ny (shape=" + str(y.shape) + ") = ", y],
           summarize=10 if summarize is None else summarize,
           message=f"assert_near: {prefix}x and y not equal to tolerance rtol = {rtol}, "
                   f"atol = {atol}:\n")


def assert_rank(x, rank, message=None, name=None):
    """Asserts that `x` has rank `rank` (checked while tracing when the rank is static).

    Raises:
        ValueError: when the static rank differs.
        InvalidArgumentError: when an unknown rank turns out different as the graph runs.

    Example:
        >>> tl.debugging.assert_rank(tl.zeros([2, 3]), 2)
    """
    x = convert_to_tensor(x)
    rank = int(rank)
    prefix = f"{message}. " if message else ""
    if x.shape.rank is not None:
        if x.shape.rank != rank:
            raise ValueError(f"assert_rank: {prefix}Tensor must have rank {rank}. Received rank "
                             f"{x.shape.rank}, shape {x.shape}")
        return
    Assert(_math.equal(_array.rank(x), rank), ["rank = ", _array.rank(x)],
           message=f"assert_rank: {prefix}Tensor must have rank {rank}. ")


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Asserts static shapes and dim relations, e.g. [(x, ("N", 3)), (y, ("N",))].

    Each entry pairs a tensor with a shape whose dims are ints (must match),
    strings (symbols: every occurrence must have one size) or None/"." (any).
    Checked while tracing from static shapes; unknown dims are not checked.

    Raises:
        ValueError: naming the tensor, the expected and the actual shape.

    Example:
        >>> tl.debugging.assert_shapes([(tl.zeros([2, 3]), ("N", 3)), (tl.zeros([2]), ("N",))])
    """
    prefix = f"{message}. " if message else ""
    entries = shapes.items() if isinstance(shapes, dict) else shapes
    sizes = {}
    for index, (tensor, expected) in enumerate(entries):
        tensor = convert_to_tensor(tensor)
        expected = list(expected)
        actual = tensor.shape
        if actual.rank is None:
            continue
        if actual.rank != len(expected):
            raise ValueError(f"assert_shapes: {prefix}tensor {index} has shape {actual}, expected "
                             f"rank {len(expected)} ({tuple(expected)})")
        for dim, want in zip(actual, expected):
            if dim is None or want is None or want == ".":
                continue
            if isinstance(want, str):
                want = sizes.setdefault(want, dim)
            if dim != want:
                raise ValueError(f"assert_shapes: {prefix}tensor {index} has shape {actual}, which "
                                 f"does not match {tuple(expected)} (sizes so far: {sizes})")


def _check_numerics_infer(tensor, message):
    if not tensor.dtype.is_floating:
        raise TypeError(f"check_numerics needs a floating-point tensor, got {tensor.dtype.name}")
    return spec(tensor.shape, tensor.dtype)


def _check_numerics_grad(op, dy):
    return (check_numerics(dy, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                           + op.attrs["message"]),)


@defop("CheckNumerics", infer=_check_numerics_infer, grad=_check_numerics_grad, stateful=True)
def _check_numerics(xp, tensor, message):
    if not bool(xp.isfinite(tensor).all()):
        kinds = [k for k, bad in (("NaN", xp.isnan(tensor).any()), ("Inf", xp.isinf(tensor).any()))
                 if bool(bad)]
        raise InvalidArgumentError(f"{message} : Tensor had {' and '.join(kinds)} values",
                                   op="CheckNumerics")
    return tensor


def check_numerics(tensor, message, name=None):
    """Passes `tensor` through, raising InvalidArgumentError if it holds NaN or Inf.

    Args:
        tensor: a floating-point tensor.
        message: the start of the error message.

    Returns:
        `tensor` (its gradient passes through, checked in turn).

    Example:
        >>> tl.debugging.check_numerics(tl.constant([1.0]), "weights").numpy()
        array([1.], dtype=float32)
    """
    tensor = convert_to_tensor(tensor)
    if not tensor.dtype.is_floating:  # checked here too: eager calls skip inference
        raise op_error(InvalidArgumentError, "CheckNumerics",
                       f"check_numerics needs a floating-point tensor, got {tensor.dtype.name}")
    return apply("CheckNumerics", tensor, message=str(message))


@defop("Timestamp", infer=lambda: spec([], _dt.float64), stateful=True, differentiable=False)
def _timestamp(xp):
    return xp.asarray(time.time(), dtype=xp.float64)


def timestamp(name=None):
    """The time when the op runs, in seconds since the epoch (float64), as `tf.timestamp`; in a
    `tl.function` it is read on every call, in program order with the other side effects."""
    return apply("Timestamp")


# ------------------------------------------------------------------ files (tl.io)


def _path_text(path):
    return path.decode("utf-8") if isinstance(path, bytes) else str(path)


def _read_file_infer(filename):
    if filename.dtype is not _dt.string or filename.shape.rank not in (None, 0):
        raise TypeError(f"ReadFile takes a scalar string filename, got {filename.dtype.name} "
                        f"of shape {filename.shape}")
    return spec([], filename.dtype)


@defop("ReadFile", infer=_read_file_infer, stateful=True, differentiable=False, host=True)
def _read_file(xp, filename):
    path = _path_text(filename[()])
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):   # a FIFO would block, a device never end
            raise InvalidArgumentError(f"ReadFile: {path} is not a regular file")
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def read_file(filename, name=None):
    """The whole contents of file `filename` as a scalar string tensor.

    Example:
        >>> tl.io.write_file("/tmp/x.txt", "hi"); tl.io.read_file("/tmp/x.txt").numpy()
        b'hi'
    """
    return apply("ReadFile", convert_to_tensor(filename, dtype=_dt.string))


def _write_file_infer(filename, contents):
    return None


@defop("WriteFile", infer=_write_file_infer, stateful=True, differentiable=False, num_outputs=0,
       host=True)
def _write_file(xp, filename, contents):
    with open(_path_text(filename[()]), "wb") as f:
        f.write(contents[()])


def write_file(filename, contents, name=None):
    """Writes the scalar string `contents` to file `filename` (replacing it)."""
    return apply("WriteFile", convert_to_tensor(filename, dtype=_dt.string),
                 convert_to_tensor(contents, dtype=_dt.string))
