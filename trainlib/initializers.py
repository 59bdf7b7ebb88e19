"""`tl.initializers`: Keras 3's weight initializers (callables `init(shape, dtype)`).

Owns: the initializers by class and by Keras string name, and fan computation.
Invariant: an initializer returns an eager tensor; layers wrap the call in a
callable handed to `tl.Variable`, so the draw runs eagerly even while tracing.
"""
import math

import numpy as np

from .graph import dtypes
from .graph.ops import array as array_ops
from .graph.ops import random as random_ops
from .object_registry import Configurable

__all__ = ["Initializer", "Orthogonal", "OrthogonalInitializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal",
           "TruncatedNormal", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal",
           "LecunUniform", "LecunNormal", "VarianceScaling", "Identity", "IdentityInitializer",
           "STFT", "STFTInitializer", "get", "serialize", "deserialize",
           # Keras's snake_case names of the same classes
           "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity",
           "lecun_normal", "lecun_uniform", "ones", "orthogonal", "random_normal",
           "random_uniform", "stft", "truncated_normal", "variance_scaling", "zeros"]


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) as Keras computes them (conv kernels: receptive field x channels).

    With both `input_axes` and `output_axes`, the fans are the products of those dims.
    """
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer(Configurable):
    """Base class: `init(shape, dtype=None)` returns a tensor; `get_config` round-trips."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError


class Zeros(Initializer):
    """All zeros. Example: `tl.initializers.Zeros()((2, 3))`."""

    def __call__(self, shape, dtype=None):
        return array_ops.zeros(shape, dtype=dtype or dtypes.float32)


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None):
        return array_ops.ones(shape, dtype=dtype or dtypes.float32)


class Constant(Initializer):
    """Every element equal to `value`."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        value = array_ops.constant(self.value, dtype=dtype or dtypes.float32)
        if value.shape.rank == 0:
            return array_ops.fill(shape, value)
        shape = [int(d) for d in shape]
        if int(value.shape.num_elements()) == int(np.prod(shape)) and \
                value.shape.as_list() != shape:
            return array_ops.reshape(value, shape)   # TensorFlow's constant_initializer([...])
        return array_ops.broadcast_to(value, shape)


class RandomUniform(Initializer):
    """Uniform draws in [minval, maxval) (Keras defaults -0.05, 0.05)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None):
        return random_ops.uniform(shape, self.minval, self.maxval, dtype=dtype or dtypes.float32,
                                 seed=self.seed)


class RandomNormal(Initializer):
    """Normal draws (Keras defaults mean 0, stddev 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return random_ops.normal(shape, self.mean, self.stddev, dtype=dtype or dtypes.float32,
                                seed=self.seed)


class TruncatedNormal(RandomNormal):
    """Normal draws re-drawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype=dtype or dtypes.float32,
                                          seed=self.seed)


class VarianceScaling(Initializer):
    """Keras's VarianceScaling: variance `scale / n` with n from `mode` (fan_in, fan_out, fan_avg).

    `distribution` is "truncated_normal" (also "normal"), "untruncated_normal" or "uniform",
    case-insensitive, as Keras's.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        if scale <= 0:
            raise ValueError(f"VarianceScaling needs scale > 0, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling mode must be fan_in, fan_out or fan_avg, got {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":  # Keras's older name of it
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"unknown VarianceScaling distribution {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.input_axes, self.output_axes = input_axes, output_axes

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dtype = dtype or dtypes.float32
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return random_ops.uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        if self.distribution == "truncated_normal":
            # the stddev of a unit normal truncated at two stddevs
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=self.seed)
        return random_ops.normal(shape, 0.0, math.sqrt(scale), dtype=dtype, seed=self.seed)


def _variance_scaling(name, scale, mode, distribution):
    class Fixed(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale, mode, distribution, seed, input_axes, output_axes)
    Fixed.__name__ = Fixed.__qualname__ = name
    Fixed.__doc__ = f"Keras's {name}: VarianceScaling(scale={scale}, mode={mode!r}, " \
                    f"distribution={distribution!r})."
    return Fixed


GlorotUniform = _variance_scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _variance_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _variance_scaling("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _variance_scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _variance_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, got {tuple(shape)}")
        return array_ops.eye(shape[0], shape[1], dtype=dtype or dtypes.float32) * self.gain


class Orthogonal(Initializer):
    """A random orthogonal matrix (from the QR decomposition of normal draws) times `gain`.

    Shapes of rank > 2 are flattened to (prod(shape[:-1]), shape[-1]) first, as Keras's.
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None):
        import numpy as np  # noqa: PLC0415 -- a host-side factorization at weight creation
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError(f"OrthogonalInitializer needs a shape of rank >= 2, got {shape}")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        draws = random_ops.normal((max(rows, cols), min(rows, cols)), dtype=dtypes.float64,
                                    seed=self.seed).numpy()
        q, r = np.linalg.qr(draws)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return array_ops.constant((self.gain * q).reshape(shape), dtype=dtype or dtypes.float32)


