"""Stateless random ops: draws that are a pure function of a seed tensor (TensorFlow's
`tf.random.stateless_*`, and what `keras.random` builds on).

Owns the OpDefs `StatelessRandomUniformV2`, `StatelessRandomNormalV2`,
`StatelessTruncatedNormalV2`, `StatelessRandomUniformIntV2`, `StatelessRandomGammaV3` and
`StatelessRandomBinomial`, and the public `stateless_*` functions. Invariants: the same seed
(a [2] integer tensor) gives the same values on every call, eagerly and in graphs (the ops are
not stateful: a graph may fold or merge them); a seed read from a Variable that the program
advances (`keras.random.SeedGenerator`) gives fresh values per call. Values differ from
TensorFlow's (another generator), the distributions are the same.
"""
import enum as _enum
import secrets as _secrets

from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from ..tensor import TensorShape
from ..variables import Variable as _Variable
from . import array as _array
from . import math as _math
from . import numeric as _numeric
from . import random as _random

__all__ = ["stateless_uniform", "stateless_normal", "stateless_truncated_normal",
           "stateless_random_gamma", "stateless_random_binomial"]

_MASK = (1 << 64) - 1


def _rng(xp, seed):
    """A generator keyed by the two seed words (numpy: PCG64 of both; cupy: of their hash)."""
    words = [int(v) & _MASK for v in seed.reshape(-1).tolist()]
    if xp.__name__ == "numpy":
        return xp.random.Generator(xp.random.PCG64(words))
    return xp.random.default_rng(hash(tuple(words)) & 0x7FFFFFFF)


def _check_seed(seed):
    if not seed.dtype.is_integer:
        raise TypeError(f"a stateless seed must be an integer tensor, got {seed.dtype.name}")
    if seed.shape.rank is not None and list(seed.shape) not in ([2], [None]):
        raise ValueError(f"a stateless seed must have shape [2], got {seed.shape}")


def _infer(kind):
    def infer(seed, *params, shape, dtype, **attrs):
        _check_seed(seed)
        if kind == "float" and not dtype.is_floating:
            raise TypeError(f"needs a floating dtype, got {dtype.name}")
        if kind == "int" and not dtype.is_integer:
            raise TypeError(f"needs an integer dtype, got {dtype.name}")
        for p in params:  # parameters broadcast to the drawn shape
            broadcast_shapes(p.shape, TensorShape(shape))
        return spec(shape, dtype)
    return infer


def _wide(dtype):
    return dtype.np if dtype in (_dt.float32, _dt.float64) else _dt.float32.np


@defop("StatelessRandomUniformV2", infer=_infer("float"), differentiable=False)
def _uniform(xp, seed, shape, dtype):
    return _rng(xp, seed).random(shape, dtype=_wide(dtype)).astype(dtype.np, copy=False)


@defop("StatelessRandomNormalV2", infer=_infer("float"), differentiable=False)
def _normal(xp, seed, shape, dtype):
    return _rng(xp, seed).standard_normal(shape, dtype=_wide(dtype)).astype(dtype.np, copy=False)


@defop("StatelessTruncatedNormalV2", infer=_infer("float"), differentiable=False)
def _truncated_normal(xp, seed, shape, dtype):
    rng = _rng(xp, seed)
    z = rng.standard_normal(shape, dtype=_wide(dtype))
    outside = xp.abs(z) > 2
    while bool(outside.any()):  # redraw beyond two standard deviations
        z = xp.where(outside, rng.standard_normal(shape, dtype=_wide(dtype)), z)
        outside = xp.abs(z) > 2
    return z.astype(dtype.np, copy=False)


@defop("StatelessRandomUniformIntV2", infer=_infer("int"), differentiable=False)
def _uniform_int(xp, seed, shape, dtype, minval, maxval):
    return _rng(xp, seed).integers(minval, maxval, size=shape, dtype=dtype.np)


