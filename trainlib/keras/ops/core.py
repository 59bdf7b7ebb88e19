"""`keras.ops`'s core and math names (Keras's `ops/core.py` and `ops/math.py`) over trainlib.

Owns: tensor conversion and dtype queries, control flow with Keras's signatures (`cond`,
`while_loop`, `fori_loop`, `scan`, `associative_scan`, `map`, `switch`, `vectorized_map`),
scatter and slice updates, segment reductions, `top_k`, `logsumexp`, the FFT family (over
(real, imag) pairs, as Keras's), `stft`/`istft` and `extract_sequences`.
Invariants: every function composes trainlib ops (no kernel here); loops whose length is
static are unrolled while tracing (so gradients follow from the body's ops), a dynamic
condition becomes a graph `While`; FFTs are products with DFT matrices in float64-exact
trigonometry (any length, differentiable).
"""
import re as _re

import numpy as _np

from ...graph import context as _context
from ...graph import dtypes as _dt
from ...graph.autodiff import custom_gradient  # noqa: F401 -- keras.ops.custom_gradient is TensorFlow's form
from ...graph.nest import flatten as _flatten_nest, pack_as as _pack_as
from ...graph.ops import array as _a
from ...graph.ops import complex as _cx
from ...graph.ops import control_flow as _cf
from ...graph.ops import functional_ops as _fops
from ...graph.ops import linalg as _la
from ...graph.ops import math as _m
from ...graph.ops.math import saturate_cast  # noqa: F401 -- keras.ops.saturate_cast is TensorFlow's
from ...graph.ops import nn as _nn
from ...graph.ops import numeric as _num
from ...graph.ops import segment as _seg
from ...graph.tensor import SymbolicTensor, Tensor, _TensorBase
from ...graph.tensor import is_tensor as _is_tensor
from ._convert import floating as _float, promote as _promote, spec_of as _spec_of, tensor as _t

__all__ = [
    "associative_scan", "cast", "cdist", "erfc", "logdet", "rearrange", "cond", "convert_to_numpy", "convert_to_tensor", "custom_gradient",
    "dtype", "erf", "erfinv", "extract_sequences", "fft", "fft2", "fori_loop", "ifft2", "in_top_k",
    "irfft", "is_tensor", "istft", "logsumexp", "map", "rfft", "rsqrt", "saturate_cast", "scan",
    "scatter", "scatter_update", "segment_max", "segment_min", "segment_prod", "segment_sum",
    "shape", "slice", "slice_update", "stft", "stop_gradient", "switch", "top_k", "unstack",
    "vectorized_map", "view_as_complex", "view_as_real", "while_loop",
]


# ------------------------------------------------------------------ tensors and dtypes

def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """`x` as a tensor (casting to `dtype` if given)."""
    if sparse or ragged:
        raise NotImplementedError("trainlib has no sparse or ragged tensors")
    return _t(x, dtype)


def convert_to_numpy(x):
    """`x` as a numpy array."""
    if isinstance(x, SymbolicTensor):
        raise ValueError("convert_to_numpy needs an eager tensor; inside tl.function values are "
                         "symbolic (return them from the function instead)")
    if isinstance(x, Tensor):
        return _np.asarray(x.numpy())
    if hasattr(x, "numpy"):
        return _np.asarray(x.numpy())
    return _np.asarray(x)


def is_tensor(x):
    """Whether `x` is a trainlib tensor (eager or symbolic)."""
    return _is_tensor(x)


def dtype(x):
    """The dtype name of `x` (`"float32"`), as Keras's standardized strings."""
    x = _spec_of(x)
    return x.dtype if isinstance(x.dtype, str) else x.dtype.name  # a KerasTensor's is a string


def cast(x, dtype):  # noqa: A002 -- Keras's name
    """`x` converted to `dtype`."""
    return _m.cast(_t(x), dtype)


