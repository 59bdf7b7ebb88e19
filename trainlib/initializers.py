"""`tl.initializers`: Keras 3's weight initializers (callables `init(shape, dtype)`).

Owns: the initializers by class and by Keras string name, and fan computation.
Invariant: an initializer returns an eager tensor; layers wrap the call in a
callable handed to `tl.Variable`, so the draw runs eagerly even while tracing.
"""
import math

from .graph import dtypes
from .graph.ops import array as array_ops
from .graph.ops import random as random_ops

__all__ = ["Initializer", "Orthogonal", "OrthogonalInitializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal",
           "TruncatedNormal", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal",
           "LecunUniform", "LecunNormal", "VarianceScaling", "Identity", "get", "serialize",
           "deserialize"]


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


class Initializer:
    """Base class: `init(shape, dtype=None)` returns a tensor; `get_config` round-trips."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


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
        return array_ops.fill(shape, array_ops.constant(self.value, dtype=dtype or dtypes.float32))

    def get_config(self):
        return {"value": self.value}


class RandomUniform(Initializer):
    """Uniform draws in [minval, maxval) (Keras defaults -0.05, 0.05)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None):
        return random_ops.uniform(shape, self.minval, self.maxval, dtype=dtype or dtypes.float32,
                                 seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(Initializer):
    """Normal draws (Keras defaults mean 0, stddev 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return random_ops.normal(shape, self.mean, self.stddev, dtype=dtype or dtypes.float32,
                                seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal draws re-drawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype=dtype or dtypes.float32,
                                          seed=self.seed)


class VarianceScaling(Initializer):
    """Keras's VarianceScaling: variance `scale / n` with n from `mode` (fan_in, fan_out, fan_avg).

    `distribution` is "truncated_normal", "untruncated_normal" or "uniform".
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        if scale <= 0:
            raise ValueError(f"VarianceScaling needs scale > 0, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling mode must be fan_in, fan_out or fan_avg, got {mode!r}")
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

    def get_config(self):
        return {"seed": self.seed, "scale": self.scale, "mode": self.mode,
                "distribution": self.distribution, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


def _variance_scaling(name, scale, mode, distribution):
    class Fixed(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale, mode, distribution, seed, input_axes, output_axes)

        def get_config(self):
            return {"seed": self.seed, "input_axes": self.input_axes,
                    "output_axes": self.output_axes}
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

    def get_config(self):
        return {"gain": self.gain}


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

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


_ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "uniform": RandomUniform,
    "random_uniform": RandomUniform, "normal": RandomNormal, "random_normal": RandomNormal,
    "truncated_normal": TruncatedNormal, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_uniform": HeUniform, "he_normal": HeNormal,
    "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal, "identity": Identity,
    "variance_scaling": VarianceScaling,
    "orthogonal": Orthogonal, "OrthogonalInitializer": Orthogonal,
}
_CLASSES = {cls.__name__: cls for cls in set(_ALIASES.values())}
OrthogonalInitializer = Orthogonal   # Keras's other name of it


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
