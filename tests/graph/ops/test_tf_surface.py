"""The names of tf.math / tf.nn / tf.linalg / tf.random added for the TensorFlow guides: the new
OpDefs (Lgamma, Digamma, Zeta, SegmentProd, StatelessRandomPoisson) and the compositions, against
numpy/scipy references, gradients by finite differences (float64), traced == eager, and
`tl.random.Generator`'s stream semantics.

One table, CASES (unioned by the registry test).
"""
import doctest
import math

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.ops import complex as complex_ops
from trainlib.graph.ops import decompositions, math as math_ops, nn as nn_ops, numeric, segment
from trainlib.graph.ops import stateless_random
from tests.graph.ops.harness import OpCase, check_against_numpy, check_gradient, make_inputs

special = pytest.importorskip("scipy.special")

IDS = np.array([0, 0, 1, 3, 3, 3], np.int32)


def _segment_prod_ref(d):
    out = np.ones((4,) + d.shape[1:], d.dtype)
    for row, seg in zip(d, IDS):
        out[seg] = out[seg] * row
    return out


def _sqrt_n_ref(d):
    out = np.zeros((4,) + d.shape[1:], d.dtype)
    count = np.zeros(4)
    for row, seg in zip(d, IDS):
        out[seg] += row
        count[seg] += 1
    return (out / np.sqrt(np.maximum(count, 1))[:, None]).astype(d.dtype)


def _spd(a):
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(a.shape[-1], dtype=a.dtype)


def _tril(a):
    return np.tril(a) + 3 * np.eye(a.shape[-1], dtype=a.dtype)