def shape(x):
    """The shape of `x` as a tuple of ints; while tracing, unknown dims are int32 scalar tensors
    (as Keras on TensorFlow)."""
    x = _spec_of(x)
    static = tuple(x.shape)
    if all(d is not None for d in static) or not isinstance(x, _TensorBase):
        return static  # a KerasTensor's unknown dims stay None
    dynamic = _a.shape(x)
    return tuple(dynamic[i] if d is None else d for i, d in enumerate(static))


def stop_gradient(variable):
    """`variable` with no gradient flowing back through it."""
    return _a.stop_gradient(_t(variable))


def unstack(x, num=None, axis=0):
    """The slices of `x` along `axis`, as a list."""
    return list(_a.unstack(_t(x), num=num, axis=axis))


def slice(inputs, start_indices, shape):  # noqa: A001 -- Keras's name
    """The block of `inputs` starting at `start_indices` with size `shape`."""
    return _a.slice(_t(inputs), start_indices, shape)


def _block_indices(start_indices, block_shape):
    grids = _np.meshgrid(*[_np.arange(n) for n in block_shape], indexing="ij")
    offsets = _np.stack([g.reshape(-1) for g in grids], axis=-1).astype(_np.int32)
    start = _t(start_indices)
    start = _m.cast(start, _dt.int32) if start.dtype is not _dt.int32 else start
    return _a.constant(offsets) + _a.reshape(start, [1, -1])


def slice_update(inputs, start_indices, updates):
    """`inputs` with the block at `start_indices` replaced by `updates`."""
    x = _t(inputs)
    u = _t(updates, x.dtype)
    block = [int(d) for d in u.shape]
    idx = _block_indices(start_indices, block)
    return _a.tensor_scatter_nd_update(x, idx, _a.reshape(u, [-1]))


def scatter(indices, values, shape):
    """A zero tensor of `shape` with `values` added at `indices` (duplicates add up)."""
    return _a.scatter_nd(_t(indices), _t(values), list(shape))


def scatter_update(inputs, indices, updates):
    """`inputs` with the elements (or slices) at `indices` replaced by `updates`."""
    x = _t(inputs)
    return _a.tensor_scatter_nd_update(x, _t(indices), _t(updates, x.dtype))


# ------------------------------------------------------------------ control flow

def cond(pred, true_fn, false_fn):
    """`true_fn()` if `pred` else `false_fn()` (a graph `If` for tensor predicates)."""
    return _cf.cond(pred, true_fn, false_fn)


def while_loop(cond, body, loop_vars, maximum_iterations=None):  # noqa: A002 -- Keras's names
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; a single (non-tuple)
    loop variable is passed and returned as itself, as Keras's."""
    is_tuple = isinstance(loop_vars, (tuple, list))
    state = tuple(loop_vars) if is_tuple else (loop_vars,)

    def step(*args):
        out = body(*args)
        return tuple(out) if is_tuple else (out,)
    out = _cf.while_loop(cond, step, state, maximum_iterations=maximum_iterations)
    return tuple(out) if is_tuple else out[0]


def fori_loop(lower, upper, body_fun, init_val):
    """`val = body_fun(i, val)` for i in [lower, upper); returns the final val."""
    if isinstance(lower, int) and isinstance(upper, int) and not _tracing():
        val = init_val
        for i in range(lower, upper):
            val = body_fun(i, val)
        return val
    i0 = _t(lower, _dt.int32) if not isinstance(lower, _TensorBase) else lower
    leaves = _flatten_nest(init_val)

    def c(i, *vals):
        return _m.less(i, upper)

    def b(i, *vals):
        out = body_fun(i, _pack_as(init_val, list(vals)))
        return (i + 1,) + tuple(_t(v) for v in _flatten_nest(out))
    out = _cf.while_loop(c, b, (i0,) + tuple(_t(v) for v in leaves))
    return _pack_as(init_val, list(out[1:]))


