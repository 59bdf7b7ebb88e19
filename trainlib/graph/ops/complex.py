"""Complex numbers: building complex tensors from parts, taking them apart, conjugates, and the
general (non-symmetric) eigendecomposition whose results are complex.

Owns the OpDefs `Complex`, `Real`, `Imag`, `Conj` and `Eig`, and `complex`, `real`, `imag`,
`conj`, `eig`. Invariants: complex64 pairs with float32 parts and complex128 with float64 ones,
as TensorFlow (`complex` of two float64 tensors is complex128, `real` of complex128 is float64);
`real`, `imag` and `conj` of a real tensor give it back (zeros for `imag`), as TensorFlow;
gradients follow TensorFlow's conventions (the gradient of `real` is `complex(dy, 0)`, of
`complex(re, im)` is `(real(dy), imag(dy))`); `Eig` has no gradient.
"""
from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from . import array as _array
from . import math as _math

__all__ = ["complex", "real", "imag", "conj", "eig", "angle"]


_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}
_PART_OF = {c: f for f, c in _COMPLEX_OF.items()}


def _complex_infer(re, im):
    if re.dtype is not im.dtype or re.dtype not in _COMPLEX_OF:
        raise TypeError(f"Complex needs two float32 parts (complex64) or two float64 parts "
                        f"(complex128), got {re.dtype.name} and {im.dtype.name}")
    return spec(broadcast_shapes(re.shape, im.shape), _COMPLEX_OF[re.dtype])


@defop("Complex", infer=_complex_infer, elementwise=True,
       grad=lambda op, dy: (real(dy), imag(dy)))
def _complex(xp, re, im):
    return (re + 1j * im).astype(xp.complex128 if re.dtype == xp.float64 else xp.complex64)


def _part_infer(name):
    def infer(x):
        if not x.dtype.is_complex:
            raise TypeError(f"{name} needs a complex tensor, got {x.dtype.name}")
        return spec(x.shape, _PART_OF[x.dtype])
    return infer


@defop("Real", infer=_part_infer("Real"), elementwise=True,
       grad=lambda op, dy: (complex(dy, _array.zeros_like(dy)),))
def _real(xp, x):
    return xp.ascontiguousarray(xp.real(x))


@defop("Imag", infer=_part_infer("Imag"), elementwise=True,
       grad=lambda op, dy: (complex(_array.zeros_like(dy), dy),))
def _imag(xp, x):
    return xp.ascontiguousarray(xp.imag(x))


def _conj_infer(x):
    if not x.dtype.is_complex:
        raise TypeError(f"Conj needs a complex tensor, got {x.dtype.name}")
    return spec(x.shape, x.dtype)


@defop("Conj", infer=_conj_infer, elementwise=True, grad=lambda op, dy: (conj(dy),))
def _conj(xp, x):
    return xp.conj(x)


def _eig_infer(x):
    if not x.dtype.is_floating:
        raise TypeError(f"Eig needs a floating tensor, got {x.dtype.name}")
    out = _dt.complex128 if x.dtype is _dt.float64 else _dt.complex64
    if x.shape.rank is None:
        return spec(None, out), spec(None, out)
    return spec(list(x.shape)[:-1], out), spec(x.shape, out)


@defop("Eig", infer=_eig_infer, differentiable=False, num_outputs=2)
def _eig(xp, x):
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"eig needs square matrices, got shape {list(x.shape)}")
    w, v = xp.linalg.eig(x)
    out = xp.complex128 if x.dtype == xp.float64 else xp.complex64
    return w.astype(out), v.astype(out)


def complex(real, imag, name=None):  # noqa: A001 -- TensorFlow's name
    """A complex tensor from real and imaginary parts (`tf.complex`): complex64 from float32
    parts, complex128 from float64 ones.

    Example:
        >>> tl.graph.ops.complex.complex(1.0, 2.0).numpy()
        np.complex64(1+2j)
    """
    re = convert_to_tensor(real, dtype_hint=_dt.float32)
    im = convert_to_tensor(imag, dtype_hint=_dt.float32)
    _complex_infer(re, im)  # eager calls check too: the kernel would make any pair complex
    return apply("Complex", re, im)


def _numeric_tensor(x, name):
    x = convert_to_tensor(x)
    if not (x.dtype.is_complex or x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"{name} needs a numeric tensor, got {x.dtype.name}")
    return x


def real(input, name=None):  # noqa: A002 -- TensorFlow's name
    """The real part (float32 of complex64, float64 of complex128); a real tensor as it is."""
    x = _numeric_tensor(input, "real")
    return apply("Real", x) if x.dtype.is_complex else x


def imag(input, name=None):  # noqa: A002 -- TensorFlow's name
    """The imaginary part (float32 of complex64, float64 of complex128); zeros for a real one."""
    x = _numeric_tensor(input, "imag")
    return apply("Imag", x) if x.dtype.is_complex else _array.zeros_like(x)


def conj(x, name=None):
    """The complex conjugate; a real tensor as it is."""
    x = _numeric_tensor(x, "conj")
    return apply("Conj", x) if x.dtype.is_complex else x


def eig(x, name=None):
    """(eigenvalues, eigenvectors as columns) of square real matrices, complex64 for float32
    (complex128 for float64), in numpy's order; no gradient."""
    return apply("Eig", convert_to_tensor(x, dtype_hint=_dt.float32))


def angle(input, name=None):  # noqa: A002 -- TensorFlow's name
    """The argument atan2(imag, real) of each element; for real input pi where negative, else 0.

    Example:
        >>> tl.math.angle([-1.0, 2.0]).numpy()
        array([3.1415927, 0.       ], dtype=float32)
    """
    x = convert_to_tensor(input, dtype_hint=_dt.float32)
    if x.dtype.is_complex:
        return _math.atan2(imag(x), real(x))
    return _math.where(_math.less(x, 0), _array.ones_like(x) * 3.141592653589793,
                       _array.zeros_like(x))
