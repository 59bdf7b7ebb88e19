"""Merging layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot, and
their functional forms (add, subtract, ..., dot).

Owns: Keras 3's merge semantics: elementwise merges broadcast their inputs,
`Subtract` takes exactly two, `Concatenate` joins along `axis`, `Dot` is a
batchwise dot product over `axes` (optionally of L2-normalized inputs), whose
rank-1 result becomes (batch, 1) as Keras's `batch_dot` makes it.
"""
import functools

from ..graph.ops import array as _array, math as _math

from .base import Layer, register

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
           "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot"]


class Merge(Layer):
    """Base of the merge layers: `call` takes a list of tensors."""

    _takes_input_list = True    # called on a list of tensors (functional configs replay it)

    _min_inputs = 1

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"A merge layer should be called on a list of inputs. "
                             f"Received: inputs={inputs} (not a list of tensors)")
        if len(inputs) < self._min_inputs:
            raise ValueError(f"A merge layer should be called on a list of at least "
                             f"{self._min_inputs} inputs. Got {len(inputs)} inputs.")
        return list(inputs)

    def call(self, inputs):
        return self._merge(self._check(inputs))

    def _merge(self, inputs):
        raise NotImplementedError


def _elementwise(name, reduce, doc):
    def _merge(self, inputs):
        return reduce(inputs)
    return register(type(name, (Merge,), {"_merge": _merge, "__doc__": doc, "_min_inputs": 1,
                                          "__module__": __name__}))


def _fold(op):
    return lambda xs: functools.reduce(op, xs)


Add = _elementwise("Add", _fold(_math.add), "Sum of its inputs (broadcast), e.g. a residual join.")
Multiply = _elementwise("Multiply", _fold(_math.multiply), "Elementwise product of its inputs.")
Maximum = _elementwise("Maximum", _fold(_math.maximum), "Elementwise maximum of its inputs.")
Minimum = _elementwise("Minimum", _fold(_math.minimum), "Elementwise minimum of its inputs.")
Average = _elementwise("Average", lambda xs: functools.reduce(_math.add, xs) / len(xs),
                       "Elementwise mean of its inputs.")


@register
class Subtract(Merge):
    """inputs[0] - inputs[1] (exactly two inputs)."""

    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        return _math.subtract(inputs[0], inputs[1])


@register
class Concatenate(Merge):
    """Joins its inputs along `axis` (default -1, the channels)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _merge(self, inputs):
        ranks = {x.shape.rank for x in inputs}
        if len(ranks) > 1:
            raise ValueError("A `Concatenate` layer requires inputs with matching shapes except "
                             f"for the concatenation axis. Received: input_shape="
                             f"{[tuple(x.shape) for x in inputs]}")
        return _array.concat(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _l2_normalize(x, axis):
    """Keras's ops.normalize(order=2): x * min(rsqrt(sum(x**2)), 1 / epsilon)."""
    inv = _math.rsqrt(_math.reduce_sum(_math.square(x), axis=axis, keepdims=True))
    return x * _math.minimum(inv, 1.0 / 1e-7)


def batch_dot(x, y, axes):
    """Keras's batchwise dot: contracts x's axis axes[0] with y's axis axes[1], per sample."""
    rx, ry = x.shape.rank, y.shape.rank
    if rx < 2 or ry < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"shapes {x.shape} and {y.shape}.")
    letters = "bcdefghijklmnopqrstuvwxyz"
    xs = ["a"] + list(letters[:rx - 1])
    ys = ["a"] + list(letters[rx - 1:rx + ry - 2])
    ys[axes[1]] = xs[axes[0]]
    out = [s for i, s in enumerate(xs) if i != axes[0]] + \
        [s for i, s in enumerate(ys) if i not in (0, axes[1])]
    result = _math.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)
    return _array.expand_dims(result, 1) if len(out) == 1 else result


@register
class Dot(Merge):
    """Batchwise dot product of two inputs along `axes` (int or pair); `normalize` first
    L2-normalizes both along those axes (a cosine similarity)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)) or len(axes) != 2 or \
                    not all(isinstance(a, int) for a in axes):
                raise ValueError("Invalid format for argument `axes`: expected an int or a list "
                                 f"of 2 ints. Received: axes={axes}")
            axes = tuple(axes)
        self.axes = axes
        self.normalize = bool(normalize)

    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        x1, x2 = inputs
        pair = [self.axes, self.axes] if isinstance(self.axes, int) else self.axes
        axes = [a % x.shape.rank if a < 0 else a for a, x in zip(pair, (x1, x2))]
        if self.normalize:
            x1, x2 = _l2_normalize(x1, axes[0]), _l2_normalize(x2, axes[1])
        return batch_dot(x1, x2, axes)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"Functional form of `{cls.__name__}`: `{cls.__name__}(**kwargs)(inputs)`."
    return merge


add, subtract, multiply, average, maximum, minimum = (
    _functional(c) for c in (Add, Subtract, Multiply, Average, Maximum, Minimum))


def concatenate(inputs, axis=-1, **kwargs):
    """Functional form of `Concatenate`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """Functional form of `Dot`."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
