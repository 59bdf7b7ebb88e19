"""Argument conversion shared by `trainlib.keras.ops`: Keras 3's dtype rules over trainlib tensors.

Owns: turning the values a Keras program passes (tensors, Variables, numpy arrays, Python
scalars and lists) into trainlib tensors, and Keras 3's result-type lattice (the JAX-like
promotion Keras applies where TensorFlow refuses mixed dtypes): bool < integers < floats;
integers promote as NumPy does (uint8 with int8 is int16); an integer meeting a float takes
the float; Python ints and floats are weak (they take the tensor's dtype, a Python float
beside integers gives floatx, float32 unless `keras.config.set_floatx` changed it).
Invariant: the promotion happens here, by explicit casts, before any trainlib op runs, so
the ops below keep refusing silent promotion.
"""
import numpy as _np

from ...graph import dtypes as _dt
from ...graph.op import convert_to_tensor as _convert_to_tensor
from ...graph.ops import array as _a
from ...graph.ops import math as _m
from ...graph.tensor import Tensor, _TensorBase
from ...layers.base import KerasTensor
from ...settings import floatx as _floatx_name


def floatx_dtype():
    """The DType of `keras.config.floatx()`: what creation functions default to and what
    integers meeting Python floats, or going through float ops, become (float32 unless set)."""
    return _dt.as_dtype(_floatx_name())


def _is_weak(x):
    return isinstance(x, (int, float)) and not isinstance(x, _np.generic)


def _strong_dtype(x):
    if isinstance(x, _TensorBase):
        return x.dtype
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        try:
            return _dt.as_dtype(dtype)
        except (TypeError, ValueError):
            pass
    return None


def _weak_kind(x):
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    return "f"


def _join(a, b):
    """Keras's result type of two dtypes."""
    if a is b:
        return a
    if a.is_floating or b.is_floating:
        if a.is_floating and b.is_floating:
            return a if a.size >= b.size else b
        return a if a.is_floating else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    return _dt.from_numpy(_np.promote_types(a.np, b.np))


def result_type(*values, floating=False):
    """The dtype Keras gives an op over `values` (tensors, arrays, Python scalars, dtypes).

    With floating=True, integer and bool results become floatx (float32 unless set), as
    Keras's float ops do.
    """
    if len(values) == 2 and isinstance(values[0], _TensorBase) and \
            isinstance(values[1], _TensorBase) and values[0].dtype is values[1].dtype:
        d = values[0].dtype  # the common case, kept cheap for eager dispatch
        return d if d.is_floating or not floating else floatx_dtype()
    strong, weak = None, set()
    for v in values:
        if isinstance(v, _dt.DType):
            d = v
        elif isinstance(v, str):
            d = _dt.as_dtype(v)
        elif _is_weak(v):
            weak.add(_weak_kind(v))
            continue
        else:
            d = _strong_dtype(v)
            if d is None:
                d = _convert_to_tensor(v).dtype
        strong = d if strong is None else _join(strong, d)
    if strong is None:
        strong = floatx_dtype() if "f" in weak else _dt.int32 if "i" in weak else _dt.bool
    elif "f" in weak and not strong.is_floating:
        strong = floatx_dtype()
    elif "i" in weak and strong.is_bool:
        strong = _dt.int32
    if floating and not strong.is_floating:
        strong = floatx_dtype()
    return strong


def tensor(x, dtype=None):
    """`x` as a trainlib tensor (Keras's convert_to_tensor: a given dtype casts)."""
    if isinstance(x, _TensorBase):
        return x if dtype is None else _m.cast(x, dtype)
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
        try:  # Python values convert straight to the dtype (float64 extremes stay finite)
            return _convert_to_tensor(x, dtype)
        except (TypeError, ValueError):
            t = _convert_to_tensor(x)
            return t if t.dtype is dtype else _m.cast(t, dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, _TensorBase) for e in _flat(x)):
        parts = [tensor(e) for e in x]
        d = result_type(*parts)
        return _a.stack([_m.cast(p, d) for p in parts])
    return _convert_to_tensor(x)


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def strong(value):
    """A Python scalar as the tensor Keras converts it to (int32 / float32) before promoting:
    some Keras ops convert their arguments first, so their scalars are not weak."""
    return _convert_to_tensor(value) if _is_weak(value) else value


def promote(*values, floating=False):
    """`values` as tensors of one dtype (Keras's result type; float32 at least if floating)."""
    if len(values) == 2 and isinstance(values[0], _TensorBase) and \
            isinstance(values[1], _TensorBase) and values[0].dtype is values[1].dtype and \
            (values[0].dtype.is_floating or not floating):
        return list(values)  # the common case, kept cheap for eager dispatch
    d = result_type(*values, floating=floating)
    return [_as(v, d) for v in values]


def _as(v, d):
    if isinstance(v, _TensorBase):
        return v if v.dtype is d else _m.cast(v, d)
    return tensor(v, d)


def floating(x, dtype=None):
    """`x` as a floating tensor: ints and bools become `dtype`, by default floatx (float32
    unless set), as Keras's float ops do (its mean uses float32 whatever floatx is)."""
    if isinstance(x, _TensorBase) and x.dtype.is_floating:
        return x
    x = tensor(x)
    return x if x.dtype.is_floating else _m.cast(x, dtype or floatx_dtype())


def ndim(x):
    """The rank of the tensor `x` (an eager tensor's without building a TensorShape: dispatch cost)."""
    if isinstance(x, Tensor):
        return len(x._value.shape)  # noqa: SLF001
    r = x.shape.rank
    if r is None:
        raise ValueError("keras.ops needs tensors of known rank here")
    return r


def small_int(d):
    """Whether the dtype `d` is bool or an integer narrower than 32 bits (Keras widens those)."""
    return d.is_bool or (d.is_integer and d.size < 4)


def spec_of(x):
    """A KerasTensor as it is (it answers shape and dtype queries from its spec), else `x` as a
    tensor."""
    return x if isinstance(x, KerasTensor) else tensor(x)


def dtype_or(dtype, default):
    """`dtype` as a DType, or `default` when None."""
    return _dt.as_dtype(default if dtype is None else dtype)


def axes(axis, rank):
    """`axis` (None, int or sequence) as a sorted tuple of non-negative axes (None: all)."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -rank <= a < max(rank, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {rank}")
        out.append(a % rank if rank else 0)
    return tuple(sorted(out))


def static_shape(x, op_name):
    """The fully known shape of `x` as a tuple (ValueError naming the op if a dim is unknown)."""
    shape = tuple(x.shape)
    if any(d is None for d in shape):
        raise ValueError(f"{op_name} needs a tensor of known shape, got {x.shape}")
    return shape
