"""`tl.activations`: activation functions by Keras name ("relu", "softmax", ...).

Owns: the name -> function table and `get`/`serialize`. Each activation is a
thin call of public ops, so it traces and differentiates like any op.
"""
import trainlib as tl

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "linear", "elu", "selu",
           "softplus", "swish", "silu", "exponential", "leaky_relu", "get", "serialize"]


def relu(x):
    """max(x, 0)."""
    return tl.nn.relu(x)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return tl.sigmoid(x)


def tanh(x):
    """Hyperbolic tangent."""
    return tl.tanh(x)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`."""
    return tl.nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """log(softmax(x)) along `axis`, computed stably."""
    return tl.nn.log_softmax(x, axis=axis)


def gelu(x, approximate=False):
    """Gaussian error linear unit (Keras default: the exact erf form)."""
    return tl.nn.gelu(x, approximate=approximate)


def linear(x):
    """The identity."""
    return x


def elu(x, alpha=1.0):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    return tl.where(x > 0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))


def selu(x):
    """Scaled ELU with Keras's constants."""
    alpha, scale = 1.67326324, 1.05070098
    return scale * elu(x, alpha)


def softplus(x):
    """log(1 + exp(x)), computed stably."""
    return tl.maximum(x, 0.0) + tl.math.log1p(tl.exp(-tl.abs(x)))


def swish(x):
    """x * sigmoid(x)."""
    return x * tl.sigmoid(x)


silu = swish


def exponential(x):
    """exp(x)."""
    return tl.exp(x)


def leaky_relu(x, negative_slope=0.2):
    """x if x > 0 else negative_slope * x."""
    return tl.maximum(x, x * negative_slope)


_BY_NAME = {f.__name__: f for f in (relu, sigmoid, tanh, softmax, log_softmax, gelu, linear, elu,
                                     selu, softplus, swish, exponential, leaky_relu)}
_BY_NAME["silu"] = swish


def get(identifier):
    """The activation for a name, None (linear) or a callable.

    Raises:
        ValueError: for an unknown name.
    """
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation {identifier!r}; expected one of {sorted(_BY_NAME)}")
        return fn
    raise TypeError(f"Could not interpret activation {identifier!r}")


def serialize(activation):
    """The Keras name of an activation (its function name for custom callables)."""
    return getattr(activation, "__name__", str(activation))