def _tracing():
    return _context.state.graph is not None


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """`carry, y = f(carry, x)` over the leading axis of `xs`; returns (final carry, stacked ys).

    One `While` loop in graphs (tl's scan), however long `xs` is; `unroll` is accepted and
    ignored."""
    return _fops.scan_with_carry(f, init, xs, length=length, reverse=reverse)


def associative_scan(f, elems, reverse=False, axis=0):
    """Inclusive scan of the associative `f` along `axis` (f sees slices that keep the axis)."""
    leaves = [_t(v) for v in _flatten_nest(elems)]
    n = leaves[0].shape[axis]
    if n is None:
        raise ValueError("associative_scan needs a static size along the scan axis")
    rank = leaves[0].shape.rank

    def part(i):
        key = tuple([_np.s_[:]] * (axis % rank) + [_np.s_[i:i + 1]])
        return _pack_as(elems, [_a.getitem(v, key) for v in leaves])
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    acc = part(order[0])
    outs = [acc]
    for i in order[1:]:
        acc = f(acc, part(i)) if not reverse else f(part(i), acc)
        outs.append(acc)
    if reverse:
        outs.reverse()
    joined = [_a.concat([_t(v) for v in parts], axis)
              for parts in zip(*[_flatten_nest(o) for o in outs])]
    return _pack_as(elems, joined)


def map(f, xs):  # noqa: A001 -- Keras's name
    """`f` applied to each slice of `xs` along the leading axis, results stacked (one `While`
    loop in graphs: tl's map, the output signature found by tracing `f` once)."""
    return _fops.vectorized_map(f, xs)


def vectorized_map(function, elements):
    """`function` applied to each slice of `elements` along the leading axis, stacked."""
    return _fops.vectorized_map(function, elements)


def switch(index, branches, *operands):
    """`branches[index](*operands)`, index clamped to the valid range (a graph `If` chain
    for tensor indices)."""
    n = len(branches)
    if not isinstance(index, _TensorBase):
        return branches[min(max(int(index), 0), n - 1)](*operands)
    if isinstance(index, Tensor):
        return branches[min(max(int(index), 0), n - 1)](*operands)
    i = _m.minimum(_m.maximum(_m.cast(index, _dt.int32), 0), n - 1)

    def pick(k):
        if k == n - 1:
            return branches[k](*operands)
        return _cf.cond(_m.equal(i, k), lambda: branches[k](*operands), lambda: pick(k + 1))
    return pick(0)


# ------------------------------------------------------------------ math

def _via_float32(fn, x):
    """fn(x), computed in float32 for float16 x (its special functions are float32-accurate)."""
    x = _float(x)
    if x.dtype is _dt.float16:
        return _m.cast(fn(_m.cast(x, _dt.float32)), _dt.float16)
    return fn(x)


def erf(x):
    """The Gauss error function, elementwise."""
    return _via_float32(_nn.erf, x)


def erfc(x):
    """The complementary error function 1 - erf(x), elementwise."""
    return _via_float32(_num.erfc, x)


def erfinv(x):
    """The inverse error function, elementwise."""
    return _via_float32(_num.erfinv, x)


def logdet(x):
    """log(det(x)) of symmetric positive-definite matrices."""
    return _la.logdet(_float(x))


def cdist(x, y):
    """Euclidean distances between the rows of x [..., P, M] and y [..., R, M]: [..., P, R]."""
    x, y = _promote(x, y, floating=True)
    if x.shape.rank < 2 or y.shape.rank < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = _a.expand_dims(x, -2) - _a.expand_dims(y, -3)
    return _m.sqrt(_m.reduce_sum(_m.square(diff), -1))


