"""tl.signal against numpy.fft and loops: fft/ifft/rfft/irfft (with fft_length), frame,
windows and stft; eager == traced; gradients of the four FFT ops against finite differences
in TensorFlow's convention for complex values (dL/dRe + i dL/dIm)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 8)).astype(np.float32)
C = (rng.normal(size=(3, 8)) + 1j * rng.normal(size=(3, 8))).astype(np.complex64)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 9), fft_length=st.one_of(st.none(), st.integers(1, 10)))
def test_transforms_against_numpy(n, fft_length):
    x, c = X[:, :n], C[:, :n]
    np.testing.assert_allclose(tl.signal.fft(c).numpy(), np.fft.fft(c), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tl.signal.ifft(c).numpy(), np.fft.ifft(c), rtol=1e-5, atol=1e-5)
    length = None if fft_length is None else [fft_length]
    got = tl.signal.rfft(x, length)
    assert got.dtype is tl.complex64
    np.testing.assert_allclose(got.numpy(), np.fft.rfft(x, fft_length), rtol=1e-5, atol=1e-5)
    if n > 1 or fft_length:
        back = tl.signal.irfft(c[:, :n // 2 + 1], length)
        assert back.dtype is tl.float32
        m = n // 2 + 1
        want_n = fft_length if fft_length else 2 * (m - 1)
        want = np.fft.irfft(c[:, :m][:, :want_n // 2 + 1], want_n)
        np.testing.assert_allclose(back.numpy(), want, rtol=1e-5, atol=1e-5)


def test_frame_windows_stft_against_loops():
    signal = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(tl.signal.frame(signal, 4, 3).numpy(),
                                  [signal[i:i + 4] for i in (0, 3, 6)])
    padded = tl.signal.frame(signal, 4, 3, pad_end=True, pad_value=-1).numpy()
    assert padded.shape == (4, 4) and list(padded[-1]) == [9, -1, -1, -1]
    np.testing.assert_array_equal(tl.signal.frame(X, 2, 2, axis=0).numpy().shape, (1, 2, 8))
    np.testing.assert_allclose(tl.signal.hann_window(6).numpy(), np.hanning(7)[:6], atol=1e-7)
    np.testing.assert_allclose(tl.signal.hann_window(5).numpy(), np.hanning(5), atol=1e-7)
    np.testing.assert_allclose(tl.signal.hann_window(5, periodic=False).numpy(), np.hanning(5),
                               atol=1e-7)
    np.testing.assert_allclose(tl.signal.hamming_window(6, periodic=False).numpy(),
                               np.hamming(6), atol=1e-6)
    spec = tl.signal.stft(X.reshape(-1), 6, 4)
    frames = [X.reshape(-1)[i:i + 6] * np.hanning(7)[:6] for i in range(0, 24 - 6 + 1, 4)]
    assert spec.shape == (5, 5)
    np.testing.assert_allclose(spec.numpy(), np.fft.rfft(frames, 8), rtol=1e-4, atol=1e-5)


def test_traced_equals_eager_and_errors():
    f = tl.function(lambda x: tl.signal.irfft(tl.signal.rfft(x) * 2.0j))
    np.testing.assert_allclose(f(X).numpy(), tl.signal.irfft(tl.signal.rfft(X) * 2.0j).numpy())
    with pytest.raises(TypeError, match="float32"):
        tl.signal.rfft(X.astype(np.float64))
    with pytest.raises(TypeError, match="complex64"):
        tl.signal.fft(tl.constant(X))
    with pytest.raises(ValueError, match="fft_length"):
        tl.signal.rfft(X, [0])


def _complex_fd(fn, z, weights, eps=1e-2):
    """dL/dRe + i dL/dIm of L = sum(fn(z) * weights) by central differences."""
    def loss(v):
        return float(np.sum(fn(tl.constant(v)).numpy() * weights))
    grad = np.zeros(z.shape, np.complex128)
    for idx in np.ndindex(z.shape):
        for part, step in ((1.0, eps), (1j, eps * 1j)) if np.iscomplexobj(z) else ((1.0, eps),):
            plus, minus = z.copy(), z.copy()
            plus[idx] += step
            minus[idx] -= step
            grad[idx] += part * (loss(plus) - loss(minus)) / (2 * eps)
    return grad if np.iscomplexobj(z) else grad.real


OPS = {   # each FFT op inside a real-valued function, so the loss is real
    "FFT": (lambda z: tl.signal.irfft(tl.signal.fft(z)[:, :5]), C),
    "IFFT": (lambda z: tl.signal.irfft(tl.signal.ifft(z)[:, 1:6]), C),
    "RFFT": (lambda x: tl.signal.irfft(tl.signal.rfft(x) * np.arange(5).astype(np.complex64)), X),
    "IRFFT": (lambda z: tl.signal.irfft(z, [7]), C[:, :4]),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_fft_op_gradients_against_finite_differences(op):
    fn, z = OPS[op]
    weights = np.random.default_rng(1).uniform(0.5, 1.5, tuple(fn(tl.constant(z)).shape))
    zt = tl.constant(z)
    with tl.GradientTape() as tape:
        tape.watch(zt)
        total = tl.reduce_sum(fn(zt) * weights.astype(np.float32))
    got = tape.gradient(total, zt).numpy()
    np.testing.assert_allclose(got, _complex_fd(fn, z, weights), rtol=1e-3, atol=1e-3)
