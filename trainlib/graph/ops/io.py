"""Ops with outside effects: `tl.print` and the assertions of `tl.debugging`.

Owns: the `PrintV2` and `Assert` ops. Both are stateful: they run on every
graph call, in program order, and are never pruned.
"""
import sys

import numpy as np  # formatting host copies for printing only, never kernel math

from ..backend import to_numpy
from ..errors import InvalidArgumentError
from ..op import apply, convert_to_tensor, defop
from ..tensor import is_tensor


def _format(value):
    array = to_numpy(value)
    if array.ndim == 0:
        if array.dtype.kind == "f":  # TensorFlow prints 1.0 as 1, 0.5 as 0.5
            return np.format_float_positional(array.item(), trim="-")
        return str(array.item())
    return np.array2string(array, separator=" ", threshold=1000, edgeitems=3)


def _print_infer(*inputs, template, sep, end, output_stream):
    return None


@defop("PrintV2", infer=_print_infer, stateful=True, differentiable=False, num_outputs=0)
def _print(xp, *values, template, sep, end, output_stream):
    parts = []
    it = iter(values)
    for piece in template:
        parts.append(_format(next(it)) if piece is None else piece)
    stream = sys.stdout if output_stream is None else output_stream
    stream.write(sep.join(parts) + end)
    return None


def print(*inputs, sep=" ", end="\n", output_stream=None, summarize=None, name=None):  # noqa: A001
    """Prints tensors and Python values every time it runs, also inside graphs.

    Unlike Python's print, which runs only while a tl.function traces,
    `tl.print` becomes a graph op and prints on every call.

    Args:
        *inputs: tensors and Python values.
        sep, end: as Python's print.
        output_stream: a file object; by default sys.stdout at the time it runs.

    Example:
        >>> tl.print("value:", tl.constant(1))
        value: 1
    """
    template, tensors = [], []
    for value in inputs:
        if is_tensor(value) or hasattr(value, "_array"):
            template.append(None)
            tensors.append(convert_to_tensor(value))
        else:
            template.append(str(value))
    if output_stream is sys.stdout:
        output_stream = None  # resolve at run time, so redirection works as with print
    apply("PrintV2", *tensors, template=tuple(template), sep=sep, end=end,
          output_stream=output_stream)


def _assert_infer(condition, *data, message):
    if condition.shape.rank not in (0, None):
        raise ValueError(f"Assert needs a scalar condition, got shape {condition.shape}")
    return None


@defop("Assert", infer=_assert_infer, stateful=True, differentiable=False, num_outputs=0)
def _assert(xp, condition, *data, message):
    if not bool(condition):
        shown = ", ".join(str(to_numpy(d)) for d in data)
        raise InvalidArgumentError(f"assertion failed: {message}" + (f" [{shown}]" if shown else ""),
                                   op="Assert")
    return None


def Assert(condition, data=(), summarize=None, name=None, message=""):  # noqa: N802 -- tf.debugging.Assert
    """Raises InvalidArgumentError when `condition` is False (checked every time it runs)."""
    condition = convert_to_tensor(condition)
    apply("Assert", condition, *[convert_to_tensor(d) for d in data], message=str(message))
