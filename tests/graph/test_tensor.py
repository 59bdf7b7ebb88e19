"""Tensors own their data: a numpy array converted at any entry point is copied (the caller's
later writes change nothing), and `.numpy()` / `np.asarray` never hand out a writable alias."""
import numpy as np
import pytest

import trainlib as tl


def _entry_points():
    def function_capture(buf):  # a closure array used inside a Function
        f = tl.function(lambda x: x + buf)
        return lambda: f(tl.constant(np.zeros(3, np.float32)))

    def function_constant(buf):
        f = tl.function(lambda: tl.constant(buf))
        return f

    def function_argument(buf):  # an array passed in and returned as it is
        f = tl.function(lambda x: x)
        out = f(buf)
        return lambda: out

    def function_signature_argument(buf):
        f = tl.function(lambda x: x, input_signature=[tl.TensorSpec([3], tl.float32)])
        out = f(buf)
        return lambda: out

    def eager(make):
        return lambda buf: (lambda t: (lambda: t))(make(buf))

    return {
        "constant": eager(tl.constant),
        "constant_with_dtype": eager(lambda b: tl.constant(b, dtype=tl.float32)),
        "convert_to_tensor": eager(tl.convert_to_tensor),
        "Variable": eager(tl.Variable),
        "Variable_read": eager(lambda b: tl.Variable(b).read_value()),
        "function_capture": function_capture,
        "function_constant": function_constant,
        "function_argument": function_argument,
        "function_signature_argument": function_signature_argument,
    }


@pytest.mark.parametrize("entry", sorted(_entry_points()))
def test_a_converted_array_is_copied(entry):
    buf = np.ones(3, np.float32)
    read = _entry_points()[entry](buf)
    first = np.array(read())
    buf[:] = 5.0  # the caller reuses its buffer
    np.testing.assert_array_equal(np.array(read()), first)
    np.testing.assert_array_equal(first, [1.0, 1.0, 1.0])


def test_numpy_is_a_read_only_view_and_np_array_a_copy():
    t = tl.constant([1.0, 2.0, 3.0])
    view = t.numpy()
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 9.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(t)[0] = 9.0
    copy = np.array(t)  # numpy asks __array__ for a copy: it gets one it may write
    copy[0] = 9.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
    assert np.asarray(t, dtype=np.float64).flags.writeable
    assert np.array_equal(np.asarray(t, dtype=np.float64), [1.0, 2.0, 3.0])


def test_a_read_only_view_still_works_everywhere_a_value_does():
    t = tl.constant([[1.0, 2.0], [3.0, 4.0]])
    assert not t.numpy().flags.writeable
    again = tl.constant(t.numpy())  # a read-only array converts (and is copied) like any other
    assert (again + 1.0).numpy().tolist() == [[2.0, 3.0], [4.0, 5.0]]
    v = tl.Variable(t.numpy())
    v.assign_add(tl.ones([2, 2]))
    np.testing.assert_array_equal(v.numpy(), [[2.0, 3.0], [4.0, 5.0]])
    np.testing.assert_array_equal(t.numpy(), [[1.0, 2.0], [3.0, 4.0]])
