"""Preprocessing layers: Normalization (with adapt), Rescaling, RandomFlip,
RandomBrightness, RandomContrast, CategoryEncoding, Discretization, IntegerLookup.

Owns: Keras 3's arguments, weights and formulas for these layers. Invariant: `call` is
plain public ops, so a layer works in a model, inside `tl.function` and in
`Dataset.map`; random layers draw only when `training=True`, through seeded random ops
(a traced train step draws fresh values on each call).
"""
import numbers
import os

import numpy as np

from ..file_io import read_lines
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, random as _random

from .base import Layer, register

__all__ = ["Normalization", "Rescaling", "RandomFlip", "RandomBrightness",
           "RandomContrast", "CategoryEncoding", "Discretization", "IntegerLookup"]

_EPSILON = 1e-7   # Keras's backend.epsilon()


def _batches(data):
    """The batches of `adapt`'s data: an array as one batch, a Dataset or iterable batch by
    batch (the first element of (x, y) pairs)."""
    if isinstance(data, np.ndarray) or hasattr(data, "numpy") and not hasattr(data, "element_spec"):
        yield np.asarray(data)
        return
    if not hasattr(data, "__iter__"):
        raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports np.ndarray, "
                        "tensors, tl.data Datasets and iterables of batches.")
    for batch in data:
        if isinstance(batch, (tuple, list)):
            batch = batch[0]
        yield np.asarray(batch.numpy() if hasattr(batch, "numpy") else batch)


