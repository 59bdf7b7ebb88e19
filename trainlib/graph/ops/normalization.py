"""Layer normalization as one op: LayerNorm (x, gamma, beta) -> (y, mean, rstd).

Owns: the LayerNorm OpDef and `layer_norm`, the public function LayerNormalization's layer
calls. The kernel normalizes over the trailing `norm_dims` dims in seven passes over x and
two new arrays (the plain composition of means, squares and products takes twice that);
the gradient rule is the closed form (dbeta = sum(dy), dgamma = sum(dy * xhat),
dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma), written in ops from the
forward's own mean and rstd, so that it stays differentiable (second order) and is a third of
the ops autodiff makes of the composition.
Invariants: mean and rstd (1 / sqrt(variance + epsilon), both keepdims-shaped) are by-products
for the gradient (`layer_norm` never returns them); the rule propagates their gradients too,
which second-order gradients need; gamma and beta have x's trailing shape; floating dtypes only.
"""
from ..op import apply, convert_to_tensor, defop, spec
from . import array as _array
from . import math as _math

__all__ = ["layer_norm"]


def _layer_norm_infer(x, gamma, beta, epsilon, norm_dims):
    if not x.dtype.is_floating or gamma.dtype != x.dtype or beta.dtype != x.dtype:
        raise TypeError(f"LayerNorm needs floating x, gamma and beta of one dtype, got "
                        f"{x.dtype.name}, {gamma.dtype.name} and {beta.dtype.name}")
    if x.shape.rank is None:
        return spec(None, x.dtype), spec(None, x.dtype), spec(None, x.dtype)
    if not 0 < norm_dims <= x.shape.rank:
        raise ValueError(f"LayerNorm normalizes {norm_dims} trailing dims of an input of "
                         f"shape {x.shape}")
    trailing = x.shape[x.shape.rank - norm_dims:]
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t.shape.rank is not None and not t.shape.is_compatible_with(trailing):
            raise ValueError(f"LayerNorm {name} has shape {t.shape}; expected x's trailing "
                             f"shape {trailing}")
    stats = x.shape[:x.shape.rank - norm_dims].concatenate([1] * norm_dims)
    return spec(x.shape, x.dtype), spec(stats, x.dtype), spec(stats, x.dtype)


def _layer_norm_grad(op, dy, dmean=None, drstd=None):
    x, gamma, _ = op.inputs
    _, mean, rstd = op.outputs
    norm_dims, rank = op.attrs["norm_dims"], x.shape.rank
    norm = list(range(rank - norm_dims, rank))
    lead = list(range(rank - norm_dims))
    xhat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - _math.reduce_mean(g, axis=norm, keepdims=True)
                 - xhat * _math.reduce_mean(g * xhat, axis=norm, keepdims=True))
    if dmean is not None or drstd is not None:  # the statistics used downstream: second order
        count = _math.cast(_array.size(x) / _array.size(mean), x.dtype)
        through = _array.zeros_like(mean) if dmean is None else dmean
        if drstd is not None:  # d rstd / dx = -rstd**2 * xhat / count
            through = through - drstd * rstd * rstd * xhat
        dx = dx + through / count
    return dx, _math.reduce_sum(dy * xhat, axis=lead), _math.reduce_sum(dy, axis=lead)


@defop("LayerNorm", infer=_layer_norm_infer, grad=_layer_norm_grad, num_outputs=3)
def _layer_norm(xp, x, gamma, beta, epsilon, norm_dims):
    axes = tuple(range(x.ndim - norm_dims, x.ndim))
    mean = x.mean(axis=axes, keepdims=True, dtype=x.dtype)
    xc = x - mean
    y = xp.multiply(xc, xc)
    rstd = xp.sqrt(y.mean(axis=axes, keepdims=True, dtype=x.dtype) + x.dtype.type(epsilon))
    xp.reciprocal(rstd, out=rstd)
    xp.multiply(xc, rstd, out=y)
    xp.multiply(y, gamma, out=y)
    return xp.add(y, beta, out=y), mean, rstd


def layer_norm(x, gamma, beta, epsilon=1e-3, norm_dims=1):
    """`(x - mean) / sqrt(variance + epsilon) * gamma + beta`, the statistics over the trailing
    `norm_dims` dims of x, as one op.

    Args:
        x: a floating tensor of rank >= norm_dims.
        gamma, beta: tensors of x's dtype and trailing shape.
        epsilon: added to the variance.
        norm_dims: how many trailing dims each mean and variance spans.

    Returns:
        A tensor of x's shape and dtype.

    Raises:
        TypeError: on non-floating or mixed dtypes. ValueError: on gamma/beta shapes.

    Example:
        >>> layer_norm(tl.constant([[1.0, 3.0]]), tl.ones([2]), tl.zeros([2])).numpy()
        array([[-0.9995004,  0.9995004]], dtype=float32)
    """
    x = convert_to_tensor(x)
    gamma, beta = (convert_to_tensor(t, dtype=x.dtype) for t in (gamma, beta))
    return apply("LayerNorm", x, gamma, beta, epsilon=float(epsilon), norm_dims=int(norm_dims))[0]
