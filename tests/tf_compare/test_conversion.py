"""Conversion and weak typing on TensorFlow and trainlib: tl.constant / convert_to_tensor of
Python and numpy values with and without dtype, Python values meeting tensors in operators,
and the Python protocols of tensors (bool, int, float, len, iter, index)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

VALUES = [1, 1.0, 1.5, True, [1, 2], [1.0, 2.0], [1, 2.5], [True, False], [True, 1], 2**40, -1, 300, [],
          [[1], [2]], [[1], [2, 3]], np.float64(1.0), np.array([1.5, 2.0]), np.array([1, 2]), np.array([True]),
          np.int64(3), np.float32(2.5), None, float("nan"), float("inf"), 2**63, 2**31, [1, 2**40], 1e39,
          (1, 2), [(1, 2), [3, 4]], [[], []]]
DTYPES = [None, "float32", "float64", "int32", "int64", "bool", "uint8", "float16", "int8"]


@pytest.mark.parametrize("fn", ["constant", "convert_to_tensor"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_conversion(fn, dtype, value):
    check(lambda lib: getattr(lib, fn)(value, dtype=None if dtype is None else getattr(lib, dtype)))


CASES = {
    "i32+npf64": lambda lib: lib.constant([1, 2]) + np.array([1.5, 2.5]),
    "i32+npi64": lambda lib: lib.constant([1, 2]) + np.array([1, 2]),
    "f32+npf64": lambda lib: lib.constant([1., 2]) + np.array([1.5, 2.5]),
    "f32+npf64 scalar": lambda lib: lib.constant([1., 2]) + np.float64(1.5),
    "f64+npf32": lambda lib: lib.constant([1., 2], dtype=lib.float64) + np.float32(1.5),
    "mul f32,npf64": lambda lib: lib.multiply(lib.constant([1., 2]), np.array([1.5, 2.5])),
    "max npf64,f32": lambda lib: lib.maximum(np.array([1.5, 2.5]), lib.constant([1., 2])),
    "tensor with other dtype": lambda lib: lib.constant(lib.constant([1, 2]), dtype=lib.float32),
    "convert tensor other dtype": lambda lib: lib.convert_to_tensor(lib.constant([1, 2]), dtype=lib.float32),
    "constant shape": lambda lib: lib.constant(1.0, shape=[2, 3]),
    "constant shape list": lambda lib: lib.constant([1.0, 2.0], shape=[2, 1]),
    "constant shape bad": lambda lib: lib.constant([1.0, 2.0], shape=[3]),
    "hint": lambda lib: lib.convert_to_tensor(1, dtype_hint=lib.float32),
    "hint cannot hold": lambda lib: lib.convert_to_tensor(1.5, dtype_hint=lib.int32),
    "hint list": lambda lib: lib.convert_to_tensor([1.5], dtype_hint=lib.int32),
    "weak list with tensor": lambda lib: lib.constant([1, 2]) * [1.5, 2],
    "weak int + float": lambda lib: lib.constant(1) + 1.5,
    "weak float + int": lambda lib: lib.constant(1.5) + 1,
    "weak i64 + 2**40": lambda lib: lib.constant(1, dtype=lib.int64) + 2**40,
    "weak i32 + 2**40 wraps": lambda lib: lib.constant(1) + 2**40,
    "weak u8 + 300 wraps": lambda lib: lib.constant(1, dtype=lib.uint8) + 300,
    "weak u8 + -1 wraps": lambda lib: lib.constant(1, dtype=lib.uint8) + (-1),
    "weak bool & True": lambda lib: lib.constant(True) & True,
    "weak bool & 1": lambda lib: lib.constant(True) & 1,
    "weak f16 + 1e10": lambda lib: lib.constant(1, dtype=lib.float16) + 1e10,
    "radd": lambda lib: 1.5 + lib.constant(1),
    "rsub": lambda lib: 1 - lib.constant(1.5),
    "rmul list": lambda lib: [1, 2] * lib.constant(1.5),
    "rpow": lambda lib: 2 ** lib.constant(3),
    "pow negative int": lambda lib: lib.constant(2) ** -1,
    "int // 0": lambda lib: lib.constant(1) // 0,
    "int % 0": lambda lib: lib.constant(1) % 0,
    "int / 2": lambda lib: lib.constant(1) / 2,
    "int64 / 2": lambda lib: lib.constant(1, dtype=lib.int64) / 2,
    "int8 / int8": lambda lib: lib.constant(1, dtype=lib.int8) / lib.constant(2, dtype=lib.int8),
    "int / 2.5": lambda lib: lib.constant(1) / 2.5,
    "float //": lambda lib: lib.constant([-3.5, 3.5]) // 2,
    "float %": lambda lib: lib.constant([-3.5, 3.5]) % 2,
    "int % negative": lambda lib: lib.constant([-3, 3]) % -2,
    "int // negative": lambda lib: lib.constant([-3, 3]) // -2,
    "bool + bool": lambda lib: lib.constant(True) + lib.constant(False),
    "-bool": lambda lib: -lib.constant(True),
    "~bool": lambda lib: ~lib.constant(True),
    "~float": lambda lib: ~lib.constant(5.0),
    "bool ^": lambda lib: lib.constant(True) ^ False,
    "abs bool": lambda lib: abs(lib.constant(True)),
    "abs int": lambda lib: abs(lib.constant(-3)),
    "@": lambda lib: lib.constant([[1., 2]]) @ lib.constant([[1.], [2]]),
    "@ list": lambda lib: lib.constant([[1., 2]]) @ [[1.], [2]],
    "r@ list": lambda lib: [[1., 2]] @ lib.constant([[1.], [2]]),
    "== scalar": lambda lib: lib.constant([1, 2]) == 1,
    "== None": lambda lib: lib.constant([1, 2]) == None,  # noqa: E711
    "!= None": lambda lib: lib.constant([1, 2]) != None,  # noqa: E711
    "== other dtype": lambda lib: lib.constant([1, 2]) == lib.constant([1., 2]),
    "== unbroadcastable": lambda lib: lib.constant([1, 2]) == lib.constant([1, 2, 3]),
    "!= unbroadcastable": lambda lib: lib.constant([1, 2]) != lib.constant([1, 2, 3]),
    "== list unbroadcastable": lambda lib: lib.constant([1, 2]) == [1, 2, 3],
    "< other dtype": lambda lib: lib.constant([1, 2]) < lib.constant([1., 2]),
    "< float": lambda lib: lib.constant([1, 2]) < 1.5,
    "== float": lambda lib: lib.constant([1, 2]) == 1.5,
    "== list": lambda lib: lib.constant([1, 2]) == [1, 3],
    "bool() of 2": lambda lib: bool(lib.constant([1, 2])),
    "bool() of 1": lambda lib: bool(lib.constant([1])),
    "bool() of empty": lambda lib: bool(lib.constant([])),
    "int() of [2.7]": lambda lib: int(lib.constant([2.7])),
    "int() of 2.7": lambda lib: int(lib.constant(2.7)),
    "float() of int": lambda lib: float(lib.constant(2)),
    "index": lambda lib: [1, 2, 3][lib.constant(1)],
    "len scalar": lambda lib: len(lib.constant(1)),
    "len": lambda lib: len(lib.constant([[1, 2]])),
    "iter scalar": lambda lib: list(lib.constant(1)),
    "iter": lambda lib: list(lib.constant([[1, 2], [3, 4]])),
    "format": lambda lib: f"{lib.constant(2.5):.3f}|{lib.constant([1.5, 2])}|{lib.constant(3)}",
}


@pytest.mark.parametrize("name", list(CASES))
def test_weak_typing_and_protocols(name):
    check(CASES[name])
