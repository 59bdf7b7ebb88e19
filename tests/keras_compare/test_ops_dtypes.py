"""Keras 3 vs trainlib: the result dtype of `keras.ops` calls over every pair of input dtypes
(and Python scalars), so Keras's promotion rules hold, not only on float32 inputs."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from trainlib.keras import ops as tl_ops  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "power", "floor_divide", "mod",
          "arctan2", "matmul", "equal", "where"]
UNARY = ["sqrt", "exp", "sin", "mean", "sum", "prod", "abs", "square", "negative", "sign", "floor",
         "ceil", "round", "var", "std", "cumsum", "max", "argmax", "log1p", "reciprocal", "trace",
         "clip", "full", "nn.relu", "nn.sigmoid", "nn.softmax"]
# trainlib has no uint32: Keras sums and products of uint8 give uint32, trainlib int32
UNSUPPORTED = {("sum", "uint8"), ("prod", "uint8"), ("trace", "uint8")}


def _array(d):
    return (np.array([1, 0, 1]) if d == "bool" else np.array([1, 2, 3])).astype(d)


def _dtype_name(t):
    return str(t.dtype).replace("<dtype: '", "").replace("'>", "")


def _call(ops, name, x, y=None):
    if name == "matmul":
        return ops.matmul(x.reshape(1, 3), y.reshape(3, 1))
    if name == "where":
        return ops.where(np.array([True, False, True]), x, y)
    if name == "trace":
        return ops.trace(np.diag(x))
    if name == "clip":
        return ops.clip(x, 0, 2.5)
    if name == "full":
        return ops.full((2,), x[0])
    fn = ops.nn if name.startswith("nn.") else ops
    fn = getattr(fn, name.split(".")[-1])
    return fn(x) if y is None else fn(x, y)


def _outcome(ops, name, *args):
    try:
        return _dtype_name(_call(ops, name, *args))
    except Exception:  # noqa: BLE001 -- both refusing is agreement
        return "error"


@pytest.mark.parametrize("name", BINARY)
def test_binary_result_dtypes(name):
    mismatches = []
    for a in DTYPES:
        for b in DTYPES + [2, 2.5]:
            if name == "matmul" and not isinstance(b, str):
                continue
            x, y = _array(a), (_array(b) if isinstance(b, str) else b)
            want, got = _outcome(keras.ops, name, x, y), _outcome(tl_ops, name, x, y)
            if want != "error" and want != got:
                mismatches.append((a, b, want, got))
    assert not mismatches, f"{name}: (x, y, keras, trainlib): {mismatches}"


@pytest.mark.parametrize("name", UNARY)
def test_unary_result_dtypes(name):
    mismatches = []
    for a in DTYPES:
        if (name, a) in UNSUPPORTED:
            continue
        want, got = _outcome(keras.ops, name, _array(a)), _outcome(tl_ops, name, _array(a))
        if want != "error" and want != got:
            mismatches.append((a, want, got))
    assert not mismatches, f"{name}: (x, keras, trainlib): {mismatches}"