@register
class Normalization(Layer):
    """Feature-wise `(x - mean) / max(sqrt(variance), 1e-7)` (or its inverse with `invert=True`).

    The statistics come from `mean`/`variance` or from `adapt(data)` (arrays, tensors,
    tl.data Datasets or iterables of batches), per position of the kept `axis`.

    Args:
        axis: the axis or axes kept (default -1); None normalizes with one mean and variance.
        mean, variance: fixed statistics (broadcast to the kept axes).
        invert: map normalized values back: `mean + x * max(sqrt(variance), 1e-7)`.

    Example:
        >>> norm = tl.layers.Normalization()
        >>> norm.adapt(np.array([[0.0], [2.0]], np.float32))
        >>> norm(np.array([[4.0]], np.float32)).numpy().tolist()
        [[3.0]]
    """

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be "
                             f"set. Received: mean={mean} and variance={variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert
        self.mean = self.variance = None

    _promotes_integer_inputs = True

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                             f"inputs with ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError("All `axis` values to be kept must have a known shape. Received "
                                 f"axis={self.axis}, inputs.shape={input_shape}, with unknown "
                                 f"axis at index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1
                                 for d in range(ndim)]
        self._stat_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._stat_shape,
                                              initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._stat_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
        else:
            self._fixed = []
            for value in (self.input_mean, self.input_variance):
                v = np.asarray(value, np.float64)
                if v.ndim:
                    expanded = [1] * ndim
                    for i in range(1, v.ndim + 1):
                        expanded[self._keep_axis[-i]] = v.shape[-i]
                    v = v.reshape(expanded)
                self._fixed.append(np.broadcast_to(v, self._broadcast_shape))

    def adapt(self, data):
        """Computes the mean and variance of `data` over the non-kept axes (a batched
        Dataset or iterable is read batch by batch and the statistics merged)."""
        total_mean = total_var = None
        count = 0
        for batch in _batches(data):
            if not self.built:
                self.build(batch.shape)
            batch = batch.astype(np.float64)
            n = int(np.prod([batch.shape[d] for d in self._reduce_axis])) if self._reduce_axis \
                else 1
            mean = batch.mean(axis=self._reduce_axis)
            var = batch.var(axis=self._reduce_axis)
            if total_mean is None:
                total_mean, total_var, count = mean, var, n
                continue
            w = n / (count + n)
            new_mean = total_mean * (1 - w) + mean * w
            total_var = (total_var + (total_mean - new_mean) ** 2) * (1 - w) + \
                (var + (mean - new_mean) ** 2) * w
            total_mean, count = new_mean, count + n
        if total_mean is None:
            raise ValueError("adapt() received no data (an empty iterable or Dataset)")
        if self.input_mean is not None:
            raise ValueError("Normalization: adapt() on a layer given `mean` and `variance`")
        self.adapt_mean.assign(np.reshape(total_mean, self._stat_shape).astype(np.float32))
        self.adapt_variance.assign(np.reshape(total_var, self._stat_shape).astype(np.float32))

    def _statistics(self, dtype):
        if self.input_mean is not None:
            return (_math.cast(_array.constant(self._fixed[0]), dtype),
                    _math.cast(_array.constant(self._fixed[1]), dtype))
        mean, var = self.adapt_mean.read_value(), self.adapt_variance.read_value()
        if self._keep_axis != (len(self._broadcast_shape) - 1,) or \
                len(self._broadcast_shape) == 0:
            mean = _array.reshape(mean, self._broadcast_shape)
            var = _array.reshape(var, self._broadcast_shape)
        return _math.cast(mean, dtype), _math.cast(var, dtype)

    def call(self, inputs):
        if not inputs.dtype.is_floating:
            inputs = _math.cast(inputs, self.compute_dtype)
        mean, variance = self._statistics(inputs.dtype)
        std = _math.maximum(_math.sqrt(variance), _array.constant(_EPSILON, inputs.dtype))
        if self.invert:
            return mean + inputs * std
        return (inputs - mean) / std

    def get_config(self):
        axis = list(self.axis) if len(self.axis) != 1 else self.axis
        return {**super().get_config(), "axis": axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(),
                "variance": np.array(self.input_variance).tolist()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("mean", "variance"):
            if config.get(key) is None or np.array(config[key]).dtype == object:
                config[key] = None
        return super().from_config(config)


@register
class Rescaling(Layer):
    """`inputs * scale + offset` (e.g. `scale=1/255` maps pixels to [0, 1]).

    Example:
        >>> tl.layers.Rescaling(0.5, offset=1.0)(tl.constant([[2.0]])).numpy().tolist()
        [[2.0]]
    """

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    _promotes_integer_inputs = True

    def call(self, inputs):
        dtype = inputs.dtype
        scale = _math.cast(_array.constant(np.asarray(self.scale)), dtype)
        offset = _math.cast(_array.constant(np.asarray(self.offset)), dtype)
        return inputs * scale + offset

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


def _image_axes(layer, rank):
    """(height axis, width axis) of an image batch (rank 4) or one image (rank 3)."""
    channels_first = layer.data_format == "channels_first"
    if rank not in (3, 4):
        raise ValueError(f"{type(layer).__name__} expects images of rank 3 or 4, got rank {rank}")
    h = rank - 2 if channels_first else rank - 3
    return h, h + 1


def _data_format(data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


_FLIP_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


@register
class RandomFlip(Layer):
    """Flips each image left-right and/or up-down with probability 1/2 while training;
    the identity at inference.

    Args:
        mode: "horizontal", "vertical" or "horizontal_and_vertical".
        seed: a seed for the draws.
    """

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in _FLIP_MODES:
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument "
                             f"{mode}")
        self.mode, self.seed = mode, seed
        self.data_format = _data_format(data_format)

    def call(self, inputs, training=True):
        if not training:
            return inputs
        rank = inputs.shape.rank
        h_axis, w_axis = _image_axes(self, rank)
        x = inputs if rank == 4 else _array.expand_dims(inputs, 0)
        if rank == 3:
            h_axis, w_axis = h_axis + 1, w_axis + 1
        batch = _array.shape(x)[0]
        for flip, axis in (("horizontal", w_axis), ("vertical", h_axis)):
            if flip not in self.mode:
                continue
            draw = _random.uniform(_array.stack([batch]), seed=self.seed)
            do = _array.reshape(_math.less(draw, 0.5), [-1, 1, 1, 1])
            x = _math.where(do, _array.reverse(x, [axis]), x)
        return x if rank == 4 else _array.squeeze(x, [0])

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "seed": self.seed,
                "data_format": self.data_format}


