"""`tl.test`: TensorFlow's TestCase assertions, `compute_gradient` against the exact Jacobian,
and the build questions."""
import numpy as np
import pytest

import trainlib as tl


class _Case(tl.test.TestCase):
    __test__ = False   # a TestCase to call assertions on, not a test pytest should run

    def runTest(self):  # noqa: N802 -- unittest's name
        pass


def test_assertions_pass_and_fail_as_tensorflows():
    case = _Case()
    case.assertAllClose(tl.constant([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    case.assertAllClose({"a": tl.constant(1.0), "b": [tl.constant([1, 2])]},
                        {"a": 1.0, "b": [np.array([1, 2])]})
    case.assertAllEqual(tl.constant([[1, 2]]), [[1, 2]])
    case.assertAllInRange(tl.constant([0.0, 1.0]), 0.0, 1.0)
    case.assertDTypeEqual(tl.constant(1), tl.int32)
    assert case.evaluate({"x": tl.Variable([1.0])})["x"].tolist() == [1.0]
    with pytest.raises(AssertionError):
        case.assertAllClose(tl.constant([1.0, 2.0]), [1.0, 2.1])
    with pytest.raises(AssertionError):
        case.assertAllEqual(tl.constant([1, 2]), [[1, 2]])
    with pytest.raises(AssertionError):
        case.assertAllGreater(tl.constant([1, 2]), 1)
    with case.assertRaisesOpError("must be a prefix"):
        tl.dynamic_partition(tl.zeros([3, 2]), tl.zeros([2], tl.int32), 2)
    import os
    assert os.path.isdir(case.get_temp_dir())


def test_compute_gradient_gives_the_jacobian():
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    theoretical, numerical = tl.test.compute_gradient(lambda t: tl.sin(t) * t, [x])
    want = np.diag((np.cos(x) * x + np.sin(x)).reshape(-1))
    np.testing.assert_allclose(theoretical[0], want, rtol=1e-10)
    np.testing.assert_allclose(numerical[0], want, rtol=1e-6, atol=1e-8)
    a, b = tl.test.compute_gradient(lambda p, q: tl.reduce_sum(p * q), [np.ones(3), np.arange(3.0)])
    np.testing.assert_allclose(a[0], [[0.0, 1.0, 2.0]])
    np.testing.assert_allclose(a[1], [[1.0, 1.0, 1.0]])
    np.testing.assert_allclose(b[1], [[1.0, 1.0, 1.0]], rtol=1e-6)


def test_build_questions():
    from trainlib.graph.backend import gpu_available
    assert tl.test.is_gpu_available() is gpu_available()
    assert tl.test.gpu_device_name() in ("", "/device:GPU:0")
    assert tl.test.is_built_with_rocm() is False
