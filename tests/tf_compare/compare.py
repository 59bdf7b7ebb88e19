"""Differential helpers: run one program on TensorFlow and on trainlib and compare outcomes.

A program is `fn(lib)` where `lib` is `tf` or `tl`. Outcomes agree when both raise
(message wording may differ), or both return the same nested structure of
tensors with equal dtype names, shapes and values (float tolerance for
transcendental float32 results).
"""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

TF_ERRORS = (tf.errors.OpError, TypeError, ValueError, IndexError, RuntimeError)
TL_ERRORS = (tl.errors.OpError, TypeError, ValueError, IndexError, RuntimeError)


class Raised:
    """What a program raised."""

    def __init__(self, error):
        self.error = error

    def __repr__(self):
        return f"Raised({type(self.error).__name__}: {str(self.error)[:200]})"


def outcome(fn, lib):
    errors = TF_ERRORS if lib is tf else TL_ERRORS
    try:
        return fn(lib)
    except errors as e:
        return Raised(e)


def _is_tensor(v):
    return isinstance(v, (tf.Tensor, tf.Variable, tl.Tensor, tl.Variable)) or tl.is_tensor(v)


def _as_numpy(v):
    return np.asarray(v.numpy())


def assert_same(a, b, rtol=1e-6, atol=1e-6, where="result"):
    """Asserts TF outcome `a` equals trainlib outcome `b`."""
    if isinstance(a, Raised) or isinstance(b, Raised):
        assert isinstance(a, Raised) and isinstance(b, Raised), f"{where}: tf={a!r} tl={b!r}"
        return
    if _is_tensor(a):
        assert _is_tensor(b), f"{where}: tf gave a tensor, tl gave {type(b).__name__}: {b!r}"
        assert a.dtype.name == b.dtype.name, f"{where}: dtype tf={a.dtype.name} tl={b.dtype.name}"
        assert list(a.shape) == list(b.shape), f"{where}: shape tf={a.shape} tl={b.shape}"
        x, y = _as_numpy(a), _as_numpy(b)
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(y, x, err_msg=where)
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{where}: tf={a!r} tl={b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{where}[{i}]")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: tf={a!r} tl={b!r}"
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{where}[{k!r}]")
        return
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return
    if isinstance(a, tf.DType):
        assert isinstance(b, tl.DType) and a.name == b.name, f"{where}: tf={a!r} tl={b!r}"
        return
    if isinstance(a, tf.TensorShape):
        assert isinstance(b, tl.TensorShape) and a.as_list() == b.as_list() if a.rank is not None \
            else b.rank is None, f"{where}: tf={a!r} tl={b!r}"
        return
    if isinstance(a, str):
        b = b.replace("tl.", "tf.") if isinstance(b, str) else b
    assert a == b, f"{where}: tf={a!r} tl={b!r}"


def check(fn, rtol=1e-6, atol=1e-6):
    """Runs `fn(tf)` and `fn(tl)` and asserts the outcomes agree."""
    assert_same(outcome(fn, tf), outcome(fn, tl), rtol, atol)


def in_function(program, graph):
    """`program(lib)` as it is (graph=False), or run inside `lib.function` (graph=True)."""
    def run(lib):
        return lib.function(lambda: program(lib))() if graph else program(lib)
    return run


def differences(fn, rtol=1e-6, atol=1e-6):
    """None if `fn` agrees on both libraries, else the assertion message (for sweeps)."""
    try:
        check(fn, rtol, atol)
    except AssertionError as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 -- a crash outside the expected errors
        return f"crash {type(e).__name__}: {e}"
    return None


DTYPES = ("float32", "float64", "int32", "int64", "bool")


def sample(dtype, shape, rng, low=-3, high=3, positive=False):
    """A numpy array of `dtype` and `shape` with small values."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if positive:
        low = 1 if "int" in dtype else 0.1
    if "int" in dtype:
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def check_kind(fn):
    """For results that may differ in value (other random generators, other libjpeg builds):
    asserts `fn(tf)` and `fn(tl)` both raise, or give tensors of the same dtype and shape,
    and returns the two outcomes."""
    theirs, ours = outcome(fn, tf), outcome(fn, tl)
    assert isinstance(theirs, Raised) == isinstance(ours, Raised), f"tf={theirs!r} tl={ours!r}"
    if not isinstance(theirs, Raised):
        assert (theirs.dtype.name, list(theirs.shape)) == (ours.dtype.name, list(ours.shape)), \
            f"tf={theirs!r} tl={ours!r}"
    return theirs, ours