def rearrange(tensor, pattern, **axes_lengths):
    """Axes rearranged by an einops pattern (`"b h w c -> b (h w) c"`; grouped axes split with
    `axes_lengths`), as reshape, transpose, reshape."""
    x = _t(tensor)
    left, right = _re.split(r"\s*->\s*", pattern)
    in_axes = _re.findall(r"\w+|\(.*?\)", left)
    out_axes = _re.findall(r"\w+|\(.*?\)", right)
    sizes = dict(axes_lengths)
    flat_in = []
    for axis, dim in zip(in_axes, x.shape):
        if axis.startswith("("):
            inner = axis[1:-1].split()
            known = 1
            for a in inner:
                known *= sizes.get(a, 1)
            for a in inner:
                if a not in sizes:
                    sizes[a] = dim // known
            flat_in.extend(inner)
        else:
            sizes[axis] = dim
            flat_in.append(axis)
    groups = [a[1:-1].split() if a.startswith("(") else [a] for a in out_axes]
    flat_out = [a for g in groups for a in g]
    x = _a.reshape(x, [sizes[a] for a in flat_in])
    x = _a.transpose(x, [flat_in.index(a) for a in flat_out])
    out_shape = []
    for g in groups:
        n = 1
        for a in g:
            n *= sizes[a]
        out_shape.append(n)
    return _a.reshape(x, out_shape)


def view_as_complex(x):
    """The complex64 tensor whose real and imaginary parts are x[..., 0] and x[..., 1]."""
    x = _float(x)
    if x.shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real and imaginary). Received "
                         f"shape: {x.shape}")
    return _cx.complex(_m.cast(x[..., 0], _dt.float32), _m.cast(x[..., 1], _dt.float32))


def view_as_real(x):
    """The complex x as real numbers: a new last axis of (real, imag)."""
    x = _t(x)
    if not x.dtype.is_complex:
        raise ValueError(f"view_as_real needs a complex tensor, got {x.dtype.name}")
    return _a.stack([_cx.real(x), _cx.imag(x)], -1)


def rsqrt(x):
    """Elementwise `1 / sqrt(x)`."""
    return _m.rsqrt(_float(x))


def logsumexp(x, axis=None, keepdims=False):
    """`log(sum(exp(x)))` over `axis`, computed stably."""
    x = _float(x)
    return _m.reduce_logsumexp(x, axis, keepdims)


def top_k(x, k, sorted=True):  # noqa: A002 -- Keras's name
    """The k largest values along the last axis and their int32 indices."""
    out = _m.top_k(_t(x), k, sorted=sorted)
    return out[0], out[1]


def in_top_k(targets, predictions, k):
    """For each row, whether the target class is among the k highest predictions."""
    return _m.in_top_k(_t(targets), _float(predictions), k)