class STFT(Initializer):
    """The real or imaginary part of the DFT basis, windowed, for `STFTSpectrogram`-style
    convolution kernels of shape (frame_length, 1, fft_length // 2 + 1), as Keras's.

    Args:
        side: "real" (cosines) or "imag" (sines).
        window: "hann", "hamming", "blackman", "bartlett", "boxcar", an array of
            frame_length values, or None.
        scaling: "density" (divide by the window's L2 norm), "spectrum" (its L1 norm) or None.
        periodic: use the periodic form of a named window.

    Example:
        >>> tl.initializers.STFT("real", None)((4, 1, 3)).numpy()[:, 0, 0]
        array([1., 1., 1., 1.], dtype=float32)
    """

    _WINDOWS = ("hann", "hamming", "blackman", "bartlett", "boxcar")

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        if isinstance(window, str) and window not in self._WINDOWS:
            raise ValueError(f"Unknown window {window!r}; expected one of {self._WINDOWS}, an "
                             f"array or None")
        if scaling not in (None, "density", "spectrum"):
            raise ValueError("Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def _window(self, n):
        if not isinstance(self.window, str):
            return np.asarray(self.window, dtype=np.float64)
        m = n + 1 if self.periodic else n
        t = np.arange(m) / max(m - 1, 1)
        w = {"hann": lambda: 0.5 - 0.5 * np.cos(2 * np.pi * t),
             "hamming": lambda: 0.54 - 0.46 * np.cos(2 * np.pi * t),
             "blackman": lambda: 0.42 - 0.5 * np.cos(2 * np.pi * t) + 0.08 * np.cos(4 * np.pi * t),
             "bartlett": lambda: 1 - np.abs(2 * t - 1),
             "boxcar": lambda: np.ones(m)}[self.window]()
        return w[:n]

    def __call__(self, shape, dtype=None):
        frame_length, _, bins = (int(d) for d in shape)
        fft_length = (bins - 1) * 2
        time = np.arange(frame_length, dtype=np.float64).reshape(frame_length, 1, 1)
        freq = np.arange(bins, dtype=np.float64).reshape(1, 1, bins) / fft_length
        angles = -2 * time * freq * np.pi
        kernel = np.cos(angles) if self.side == "real" else np.sin(angles)
        if self.window is not None:
            win = self._window(frame_length)
            if win.shape != (frame_length,):
                raise ValueError(f"The shape of `window` must be equal to [frame_length]. "
                                 f"Received: window shape={win.shape}")
            norm = {"density": np.sqrt(np.sum(win ** 2)), "spectrum": np.sum(np.abs(win)),
                    None: 1.0}[self.scaling]
            kernel = kernel * win.reshape(frame_length, 1, 1) / norm
        return array_ops.constant(kernel, dtype=dtype or dtypes.float32)

    def get_config(self):
        window = self.window if self.window is None or isinstance(self.window, str) else \
            list(np.asarray(self.window).tolist())
        return {"side": self.side, "window": window, "periodic": self.periodic,
                "scaling": self.scaling}


_ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "uniform": RandomUniform,
    "random_uniform": RandomUniform, "normal": RandomNormal, "random_normal": RandomNormal,
    "truncated_normal": TruncatedNormal, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_uniform": HeUniform, "he_normal": HeNormal,
    "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal, "identity": Identity,
    "variance_scaling": VarianceScaling,
    "orthogonal": Orthogonal, "OrthogonalInitializer": Orthogonal,
    "stft": STFT, "STFTInitializer": STFT, "IdentityInitializer": Identity,
}
_CLASSES = {cls.__name__: cls for cls in set(_ALIASES.values())}
OrthogonalInitializer = Orthogonal   # Keras's other names of them
IdentityInitializer = Identity
STFTInitializer = stft = STFT
constant, glorot_normal, glorot_uniform = Constant, GlorotNormal, GlorotUniform
he_normal, he_uniform, identity = HeNormal, HeUniform, Identity
lecun_normal, lecun_uniform, ones, orthogonal = LecunNormal, LecunUniform, Ones, Orthogonal
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling, zeros = VarianceScaling, Zeros


def get(identifier):
    """An initializer from a Keras name ("glorot_uniform"), a config dict, an instance or a callable.

    Raises:
        ValueError: for an unknown name.
    """
    if identifier is None or isinstance(identifier, Initializer) or \
            (callable(identifier) and not isinstance(identifier, type)):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _ALIASES.get(identifier) or _CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown initializer {identifier!r}; expected one of {sorted(_ALIASES)}")
        return cls()
    raise TypeError(f"Could not interpret initializer {identifier!r}")


def serialize(initializer):
    """An initializer as Keras 3 serializes it ({"module", "class_name", "config",
    "registered_name"}); None stays None."""
    if initializer is None:
        return None
    return {"module": "keras.initializers", "class_name": type(initializer).__name__,
            "config": initializer.get_config(), "registered_name": None}


def deserialize(config):
    """The initializer a `serialize` dict describes."""
    cls = _CLASSES.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown initializer class {config['class_name']!r}")
    return cls.from_config(config.get("config", {}))
