"""`tl.signal`: the FFT ops over the last axis (`FFT`, `IFFT`, `RFFT`, `IRFFT`), `frame`,
`hann_window`/`hamming_window` and `stft`, as TensorFlow's `tf.signal`.

Owns: the four FFT OpDefs (kernels on `xp.fft`, gradients in TensorFlow's convention for
complex values, dL/dRe + i dL/dIm, each rule one of these ops times a constant) and the
compositions built on them (`frame` is a gather, `stft` frames, windows and `rfft`s).
Invariants: complex tensors are complex64 (trainlib has no complex128), so the real
transforms take float32; `fft_length` pads or crops the input with array ops before the
transform, so the op itself always transforms the whole last axis.
"""
import numpy as np   # window and index constants computed on the host from static sizes

from .. import dtypes as _dt
from ..op import apply, convert_to_tensor, defop, spec
from ..tensor import is_tensor
from . import array as _array
from . import math as _math

__all__ = ["fft", "ifft", "rfft", "irfft", "frame", "hann_window", "hamming_window", "stft"]


def _last(x, name, dtype=None):
    if dtype is not None and x.dtype is not dtype:
        raise TypeError(f"{name} takes {dtype.name} tensors, got {x.dtype.name}" + (
            " (trainlib's complex tensors are complex64, so real transforms take float32)"
            if dtype is _dt.float32 else ""))
    if x.shape.rank is None:
        return None
    if x.shape.rank == 0:
        raise ValueError(f"{name} needs a tensor with at least one axis, got shape {x.shape}")
    return x.shape[-1]


def _complex_infer(name):
    def infer(x):
        if x.dtype is not _dt.complex64:
            raise TypeError(f"{name} takes complex64 tensors, got {x.dtype.name}")
        return spec(x.shape, _dt.complex64)
    return infer