@defop("StatelessRandomGammaV3", infer=_infer("float"), differentiable=False)
def _gamma(xp, seed, alpha, shape, dtype):
    a = xp.broadcast_to(alpha.astype(xp.float64), shape)
    return _random.standard_gamma(xp, _rng(xp, seed), a).astype(dtype.np, copy=False)


@defop("StatelessRandomBinomial", infer=_infer("any"), differentiable=False)
def _binomial(xp, seed, counts, probs, shape, dtype):
    """Sums of Bernoulli draws, in chunks of trials (uniform draws only)."""
    n = xp.broadcast_to(counts, shape).astype(xp.int64)
    p = xp.broadcast_to(probs.astype(xp.float64), shape)
    rng = _rng(xp, seed)
    total = xp.zeros(shape, dtype=xp.int64)
    most = int(n.max()) if n.size else 0
    chunk = 256
    for start in range(0, most, chunk):
        k = min(chunk, most - start)
        trial = xp.arange(start, start + k).reshape((k,) + (1,) * len(shape))
        hits = (rng.random((k,) + tuple(shape)) < p) & (trial < n)
        total = total + hits.sum(axis=0)
    return total.astype(dtype.np, copy=False)


def _args(seed, shape, dtype):
    seed = convert_to_tensor(seed, dtype_hint=_dt.int64)
    _check_seed(seed)
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    dims = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    return seed, dims, _dt.as_dtype(dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dt.float32, name=None):
    """Uniform values in [minval, maxval) determined by `seed` (a [2] integer tensor); integer
    dtypes need both bounds (Python ints).

    Example:
        >>> from trainlib.graph.ops.stateless_random import stateless_uniform
        >>> a = stateless_uniform([2], seed=[1, 2]); b = stateless_uniform([2], seed=[1, 2])
        >>> bool(tl.reduce_all(a == b))
        True
    """
    seed, dims, dtype = _args(seed, shape, dtype)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("stateless_uniform with an integer dtype needs maxval")
        return apply("StatelessRandomUniformIntV2", seed, shape=dims, dtype=dtype,
                     minval=int(minval), maxval=int(maxval))
    u = apply("StatelessRandomUniformV2", seed, shape=dims, dtype=dtype)
    hi = 1 if maxval is None else maxval
    if minval == 0 and hi == 1:
        return u
    lo = convert_to_tensor(minval, dtype=dtype)
    return u * (convert_to_tensor(hi, dtype=dtype) - lo) + lo


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
    """Normal values determined by `seed` (a [2] integer tensor)."""
    seed, dims, dtype = _args(seed, shape, dtype)
    z = apply("StatelessRandomNormalV2", seed, shape=dims, dtype=dtype)
    return z * convert_to_tensor(stddev, dtype=dtype) + convert_to_tensor(mean, dtype=dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
    """Normal values within two standard deviations, determined by `seed`."""
    seed, dims, dtype = _args(seed, shape, dtype)
    z = apply("StatelessTruncatedNormalV2", seed, shape=dims, dtype=dtype)
    return z * convert_to_tensor(stddev, dtype=dtype) + convert_to_tensor(mean, dtype=dtype)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=_dt.float32, name=None):
    """Gamma(alpha, rate beta) values determined by `seed`; alpha and beta broadcast to shape."""
    seed, dims, dtype = _args(seed, shape, dtype)
    g = apply("StatelessRandomGammaV3", seed, convert_to_tensor(alpha, dtype=dtype), shape=dims,
              dtype=dtype)
    return g if beta is None else g / convert_to_tensor(beta, dtype=dtype)


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=_dt.int32, name=None):
    """Binomial(counts, probs) values determined by `seed`; counts and probs broadcast to shape."""
    seed, dims, dtype = _args(seed, shape, output_dtype)
    counts = convert_to_tensor(counts)
    probs = convert_to_tensor(probs, dtype_hint=_dt.float32)
    return apply("StatelessRandomBinomial", seed, counts, probs, shape=dims, dtype=dtype)