def _factor(layer, factor, bounds):
    """Keras's (lower, upper) from a number or a pair within `bounds`."""
    message = ("The `factor` argument should be a number (or a list of two numbers) in the range "
               f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, numbers.Real) and not isinstance(factor, bool):
        if not bounds[0] <= factor <= bounds[1]:
            raise ValueError(message)
        factor = abs(factor)
        return (max(-factor, bounds[0]), factor)
    raise ValueError(message)


class _RandomColor(Layer):
    """What RandomBrightness and RandomContrast share: a per-image draw in a factor range
    (training only), a value range the result is clipped to, a seed."""

    _bounds = (-1, 1)

    def __init__(self, factor, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = _factor(self, factor, self._bounds)
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        self.value_range, self.seed = value_range, seed
        self.data_format = _data_format(data_format)

    def call(self, inputs, training=True):
        if not training:
            return inputs
        rank = inputs.shape.rank
        _image_axes(self, rank)
        shape = [1, 1, 1] if rank == 3 else _array.stack([_array.shape(inputs)[0], 1, 1, 1])
        low, high = self._draw_range()
        draw = _random.uniform(shape, minval=low, maxval=high, dtype=inputs.dtype, seed=self.seed)
        out = self._adjust(inputs, draw)
        lo, hi = (_array.constant(v, inputs.dtype) for v in sorted(self.value_range))
        return _math.clip_by_value(out, lo, hi)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed}


@register
class RandomBrightness(_RandomColor):
    """Adds a per-image delta drawn from `factor * (value_range span)` while training, then
    clips to `value_range`; the identity at inference.

    Args:
        factor: a number in [-1, 1] (the range [-|f|, |f|]) or a (lower, upper) pair.
        value_range: the images' (min, max), default (0, 255).
        seed: a seed for the draws.
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(factor, value_range=value_range, seed=seed, **kwargs)
        self.value_range = sorted(value_range)

    def _draw_range(self):
        return self.factor

    def _adjust(self, images, draw):
        return images + draw * float(self.value_range[1] - self.value_range[0])


@register
class RandomContrast(_RandomColor):
    """Scales each image's deviation from its per-channel mean by a factor drawn from
    [1 - lower, 1 + upper] while training (Keras 3's range), then clips to `value_range`.

    Args:
        factor: a number in [0, 1] or a (lower, upper) pair.
        value_range: the images' (min, max), default (0, 255).
        seed: a seed for the draws.
    """

    _bounds = (0, 1)

    def _draw_range(self):
        return 1.0 - self.factor[0], 1.0 + self.factor[1]

    def _adjust(self, images, draw):
        h_axis, w_axis = _image_axes(self, images.shape.rank)
        mean = _math.reduce_mean(images, axis=[h_axis, w_axis], keepdims=True)
        return (images - mean) * draw + mean


_ENCODE_MODES = ("one_hot", "multi_hot", "count")


@register
class CategoryEncoding(Layer):
    """Encodes integer indices in [0, num_tokens) as one-hot, multi-hot or count vectors.

    Args:
        num_tokens: the number of categories.
        output_mode: "multi_hot" (default), "one_hot" or "count".

    Example:
        >>> tl.layers.CategoryEncoding(4, "count")(tl.constant([[0, 1, 1]])).numpy().tolist()
        [[1.0, 2.0, 0.0, 0.0]]
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode not in _ENCODE_MODES:
            raise ValueError(f"Unknown arg for output_mode: {output_mode}. Expected one of "
                             f"{list(_ENCODE_MODES)}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens "
                             "is not known beforehand, use the IntegerLookup layer instead.")
        if not isinstance(num_tokens, numbers.Integral) or num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) is not supported")
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, False
        self.autocast = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. "
                             f"Received `count_weights={count_weights}`.")
        x = inputs if inputs.dtype.is_integer else _math.cast(inputs, _dt.int32)
        dtype = _dt.as_dtype(self.compute_dtype)
        if self.output_mode == "one_hot":
            if x.shape.rank and x.shape[-1] == 1:
                x = _array.squeeze(x, [-1])
            return _array.one_hot(x, self.num_tokens, dtype=dtype)
        if x.shape.rank == 0 or x.shape.rank is None:
            raise ValueError("CategoryEncoding multi_hot/count needs inputs of rank >= 1")
        rank1 = x.shape.rank == 1
        if rank1:
            x = _array.expand_dims(x, 0)
        hot = _array.one_hot(x, self.num_tokens, dtype=dtype)
        if count_weights is not None:
            w = _math.cast(_array.constant(count_weights) if not hasattr(count_weights, "dtype")
                           else count_weights, dtype)
            hot = hot * _array.expand_dims(w if not rank1 else _array.expand_dims(w, 0), -1)
        out = _math.reduce_sum(hot, axis=-2)
        if self.output_mode == "multi_hot":
            out = _math.minimum(out, _math.cast(1, dtype))
        return _array.squeeze(out, [0]) if rank1 else out

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}


