"""Random ops: uniform, normal, truncated normal draws, seeded by `tl.random.set_seed`.

Owns: the random OpDefs (stateful: a graph draws fresh values on every call)
and the per-array-module generators they draw from.
Invariants: generators are created lazily inside kernels from `xp`, so numpy
and cupy each get their own; `set_seed(s)` drops them all, so a program that
calls set_seed first draws the same values on every run; an op `seed` selects
its own stream, derived from (global seed, op seed) as TensorFlow combines
them, so op-seeded draws are reproducible even without set_seed; without
set_seed, the shared stream is seeded from OS entropy.
"""
from .. import dtypes as _dt
from .. import threads as _threads
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import TensorShape, is_tensor

__all__ = ["set_seed", "uniform", "normal", "truncated_normal", "categorical", "shuffle"]

_DEFAULT_GLOBAL_SEED = 87654321  # TensorFlow's, used when only an op seed is given
_global_seed = None
_generators = {}  # (array module name, op seed or None) -> generator


def set_seed(seed):
    """Sets the global random seed: the same program then draws the same values.

    Args:
        seed: an int, or None to go back to unseeded (OS entropy) draws.

    Example:
        >>> tl.random.set_seed(1); a = tl.random.uniform([2])
        >>> tl.random.set_seed(1); b = tl.random.uniform([2])
        >>> bool(tl.reduce_all(a == b))
        True
    """
    global _global_seed
    _global_seed = None if seed is None else int(seed)
    _generators.clear()


def _generator(xp, seed):
    """The generator of stream `seed` (None: the shared stream) for array module `xp`."""
    if seed is None and _global_seed is None and _threads.determinism_enabled():
        raise RuntimeError(  # TensorFlow's words
            "Random ops require a seed to be set when determinism is enabled. Please set a "
            "seed before running the op, e.g. by calling tl.random.set_seed(1) (or "
            "tl.keras.utils.set_random_seed(1)).")
    key = (xp.__name__, seed)
    rng = _generators.get(key)
    if rng is None:
        if seed is not None:
            entropy = [_DEFAULT_GLOBAL_SEED if _global_seed is None else _global_seed, seed]
        else:
            entropy = _global_seed
        if xp.__name__ == "numpy":
            rng = xp.random.Generator(xp.random.PCG64(entropy))
        else:  # cupy seeds from one int
            rng = xp.random.default_rng(None if entropy is None else hash(tuple(
                entropy if isinstance(entropy, list) else [entropy])) & 0x7FFFFFFF)
        _generators[key] = rng
    return rng


def _shape_args(shape):
    """(inputs, attrs) for a shape: static lists/tuples/TensorShapes become the `shape` attr,
    tensors an input (their value is read when the op runs)."""
    if is_tensor(shape) or hasattr(shape, "_array"):
        t = convert_to_tensor(shape)
        if not t.dtype.is_integer or t.shape.rank not in (1, None):
            raise ValueError(f"shape must be a 1-D integer tensor, got {t.dtype.name} of shape {t.shape}")
        return (t,), {"shape": None}
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, int):
        shape = [shape]
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a list of ints, a TensorShape or a 1-D int tensor, got "
                         f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"shape must not have negative dims, got {list(dims)}")
    return (), {"shape": dims}


def _random_infer(name, allowed):
    def infer(*shape_input, shape, dtype, seed, **attrs):
        if not allowed(dtype):
            raise TypeError(f"{name} does not support dtype {dtype.name}")
        if shape is not None:
            return spec(shape, dtype)
        n = shape_input[0].shape[0] if shape_input[0].shape.rank == 1 else None
        return spec(None if n is None else [None] * n, dtype)
    return infer


def _dims(shape_input, shape):
    if shape is not None:
        return shape
    return tuple(int(d) for d in shape_input[0].tolist())


def _draw_float(xp, rng, draw, dims, dtype):
    """`draw(size, float32|float64)`; float16 is drawn in float32 and rounded."""
    wide = dtype.np if dtype in (_dt.float32, _dt.float64) else _dt.float32.np
    return draw(dims, wide).astype(dtype.np, copy=False)


@defop("RandomUniform", infer=_random_infer("RandomUniform", lambda d: d.is_floating),
       stateful=True, differentiable=False)
def _random_uniform(xp, *shape_input, shape, dtype, seed):
    rng = _generator(xp, seed)
    return _draw_float(xp, rng, lambda size, d: rng.random(size, dtype=d), _dims(shape_input, shape),
                       dtype)


@defop("RandomUniformInt", infer=_random_infer("RandomUniformInt", lambda d: d.is_integer),
       stateful=True, differentiable=False)
