"""Every `keras.ops` row of the table: numpy reference, eager == traced, float64 gradients.

Rows live in `tests/keras/ops/table.py` (shared with `tests/keras_compare/test_ops.py`). The
gradient check compares the tape's gradient with central differences along random directions
(symmetric ones for symmetric positive-definite inputs), in float64.
"""
import numpy as np
import pytest

import trainlib as tl
from trainlib.keras import ops

from .table import CASES, In, Lit, double_grad, make_args

GRAD_CASES = [c for c in CASES if c.grad]


def resolve(module, name):
    """`module.a.b` for the dotted `name`."""
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def call(case, op, args):
    if case.call is not None:
        return case.call(op, *args, **case.kw)
    return op(*args, **case.kw)


def to_numpy(value):
    """Nested results (tensors, tuples, lists, Python scalars) as nested numpy values."""
    if isinstance(value, (tuple, list)):
        return (list if isinstance(value, list) else tuple)(to_numpy(v) for v in value)
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return value


def assert_close(got, want, case, dtype, what="", exact_dtype=None):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{case}{what}: got {type(got).__name__}, want a sequence"
        assert len(got) == len(want), f"{case}{what}: {len(got)} outputs, want {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, case, dtype, f"{what}[{i}]", exact_dtype)
        return
    if isinstance(want, (str, bool)) or want is None:
        assert got == want, f"{case}{what}: {got!r} != {want!r}"
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{case}{what}: shape {g.shape} != {w.shape}"
    if exact_dtype is not None:
        assert g.dtype == w.dtype, f"{case}{what}: dtype {g.dtype} != {w.dtype}"
    if w.dtype.kind in "fc" or g.dtype.kind in "fc":
        loose = dtype == "float32" or g.dtype == np.float32
        rtol = max(case.rtol, 2e-5) if loose else case.rtol
        atol = max(case.atol, 2e-5) if loose else case.atol
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=f"{case}{what}")
    else:
        np.testing.assert_array_equal(g, w, err_msg=f"{case}{what}")


def _params(cases):
    return [pytest.param(c, d, id=f"{c}-{d}") for c in cases for d in c.dtypes]


def _numpy_ref(case, args):
    if case.ref is not None:
        return case.ref(*args, **case.kw)
    return getattr(np, case.name)(*args, **case.kw)


@pytest.mark.parametrize("case,dtype", _params([c for c in CASES if not c.no_ref]))
def test_matches_numpy(case, dtype):
    args = make_args(case, dtype)
    got = to_numpy(call(case, resolve(ops, case.name), [a.copy() if isinstance(a, np.ndarray)
                                                        else a for a in args]))
    want = _numpy_ref(case, args)
    assert_close(got, want, case, dtype)


@pytest.mark.parametrize("case,dtype", _params([c for c in CASES if c.traced]))
def test_traced_equals_eager(case, dtype):
    args = make_args(case, dtype)
    op = resolve(ops, case.name)
    eager = to_numpy(call(case, op, [tl.constant(a) if isinstance(a, np.ndarray) else a
                                     for a in args]))
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    @tl.function
    def traced(*tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        return call(case, op, full)
    got = to_numpy(traced(*[tl.constant(args[i]) for i in positions]))
    assert_close(got, eager, case, dtype, " traced vs eager")


def _float_inputs(case, args):
    return [i for i, (spec, a) in enumerate(zip(case.inputs, args))
            if isinstance(spec, In) and isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradient_matches_finite_differences(case):
    args = make_args(case, "float64")
    op = resolve(ops, case.name)
    watched = _float_inputs(case, args)
    assert watched, f"{case}: a gradient row needs a floating input"
    rng = np.random.default_rng(1)

    def run(arrays):
        return call(case, op, [tl.constant(a) if isinstance(a, np.ndarray) else a for a in arrays])

    first = [o for o in _leaves(run(args)) if hasattr(o, "dtype") and o.dtype.is_floating]
    weights = [rng.uniform(0.5, 1.5, size=tuple(o.shape)) for o in first]

    def scalar(arrays):
        outs = [o for o in _leaves(run(arrays)) if hasattr(o, "dtype") and o.dtype.is_floating]
        return sum(float(np.sum(o.numpy() * w)) for o, w in zip(outs, weights))

    xs = [tl.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    with tl.GradientTape() as tape:
        for i in watched:
            tape.watch(xs[i])
        outs = [o for o in _leaves(call(case, op, xs)) if hasattr(o, "dtype") and o.dtype.is_floating]
        total = tl.add_n([tl.reduce_sum(o * tl.constant(w)) for o, w in zip(outs, weights)])
    grads = tape.gradient(total, [xs[i] for i in watched])
    eps = 1e-6
    for i, g in zip(watched, grads):
        assert g is not None, f"{case}: no gradient for input {i}"
        g = g.numpy()
        assert g.shape == args[i].shape
        for _ in range(2):
            d = rng.normal(size=args[i].shape)
            if case.inputs[i].kind == "spd":
                d = d + d.T
            plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            plus[i] = plus[i] + eps * d
            minus[i] = minus[i] - eps * d
            numeric = (scalar(plus) - scalar(minus)) / (2 * eps)
            analytic = float(np.sum(g * d))
            np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{case}: directional derivative of input {i}")


def test_custom_gradient_is_used():
    x = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = ops.custom_gradient(double_grad)(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 2.0])


def test_argpartition_partitions():
    x = np.array([[3.0, 1.0, 2.0, 0.5], [0.0, 5.0, -1.0, 2.0]], np.float32)
    idx = ops.argpartition(x, 1).numpy()
    part = np.take_along_axis(x, idx, 1)
    assert (part[:, :1] <= part[:, 1:2]).all() and (part[:, 2:] >= part[:, 1:2]).all()
    assert sorted(idx[0]) == [0, 1, 2, 3]


def test_literal_arguments_are_not_tensors():
    assert isinstance(Lit(3).value, int)
