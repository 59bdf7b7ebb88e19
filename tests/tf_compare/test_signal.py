"""tl.signal against tf.signal: fft, ifft, rfft, irfft (with fft_length), frame, windows and
stft (values, dtypes, shapes, eagerly and in a function) and the FFT ops' gradients.
(trainlib has no complex128: float64 signals are left out.)"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check, in_function  # noqa: E402

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 8)).astype("float32")
C = (rng.normal(size=(3, 8)) + 1j * rng.normal(size=(3, 8))).astype("complex64")
S = rng.normal(size=(50,)).astype("float32")

PROGRAMS = {
 "fft": lambda lib: lib.signal.fft(C),
 "ifft": lambda lib: lib.signal.ifft(C[:, :5]),
 "rfft": lambda lib: [lib.signal.rfft(X), lib.signal.rfft(X[:, :7])],
 "rfft fft_length": lambda lib: [lib.signal.rfft(X, [n]) for n in (4, 8, 11)],
 "irfft": lambda lib: [lib.signal.irfft(C[:, :5]), lib.signal.irfft(C[:, :4], [7])],
 "irfft fft_length pads": lambda lib: lib.signal.irfft(C[:, :3], [10]),
 "round trip": lambda lib: lib.signal.irfft(lib.signal.rfft(X)),
 "frame": lambda lib: [lib.signal.frame(S, 8, 5), lib.signal.frame(X, 3, 2, axis=-1),
                       lib.signal.frame(X, 2, 1, axis=0)],
 "frame pad_end": lambda lib: lib.signal.frame(S, 8, 5, pad_end=True, pad_value=2.0),
 "hann_window": lambda lib: [lib.signal.hann_window(n, periodic=p) for n in (1, 2, 7, 8)
                             for p in (True, False)],
 "hamming_window": lambda lib: [lib.signal.hamming_window(7), lib.signal.hamming_window(
     6, periodic=False, dtype=lib.float64)],
 "stft": lambda lib: lib.signal.stft(S, 16, 8),
 "stft options": lambda lib: lib.signal.stft(lib.constant(S[None]), 10, 3, fft_length=16,
                                             window_fn=None, pad_end=True),
 "fft of real": lambda lib: lib.signal.fft(X),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_functions(name, graph):
    program = PROGRAMS[name]
    check(in_function(program, graph), rtol=1e-5, atol=1e-5)


W5 = np.arange(5).astype("complex64")
LOSSES = {   # real-valued functions through each FFT op
 "fft": (lambda lib, z: lib.signal.irfft(lib.signal.fft(z)[:, :5] * W5), C),
 "ifft": (lambda lib, z: lib.signal.irfft(lib.signal.ifft(z)[:, 1:6]), C),
 "rfft": (lambda lib, z: lib.signal.irfft(lib.signal.rfft(z) * W5, [8]), X),
 "irfft": (lambda lib, z: lib.signal.irfft(z, [9]), C[:, :5]),
 "stft": (lambda lib, z: lib.signal.irfft(lib.signal.stft(z, 4, 2)), S),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients(name):
    fn, value = LOSSES[name]

    def program(lib):
        z = lib.constant(value)
        with lib.GradientTape() as tape:
            tape.watch(z)
            loss = lib.reduce_sum(fn(lib, z) ** 2 * 1.5)
        return tape.gradient(loss, z)
    check(program, rtol=1e-4, atol=1e-4)
