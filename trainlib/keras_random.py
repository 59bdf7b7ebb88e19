"""Keras 3's `keras.random` over trainlib's random ops: Keras's argument names and defaults.

Owns: `normal`, `uniform`, `truncated_normal`, `randint`, `categorical`, `shuffle`,
`dropout` with Keras 3's signatures (dtype None = float32 / int32, `shuffle(x, axis)`,
`randint(shape, minval, maxval)`), and `SeedGenerator`, whose `next()` gives each draw
it seeds its own op seed, derived from the generator's seed and a counter, so draws
are reproducible yet differ from one another. The draws themselves are tl.random's
ops (a random op inside a graph draws fresh values on every call).
"""
import numpy as np

from .graph import dtypes as _dt
from .graph.ops import array as _array, nn as _nn, random as _random

__all__ = ["SeedGenerator", "normal", "uniform", "truncated_normal", "randint", "categorical",
           "shuffle", "dropout"]


class SeedGenerator:
    """A source of seeds: pass it as `seed=` to draw reproducibly, differently each draw.

    Args:
        seed: an int (default: drawn from numpy's global random state).

    Example:
        >>> gen = tl.keras.random.SeedGenerator(1337)
        >>> a = tl.keras.random.normal((2,), seed=gen)
        >>> b = tl.keras.random.normal((2,), seed=gen)   # different from a
    """

    def __init__(self, seed=None, name=None, **kwargs):
        if seed is None:
            seed = int(np.random.randint(1, 2 ** 31 - 1))
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self.seed = seed
        self.name = name or "seed_generator"
        self._count = 0

    def next(self):
        """The next op seed (an int)."""
        self._count += 1
        return (self.seed * 1000003 + self._count) % (2 ** 31 - 1)

    def get_config(self):
        return {"seed": self.seed}


def _op_seed(seed):
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ValueError("Argument `seed` must be either an integer or an instance of "
                         f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})")
    return seed


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from N(mean, stddev**2) (dtype default float32)."""
    return _random.normal(shape, mean, stddev, dtype or _dt.float32, seed=_op_seed(seed))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Draws uniformly from [minval, maxval) (a floating dtype, default float32).

    Raises:
        ValueError: for an integer dtype (use `randint`).
    """
    dtype = _dt.as_dtype(dtype or _dt.float32)
    if not dtype.is_floating:
        raise ValueError("`keras.random.uniform` requires a floating point `dtype`. Received: "
                         f"dtype={dtype.name} ")
    return _random.uniform(shape, minval, maxval, dtype, seed=_op_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from N(mean, stddev**2), redrawing beyond two standard deviations."""
    return _random.truncated_normal(shape, mean, stddev, dtype or _dt.float32,
                                    seed=_op_seed(seed))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Draws integers uniformly from [minval, maxval)."""
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_integer:
        raise ValueError("`keras.random.randint` requires an integer `dtype`. Received: "
                         f"dtype={dtype.name} ")
    return _random.uniform(shape, minval, maxval, dtype, seed=_op_seed(seed))


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Draws `num_samples` class indices per row of `logits` (unnormalized log-probabilities)."""
    return _random.categorical(logits, num_samples, dtype=dtype, seed=_op_seed(seed))


def shuffle(x, axis=0, seed=None):
    """`x` with its `axis` dimension randomly permuted."""
    if axis == 0:
        return _random.shuffle(x, seed=_op_seed(seed))
    x = _array.convert_to_tensor(x) if not hasattr(x, "shape") else x
    rank = len(x.shape)
    axis = axis % rank
    perm = [axis] + [d for d in range(rank) if d != axis]
    inverse = [perm.index(d) for d in range(rank)]
    moved = _random.shuffle(_array.transpose(x, perm), seed=_op_seed(seed))
    return _array.transpose(moved, inverse)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Zeros a `rate` fraction of `inputs`, scaling the rest by 1 / (1 - rate)."""
    return _nn.dropout(inputs, rate, noise_shape=noise_shape, seed=_op_seed(seed))
