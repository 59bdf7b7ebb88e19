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
from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from ..tensor import TensorShape

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


def _standard_gamma(xp, rng, a):
    """Gamma(a, 1) draws by Marsaglia and Tsang's method (normal and uniform draws only, which
    every array module's generator has); a < 1 boosted as Gamma(a + 1) * U ** (1 / a)."""
    boost = a < 1
    shape_ = xp.where(boost, a + 1.0, a)
    d = shape_ - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = xp.zeros(a.shape)
    todo = xp.ones(a.shape, dtype=bool)
    while bool(todo.any()):
        x = rng.standard_normal(a.shape)
        v = (1.0 + c * x) ** 3
        u = rng.random(a.shape)
        safe_v = xp.where(v > 0, v, 1.0)
        ok = (v > 0) & (xp.log(u) < 0.5 * x * x + d - d * safe_v + d * xp.log(safe_v))
        out = xp.where(todo & ok, d * safe_v, out)
        todo = todo & ~ok
    u = rng.random(a.shape)
    return xp.where(boost, out * u ** (1.0 / xp.where(boost, a, 1.0)), out)


@defop("StatelessRandomGammaV3", infer=_infer("float"), differentiable=False)
def _gamma(xp, seed, alpha, shape, dtype):
    a = xp.broadcast_to(alpha.astype(xp.float64), shape)
    return _standard_gamma(xp, _rng(xp, seed), a).astype(dtype.np, copy=False)


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