def _segment(fn, data, segment_ids, num_segments):
    data = _t(data)
    ids = _t(segment_ids)
    if ids.dtype not in (_dt.int32, _dt.int64):
        ids = _m.cast(ids, _dt.int32)
    if num_segments is None:
        if isinstance(ids, SymbolicTensor):
            raise ValueError("segment ops need num_segments while tracing")
        num_segments = int(_np.max(ids.numpy())) + 1 if ids.numpy().size else 0
    return fn(data, ids, num_segments)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Sums of the rows of `data` per segment id (num_segments rows; ids may be unsorted)."""
    return _segment(_m.unsorted_segment_sum, data, segment_ids, num_segments)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Maxima of the rows of `data` per segment id (the dtype's lowest value for empty ones)."""
    return _segment(_m.unsorted_segment_max, data, segment_ids, num_segments)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Minima of the rows of `data` per segment id (the dtype's highest value for empty ones)."""
    return _segment(_m.unsorted_segment_min, data, segment_ids, num_segments)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Products of the rows of `data` per segment id (1 for empty ones)."""
    return _segment(_seg.unsorted_segment_prod, data, segment_ids, num_segments)


# ------------------------------------------------------------------ FFT over (real, imag) pairs

def _dft(n, m, inverse, dtype):
    """cos and sin matrices [n, m] of exp(-+2 pi i j k / n), exact phases (j k mod n)."""
    jk = _np.outer(_np.arange(n), _np.arange(m)) % n
    angle = 2 * _np.pi * jk / n
    return (_a.constant(_np.cos(angle).astype(dtype.np)),
            _a.constant((_np.sin(angle) * (1 if inverse else -1)).astype(dtype.np)))


def _complex_pair(x, op_name):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"{op_name} needs a tuple (real, imag) of two tensors, got {type(x).__name__}")
    re, im = _promote(x[0], x[1], floating=True)
    if tuple(re.shape) != tuple(im.shape):
        raise ValueError(f"{op_name}: real and imag must have one shape, got {re.shape} and {im.shape}")
    return re, im


def _dft_last(re, im, inverse=False, n_out=None):
    n = re.shape[-1]
    c, s = _dft(n, n if n_out is None else n_out, inverse, re.dtype)
    out_re = _m.tensordot(re, c, 1) - _m.tensordot(im, s, 1)
    out_im = _m.tensordot(re, s, 1) + _m.tensordot(im, c, 1)
    if inverse:
        out_re, out_im = out_re / _m.cast(n, re.dtype), out_im / _m.cast(n, re.dtype)
    return out_re, out_im


def fft(x):
    """The discrete Fourier transform along the last axis of x = (real, imag)."""
    return _dft_last(*_complex_pair(x, "fft"))


def _swap_last_two(t):
    r = t.shape.rank
    return _a.transpose(t, list(range(r - 2)) + [r - 1, r - 2])


def _two_d(x, op_name, inverse):
    re, im = _complex_pair(x, op_name)
    re, im = _dft_last(re, im, inverse)
    re, im = _dft_last(_swap_last_two(re), _swap_last_two(im), inverse)
    return _swap_last_two(re), _swap_last_two(im)


def fft2(x):
    """The 2-D discrete Fourier transform over the last two axes of x = (real, imag)."""
    return _two_d(x, "fft2", inverse=False)


def ifft2(x):
    """The 2-D inverse discrete Fourier transform over the last two axes of x = (real, imag)."""
    return _two_d(x, "ifft2", inverse=True)


def _fit_last(x, n):
    length = x.shape[-1]
    if length == n:
        return x
    if length > n:
        return x[..., :n]
    return _a.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[0, n - length]])


def rfft(x, fft_length=None):
    """The FFT of the real x along its last axis: (real, imag) of the fft_length // 2 + 1 terms."""
    x = _float(x)
    n = x.shape[-1] if fft_length is None else fft_length
    x = _fit_last(x, n)
    c, s = _dft(n, n // 2 + 1, False, x.dtype)
    return _m.tensordot(x, c, 1), _m.tensordot(x, s, 1)


def irfft(x, fft_length=None):
    """The real inverse of `rfft` for x = (real, imag) with fft_length outputs."""
    re, im = _complex_pair(x, "irfft")
    m = re.shape[-1]
    n = 2 * (m - 1) if fft_length is None else fft_length
    half = n // 2 + 1
    re, im = _fit_last(re, half), _fit_last(im, half)
    # Hermitian weights: the DC term (and Nyquist for even n) once, the others twice
    w = _np.full(half, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    jk = _np.outer(_np.arange(half), _np.arange(n)) % n
    angle = 2 * _np.pi * jk / n
    c = _a.constant((w[:, None] * _np.cos(angle) / n).astype(re.dtype.np))
    s = _a.constant((w[:, None] * _np.sin(angle) / n).astype(re.dtype.np))
    return _m.tensordot(re, c, 1) - _m.tensordot(im, s, 1)


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of `sequence_length` every `sequence_stride` along the last axis (new axis -2)."""
    x = _t(x)
    n = x.shape[-1]
    if n is None:
        raise ValueError("extract_sequences needs a static last dim")
    count = max(0, 1 + (n - sequence_length) // sequence_stride)
    idx = (_np.arange(count)[:, None] * sequence_stride + _np.arange(sequence_length)[None, :])
    return _a.gather(x, _a.constant(idx.astype(_np.int32)), axis=x.shape.rank - 1)


def _window_array(window, length):
    """The window as a float64 numpy array (periodic Hann/Hamming, as TensorFlow's), or None."""
    if window is None:
        return None
    if isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError(f"window must be 'hann', 'hamming', a tensor or None, got {window!r}")
        a = 0.5 if window == "hann" else 0.54
        return a - (1 - a) * _np.cos(2 * _np.pi * _np.arange(length) / length)
    return None


def _window(window, length, dtype):
    if window is None:
        return None
    w = _window_array(window, length)
    return _a.constant(w.astype(dtype.np)) if w is not None else _t(window, dtype)


def _padded_window(window, sequence_length, fft_length, dtype):
    """The window zero-padded (centred) to fft_length, as a numpy array, or None."""
    if window is None:
        return None
    w = _window_array(window, sequence_length)
    if w is None:
        w = convert_to_numpy(window).astype(_np.float64)
    if w.shape != (sequence_length,):
        raise ValueError(f"The shape of `window` must be equal to [sequence_length]. Received: "
                         f"window shape={w.shape}")
    left = (fft_length - sequence_length) // 2
    return _np.pad(w, (left, fft_length - sequence_length - left)).astype(dtype.np)


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """The short-time Fourier transform of real x along its last axis: (real, imag) of
    [..., frames, fft_length // 2 + 1] (frames of fft_length, the window centred in them)."""
    x = _float(x)
    if fft_length < sequence_length:
        raise ValueError(f"`fft_length` must equal or larger than `sequence_length`. Received: "
                         f"sequence_length={sequence_length}, fft_length={fft_length}")
    if center:
        pad = fft_length // 2
        x = _a.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[pad, pad]], mode="REFLECT")
    frames = extract_sequences(x, fft_length, sequence_stride)
    w = _padded_window(window, sequence_length, fft_length, x.dtype)
    if w is not None:
        frames = frames * _a.constant(w)
    return rfft(frames, fft_length)


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """The inverse of `stft` (TensorFlow's inverse_stft: overlap-add of the inverse FFTs, each
    frame weighted by the window over the overlapping squared windows); x = (real, imag)."""
    re, im = _complex_pair(x, "istft")
    frames = irfft((re, im), fft_length)  # [..., num_frames, fft_length]
    w = _padded_window(window, sequence_length, fft_length, frames.dtype)
    step = sequence_stride
    if w is not None:
        overlaps = -(-fft_length // step)
        sq = _np.pad(w.astype(_np.float64) ** 2, (0, overlaps * step - fft_length))
        denom = _np.tile(sq.reshape(overlaps, step).sum(0, keepdims=True), (overlaps, 1)).reshape(-1)
        frames = frames * _a.constant((w / denom[:fft_length]).astype(frames.dtype.np))
    num = frames.shape[-2]
    total = (num - 1) * step + fft_length
    pos = (_np.arange(num)[:, None] * step + _np.arange(fft_length)[None, :])
    lead = frames.shape.rank - 2
    flat = _a.reshape(frames, _a.concat([_a.shape(frames)[:-2], [-1]], 0))
    moved = _a.transpose(flat, [lead] + list(range(lead))) if lead else flat
    summed = _m.unsorted_segment_sum(moved, _a.constant(pos.reshape(-1).astype(_np.int32)), total)
    out = _a.transpose(summed, list(range(1, lead + 1)) + [0]) if lead else summed
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = total - fft_length // 2
    else:
        end = total
    out = out[..., start:min(end, total)]
    if length is not None and out.shape[-1] is not None and out.shape[-1] < length:
        out = _a.pad(out, [[0, 0]] * (out.shape.rank - 1) + [[0, length - out.shape[-1]]])
    return out