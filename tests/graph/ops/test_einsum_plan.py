"""Einsum as planned matrix products (graph/ops/einsum_plan.py) against numpy's einsum.

hypothesis draws equations (batched matrix products, outer products, traces and sums,
'...' with size-1 dims that broadcast, one to three inputs) and shapes; each runs eagerly and
traced for every dtype Einsum accepts, and its gradients are checked by float64 finite
differences. The plan itself is checked to leave numpy's einsum loop for matrix products.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph.ops import einsum_plan
from tests.graph.ops.harness import OpCase, check_gradient

DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "complex64")
LABELS = "abcdefg"


@st.composite
def equations(draw, max_inputs=3, same_ellipsis=False):
    """(equation, shapes): each term distinct labels of one size each; where '...' appears, its
    dims are right-aligned and may be 1 in one input and n in another."""
    sizes = {c: draw(st.integers(1, 4)) for c in LABELS}
    n_inputs = draw(st.integers(1, max_inputs))
    ellipsis = draw(st.lists(st.integers(1, 3), max_size=2)) if draw(st.booleans()) else None
    terms, shapes = [], []
    for _ in range(n_inputs):
        labels = draw(st.lists(st.sampled_from(LABELS), unique=True, max_size=4))
        shape = [sizes[c] for c in labels]
        if ellipsis is not None and draw(st.booleans()):
            rank = len(ellipsis) if same_ellipsis else draw(st.integers(0, len(ellipsis)))
            dims = [d if draw(st.booleans()) else 1 for d in ellipsis[len(ellipsis) - rank:]]
            at = draw(st.integers(0, len(labels)))
            labels = labels[:at] + ["..."] + labels[at:]
            shape = shape[:at] + dims + shape[at:]
        terms.append("".join(labels))
        shapes.append(tuple(shape))
    used = sorted(set("".join(terms).replace(".", "")))
    out = draw(st.lists(st.sampled_from(used), unique=True)) if used else []
    if any("..." in t for t in terms):
        out.insert(draw(st.integers(0, len(out))), "...")
    return ",".join(terms) + "->" + "".join(out), shapes


def _inputs(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return [rng.integers(-3, 4, size=s).astype(dtype) for s in shapes]
    if np.dtype(dtype).kind == "c":
        return [(rng.uniform(-2, 2, size=s) + 1j * rng.uniform(-2, 2, size=s)).astype(dtype)
                for s in shapes]
    return [rng.uniform(-2, 2, size=s).astype(dtype) for s in shapes]


def _assert_matches_numpy(got, equation, arrays):
    got = np.asarray(got)
    dtype = arrays[0].dtype
    if dtype == np.float16:  # products in float32 (numpy's float16 loop rounds more): bound by |terms|
        want = np.einsum(equation, *[a.astype(np.float64) for a in arrays])
        scale = np.einsum(equation, *[np.abs(a.astype(np.float64)) for a in arrays])
        assert got.dtype == dtype and got.shape == want.shape
        assert np.all(np.abs(got - want) <= 2e-3 * scale + 1e-3), (equation, got, want)
        return
    want = np.asarray(np.einsum(equation, *arrays))
    assert got.dtype == dtype and got.shape == want.shape, (equation, got.shape, want.shape)
    if dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=equation)
    else:
        np.testing.assert_array_equal(got, want, err_msg=equation)


@settings(max_examples=150, deadline=None)
@given(equations(), st.sampled_from(DTYPES))
def test_kernel_matches_numpy(case, dtype):
    equation, shapes = case
    arrays = _inputs(shapes, dtype)
    _assert_matches_numpy(einsum_plan.contract(np, equation, arrays), equation, arrays)


@settings(max_examples=40, deadline=None)
@given(equations(), st.sampled_from(("float32", "int32", "float16")))
def test_eager_and_traced_match_numpy(case, dtype):
    equation, shapes = case
    arrays = _inputs(shapes, dtype, seed=1)
    eager = tl.einsum(equation, *[tl.constant(a) for a in arrays])
    _assert_matches_numpy(eager.numpy(), equation, arrays)
    traced = tl.function(lambda *xs: tl.einsum(equation, *xs),
                         input_signature=[tl.TensorSpec(s, dtype) for s in shapes])
    np.testing.assert_array_equal(traced(*arrays).numpy(), eager.numpy())


@settings(max_examples=25, deadline=None)
@given(equations(same_ellipsis=True))
def test_gradients_match_finite_differences(case):
    equation, shapes = case
    op_case = OpCase(equation, ["Einsum"], lambda *xs: tl.einsum(equation, *xs), None, shapes)
    check_gradient(op_case, _inputs(shapes, "float64", seed=2), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("equation, shapes", [
    ("bqhd,bkhd->bhqk", [(2, 5, 3, 4), (2, 6, 3, 4)]),   # attention scores
    ("bhqk,bkhd->bqhd", [(2, 3, 5, 6), (2, 6, 3, 4)]),   # attention combination
    ("abc,cde->abde", [(2, 3, 4), (4, 5, 6)]),           # EinsumDense projections
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),  # batch dims broadcast
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
])
def test_matrix_products_leave_numpy_einsum(monkeypatch, equation, shapes):
    arrays = _inputs(shapes, "float32")
    want = np.einsum(equation, *arrays)

    def refuse(*args, **kwargs):
        raise AssertionError("numpy's einsum loop ran")

    monkeypatch.setattr(np, "einsum", refuse)
    np.testing.assert_allclose(einsum_plan.contract(np, equation, arrays), want, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]), ("ii->", [(3, 3)]), ("iij,jk->ik", [(2, 2, 3), (3, 4)]),
])
def test_repeated_labels_take_numpy_einsum(equation, shapes):
    arrays = _inputs(shapes, "float64")
    _assert_matches_numpy(tl.einsum(equation, *[tl.constant(a) for a in arrays]).numpy(),
                          equation, arrays)


def test_a_plan_is_made_once_per_equation_and_shapes():
    einsum_plan._plan.cache_clear()
    arrays = _inputs([(2, 3), (3, 4)], "float32")
    for _ in range(3):
        einsum_plan.contract(np, "ij,jk->ik", arrays)
    info = einsum_plan._plan.cache_info()
    assert (info.misses, info.hits) == (1, 2)
