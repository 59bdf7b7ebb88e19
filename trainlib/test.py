"""`tl.test`: TensorFlow's test helpers for code ported with its tests.

Owns `TestCase` (unittest's, plus TensorFlow's array assertions: `assertAllClose`,
`assertAllEqual`... and `evaluate`, which turns tensors into numpy values), `main`,
`compute_gradient` (the Jacobians by the tape and by central differences, as
`tf.test.compute_gradient`), and the build questions (`is_gpu_available`...), answered
for this installation.
"""
import os
import tempfile
import unittest

import numpy as np

from .graph import dtypes as _dt
from .graph.autodiff import GradientTape
from .graph.backend import gpu_available
from .graph.errors import OpError
from .graph.op import convert_to_tensor
from .graph.ops import array as _array
from .graph.tensor import is_tensor
from .graph import nest

__all__ = ["TestCase", "main", "compute_gradient", "is_gpu_available", "gpu_device_name",
           "is_built_with_cuda", "is_built_with_gpu_support", "is_built_with_rocm",
           "is_built_with_xla", "is_cpu_target_available", "Benchmark"]


def _value(x):
    if hasattr(x, "numpy"):
        return x.numpy()
    if hasattr(x, "read_value"):
        return x.read_value().numpy()
    return np.asarray(x)