def _random_uniform_int(xp, *shape_input, shape, dtype, seed, minval, maxval):
    return _generator(xp, seed).integers(minval, maxval, size=_dims(shape_input, shape),
                                         dtype=dtype.np)


@defop("RandomStandardNormal", infer=_random_infer("RandomStandardNormal", lambda d: d.is_floating),
       stateful=True, differentiable=False)
def _random_normal(xp, *shape_input, shape, dtype, seed):
    rng = _generator(xp, seed)
    return _draw_float(xp, rng, lambda size, d: rng.standard_normal(size, dtype=d),
                       _dims(shape_input, shape), dtype)


@defop("TruncatedNormal", infer=_random_infer("TruncatedNormal", lambda d: d.is_floating),
       stateful=True, differentiable=False)
def _truncated_normal(xp, *shape_input, shape, dtype, seed):
    rng = _generator(xp, seed)
    dims = _dims(shape_input, shape)
    wide = dtype.np if dtype in (_dt.float32, _dt.float64) else _dt.float32.np
    z = rng.standard_normal(dims, dtype=wide)
    outside = xp.abs(z) > 2
    while bool(outside.any()):  # P(|z| > 2) ~ 4.6%: a few rounds redraw everything
        z = xp.where(outside, rng.standard_normal(dims, dtype=wide), z)
        outside = xp.abs(z) > 2
    return z.astype(dtype.np, copy=False)


def _float_dtype(dtype, fn):
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{fn} needs a floating-point dtype, got {dtype.name}")
    return dtype


def _scaled(z, scale, offset, dtype):
    """z * scale + offset, skipping the arithmetic for Python defaults (1, 0)."""
    if is_tensor(scale) or scale != 1:
        z = z * convert_to_tensor(scale, dtype=dtype)
    if is_tensor(offset) or offset != 0:
        z = z + convert_to_tensor(offset, dtype=dtype)
    return z


def uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None):
    """Values drawn uniformly from [minval, maxval).

    Args:
        shape: list/tuple of ints, TensorShape, or 1-D integer tensor.
        minval: lower bound (inclusive), default 0.
        maxval: upper bound (exclusive); default 1 for floats, required for integer dtypes.
        dtype: float16/32/64, int32 or int64.
        seed: an op seed; with `tl.random.set_seed` it makes this op's draws reproducible.

    Returns:
        A tensor of `shape` and `dtype`; a fresh draw each time it runs.

    Raises:
        ValueError: for an integer dtype without maxval, or maxval <= minval for integers.

    Example:
        >>> tl.random.uniform([2], minval=0, maxval=10, dtype=tl.int32).dtype
        tl.int32
    """
    dtype = _dt.as_dtype(dtype)
    inputs, attrs = _shape_args(shape)
    seed = None if seed is None else int(seed)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        if is_tensor(minval) or is_tensor(maxval):
            # TF accepts scalar tensors here; the bounds must be known to draw integers
            minval, maxval = int(minval), int(maxval)
        if int(maxval) <= int(minval):
            raise ValueError(f"Need minval < maxval for an integer uniform, got minval={minval}, "
                             f"maxval={maxval}")
        return apply("RandomUniformInt", *inputs, dtype=dtype, seed=seed, minval=int(minval),
                     maxval=int(maxval), **attrs)
    dtype = _float_dtype(dtype, "uniform")
    u = apply("RandomUniform", *inputs, dtype=dtype, seed=seed, **attrs)
    if maxval is None:
        maxval = 1
    if not (is_tensor(minval) or is_tensor(maxval)):
        return _scaled(u, maxval - minval, minval, dtype)
    minval, maxval = convert_to_tensor(minval, dtype=dtype), convert_to_tensor(maxval, dtype=dtype)
    return u * (maxval - minval) + minval


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """Values drawn from a normal distribution N(mean, stddev**2).

    Args:
        shape: list/tuple of ints, TensorShape, or 1-D integer tensor.
        mean, stddev: Python numbers or tensors broadcastable to `shape`.
        dtype: a floating-point dtype.
        seed: an op seed (see `uniform`).

    Example:
        >>> tl.random.normal([2, 3]).shape
        TensorShape([2, 3])
    """
    dtype = _float_dtype(dtype, "normal")
    inputs, attrs = _shape_args(shape)
    z = apply("RandomStandardNormal", *inputs, dtype=dtype, seed=None if seed is None else int(seed),
              **attrs)
    return _scaled(z, stddev, mean, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """Normal draws with everything beyond two standard deviations redrawn.

    Args: as `normal`.

    Example:
        >>> bool(tl.reduce_all(tl.abs(tl.random.truncated_normal([100])) <= 2.0))
        True
    """
    dtype = _float_dtype(dtype, "truncated_normal")
    inputs, attrs = _shape_args(shape)
    z = apply("TruncatedNormal", *inputs, dtype=dtype, seed=None if seed is None else int(seed),
              **attrs)
    return _scaled(z, stddev, mean, dtype)


def _categorical_infer(logits, num_samples, dtype, seed):
    if logits.shape.rank not in (2, None):
        raise ValueError(f"logits must be 2-D [batch_size, num_classes], got shape {logits.shape}")
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be floating-point, got {logits.dtype.name}")
    if dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"output dtype must be int32 or int64, got {dtype.name}")
    return spec([logits.shape[0], num_samples], dtype)