CASES = [
    OpCase("lgamma", ["Lgamma"], tl.math.lgamma,
           lambda x: special.gammaln(x).astype(x.dtype), [(3, 4)], low=0.1, high=8, rtol=1e-5),
    OpCase("lgamma_negative", ["Lgamma"], tl.math.lgamma,
           lambda x: special.gammaln(x).astype(x.dtype), [(5,)], low=-3.9, high=-3.1),
    OpCase("digamma", ["Digamma"], tl.math.digamma,
           lambda x: special.digamma(x).astype(x.dtype), [(3, 4)], low=0.2, high=9, rtol=1e-5),
    OpCase("zeta", ["Zeta"], lambda q: tl.math.zeta(tl.cast([1.5, 2.0, 4.5], q.dtype), q + 2.5),
           lambda q: special.zeta([1.5, 2.0, 4.5], q + 2.5).astype(q.dtype), [(3,)], rtol=1e-5),
    OpCase("polygamma", ["Digamma", "Zeta"], lambda x: tl.math.polygamma(
        tl.cast([0, 1, 2], x.dtype), x),
        lambda x: special.polygamma([0, 1, 2], x).astype(x.dtype), [(3,)], low=0.5, high=4,
        rtol=1e-5),
    OpCase("lbeta", ["Lgamma"], tl.math.lbeta,
           lambda x: (special.gammaln(x).sum(-1) - special.gammaln(x.sum(-1))).astype(x.dtype),
           [(2, 3)], low=0.3, high=4, rtol=1e-5),
    OpCase("ndtri", ["Erfinv"], tl.math.ndtri, lambda p: special.ndtri(p).astype(p.dtype),
           [(4,)], low=0.05, high=0.95, rtol=1e-5),
    OpCase("bessel_i0e", ["BesselI0"], tl.math.bessel_i0e,
           lambda x: special.i0e(x).astype(x.dtype), [(4,)], low=-4, high=4),
    OpCase("xlog1py", ["Log1p"], tl.math.xlog1py,
           lambda x, y: (x * np.log1p(y)).astype(x.dtype), [(4,), (4,)], low=0.1, high=2),
    OpCase("multiply_no_nan", ["Mul"], tl.math.multiply_no_nan, lambda x, y: x * y,
           [(3,), (3,)]),
    OpCase("cumulative_logsumexp", ["Cumsum"], lambda x: tl.math.cumulative_logsumexp(x, axis=1),
           lambda x: np.logaddexp.accumulate(x, axis=1), [(2, 4)], rtol=1e-5),
    OpCase("segment_prod", ["SegmentProd"], lambda d: tl.math.segment_prod(d, IDS),
           _segment_prod_ref, [(6, 2)], dtypes=("float32", "float64", "int32")),
    OpCase("unsorted_segment_sqrt_n", ["UnsortedSegmentSum"],
           lambda d: tl.math.unsorted_segment_sqrt_n(d, IDS, 4), _sqrt_n_ref, [(6, 2)]),
    OpCase("pinv", ["Svd"], tl.linalg.pinv, np.linalg.pinv, [(4, 3)], rtol=1e-4, atol=1e-5),
    OpCase("lstsq", ["MatrixSolve"], tl.linalg.lstsq,
           lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], [(5, 3), (5, 2)], rtol=1e-4,
           atol=1e-5),
    OpCase("triangular_solve", ["MatrixSolve"],
           lambda a, b: tl.linalg.triangular_solve(a + 3 * tl.eye(3, dtype=a.dtype), b),
           lambda a, b: np.linalg.solve(_tril(a), b), [(3, 3), (3, 2)], rtol=1e-4, atol=1e-5),
    OpCase("cholesky_solve", ["MatrixSolve"],
           lambda c, b: tl.linalg.cholesky_solve(tl.linalg.band_part(c, -1, 0) + 3 * tl.eye(
               3, dtype=c.dtype), b),
           lambda c, b: np.linalg.solve(_tril(c) @ _tril(c).T, b), [(3, 3), (3, 2)], rtol=1e-4,
           atol=1e-5),
    OpCase("cross", ["Mul"], tl.linalg.cross, lambda a, b: np.cross(a, b), [(2, 3), (2, 3)]),
    OpCase("eigvalsh", ["SelfAdjointEigV2"], lambda a: tl.linalg.eigvalsh(a + tl.linalg.adjoint(a)),
           lambda a: np.linalg.eigvalsh(a + a.T), [(3, 3)], rtol=1e-4, atol=1e-5),
    OpCase("tensor_diag_part", ["Reshape"], tl.linalg.tensor_diag_part,
           lambda x: np.einsum("ijij->ij", x), [(2, 3, 2, 3)]),
    OpCase("crelu", ["Relu"], tl.nn.crelu, lambda x: np.concatenate(
        [np.maximum(x, 0), np.maximum(-x, 0)], -1), [(2, 3)]),
    OpCase("weighted_moments", ["Mean"], lambda x, w: tl.nn.weighted_moments(x, [1], w + 3),
           lambda x, w: (np.average(x, 1, w + 3),
                         np.average((x - np.average(x, 1, w + 3)[:, None]) ** 2, 1, w + 3)),
           [(2, 4), (2, 4)], grad=False, rtol=1e-5),
    OpCase("lu_solve", ["Lu", "MatrixSolve"],
           lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu(a + 4 * tl.eye(3, dtype=a.dtype)), b),
           lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b).astype(a.dtype), [(3, 3), (3, 2)], grad=False,
           rtol=1e-4, atol=1e-5),
    OpCase("depth_to_space", ["Transpose"], lambda x: tl.nn.depth_to_space(x, 2),
           lambda x: x.reshape(1, 2, 3, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 4, 6, 2),
           [(1, 2, 3, 8)]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_reference(case):
    rng = np.random.default_rng(0)
    for dtype in case.dtypes:
        check_against_numpy(case, make_inputs(case, dtype, rng))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    check_gradient(case, make_inputs(case, "float64", np.random.default_rng(1)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_equals_eager(case):
    arrays = make_inputs(case, "float64", np.random.default_rng(2))
    eager = case.fn(*[tl.constant(a) for a in arrays])
    traced = tl.function(case.fn, autograph=False)(*[tl.constant(a) for a in arrays])
    for e, t in zip(tl.nest.flatten(eager) if hasattr(tl, "nest") else _flat(eager), _flat(traced)):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def _flat(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def test_shape_inference_keeps_unknown_dims():
    @tl.function(input_signature=[tl.TensorSpec([None, 3], tl.float32)])
    def f(x):
        return (tl.math.lgamma(x), tl.math.digamma(x), tl.math.segment_prod(x, [0, 0, 1][:1]),
                tl.nn.crelu(x), tl.linalg.cross(x, x))

    outs = f.get_concrete_function().outputs
    assert [o.shape.as_list() for o in outs] == [[None, 3], [None, 3], [None, 3], [None, 6],
                                                 [None, 3]]


def test_invert_permutation_rejects_non_permutations():
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a permutation"):
        tl.math.invert_permutation([0, 0, 1])
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a permutation"):
        tl.math.invert_permutation([0, 3])


def test_poles_and_domains():
    assert np.isinf(tl.math.lgamma([0.0, -2.0]).numpy()).all()
    assert np.isnan(tl.math.digamma(-1.0).numpy())
    assert np.isinf(tl.math.zeta(1.0, 2.0).numpy()) and np.isnan(tl.math.zeta(0.5, 2.0).numpy())
    assert float(tl.math.xlog1py(0.0, -1.0)) == 0.0
    assert float(tl.math.multiply_no_nan(float("nan"), 0.0)) == 0.0
    with pytest.raises(TypeError, match="lgamma needs a floating"):
        tl.math.lgamma(tl.constant([1, 2]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="not increasing"):
        tl.math.segment_prod(tl.constant([1.0, 2.0]), [1, 0])


def test_segment_prod_gradient_with_zeros():
    data = np.random.default_rng(3).uniform(0.5, 2, (6, 2))
    data[[3, 4], 0] = 0.0  # segment 3 gets two zeros in column 0, one in no other place
    data[0, 1] = 0.0
    check_gradient(CASES[[c.name for c in CASES].index("segment_prod")], [data])


def test_svd_is_tensorflows_form():
    a = np.random.default_rng(4).normal(size=(2, 4, 3))
    s, u, v = tl.linalg.svd(a)
    np.testing.assert_allclose((u.numpy() * s.numpy()[:, None, :]) @ np.swapaxes(v.numpy(), 1, 2),
                               a, atol=1e-10)
    assert tl.linalg.svd(a, compute_uv=False).shape == (2, 3)
    q, r = tl.linalg.qr(a)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-10)
    w, vecs = tl.linalg.eigh(_spd(a[0, :3]))
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(_spd(a[0, :3])), atol=1e-10)
    assert tl.linalg.eig(np.diag([2.0, 1.0]))[0].dtype is tl.complex128   # float64 in, as TF
    assert int(tl.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]])) == 1
    assert tl.linalg.tensor_diag(tl.ones([2, 3])).shape == (2, 3, 2, 3)