def _rfft_infer(x):
    if x.dtype is not _dt.float32:
        raise TypeError(f"RFFT takes float32 tensors (its result is complex64), got "
                        f"{x.dtype.name}")
    if x.shape.rank is None:
        return spec(None, _dt.complex64)
    n = x.shape[-1]
    return spec(list(x.shape[:-1]) + [None if n is None else n // 2 + 1], _dt.complex64)


def _irfft_infer(x, n):
    if x.dtype is not _dt.complex64:
        raise TypeError(f"IRFFT takes complex64 tensors, got {x.dtype.name}")
    return spec(None if x.shape.rank is None else list(x.shape[:-1]) + [n], _dt.float32)


def _scalar(value, dtype):
    return convert_to_tensor(np.asarray(value, dtype.as_numpy_dtype))


def _length(x):
    n = x.shape[-1]
    return _math.cast(_array.shape(x)[-1], _dt.float32) if n is None else float(n)


@defop("FFT", infer=_complex_infer("FFT"),
       grad=lambda op, dy: (apply("IFFT", dy) * _math.cast(_length(dy), _dt.complex64),))
def _fft(xp, x):
    return xp.fft.fft(x, axis=-1).astype(x.dtype)


@defop("IFFT", infer=_complex_infer("IFFT"),
       grad=lambda op, dy: (apply("FFT", dy) / _math.cast(_length(dy), _dt.complex64),))
def _ifft(xp, x):
    return xp.fft.ifft(x, axis=-1).astype(x.dtype)


def _half_weights(n):
    """c_k of the real transforms: 1 for the terms without a mirror image (k = 0 and, for
    even n, k = n/2), else 2."""
    c = np.full(n // 2 + 1, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    return c


def _rfft_grad(op, dy):
    # dL/dx_j = sum_k Re(g_k e^{2 pi i k j / n}) = n * irfft(g / c)_j
    n = op.inputs[0].shape[-1] if op.inputs[0].shape.rank is not None else None
    if n is None:
        raise ValueError("the gradient of rfft needs the transformed length known while tracing")
    scaled = dy * _scalar(1.0 / _half_weights(n), _dt.complex64)
    return (apply("IRFFT", scaled, n=n) * float(n),)


def _irfft_grad(op, dy):
    # y_j = (1/n) sum_k c_k Re(X_k e^{2 pi i k j / n}): dL/dX_k = (c_k / n) rfft(g)_k
    n = op.attrs["n"]
    return (apply("RFFT", dy) * _scalar(_half_weights(n) / n, _dt.complex64),)


@defop("RFFT", infer=_rfft_infer, grad=_rfft_grad)
def _rfft(xp, x):
    return xp.fft.rfft(x, axis=-1).astype(np.complex64)


@defop("IRFFT", infer=_irfft_infer, grad=_irfft_grad)
def _irfft(xp, x, n):
    return xp.fft.irfft(x, n=n, axis=-1).astype(np.float32)


def _fit_last(x, length, name):
    """`x` with its last axis cropped or zero-padded to `length`."""
    n = _last(x, name)
    if n is None:
        raise ValueError(f"{name}: the last axis must be known while tracing to apply "
                         f"fft_length, got shape {x.shape}")
    if n > length:
        return _array.slice(x, [0] * x.shape.rank, [-1] * (x.shape.rank - 1) + [length])
    if n < length:
        return _array.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[0, length - n]])
    return x


def _fft_length(fft_length, name):
    if fft_length is None:
        return None
    value = np.asarray(fft_length.numpy() if hasattr(fft_length, "numpy") else fft_length)
    if value.shape not in ((), (1,)) or value.dtype.kind not in "iu" or \
            int(value.reshape(-1)[0]) < 1:
        raise ValueError(f"{name}: fft_length must be one positive int, got {fft_length!r}")
    return int(value.reshape(-1)[0])


def _complex_input(value):
    """A complex64 tensor; numbers and arrays (not tensors) convert to it, as TensorFlow."""
    if is_tensor(value):
        return value
    return convert_to_tensor(np.asarray(value).astype(np.complex64))


def fft(input, name=None):  # noqa: A002 -- TensorFlow's name
    """The discrete Fourier transform over the last axis (complex64).

    Example:
        >>> tl.signal.fft(tl.constant([1, 0, 0, 0], tl.complex64)).numpy()
        array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    x = _complex_input(input)
    _last(x, "fft", _dt.complex64)
    return apply("FFT", x)


def ifft(input, name=None):  # noqa: A002
    """The inverse discrete Fourier transform over the last axis (complex64)."""
    x = _complex_input(input)
    _last(x, "ifft", _dt.complex64)
    return apply("IFFT", x)


def rfft(input_tensor, fft_length=None, name=None):
    """The FFT of a real (float32) signal over its last axis: the fft_length // 2 + 1
    non-negative frequency terms (complex64).

    Args:
        input_tensor: float32 [..., n].
        fft_length: the transform's length (the signal is cropped or zero-padded to it).

    Example:
        >>> tl.signal.rfft(tl.constant([1., 2., 3., 4.])).numpy()
        array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    x = convert_to_tensor(input_tensor)
    _last(x, "rfft", _dt.float32)
    n = _fft_length(fft_length, "rfft")
    if n is not None:
        x = _fit_last(x, n, "rfft")
    return apply("RFFT", x)


def irfft(input_tensor, fft_length=None, name=None):
    """The real inverse of `rfft`: float32 [..., fft_length] (default 2 * (m - 1) for m terms).

    Example:
        >>> tl.signal.irfft(tl.signal.rfft(tl.constant([1., 2., 3., 4.]))).numpy()
        array([1., 2., 3., 4.], dtype=float32)
    """
    x = _complex_input(input_tensor)
    m = _last(x, "irfft", _dt.complex64)
    n = _fft_length(fft_length, "irfft")
    if n is None:
        if m is None:
            raise ValueError("irfft needs the last axis known while tracing, or fft_length")
        n = 2 * (m - 1)
    x = _fit_last(x, n // 2 + 1, "irfft")
    return apply("IRFFT", x, n=n)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Slides a window of `frame_length` by `frame_step` along `axis`:
    [..., n, ...] -> [..., frames, frame_length, ...].

    Args:
        pad_end: pad the end with `pad_value` so every sample is in a frame.

    Example:
        >>> tl.signal.frame(tl.range(5), 3, 1).numpy()
        array([[0, 1, 2],
               [1, 2, 3],
               [2, 3, 4]], dtype=int32)
    """
    x = convert_to_tensor(signal)
    rank = x.shape.rank
    if rank in (0, None):
        raise ValueError(f"frame needs a signal with at least one axis, got shape {x.shape}")
    axis = axis % rank
    n = x.shape[axis]
    length, step = int(frame_length), int(frame_step)
    if n is None:
        raise ValueError(f"frame: the framed axis must be known while tracing, got {x.shape}")
    if length < 1 or step < 1:
        raise ValueError(f"frame: frame_length and frame_step must be positive, got "
                         f"{frame_length} and {frame_step}")
    if pad_end:
        frames = -(-n // step)
        padded = max((frames - 1) * step + length, n)
        if padded > n:
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, padded - n]
            x = _array.pad(x, paddings, constant_values=pad_value)
    else:
        frames = max(0, 1 + (n - length) // step)
    index = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).astype(np.int32)
    return _array.gather(x, convert_to_tensor(index), axis=axis)


def _window(window_length, periodic, dtype, a, name):
    n = int(window_length)
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{name}: dtype must be floating, got {dtype.name}")
    if n == 1:
        return convert_to_tensor(np.ones(1, dtype.as_numpy_dtype))
    denominator = n - 1 + (1 if periodic and n % 2 == 0 else 0)   # TensorFlow's rule
    values = a - (1 - a) * np.cos(2 * np.pi * np.arange(n) / denominator)
    return convert_to_tensor(values.astype(dtype.as_numpy_dtype))


def hann_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """0.5 - 0.5 cos(2 pi k / N), N = length - 1, plus 1 for an even periodic window (as
    TensorFlow computes it)."""
    return _window(window_length, periodic, dtype, 0.5, "hann_window")


def hamming_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """0.54 - 0.46 cos(2 pi k / N), N as in `hann_window`."""
    return _window(window_length, periodic, dtype, 0.54, "hamming_window")


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """Short-time Fourier transform: frames of the float32 signals, windowed, each `rfft`d:
    complex64 [..., frames, fft_length // 2 + 1].

    Args:
        fft_length: default the smallest power of 2 at least `frame_length`.
        window_fn: `window_fn(frame_length, dtype=...)`, or None for no window.

    Example:
        >>> tl.signal.stft(tl.zeros([1000]), 256, 128).shape
        TensorShape([6, 129])
    """
    x = convert_to_tensor(signals)
    length = int(frame_length)
    if fft_length is None:
        fft_length = 1 << (length - 1).bit_length()
    frames = frame(x, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=x.dtype)
    return rfft(frames, [int(fft_length)])