class TestCase(unittest.TestCase):
    """unittest.TestCase with TensorFlow's assertions on tensors and arrays."""

    def evaluate(self, tensors):
        """The numpy values of `tensors` (any nesting of tensors and Variables)."""
        return nest.map_structure(lambda t: _value(t) if is_tensor(t) or hasattr(t, "read_value")
                                  else t, tensors)

    def get_temp_dir(self):
        """A temporary directory for this test (made once per test case object)."""
        if not hasattr(self, "_tl_temp_dir"):
            self._tl_temp_dir = tempfile.mkdtemp(prefix=f"{type(self).__name__}_")
        return self._tl_temp_dir

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Every element of `a` is close to `b`'s (nested structures compared leaf by leaf)."""
        a, b = self.evaluate(a), self.evaluate(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertTrue(isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys(),
                            f"dict keys differ: {a!r} vs {b!r}. {msg or ''}")
            for key in a:
                self.assertAllClose(a[key], b[key], rtol, atol, msg)
            return
        try:
            x, y = np.asarray(a), np.asarray(b)
        except ValueError:          # ragged nesting: compare element by element
            x = y = None
        if x is None or (x.dtype == object and isinstance(a, (list, tuple))):
            self.assertEqual(len(a), len(b), msg)
            for p, q in zip(a, b):
                self.assertAllClose(p, q, rtol, atol, msg)
            return
        self.assertEqual(x.shape, y.shape, f"shape mismatch: {x.shape} vs {y.shape}. {msg or ''}")
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, msg=None):
        """`assertAllClose` with the looser tolerances of float32 or float16 values."""
        a, b = np.asarray(self.evaluate(a)), np.asarray(self.evaluate(b))
        if a.dtype == np.float32 or b.dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if a.dtype == np.float16 or b.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol, atol, msg)

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Same shape and every element equal."""
        x, y = np.asarray(self.evaluate(a)), np.asarray(self.evaluate(b))
        self.assertEqual(x.shape, y.shape, f"shape mismatch: {x.shape} vs {y.shape}. {msg or ''}")
        np.testing.assert_array_equal(x, y, err_msg=msg or "")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """Some element differs."""
        x, y = np.asarray(self.evaluate(a)), np.asarray(self.evaluate(b))
        if x.shape == y.shape and np.array_equal(x, y):
            self.fail(msg or f"expected some element to differ, both are {x}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self.evaluate(a)) > comparison_target),
                        f"not all elements > {comparison_target}")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self.evaluate(a)) < comparison_target),
                        f"not all elements < {comparison_target}")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self.evaluate(a)) >= comparison_target),
                        f"not all elements >= {comparison_target}")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self.evaluate(a)) <= comparison_target),
                        f"not all elements <= {comparison_target}")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        x = np.asarray(self.evaluate(target))
        low = x > lower_bound if open_lower_bound else x >= lower_bound
        high = x < upper_bound if open_upper_bound else x <= upper_bound
        self.assertTrue(np.all(low & high), f"{x} not all in range [{lower_bound}, {upper_bound}]")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}. {msg or ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        """A numpy array's shape equals a tensor's."""
        self.assertEqual(list(np.shape(input_a)), list(input_b.shape), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        got = _dt.as_dtype(target.dtype) if hasattr(target, "dtype") else _dt.as_dtype(
            np.asarray(target).dtype)
        self.assertIs(got, _dt.as_dtype(expected_dtype))

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """A context expecting a `tl.errors.OpError` whose message matches."""
        return self.assertRaisesRegex(OpError, expected_err_re_or_predicate)

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesRegex(exception_type, expected_err_re_or_predicate)


def main(argv=None):
    """Runs the TestCases of the calling module (`unittest.main`)."""
    unittest.main(argv=argv)


def compute_gradient(f, x, delta=None):
    """(theoretical, numerical) Jacobians of `f` at the arguments `x`, one 2-D array per
    argument, each of shape (size of y, size of that x), as `tf.test.compute_gradient`:
    the theoretical one by the tape, the numerical one by central differences with step
    `delta` (default 1e-3 for float32/float16, 1e-6 for float64... TensorFlow's)."""
    xs = [convert_to_tensor(v) for v in x]
    values = [np.array(_value(v), dtype=np.float64 if v.dtype is _dt.float64 else v.dtype.np)
              for v in xs]
    y0 = np.asarray(_value(f(*xs)))
    theoretical, numerical = [], []
    for i, v in enumerate(values):
        step = delta if delta is not None else (1e-6 if v.dtype == np.float64 else 1e-3)
        jac_t = np.zeros((y0.size, v.size), v.dtype)
        for row in range(y0.size):
            arg = [convert_to_tensor(a) for a in values]
            with GradientTape() as tape:
                tape.watch(arg[i])
                y = f(*arg)
                picked = y if y0.size == 1 and y.shape.rank == 0 else \
                    _reshape_pick(y, row)
            g = tape.gradient(picked, arg[i])
            if g is not None:
                jac_t[row] = np.asarray(_value(g)).reshape(-1)
        jac_n = np.zeros((y0.size, v.size), v.dtype)
        for col in range(v.size):
            plus, minus = v.copy().reshape(-1), v.copy().reshape(-1)
            plus[col] += step
            minus[col] -= step
            args_p = [convert_to_tensor(a) for a in values]
            args_m = [convert_to_tensor(a) for a in values]
            args_p[i] = convert_to_tensor(plus.reshape(v.shape))
            args_m[i] = convert_to_tensor(minus.reshape(v.shape))
            diff = np.asarray(_value(f(*args_p)), np.float64) - np.asarray(_value(f(*args_m)),
                                                                           np.float64)
            jac_n[:, col] = (diff / (2 * step)).reshape(-1)
        theoretical.append(jac_t)
        numerical.append(jac_n)
    return theoretical, numerical


def _reshape_pick(y, row):
    return _array.gather(_array.reshape(y, [-1]), row)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when CuPy finds a GPU trainlib can run on."""
    return gpu_available()


def gpu_device_name():
    """"/device:GPU:0" when a GPU is available, else ""."""
    return "/device:GPU:0" if gpu_available() else ""


def is_built_with_cuda():
    """True when CuPy (trainlib's CUDA backend) is installed."""
    try:
        import cupy  # noqa: F401,PLC0415
    except ImportError:
        return False
    return True


is_built_with_gpu_support = is_built_with_cuda


def is_built_with_rocm():
    return False


def is_built_with_xla():
    """True when numba (trainlib's `jit_compile` compiler) is installed."""
    try:
        import numba  # noqa: F401,PLC0415
    except ImportError:
        return False
    return True


def is_cpu_target_available(cpu):
    return cpu in ("x86", "aarch64", "cpu") or os.uname().machine.startswith(cpu)


class Benchmark:
    """TensorFlow's benchmark base: `report_benchmark` records (name, iters, wall_time)."""

    def __init__(self):
        self.reports = []

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        self.reports.append({"name": name, "iters": iters, "wall_time": wall_time,
                             "cpu_time": cpu_time, "throughput": throughput,
                             "extras": extras or {}, "metrics": metrics or []})
