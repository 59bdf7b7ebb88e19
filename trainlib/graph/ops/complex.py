"""Complex numbers: building complex64 tensors from parts, taking them apart, conjugates, and the
general (non-symmetric) eigendecomposition whose results are complex.

Owns the OpDefs `Complex`, `Real`, `Imag`, `Conj` and `Eig`, and `complex`, `real`, `imag`,
`conj`, `eig`. Invariants: trainlib's only complex dtype is complex64, built from float32
parts (float64 parts are refused: there is no complex128); gradients follow TensorFlow's
conventions (the gradient of `real` is `complex(dy, 0)`, of `complex(re, im)` is
`(real(dy), imag(dy))`); `Eig` has no gradient.
"""
from .. import dtypes as _dt
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from . import array as _array
from .common import dtype_infer

__all__ = ["complex", "real", "imag", "conj", "eig"]


def _complex_infer(re, im):
    if re.dtype is not _dt.float32 or im.dtype is not _dt.float32:
        raise TypeError(f"Complex needs float32 parts (trainlib's complex dtype is complex64), got "
                        f"{re.dtype.name} and {im.dtype.name}")
    return spec(broadcast_shapes(re.shape, im.shape), _dt.complex64)


@defop("Complex", infer=_complex_infer, elementwise=True,
       grad=lambda op, dy: (real(dy), imag(dy)))
def _complex(xp, re, im):
    return (re + 1j * im).astype(xp.complex64)


def _part_infer(name):
    return dtype_infer(name, lambda dtype: dtype.is_complex, "a complex", _dt.float32)


@defop("Real", infer=_part_infer("Real"), elementwise=True,
       grad=lambda op, dy: (complex(dy, _array.zeros_like(dy)),))
def _real(xp, x):
    return xp.real(x).astype(xp.float32)


@defop("Imag", infer=_part_infer("Imag"), elementwise=True,
       grad=lambda op, dy: (complex(_array.zeros_like(dy), dy),))
def _imag(xp, x):
    return xp.imag(x).astype(xp.float32)


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
    if x.shape.rank is None:
        return spec(None, _dt.complex64), spec(None, _dt.complex64)
    return spec(list(x.shape)[:-1], _dt.complex64), spec(x.shape, _dt.complex64)


@defop("Eig", infer=_eig_infer, differentiable=False, num_outputs=2)
def _eig(xp, x):
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"eig needs square matrices, got shape {list(x.shape)}")
    w, v = xp.linalg.eig(x)
    return w.astype(xp.complex64), v.astype(xp.complex64)


def complex(real, imag, name=None):  # noqa: A001 -- TensorFlow's name
    """A complex64 tensor from float32 real and imaginary parts (`tf.complex`).

    Example:
        >>> tl.graph.ops.complex.complex(1.0, 2.0).numpy()
        np.complex64(1+2j)
    """
    re = convert_to_tensor(real, dtype_hint=_dt.float32)
    im = convert_to_tensor(imag, dtype_hint=_dt.float32)
    _complex_infer(re, im)  # eager calls check too: the kernel would make any pair complex
    return apply("Complex", re, im)


def _complex_tensor(x, name):
    x = convert_to_tensor(x)
    if not x.dtype.is_complex:
        raise TypeError(f"{name} needs a complex tensor, got {x.dtype.name}")
    return x


def real(x, name=None):
    """The real part of a complex tensor (float32)."""
    return apply("Real", _complex_tensor(x, "real"))


def imag(x, name=None):
    """The imaginary part of a complex tensor (float32)."""
    return apply("Imag", _complex_tensor(x, "imag"))


def conj(x, name=None):
    """The complex conjugate."""
    return apply("Conj", _complex_tensor(x, "conj"))


def eig(x, name=None):
    """(eigenvalues, eigenvectors as columns) of square real matrices, both complex64 (numpy's
    order; no gradient)."""
    return apply("Eig", convert_to_tensor(x, dtype_hint=_dt.float32))
