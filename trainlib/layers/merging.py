"""Merging layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot, and
their functional forms (add, subtract, ..., dot).

Owns: Keras 3's merge semantics: elementwise merges broadcast their inputs,
`Subtract` takes exactly two, `Concatenate` joins along `axis`, `Dot` is a
batchwise dot product over `axes` (optionally of L2-normalized inputs), whose
rank-1 result becomes (batch, 1) as Keras's `batch_dot` makes it.
"""
import functools

from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math

from .base import Layer, get_keras_mask, register, set_keras_mask

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
           "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot"]


class Merge(Layer):
    """Base of the merge layers: `call` takes a list of tensors; the output mask (inputs with
    masks) is the OR of the inputs' masks, None where any input has none (as Keras)."""

    _takes_input_list = True    # called on a list of tensors (functional configs replay it)

    _min_inputs = 1
    _supports_masking = True

    def compute_mask(self, inputs, mask=None):
        mask = _check_masks(inputs, mask)
        if mask is None or any(m is None for m in mask):
            return None
        return functools.reduce(_math.logical_or, mask)

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


def _check_masks(inputs, mask):
    """`mask` (a list, one entry per input) checked as Keras checks it; None for no mask."""
    if mask is None:
        return None
    if not isinstance(mask, (tuple, list)):
        raise ValueError(f"`mask` should be a list. Received: mask={mask}")
    if not isinstance(inputs, (tuple, list)):
        raise ValueError(f"`inputs` should be a list. Received: inputs={inputs}")
    if len(mask) != len(inputs):
        raise ValueError(f"The lists `inputs` and `mask` should have the same length. Received: "
                         f"inputs={inputs} of length {len(inputs)}, and mask={mask} of length "
                         f"{len(mask)}")
    return list(mask)


def _elementwise(name, reduce, doc):
    def _merge(self, inputs):
        return reduce(inputs)
    return register(type(name, (Merge,), {"_merge": _merge, "__doc__": doc, "_min_inputs": 1,
                                          "__module__": __name__}))


def _fold(op):
    return lambda xs: functools.reduce(op, xs)


def _step_mask(x):
    """x's (batch, steps) mask broadcast to x's shape, or None."""
    mask = get_keras_mask(x)
    if mask is None:
        return None
    return _array.broadcast_to(_array.expand_dims(mask, -1), _array.shape(x))


def _masked_extremum(op):
    """Keras's max/min merge under masks: a masked entry takes the other operand's value (there
    is no identity element); the output is masked where every input is."""
    def merge(inputs):
        output = output_mask = None
        for x in inputs:
            mask = _step_mask(x)
            if output is None:
                output, output_mask = x, mask
                continue
            if mask is not None:
                x = _math.where(mask, x, output)
            if output_mask is not None:
                output = _math.where(output_mask, output, x)
            output_mask = _math.logical_or(output_mask, mask) \
                if mask is not None and output_mask is not None else None
            output = op(output, x)
        if output_mask is not None:
            set_keras_mask(output, _math.reduce_any(output_mask, axis=-1))
        return output
    return merge


def _masked_product(inputs):
    """Keras's product under masks: masked entries count as 1; where every input is masked
    (all inputs having masks) the output is 0 and masked."""
    masks = [_step_mask(x) for x in inputs]
    all_masked = all(m is not None for m in masks)
    output = output_mask = None
    for x, mask in zip(inputs, masks):
        if mask is not None:
            x = _math.where(mask, x, _array.ones_like(x))
            if all_masked:
                output_mask = mask if output_mask is None else _math.logical_or(output_mask, mask)
        output = x if output is None else _math.multiply(output, x)
    if all_masked:
        output = _math.where(output_mask, output, _array.zeros_like(output))
        set_keras_mask(output, _math.reduce_any(output_mask, axis=-1))
    return output


Add = _elementwise("Add", _fold(_math.add), "Sum of its inputs (broadcast), e.g. a residual join.")
Multiply = _elementwise("Multiply", _masked_product, "Elementwise product of its inputs.")
Maximum = _elementwise("Maximum", _masked_extremum(_math.maximum),
                       "Elementwise maximum of its inputs.")
Minimum = _elementwise("Minimum", _masked_extremum(_math.minimum),
                       "Elementwise minimum of its inputs.")
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

    def compute_mask(self, inputs, mask=None):
        """The inputs' masks joined along `axis` (all-True for an input without one), then
        reduced with any over the last axis, as Keras 3 does."""
        mask = _check_masks(inputs, mask)
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                m = _array.ones_like(x, dtype=_dt.bool)
            elif m.shape.rank < x.shape.rank:
                m = _math.logical_or(_array.expand_dims(m, -1),
                                     _array.zeros_like(x, dtype=_dt.bool))
            masks.append(m)
        return _math.reduce_any(_array.concat(masks, self.axis), axis=-1)

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

    def compute_mask(self, inputs, mask=None):
        return None

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