def test_pools_and_convolution_pick_the_op_by_rank():
    for shape, pool in (((1, 4, 2), tl.nn.max_pool1d), ((1, 4, 4, 2), tl.nn.max_pool2d),
                        ((1, 4, 4, 4, 2), tl.nn.max_pool3d)):
        x = tl.random.normal(shape)
        np.testing.assert_array_equal(tl.nn.max_pool(x, 2, 2, "VALID").numpy(),
                                      pool(x, 2, 2, "VALID").numpy())
        np.testing.assert_array_equal(tl.nn.pool(x, [2] * (len(shape) - 2), "AVG", 2).numpy(),
                                      tl.nn.avg_pool(x, 2, 2, "VALID").numpy())
    x = tl.random.normal([1, 5, 5, 2])
    w = tl.random.normal([3, 3, 2, 4])
    np.testing.assert_allclose(tl.nn.convolution(x, w, padding="SAME").numpy(),
                               tl.nn.conv2d(x, w, 1, "SAME").numpy(), rtol=1e-6)
    np.testing.assert_allclose(tl.nn.atrous_conv2d(x, w, 2, "SAME").numpy(),
                               tl.nn.conv2d(x, w, 1, "SAME", dilations=2).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        tl.nn.max_pool(tl.ones([2, 2]), 2, 2, "VALID")
    y = tl.nn.space_to_depth(tl.nn.depth_to_space(tl.ones([2, 2, 3, 8]), 2), 2)
    assert y.shape == (2, 2, 3, 8)


def test_sufficient_statistics_round_trip_to_moments():
    x = np.random.default_rng(5).normal(size=(4, 3)).astype(np.float32)
    mean, var = tl.nn.normalize_moments(*tl.nn.sufficient_statistics(x, [0], shift=0.5))
    np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), x.var(0), rtol=1e-4)


def test_generator_streams():
    g = tl.random.Generator.from_seed(3)
    a, b = g.normal([4]), g.normal([4])
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(tl.random.Generator.from_seed(3).normal([4]).numpy(), a.numpy())
    g.reset_from_seed(3)
    np.testing.assert_array_equal(g.normal([4]).numpy(), a.numpy())

    draw = tl.function(lambda: g.uniform([3]), autograph=False)
    first, second = draw().numpy(), draw().numpy()  # the state advances inside the graph
    assert not np.array_equal(first, second) and (0 <= first).all() and (first < 1).all()
    assert g.make_seeds(5).shape == (2, 5)
    children = g.split(2)
    assert not np.array_equal(children[0].normal([3]).numpy(), children[1].normal([3]).numpy())
    ints = g.uniform([200], 0, 3, dtype=tl.int32).numpy()
    assert set(ints.tolist()) == {0, 1, 2}
    assert tl.random.get_global_generator() is tl.random.get_global_generator()
    tl.random.set_global_generator(g)
    assert tl.random.get_global_generator() is g