@register
class Discretization(Layer):
    """Buckets values by `bin_boundaries`: index i when boundaries[i-1] <= x < boundaries[i].

    Args:
        bin_boundaries: a sorted list of boundaries (len + 1 buckets).
        num_bins: instead of boundaries, the number of buckets `adapt` finds (approximate
            quantiles of the data, Keras's summaries).
        epsilon: the precision of `adapt`'s quantiles (default 0.01).
        output_mode: "int" (default, int32 indices), "one_hot", "multi_hot" or "count".

    Example:
        >>> tl.layers.Discretization([0.0, 1.0])(tl.constant([-1.0, 0.0, 0.5, 2.0])).numpy().tolist()
        [0, 1, 1, 2]
    """

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        if output_mode not in ("int",) + _ENCODE_MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of "
                             f"{['int', *_ENCODE_MODES]}. Received: output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not supported")
        self.bin_boundaries = None if bin_boundaries is None else \
            [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon, self.output_mode, self.sparse = \
            num_bins, epsilon, output_mode, False
        self.autocast = False
        self._summary = np.array([[], []], np.float32)

    def adapt(self, data, steps=None):
        """Sets `bin_boundaries` to `num_bins` approximate quantiles of `data` (an array, a
        Dataset or an iterable of batches), as Keras 3 computes them.

        Raises:
            ValueError: for a layer made with `bin_boundaries`.
        """
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        self._summary = np.array([[], []], np.float32)
        for i, batch in enumerate(_batches(data)):
            if steps is not None and i >= steps:
                break
            self._summary = _merge_summaries(_summarize(batch.astype(np.float32), self.epsilon),
                                             self._summary, self.epsilon)
        self.bin_boundaries = _compress_summary(self._summary, 1.0 / self.num_bins)[0, :-1] \
            .tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can start "
                             "using the `Discretization` layer.")
        x = inputs if inputs.dtype.is_floating else _math.cast(inputs, _dt.float32)
        flat = _array.reshape(x, [1, -1])
        bounds = _math.cast(_array.constant([self.bin_boundaries]), x.dtype)
        idx = _array.searchsorted(bounds, flat, side="right", out_type=_dt.int32)
        idx = _array.reshape(idx, _array.shape(x))
        if self.output_mode == "int":
            return idx
        return CategoryEncoding(len(self.bin_boundaries) + 1, self.output_mode,
                                dtype=self.dtype_policy)(idx)

    def get_config(self):
        # as Keras 3: no trainable argument, and the dtype as a plain name
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """A layer from `get_config`'s dict (an adapted layer keeps its boundaries)."""
        config = dict(config)
        boundaries = config.pop("bin_boundaries", None) if config.get("num_bins") is not None \
            else None
        layer = cls(**config)
        if boundaries is not None:
            layer.bin_boundaries = [float(b) for b in boundaries]
        return layer