# ------------------------------------------------------------------ the rest of tf.random
# Poisson draws (an OpDef), categorical draws (Gumbel-max over stateless uniforms), seed
# arithmetic (split, fold_in), the stateful `gamma`/`poisson` (a fresh seed from the stateful
# generator, then the stateless op) and `Generator`: its state a Variable, advanced by each draw.

__all__ += ["stateless_poisson", "stateless_categorical", "stateless_gamma", "stateless_binomial",
            "stateless_uniform_full_int", "split", "fold_in", "gamma", "poisson",
            "create_rng_state", "Algorithm", "Generator", "get_global_generator",
            "set_global_generator"]

stateless_gamma = stateless_random_gamma
stateless_binomial = stateless_random_binomial


@defop("StatelessRandomPoisson", infer=_infer("any"), differentiable=False)
def _poisson(xp, seed, lam, shape, dtype):
    """Inversion by sequential search (uniform draws only, which every array module's generator
    has); a large lam is the sum of ceil(lam / 30) draws of lam / pieces (exp(-lam) stays normal)."""
    lam = xp.broadcast_to(lam.astype(xp.float64), shape)
    rng = _rng(xp, seed)
    pieces = max(1, int(-(-float(lam.max()) // 30))) if lam.size else 1
    part = lam / pieces
    total = xp.zeros(shape, dtype=xp.float64)
    for _ in range(pieces):
        u = rng.random(shape)
        k = xp.zeros(shape, dtype=xp.float64)
        p = xp.exp(-part)
        cdf = p.copy()
        todo = u > cdf
        while bool(todo.any()):
            k = k + todo
            p = p * part / xp.maximum(k, 1)
            cdf = cdf + xp.where(todo, p, 0)
            todo = todo & (u > cdf) & (p > 0)
        total = total + k
    return total.astype(dtype.np, copy=False)


def stateless_poisson(shape, seed, lam, dtype=_dt.int32, name=None):
    """Poisson(lam) values determined by `seed`; lam broadcasts to shape.

    Example:
        >>> a = tl.random.stateless_poisson([3], seed=[1, 2], lam=4.0)
        >>> bool(tl.reduce_all(a == tl.random.stateless_poisson([3], seed=[1, 2], lam=4.0)))
        True
    """
    seed, dims, dtype = _args(seed, shape, dtype)
    return apply("StatelessRandomPoisson", seed, convert_to_tensor(lam, dtype_hint=_dt.float32),
                 shape=dims, dtype=dtype)


def stateless_uniform_full_int(shape, seed, dtype=_dt.int64):
    """Integers over the whole range of `dtype` (int32 or int64), determined by `seed`."""
    seed, dims, dtype = _args(seed, shape, dtype)
    info = {_dt.int32: (-2 ** 31, 2 ** 31 - 1), _dt.int64: (-2 ** 63, 2 ** 63 - 1)}
    if dtype not in info:
        raise TypeError(f"uniform_full_int needs int32 or int64, got {dtype.name}")
    lo, hi = info[dtype]
    return apply("StatelessRandomUniformIntV2", seed, shape=dims, dtype=dtype, minval=lo,
                 maxval=hi)


def stateless_categorical(logits, num_samples, seed, dtype=_dt.int64, name=None):
    """Class indices drawn from softmax(logits[i]) ([batch, classes], static shape), determined
    by `seed`: argmax of logits plus Gumbel noise.

    Example:
        >>> tl.random.stateless_categorical(tl.math.log([[0.0, 1.0]]), 4, seed=[7, 0]).numpy()
        array([[1, 1, 1, 1]])
    """
    logits = convert_to_tensor(logits, dtype_hint=_dt.float32)
    if logits.shape.rank != 2 or not logits.shape.is_fully_defined():
        raise ValueError(f"stateless_categorical needs [batch, classes] logits of static shape, "
                         f"got {logits.shape}")
    batch, classes = logits.shape
    u = stateless_uniform([batch, int(num_samples), classes], seed, minval=1e-20, maxval=1.0,
                          dtype=logits.dtype)
    gumbel = -_math.log(-_math.log(u))
    scores = _array.expand_dims(logits, 1) + gumbel
    return _math.argmax(scores, axis=-1, output_type=_dt.as_dtype(dtype))


def split(seed, num=2, alg="auto_select"):
    """`num` new seeds ([num, 2], the dtype of `seed`) derived from `seed`.

    Example:
        >>> tl.random.split([1, 2], 3).shape
        TensorShape([3, 2])
    """
    seed = convert_to_tensor(seed)
    return stateless_uniform_full_int([int(num), 2], seed, seed.dtype)


def fold_in(seed, data, alg="auto_select"):
    """A new seed [a draw from `seed`, data] (the dtype of `data`), as TensorFlow builds it:
    seeds for step i from one base seed.

    Example:
        >>> bool(tl.reduce_all(tl.random.fold_in([1, 2], 3) == tl.random.fold_in([1, 2], 3)))
        True
    """
    data = convert_to_tensor(data)
    return _array.stack([stateless_uniform_full_int([], seed, data.dtype), data])


def _fresh_seed(seed):
    return _random.uniform([2], 0, 2 ** 62, dtype=_dt.int64, seed=seed)


def gamma(shape, alpha, beta=None, dtype=_dt.float32, seed=None, name=None):
    """Gamma(alpha, rate beta) draws of shape `shape + alpha.shape`, fresh on every call.

    Example:
        >>> tl.random.gamma([5], alpha=[1.0, 2.0]).shape
        TensorShape([5, 2])
    """
    dtype = _dt.as_dtype(dtype)
    alpha = convert_to_tensor(alpha, dtype=dtype)
    full = list(_shape_list(shape)) + list(alpha.shape)
    if beta is not None:
        beta = convert_to_tensor(beta, dtype=dtype)
        full = list(_shape_list(shape)) + list(broadcast_shapes(alpha.shape, beta.shape))
    return stateless_random_gamma(full, _fresh_seed(seed), alpha, beta, dtype)


def poisson(shape, lam, dtype=_dt.float32, seed=None, name=None):
    """Poisson(lam) draws of shape `shape + lam.shape`, fresh on every call.

    Example:
        >>> tl.random.poisson([4], lam=[1.0, 5.0]).shape
        TensorShape([4, 2])
    """
    lam = convert_to_tensor(lam, dtype_hint=_dt.float32)
    full = list(_shape_list(shape)) + list(lam.shape)
    return stateless_poisson(full, _fresh_seed(seed), lam, dtype)


def _shape_list(shape):
    if isinstance(shape, TensorShape):
        return shape.as_list()
    return [int(shape)] if isinstance(shape, int) else [int(d) for d in shape]


class Algorithm(_enum.Enum):
    """The random algorithms TensorFlow names (trainlib draws the same streams for each)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def create_rng_state(seed, alg):
    """The initial state ([3] int64 numpy array) of a Generator seeded with `seed`."""
    return _array.constant([int(seed), 0, 0], dtype=_dt.int64).numpy()


class Generator:
    """A random stream whose state is a Variable: every draw reads it and advances it, so
    draws inside a `tl.function` differ per call and checkpoints save the stream's position.

    Construct with `Generator.from_seed(seed)` or `Generator.from_non_deterministic_state()`.

    Example:
        >>> g = tl.random.Generator.from_seed(1)
        >>> a = g.normal([2]); b = g.normal([2])
        >>> bool(tl.reduce_all(a == b))
        False
        >>> c = tl.random.Generator.from_seed(1).normal([2])
        >>> bool(tl.reduce_all(a == c))
        True
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            state = copy_from.state.read_value()
        if state is None:
            raise ValueError("Generator needs copy_from or state; use Generator.from_seed(seed)")
        self.algorithm = _alg(alg)
        self.state = _Variable(convert_to_tensor(state, dtype=_dt.int64), trainable=False,
                               name="rng_state")

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose stream is determined by the integer `seed`."""
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        """A generator starting at `state` ([3] int64)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        return cls.from_seed(_secrets.randbits(62), alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """A generator starting at the given key and counter (as TensorFlow's Philox state)."""
        counter = list(counter) + [0] * (2 - len(list(counter)))
        return cls(state=[int(key), int(counter[0]), int(counter[1])], alg=alg)

    def reset(self, state):
        """Moves the stream to `state`."""
        self.state.assign(convert_to_tensor(state, dtype=_dt.int64))

    def reset_from_seed(self, seed):
        """Moves the stream to the start of `seed`'s stream."""
        self.reset(create_rng_state(seed, self.algorithm))

    def skip(self, delta):
        """Advances the stream by `delta` draws."""
        self.state.assign_add(_math.cast(_array.stack([0, 0, delta]), _dt.int64))

    def make_seeds(self, count=1):
        """`count` seeds for the stateless ops, a [2, count] int64 tensor; advances the state."""
        return _array.transpose(split(self._next_seed(), int(count)))

    def _next_seed(self):
        value = self.state.read_value() * 1  # a copy: the state changes next
        self.state.assign_add(_array.constant([0, 0, 1], dtype=_dt.int64))
        return _array.stack([value[0], value[1] * 4294967296 + value[2]])

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal draws; advances the state."""
        return stateless_normal(shape, self._next_seed(), mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dt.float32, name=None):
        """Uniform draws in [minval, maxval) (integer dtypes need both bounds)."""
        return stateless_uniform(shape, self._next_seed(), minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype=_dt.int64, name=None):
        """Integers over the whole range of `dtype` (int32 or int64)."""
        return stateless_uniform_full_int(shape, self._next_seed(), dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal draws within two standard deviations; advances the state."""
        return stateless_truncated_normal(shape, self._next_seed(), mean, stddev, dtype)

    def binomial(self, shape, counts, probs, dtype=_dt.int32, name=None):
        """Binomial(counts, probs) draws; advances the state."""
        return stateless_random_binomial(shape, self._next_seed(), counts, probs, dtype)

    def split(self, count=1):
        """`count` new, independent generators seeded from this one's stream."""
        seeds = split(self._next_seed(), int(count)).numpy()
        return [Generator(state=[int(s[0]), int(s[1]), 0], alg=self.algorithm) for s in seeds]


def _alg(alg):
    if alg is None or isinstance(alg, Algorithm):
        return alg or Algorithm.AUTO_SELECT
    if isinstance(alg, str):
        return Algorithm[alg.upper()]
    return Algorithm(int(alg))


_GLOBAL = []


def get_global_generator():
    """The process-wide Generator (created from non-deterministic state on first use)."""
    if not _GLOBAL:
        _GLOBAL.append(Generator.from_non_deterministic_state())
    return _GLOBAL[0]


def set_global_generator(generator):
    """Replaces the process-wide Generator."""
    _GLOBAL[:] = [generator]


__all__ += ["stateless_parameterized_truncated_normal"]


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None):
    """Normal(means, stddevs) draws restricted to [minvals, maxvals] (all broadcast to shape),
    determined by `seed`: the inverse normal CDF of a uniform draw between the bounds' CDFs.

    Example:
        >>> x = tl.random.stateless_parameterized_truncated_normal([1000], [1, 2], 0.0, 1.0, 0.5, 1.0)
        >>> bool(tl.reduce_all((x >= 0.5) & (x <= 1.0)))
        True
    """
    u = stateless_uniform(shape, seed)
    dtype = u.dtype
    means, stddevs, minvals, maxvals = (_math.cast(convert_to_tensor(v, dtype_hint=dtype), dtype)
                                        for v in (means, stddevs, minvals, maxvals))
    from_numeric = _numeric  # the normal CDF through erfc, its inverse through ndtri
    low = 0.5 * from_numeric.erfc(-(minvals - means) / stddevs / 1.4142135623730951)
    high = 0.5 * from_numeric.erfc(-(maxvals - means) / stddevs / 1.4142135623730951)
    p = _math.clip_by_value(low + u * (high - low), 1e-12, 1 - 1e-7)
    z = from_numeric.ndtri(p)
    return _math.clip_by_value(means + stddevs * z, minvals, maxvals)
