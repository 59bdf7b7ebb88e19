"""Complex ops (`trainlib.graph.ops.complex`): building and taking apart complex64 tensors,
conjugates, eig; numpy references, gradients by finite differences (TensorFlow's conventions),
traced == eager.

One table, CASES (unioned by the registry and strict-array-module tests).
"""
import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops import complex as cx
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

F32 = ("float32",)


def _c(re, im):
    return (re + 1j * im).astype(np.complex64)


CASES = [
    OpCase("complex_parts", ["Complex", "Real", "Imag"],
           lambda re, im: (cx.real(cx.complex(re, im)) * 2.0 + cx.imag(cx.complex(re, im)) * 3.0),
           lambda re, im: re * 2 + im * 3, [(3, 4), (4,)], dtypes=F32),
    OpCase("conj", ["Conj", "Complex", "Real", "Imag"],
           lambda re, im: cx.real(cx.conj(cx.complex(re, im))) - cx.imag(cx.conj(cx.complex(re, im))) * im,
           lambda re, im: re + im * im, [(3, 4), (3, 4)], dtypes=F32),
    OpCase("complex", ["Complex"], cx.complex, _c, [(2, 3), (2, 3)], dtypes=F32, grad=False),
    OpCase("eig_values", ["Eig"], lambda x: cx.real(cx.eig(x + tl.transpose(x))[0]),
           lambda x: np.sort(np.linalg.eigvalsh(x + x.T)).astype(x.dtype), [(3, 3)], dtypes=F32,
           grad=False),
]


def _check(case, arrays):
    got = case.fn(*[tl.constant(a) for a in arrays]).numpy()
    want = case.ref(*arrays)
    if case.name == "eig_values":
        got = np.sort(got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_numpy(case):
    _check(case, make_inputs(case, "float32", np.random.default_rng(1)))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    # gradients in float32 (complex64 is the only complex dtype): looser tolerances
    arrays = make_inputs(case, "float32", np.random.default_rng(2))
    xs = [tl.constant(a) for a in arrays]
    with tl.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        total = tl.reduce_sum(case.fn(*xs))
    grads = tape.gradient(total, xs)
    for i, (a, g) in enumerate(zip(arrays, grads)):
        eps = 1e-2
        numeric = np.zeros_like(a, dtype=np.float64)
        flat = numeric.reshape(-1)
        for j in range(a.size):
            plus, minus = [b.copy() for b in arrays], [b.copy() for b in arrays]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            flat[j] = (float(np.sum(case.ref(*plus), dtype=np.float64)) -
                       float(np.sum(case.ref(*minus), dtype=np.float64))) / (2 * eps)
        np.testing.assert_allclose(g.numpy(), numeric, rtol=1e-3, atol=1e-3, err_msg=f"{case} {i}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_equals_eager(case):
    arrays = make_inputs(case, "float32", np.random.default_rng(3))
    eager = case.fn(*[tl.constant(a) for a in arrays]).numpy()
    traced = tl.function(case.fn)(*[tl.constant(a) for a in arrays]).numpy()
    np.testing.assert_array_equal(traced, eager)


def test_complex128_pairs_with_float64_as_tensorflow():
    z = cx.complex(tl.constant([1.0, -2.0], tl.float64), tl.constant([0.5, 3.0], tl.float64))
    assert z.dtype is tl.complex128
    assert cx.real(z).dtype is tl.float64 and cx.imag(z).numpy().tolist() == [0.5, 3.0]
    w, v = cx.eig(tl.constant([[2.0, 0.0], [0.0, 3.0]], tl.float64))
    assert w.dtype is tl.complex128 and v.dtype is tl.complex128
    assert tl.constant(1 + 2j).dtype is tl.complex128          # a Python complex, as TensorFlow
    with pytest.raises(TypeError, match="float32 parts .* float64 parts"):
        cx.complex(tl.constant([1.0], tl.float32), tl.constant([1.0], tl.float64))
    x = tl.constant([1.0, -2.0])
    assert cx.real(x) is x and cx.conj(x) is x and cx.imag(x).numpy().tolist() == [0.0, 0.0]
    v = tl.Variable(tl.constant([1.0], tl.float64))
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(cx.real(cx.complex(v * 3.0, v)) + cx.imag(cx.complex(v, v * 2.0)))
    assert tape.gradient(y, v).numpy().tolist() == [5.0]