def _summarize(values, epsilon):
    """Keras's quantile summary of a batch: every step-th sorted value (step = n * epsilon,
    at least 1) with weight step; a (2, k) array of values and weights."""
    values = np.sort(values.reshape(-1))
    step = max(values.size * epsilon, 1)
    bounds = values[int(step - 1)::int(step)]
    return np.stack([bounds, np.ones_like(bounds) * step])


def _merge_summaries(first, second, epsilon):
    merged = np.concatenate((first, second), axis=1)
    return _compress_summary(np.take(merged, np.argsort(merged[0]), axis=1), epsilon)


def _compress_summary(summary, epsilon):
    """A summary reduced to about 1 / epsilon points by interpolating the cumulative weights."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_percents, summary[0])
    cum_weights = np.interp(percents, cum_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype(np.float32)


@register
class IntegerLookup(Layer):
    """Maps integers to indices of a vocabulary (or back with `invert=True`).

    Index layout, as Keras: the mask token (when `mask_token` is set) at 0, then
    `num_oov_indices` out-of-vocabulary slots (a value outside the vocabulary goes to slot
    `value mod num_oov_indices`), then the vocabulary in order. `adapt` builds the
    vocabulary by descending count, ties by descending value.

    Args:
        max_tokens: the largest vocabulary size, counting mask and OOV slots.
        num_oov_indices: number of OOV slots (default 1).
        mask_token: a value that maps to index 0 (default None: no mask slot).
        oov_token: what `invert=True` returns for OOV indices (default -1).
        vocabulary: a list of integers (or adapt the layer).
        invert: map indices back to values.
        output_mode: "int" (default), "one_hot", "multi_hot" or "count".

    Example:
        >>> layer = tl.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
        >>> layer(tl.constant([[12, 1138, 42], [42, 1000, 36]])).numpy().tolist()
        [[1, 3, 4], [4, 0, 2]]
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, name=None, **kwargs):
        kwargs.pop("vocabulary_size", None)   # in Keras's config; implied by the vocabulary
        if kwargs.pop("oov_method", "floormod") != "floormod" or kwargs.pop("salt", None):
            raise NotImplementedError("IntegerLookup supports only oov_method='floormod' unsalted")
        super().__init__(name=name, **kwargs)
        if output_mode not in ("int",) + _ENCODE_MODES:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{['int', *_ENCODE_MODES]}. Received: output_mode={output_mode}")
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if num_oov_indices < 0:
            raise ValueError("`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if sparse or idf_weights is not None or pad_to_max_tokens:
            raise NotImplementedError("IntegerLookup: sparse, idf_weights and "
                                      "pad_to_max_tokens are not supported")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token, self.invert = mask_token, oov_token, invert
        self.output_mode, self.vocabulary_dtype = output_mode, vocabulary_dtype
        self.sparse, self.pad_to_max_tokens, self.idf_weights = False, False, None
        self.autocast = False
        self._vocab = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def set_vocabulary(self, vocabulary):
        """Sets the vocabulary (a list of distinct integers, without mask or OOV tokens; or the
        path of a file of one integer a line)."""
        if isinstance(vocabulary, (str, os.PathLike)):   # a file, as Keras
            lines = read_lines(os.fspath(vocabulary), self.name)
            try:
                vocabulary = [int(line) for line in lines]
            except ValueError:
                raise ValueError(f"{self.name}: the vocabulary file {vocabulary!r} must hold one "
                                 f"integer a line, got {lines[:5]}") from None
        vocab = [int(v) for v in np.asarray(vocabulary).reshape(-1)]
        if len(set(vocab)) != len(vocab):
            raise ValueError(f"The passed vocabulary has at least one repeated term: {vocab}")
        if self.mask_token is not None and self.mask_token in vocab:
            raise ValueError(f"Found reserved mask token {self.mask_token} in the vocabulary")
        if self.max_tokens is not None and len(vocab) + self._reserved() > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. "
                             f"Received vocabulary size is {len(vocab) + self._reserved()}; "
                             f"`max_tokens` is {self.max_tokens}.")
        self._vocab = vocab

    def _reserved(self):
        return self.num_oov_indices + (self.mask_token is not None)

    def adapt(self, data, steps=None):
        """Learns the vocabulary from `data` (arrays, tensors, Datasets or iterables)."""
        values, counts = np.unique(np.concatenate([b.reshape(-1) for b in _batches(data)]),
                                   return_counts=True)
        if self.mask_token is not None:
            keep = values != self.mask_token
            values, counts = values[keep], counts[keep]
        order = np.lexsort((values, counts))[::-1]
        vocab = values[order].tolist()
        if self.max_tokens is not None:
            vocab = vocab[:self.max_tokens - self._reserved()]
        self._vocab = vocab

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary by index (with mask and OOV tokens first unless excluded)."""
        vocab = list(self._vocab or [])
        if not include_special_tokens:
            return vocab
        head = ([self.mask_token] if self.mask_token is not None else []) + \
            [self.oov_token] * self.num_oov_indices
        return head + vocab

    def vocabulary_size(self):
        """The number of indices, mask and OOV slots included."""
        return len(self.get_vocabulary())

    def call(self, inputs):
        if self._vocab is None:
            raise RuntimeError(f"{self.name}: IntegerLookup has no vocabulary; pass `vocabulary` "
                               "or call adapt() first")
        x = _math.cast(inputs, _dt.int64)
        table = np.asarray(self.get_vocabulary(), np.int64)
        if self.invert:
            safe = _math.minimum(_math.maximum(x, 0), len(table) - 1)
            out = _array.gather(_array.constant(table), safe)
            first = self._reserved() - self.num_oov_indices
            is_oov = _math.logical_or(_math.less(x, first), _math.greater_equal(x, len(table)))
            oov = _math.logical_and(_math.greater_equal(x, first),
                                    _math.less(x, self._reserved()))
            return _math.where(_math.logical_or(is_oov, oov),
                               _array.constant(self.oov_token, _dt.int64), out)
        vocab = np.asarray(self._vocab, np.int64)
        order = np.argsort(vocab, kind="stable")
        sorted_vocab = vocab[order] if vocab.size else np.zeros([1], np.int64)
        positions = (order + self._reserved()).astype(np.int64) if vocab.size else \
            np.zeros([1], np.int64)
        flat = _array.reshape(x, [1, -1])
        pos = _array.searchsorted(_array.constant(sorted_vocab[None]), flat, out_type=_dt.int64)
        pos = _math.minimum(pos, len(sorted_vocab) - 1)
        found = _math.equal(_array.gather(_array.constant(sorted_vocab), pos), flat)
        if not vocab.size:
            found = _math.logical_and(found, False)
        index = _array.gather(_array.constant(positions), pos)
        first_oov = int(self.mask_token is not None)
        if self.num_oov_indices:
            oov = _math.floormod(flat, self.num_oov_indices) + first_oov
        else:
            oov = _array.fill(_array.shape(flat), _array.constant(-1, _dt.int64))
        out = _math.where(found, index, oov)
        if self.mask_token is not None:
            out = _math.where(_math.equal(flat, self.mask_token), _array.zeros_like(out), out)
        out = _array.reshape(out, _array.shape(x))
        if self.output_mode == "int":
            return out
        return CategoryEncoding(self.vocabulary_size(), self.output_mode,
                                dtype=self.dtype_policy)(out)

    def get_config(self):
        return {**super().get_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode,
                "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary_dtype": self.vocabulary_dtype, "idf_weights": self.idf_weights,
                "vocabulary": self.get_vocabulary(include_special_tokens=False)
                if self._vocab is not None else None,
                "vocabulary_size": self.vocabulary_size(), "oov_method": "floormod",
                "salt": None}
