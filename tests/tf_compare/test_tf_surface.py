"""TensorFlow vs trainlib for the tf.math / tf.nn / tf.linalg / tf.random names added for the
guides: the name lists of `tests/test_namespaces.py` are TensorFlow's, and each new function
gives TensorFlow's values, dtypes and shapes (eagerly and inside a function), and raises where
TensorFlow raises. Random draws: shapes, dtypes and seed determinism (values differ).
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from tests.test_namespaces import TF_NAMES  # noqa: E402
from .compare import check, in_function  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.uniform(0.2, 4.0, (3, 4)).astype(np.float32)
Y = RNG.uniform(-0.9, 3.0, (3, 4)).astype(np.float32)
A = RNG.normal(size=(5, 3))
B = RNG.normal(size=(5, 2))
L = np.tril(RNG.uniform(1, 2, (3, 3)))
V3 = RNG.normal(size=(4, 3)).astype(np.float32)
W3 = RNG.normal(size=(4, 3)).astype(np.float32)
IMG = RNG.normal(size=(2, 4, 6, 8)).astype(np.float32)
SEG = RNG.normal(size=(6, 2)).astype(np.float32)
SPECIAL = dict(rtol=2e-5, atol=2e-6)
CTC_LOGITS = RNG.normal(size=(7, 3, 5)).astype(np.float32)
CTC_LABELS = np.array([[1, 2, 2], [3, 1, 1], [4, 4, 1]], np.int32)


def test_the_name_lists_are_tensorflows():
    for namespace, names in TF_NAMES.items():
        want = sorted(n for n in dir(getattr(tf, namespace)) if not n.startswith("_"))
        assert names == want, namespace


PROGRAMS = {
    "lgamma": lambda lib: lib.math.lgamma(X - 2.5),
    "digamma": lambda lib: lib.math.digamma(X),
    "zeta": lambda lib: lib.math.zeta(X + 1.0, X),
    "polygamma": lambda lib: lib.math.polygamma(np.float32([[0], [1], [2]]) * np.ones_like(X), X),
    "lbeta": lambda lib: lib.math.lbeta(X),
    "ndtri": lambda lib: lib.math.ndtri(X / 5),
    "bessel_i0": lambda lib: lib.math.bessel_i0(Y),
    "bessel_i0e": lambda lib: lib.math.bessel_i0e(Y),
    "bessel_i1e": lambda lib: lib.math.bessel_i1e(Y),
    "erfc": lambda lib: lib.math.erfc(Y),
    "xlog1py": lambda lib: lib.math.xlog1py(np.float32([0, 1, 2]), np.float32([-1, 0.5, 3])),
    "multiply_no_nan": lambda lib: lib.math.multiply_no_nan(np.float32([np.inf, 2]),
                                                            np.float32([0, 3])),
    "reciprocal_no_nan": lambda lib: lib.math.reciprocal_no_nan(np.float32([0, 4])),
    "rint": lambda lib: lib.math.rint(np.float32([0.5, 1.5, -2.5, 2.7])),
    "scalar_mul": lambda lib: lib.math.scalar_mul(2.0, X),
    "accumulate_n": lambda lib: lib.math.accumulate_n([X, X, Y]),
    "zero_fraction": lambda lib: lib.math.zero_fraction(np.int32([0, 1, 0, 0])),
    "is_strictly_increasing": lambda lib: lib.math.is_strictly_increasing([1, 2, 2]),
    "cumulative_logsumexp": lambda lib: lib.math.cumulative_logsumexp(Y, axis=1, reverse=True),
    "cumulative_logsumexp_exclusive": lambda lib: lib.math.cumulative_logsumexp(
        Y, exclusive=True),
    "segment_prod": lambda lib: lib.math.segment_prod(SEG, [0, 0, 1, 3, 3, 3]),
    "unsorted_segment_prod": lambda lib: lib.math.unsorted_segment_prod(SEG, [2, 0, 2, 1, 0, 0], 4),
    "unsorted_segment_sqrt_n": lambda lib: lib.math.unsorted_segment_sqrt_n(
        SEG, [2, 0, 2, 1, 0, -1], 4),
    "angle": lambda lib: lib.math.angle(np.float32([-1, 0, 2])),
    "l2_normalize": lambda lib: lib.math.l2_normalize(Y, axis=1),
    "math_softmax": lambda lib: lib.math.softmax(Y),
    "pinv": lambda lib: lib.linalg.pinv(A),
    "lstsq": lambda lib: lib.linalg.lstsq(A, B),
    "lstsq_l2": lambda lib: lib.linalg.lstsq(A, B, l2_regularizer=0.5),
    "triangular_solve": lambda lib: lib.linalg.triangular_solve(L, B[:3]),
    "triangular_solve_upper_adjoint": lambda lib: lib.linalg.triangular_solve(
        L.T, B[:3], lower=False, adjoint=True),
    "cholesky_solve": lambda lib: lib.linalg.cholesky_solve(L, B[:3]),
    "svd_values": lambda lib: lib.linalg.svd(A, compute_uv=False),
    "svd_reconstructs": lambda lib: (lambda s, u, v: lib.matmul(u * s[None, :], v,
                                                                transpose_b=True))(*lib.linalg.svd(A)),
    "qr_reconstructs": lambda lib: lib.matmul(*lib.linalg.qr(A)),
    "eigvalsh": lambda lib: lib.linalg.eigvalsh(A.T @ A),
    "eigh_values": lambda lib: lib.linalg.eigh(A.T @ A)[0],
    "matrix_rank": lambda lib: lib.linalg.matrix_rank(np.float32([[1, 2], [2, 4]])),
    "cross": lambda lib: lib.linalg.cross(V3, W3),
    "tensor_diag": lambda lib: lib.linalg.tensor_diag(V3[:2]),
    "tensor_diag_part": lambda lib: lib.linalg.tensor_diag_part(np.ones((2, 3, 2, 3), np.float32)),
    "normalize": lambda lib: lib.linalg.normalize(V3, axis=1),
    "crelu": lambda lib: lib.nn.crelu(Y),
    "weighted_moments": lambda lib: lib.nn.weighted_moments(X, [1], Y + 1.0),
    "sufficient_statistics": lambda lib: lib.nn.sufficient_statistics(X, [0], shift=1.0)[:3],
    "normalize_moments": lambda lib: lib.nn.normalize_moments(
        *lib.nn.sufficient_statistics(X, [0], shift=0.5)),
    "depth_to_space": lambda lib: lib.nn.depth_to_space(IMG, 2),
    "space_to_depth": lambda lib: lib.nn.space_to_depth(IMG, 2),
    "max_pool_1d": lambda lib: lib.nn.max_pool(IMG[0], 2, 2, "SAME"),
    "avg_pool_2d": lambda lib: lib.nn.avg_pool(IMG, 2, 1, "VALID"),
    "pool_max": lambda lib: lib.nn.pool(IMG, [2, 3], "MAX", strides=[1, 2], padding="SAME"),
    "convolution": lambda lib: lib.nn.convolution(IMG, np.ones((2, 2, 8, 3), np.float32),
                                                  padding="SAME"),
    "atrous_conv2d": lambda lib: lib.nn.atrous_conv2d(IMG, np.ones((2, 2, 8, 3), np.float32), 2,
                                                      "SAME"),
    "depth_to_space_bad_depth": lambda lib: lib.nn.depth_to_space(IMG[..., :6], 2),
    "invert_permutation": lambda lib: lib.math.invert_permutation([3, 4, 0, 2, 1]),
    "invert_permutation_bad": lambda lib: lib.math.invert_permutation([0, 0, 1]),
    "erfcinv": lambda lib: lib.math.erfcinv(np.float32([1e-6, 0.3, 1.0, 1.7])),
    "lu_reconstruct": lambda lib: lib.linalg.lu_reconstruct(*lib.linalg.lu(A[:3])),
    "lu_solve": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu(A[:3]), B[:3]),
    "lu_matrix_inverse": lambda lib: lib.linalg.lu_matrix_inverse(*lib.linalg.lu(A[:3])),
    "ctc_loss": lambda lib: lib.nn.ctc_loss(CTC_LABELS, CTC_LOGITS, [3, 1, 2], [7, 5, 6]),
    "ctc_loss_batch_major_blank_last": lambda lib: lib.nn.ctc_loss(
        CTC_LABELS - 1, CTC_LOGITS.transpose(1, 0, 2), [3, 1, 2], [7, 5, 6],
        logits_time_major=False, blank_index=-1),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    tolerance = SPECIAL if name in ("polygamma", "zeta", "lbeta", "digamma", "lgamma",
                                    "cumulative_logsumexp", "ndtri") else dict(rtol=1e-5, atol=1e-5)
    check(in_function(PROGRAMS[name], graph), **tolerance)


GRADIENTS = {
    "lgamma": lambda lib, x: lib.math.lgamma(x),
    "digamma": lambda lib, x: lib.math.digamma(x),
    "zeta_q": lambda lib, x: lib.math.zeta(3.0 * lib.ones_like(x), x),
    "segment_prod": lambda lib, x: lib.math.segment_prod(x, [0, 0, 1]),
    "pinv": lambda lib, x: lib.linalg.pinv(x),
    "cumulative_logsumexp": lambda lib, x: lib.math.cumulative_logsumexp(x),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_tensorflows(name):
    x = RNG.uniform(0.5, 3.0, (3,) if name != "pinv" else (3, 2))
    grads = []
    for lib in (tf, tl):
        v = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(v)
            out = GRADIENTS[name](lib, v)
            weights = np.linspace(0.5, 1.5, int(np.prod(out.shape))).reshape(out.shape)
            y = lib.reduce_sum(out * weights)
        grads.append(tape.gradient(y, v).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-9)


def test_ctc_loss_gradient_matches_tensorflows():
    grads = []
    for lib in (tf, tl):
        logits = lib.constant(CTC_LOGITS)
        with lib.GradientTape() as tape:
            tape.watch(logits)
            loss = lib.reduce_sum(lib.nn.ctc_loss(CTC_LABELS, logits, [3, 1, 2], [7, 5, 6]) *
                                  lib.constant([1.0, 0.5, 2.0]))
        grads.append(tape.gradient(loss, logits).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


DRAWS = {
    "stateless_uniform": lambda lib, s: lib.random.stateless_uniform([3, 2], s),
    "stateless_uniform_int": lambda lib, s: lib.random.stateless_uniform([4], s, 0, 5,
                                                                         dtype=lib.int32),
    "stateless_normal": lambda lib, s: lib.random.stateless_normal([3], s, dtype=lib.float64),
    "stateless_truncated_normal": lambda lib, s: lib.random.stateless_truncated_normal([3], s),
    "stateless_poisson": lambda lib, s: lib.random.stateless_poisson([2, 3], s, [1.0, 2.0, 3.0]),
    "stateless_gamma": lambda lib, s: lib.random.stateless_gamma([2, 3], s, [1.0, 2.0, 3.0]),
    "stateless_binomial": lambda lib, s: lib.random.stateless_binomial([3], s, 5, 0.5),
    "stateless_categorical": lambda lib, s: lib.random.stateless_categorical(
        np.log([[0.5, 0.5]]), 4, s),
    "split": lambda lib, s: lib.random.split(s, 3),
    "stateless_parameterized_truncated_normal": lambda lib, s:
        lib.random.stateless_parameterized_truncated_normal([2, 3], s, 0.0, 1.0, -1.0, 0.5),
    "fold_in": lambda lib, s: lib.random.fold_in(s, 3),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_stateless_draws_have_tensorflows_shapes_and_dtypes(name):
    seed = np.array([3, 4], np.int64)
    want = DRAWS[name](tf, seed)
    got = DRAWS[name](tl, seed)
    assert got.dtype.name == want.dtype.name and list(got.shape) == list(want.shape)
    np.testing.assert_array_equal(got.numpy(), DRAWS[name](tl, seed).numpy())


def test_generator_and_stateful_draws_have_tensorflows_shapes_and_dtypes():
    for lib in (tf, tl):
        g = lib.random.Generator.from_seed(1)
        draws = [g.normal([2, 3]), g.uniform([4], 0, 7, dtype=lib.int64),
                 g.truncated_normal([5]), g.make_seeds(3), g.binomial([3], 4.0, 0.5),
                 lib.random.gamma([3], [1.0, 2.0]), lib.random.poisson([3], [1.0, 2.0]),
                 g.uniform_full_int([2], dtype=lib.int32)]
        shapes = [(list(d.shape), d.dtype.name) for d in draws]
        if lib is tf:
            want = shapes
    assert shapes == want
    assert len(tl.random.Generator.from_seed(2).split(3)) == 3
