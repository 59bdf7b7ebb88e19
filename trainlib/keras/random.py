"""`trainlib.keras.random`: Keras 3's `keras.random` (draws, and `SeedGenerator`) over trainlib.

Owns: Keras 3's draws, on the seed rules of `trainlib.keras._seeds`. A draw with an int `seed`
returns the same values on every call; with a `SeedGenerator` it reads the generator's state
(a non-trainable int64 Variable [seed, counter]) and advances it, so seeded draws inside a
`tl.function` or a training step give fresh values on each call, as Keras's do; with
`seed=None` the seed itself is drawn by a stateful random op (fresh values per call).
Invariants: every draw is a stateless op of `trainlib.graph.ops.stateless_random` applied to
that seed tensor, or a composition of such draws (categorical by Gumbel-max, shuffle by sorting
random keys, beta from two gammas); values differ from TensorFlow's, distributions agree.
"""
from ..graph import dtypes as _dt
from ..graph.ops import array as _a
from ..graph.ops import math as _m
from ..graph.ops import stateless_random as _sr
from ._seeds import SeedGenerator, draw_seed as _draw_seed
from .ops._convert import floatx_dtype as _floatx, tensor as _t

__all__ = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal",
           "randint", "shuffle", "truncated_normal", "uniform"]


def _float_dtype(dtype, fn):
    d = _dt.as_dtype(dtype or _floatx())
    if not d.is_floating:
        raise ValueError(f"`keras.random.{fn}` requires a floating point `dtype`. Received: "
                         f"dtype={d.name}")
    return d


def _shape(shape):
    return [int(shape)] if isinstance(shape, int) else [int(d) for d in shape]


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from a normal distribution."""
    d = _float_dtype(dtype, "normal")
    return _sr.stateless_normal(_shape(shape), _draw_seed(seed), mean, stddev, d)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Draws uniformly from [minval, maxval)."""
    d = _float_dtype(dtype, "uniform")
    return _sr.stateless_uniform(_shape(shape), _draw_seed(seed), minval, maxval, d)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from a normal distribution truncated at two standard deviations."""
    d = _float_dtype(dtype, "truncated_normal")
    return _sr.stateless_truncated_normal(_shape(shape), _draw_seed(seed), mean, stddev, d)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Draws integers uniformly from [minval, maxval)."""
    d = _dt.as_dtype(dtype)
    if not d.is_integer:
        raise ValueError(f"`keras.random.randint` requires an integer `dtype`. Received: "
                         f"dtype={d.name}")
    return _sr.stateless_uniform(_shape(shape), _draw_seed(seed), int(minval), int(maxval), d)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Draws `num_samples` class indices per row of `logits` [batch, classes] (Gumbel-max)."""
    logits = _t(logits)
    if logits.shape.rank != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. "
                         f"Received: logits={logits.shape}")
    if not logits.dtype.is_floating:
        logits = _m.cast(logits, _floatx())
    batch, classes = logits.shape
    if batch is None:
        raise ValueError("keras.random.categorical needs a static batch size in trainlib")
    tiny = float(__import__("numpy").finfo(logits.dtype.np).tiny)
    u = _sr.stateless_uniform([batch, int(num_samples), classes], _draw_seed(seed), tiny, 1.0,
                              logits.dtype)
    gumbel = -_m.log(-_m.log(u))
    return _m.argmax(_a.expand_dims(logits, 1) + gumbel, axis=-1, output_type=_dt.as_dtype(dtype))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """`inputs` with each element zeroed with probability `rate`, the rest scaled by
    1 / (1 - rate)."""
    x = _t(inputs)
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = list(x.shape)
    if noise_shape is not None:
        shape = [s if n is None else int(n) for s, n in zip(shape, noise_shape)]
    if None in shape:
        raise ValueError("keras.random.dropout needs a static noise shape in trainlib")
    keep = _m.greater_equal(_sr.stateless_uniform(shape, _draw_seed(seed), dtype=x.dtype), rate)
    scaled = x / _m.cast(1.0 - rate, x.dtype)
    return _m.where(keep, scaled, _a.zeros_like(x))


def shuffle(x, axis=0, seed=None):
    """`x` with its slices along `axis` in a random order."""
    x = _t(x)
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.random.shuffle needs a static size along the axis in trainlib")
    keys = _sr.stateless_uniform([n], _draw_seed(seed), dtype=_dt.float64)
    return _a.gather(x, _a.argsort(keys), axis=axis)


def gamma(shape, alpha, dtype=None, seed=None):
    """Draws from Gamma(alpha, 1)."""
    d = _float_dtype(dtype, "gamma")
    return _sr.stateless_random_gamma(_shape(shape), _draw_seed(seed), alpha, dtype=d)


def beta(shape, alpha, beta, dtype=None, seed=None):  # noqa: A002 -- Keras's names
    """Draws from Beta(alpha, beta), as X / (X + Y) of two gamma draws."""
    d = _float_dtype(dtype, "beta")
    s = _draw_seed(seed)
    x = _sr.stateless_random_gamma(_shape(shape), s, alpha, dtype=d)
    y = _sr.stateless_random_gamma(_shape(shape), s + _a.constant([0, 12], dtype=_dt.int64), beta,
                                   dtype=d)
    return x / (x + y)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Draws the number of successes in `counts` trials of probability `probabilities`."""
    d = _float_dtype(dtype, "binomial")
    return _m.cast(_sr.stateless_random_binomial(_shape(shape), _draw_seed(seed), counts,
                                                 probabilities, _dt.int64), d)