@defop("Multinomial", infer=_categorical_infer, stateful=True, differentiable=False)
def _multinomial(xp, logits, num_samples, dtype, seed):
    rng = _generator(xp, seed)
    batch, classes = logits.shape
    wide = logits.dtype if logits.dtype.itemsize >= 4 else _dt.float32.np
    # Gumbel-max: argmax(logits + Gumbel noise) is a draw from softmax(logits)
    u = rng.random((batch, num_samples, classes), dtype=wide)
    gumbel = -xp.log(-xp.log(xp.maximum(u, xp.finfo(wide).tiny)))
    return xp.argmax(logits.astype(wide)[:, None, :] + gumbel, axis=-1).astype(dtype.np)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws class indices from the categorical distributions softmax(logits[i]).

    Args:
        logits: float tensor [batch_size, num_classes] of unnormalized log-probabilities.
        num_samples: draws per row.
        dtype: int32 or int64 (default int64).

    Returns:
        A [batch_size, num_samples] integer tensor.

    Example:
        >>> tl.random.categorical(tl.math.log([[0.5, 0.5]]), 5).shape
        TensorShape([1, 5])
    """
    logits = convert_to_tensor(logits, dtype_hint=_dt.float32)
    return apply("Multinomial", logits, num_samples=int(num_samples),
                 dtype=_dt.int64 if dtype is None else _dt.as_dtype(dtype),
                 seed=None if seed is None else int(seed))


def _shuffle_infer(value, seed):
    if value.shape.rank == 0:
        raise ValueError("shuffle needs a tensor of rank >= 1, got a scalar")
    return spec(value.shape, value.dtype)


def standard_gamma(xp, rng, a):
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


def _gamma_infer(*inputs, shape, dtype, seed):
    alpha = inputs[-1]
    if not dtype.is_floating:
        raise TypeError(f"RandomGamma does not support dtype {dtype.name}")
    if shape is not None:
        return spec(tuple(shape) + tuple(alpha.shape.as_list() or ()), dtype)
    n = inputs[0].shape[0] if inputs[0].shape.rank == 1 else None
    return spec(None if n is None else [None] * n + alpha.shape.as_list(), dtype)


@defop("RandomGamma", infer=_gamma_infer, stateful=True, differentiable=False)
def _random_gamma(xp, *inputs, shape, dtype, seed):
    alpha = inputs[-1]
    dims = _dims(inputs[:-1], shape) + tuple(alpha.shape)
    a = xp.broadcast_to(alpha.astype(xp.float64), dims)
    return standard_gamma(xp, _generator(xp, seed), a).astype(dtype.np, copy=False)


def gamma_draws(shape, alpha, beta=None, dtype=_dt.float32, seed=None):
    """Gamma(alpha, rate beta) draws of shape `shape + alpha.shape` by the stateful
    `RandomGamma` op (TensorFlow's), for shapes known only when the op runs (`shape` a 1-D
    integer tensor: a batch size inside a traced step); `tl.random.gamma` is the stateless
    draw of static shapes.

    Example:
        >>> from trainlib.graph.ops.random import gamma_draws
        >>> gamma_draws(tl.constant([3]), 2.0).shape
        TensorShape([3])
    """
    dtype = _float_dtype(dtype, "gamma")
    inputs, attrs = _shape_args(shape)
    alpha = convert_to_tensor(alpha, dtype=dtype)
    g = apply("RandomGamma", *inputs, alpha, dtype=dtype, seed=None if seed is None else int(seed),
              **attrs)
    return g if beta is None else g / convert_to_tensor(beta, dtype=dtype)


@defop("RandomShuffle", infer=_shuffle_infer, stateful=True, differentiable=False)
def _random_shuffle(xp, value, seed):
    # argsort of uniform keys: a permutation on numpy and cupy generators alike
    return value[xp.argsort(_generator(xp, seed).random(value.shape[0]))]


def shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted.

    Example:
        >>> sorted(tl.random.shuffle(tl.range(4)).numpy().tolist())
        [0, 1, 2, 3]
    """
    return apply("RandomShuffle", convert_to_tensor(value), seed=None if seed is None else int(seed))