def test_stateless_draws_are_functions_of_the_seed():
    for fn in (lambda s: tl.random.stateless_poisson([50], s, 3.0),
               lambda s: tl.random.stateless_categorical(tl.math.log([[0.2, 0.8]]), 50, s),
               lambda s: tl.random.stateless_gamma([50], s, alpha=2.0),
               lambda s: tl.random.stateless_binomial([50], s, 10, 0.3)):
        np.testing.assert_array_equal(fn([1, 2]).numpy(), fn([1, 2]).numpy())
        assert not np.array_equal(fn([1, 2]).numpy(), fn([1, 3]).numpy())
    pois = tl.random.stateless_poisson([20000], [4, 2], 3.0, dtype=tl.float32).numpy()
    assert abs(pois.mean() - 3.0) < 0.1 and abs(pois.var() - 3.0) < 0.2
    cat = tl.random.stateless_categorical(tl.math.log([[0.2, 0.8]]), 20000, [5, 5]).numpy()
    assert abs(cat.mean() - 0.8) < 0.02
    assert tl.random.split([1, 2], 4).shape == (4, 2)
    np.testing.assert_array_equal(tl.random.fold_in([1, 2], 7).numpy(),
                                  tl.random.fold_in([1, 2], 7).numpy())
    assert not np.array_equal(tl.random.fold_in([1, 2], 7).numpy(),
                              tl.random.fold_in([1, 2], 8).numpy())


def test_stateful_gamma_and_poisson_shapes_and_means():
    g = tl.random.gamma([20000], alpha=[2.0, 5.0], beta=2.0).numpy()
    assert g.shape == (20000, 2)
    np.testing.assert_allclose(g.mean(0), [1.0, 2.5], rtol=0.05)
    p = tl.random.poisson([3], lam=[[1.0], [4.0]])
    assert p.shape == (3, 2, 1) and p.dtype is tl.float32


def test_angle_and_small_compositions():
    np.testing.assert_allclose(tl.math.angle(complex_ops.complex(-1.0, 1.0)).numpy(), 3 * math.pi / 4,
                               rtol=1e-6)
    np.testing.assert_array_equal(tl.math.angle([-2.0, 3.0]).numpy(), [np.float32(math.pi), 0])
    assert float(tl.math.zero_fraction([0, 0, 1, 2])) == 0.5
    assert bool(tl.math.is_strictly_increasing([1, 2, 5])) and \
        not bool(tl.math.is_strictly_increasing([1, 1]))
    np.testing.assert_array_equal(tl.math.reciprocal_no_nan([0.0, 4.0]).numpy(), [0.0, 0.25])
    np.testing.assert_array_equal(tl.math.rint([0.5, 1.5, 2.5]).numpy(), [0.0, 2.0, 2.0])


NEW_NAMES = {
    numeric: "lgamma digamma zeta polygamma lbeta ndtri bessel_i0e xlog1py erfcinv",
    segment: "segment_prod unsorted_segment_sqrt_n",
    decompositions: "svd_tf eigvalsh pinv matrix_rank lstsq triangular_solve cholesky_solve "
                    "tensor_diag tensor_diag_part normalize cross lu_reconstruct lu_solve",
    stateless_random: "stateless_poisson stateless_categorical split fold_in gamma poisson Generator "
                      "stateless_parameterized_truncated_normal",
    nn_ops: "max_pool convolution crelu sufficient_statistics normalize_moments weighted_moments ctc_loss "
            "depth_to_space space_to_depth",
    complex_ops: "angle",
    math_ops: "multiply_no_nan reciprocal_no_nan rint zero_fraction is_strictly_increasing "
              "cumulative_logsumexp",
}


@pytest.mark.parametrize("module", list(NEW_NAMES), ids=lambda m: m.__name__)
def test_docstring_examples(module):
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    names = NEW_NAMES[module].split()
    for name in names:
        for test in doctest.DocTestFinder().find(getattr(module, name), name, globs={"tl": tl}):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
