"""Tensors own their data on TensorFlow and trainlib alike: a numpy array that becomes a tensor
(constant, convert_to_tensor, Variable, Dataset, a Function's argument or capture) is copied, so
the caller writing into it afterwards changes nothing; and `.numpy()` cannot write into a
tensor (TensorFlow hands out a copy, trainlib a read-only view)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402


def _after_write(make, read=lambda lib, t: t):
    """`make(lib, buffer)` before, `read(lib, result)` after the caller writes into `buffer`."""
    def program(lib):
        buffer = np.arange(6, dtype=np.float32).reshape(3, 2)
        made = make(lib, buffer)
        buffer[...] = -1.0
        return read(lib, made)
    return program


def _function_capture(lib, buffer):
    f = lib.function(lambda x: x + buffer)
    f(lib.zeros([3, 2]))  # traced before the write
    return f


CASES = {
    "constant": _after_write(lambda lib, b: lib.constant(b)),
    "constant dtype": _after_write(lambda lib, b: lib.constant(b, dtype=lib.float32)),
    "convert_to_tensor": _after_write(lambda lib, b: lib.convert_to_tensor(b)),
    "Variable": _after_write(lambda lib, b: lib.Variable(b), lambda lib, v: lib.convert_to_tensor(v)),
    "Dataset slices": _after_write(lambda lib, b: lib.data.Dataset.from_tensor_slices(b),
                                   lambda lib, ds: lib.stack(list(ds))),
    "Dataset tensors": _after_write(lambda lib, b: lib.data.Dataset.from_tensors(b),
                                    lambda lib, ds: lib.stack(list(ds))),
    "function argument": _after_write(lambda lib, b: lib.function(lambda x: x)(b)),
    "function capture": _after_write(_function_capture, lambda lib, f: f(lib.zeros([3, 2]))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_converted_array_is_the_tensor_own(name):
    check(CASES[name])


def test_numpy_never_writes_into_the_tensor():
    def program(lib):
        t = lib.constant([1.0, 2.0, 3.0])
        array = t.numpy()
        try:
            array[0] = 9.0  # TensorFlow: writes into its copy; trainlib: refuses (read-only)
        except ValueError:
            pass
        return t
    check(program)
