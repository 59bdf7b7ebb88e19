"""`tl.math`, `tl.nn`, `tl.linalg` and `tl.random` have TensorFlow 2.21's names (the lists
below, from `dir(tf.math)` ...), except those in NOT_PROVIDED, each with the reason.

A name in NOT_PROVIDED that trainlib gains fails the last test until the list is updated, so
the list of what is missing stays true. `tests/tf_compare/test_tf_surface.py` checks these
lists against an installed TensorFlow.
"""
import pytest

import trainlib as tl

TF_NAMES = {
    "math": """
        abs accumulate_n acos acosh add add_n angle approx_max_k approx_min_k argmax argmin
        asin asinh atan atan2 atanh bessel_i0 bessel_i0e bessel_i1 bessel_i1e betainc
        bincount ceil confusion_matrix conj cos cosh count_nonzero cumprod cumsum
        cumulative_logsumexp digamma divide divide_no_nan equal erf erfc erfcinv erfinv exp
        expm1 floor floordiv floormod greater greater_equal igamma igammac imag in_top_k
        invert_permutation is_finite is_inf is_nan is_non_decreasing is_strictly_increasing
        l2_normalize lbeta less less_equal lgamma log log1p log_sigmoid log_softmax
        logical_and logical_not logical_or logical_xor maximum minimum mod multiply
        multiply_no_nan ndtri negative nextafter not_equal polygamma polyval pow real
        reciprocal reciprocal_no_nan reduce_all reduce_any reduce_euclidean_norm
        reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod reduce_std reduce_sum
        reduce_variance rint round rsqrt scalar_mul segment_max segment_mean segment_min
        segment_prod segment_sum sigmoid sign sin sinh sobol_sample softmax softplus
        softsign special sqrt square squared_difference subtract tan tanh top_k truediv
        unsorted_segment_max unsorted_segment_mean unsorted_segment_min
        unsorted_segment_prod unsorted_segment_sqrt_n unsorted_segment_sum xdivy xlog1py
        xlogy zero_fraction zeta
    """.split(),
    "nn": """
        RNNCellDeviceWrapper RNNCellDropoutWrapper RNNCellResidualWrapper
        all_candidate_sampler approx_max_k approx_min_k atrous_conv2d
        atrous_conv2d_transpose avg_pool avg_pool1d avg_pool2d avg_pool3d
        batch_norm_with_global_normalization batch_normalization bias_add collapse_repeated
        compute_accidental_hits compute_average_loss conv1d conv1d_transpose conv2d
        conv2d_transpose conv3d conv3d_transpose conv_transpose convolution crelu
        ctc_beam_search_decoder ctc_greedy_decoder ctc_loss ctc_unique_labels depth_to_space
        depthwise_conv2d depthwise_conv2d_backprop_filter depthwise_conv2d_backprop_input
        dilation2d dropout elu embedding_lookup embedding_lookup_sparse erosion2d
        experimental fixed_unigram_candidate_sampler fractional_avg_pool fractional_max_pool
        gelu in_top_k isotonic_regression l2_loss l2_normalize leaky_relu
        learned_unigram_candidate_sampler local_response_normalization log_poisson_loss
        log_softmax lrn max_pool max_pool1d max_pool2d max_pool3d max_pool_with_argmax
        moments nce_loss normalize_moments pool relu relu6 safe_embedding_lookup_sparse
        sampled_softmax_loss scale_regularization_loss selu separable_conv2d sigmoid
        sigmoid_cross_entropy_with_logits silu softmax softmax_cross_entropy_with_logits
        softplus softsign space_to_batch space_to_depth
        sparse_softmax_cross_entropy_with_logits sufficient_statistics swish tanh top_k
        weighted_cross_entropy_with_logits weighted_moments with_space_to_batch
        zero_fraction
    """.split(),
    "linalg": """
        LinearOperator LinearOperatorAdjoint LinearOperatorBlockDiag
        LinearOperatorBlockLowerTriangular LinearOperatorCirculant LinearOperatorCirculant2D
        LinearOperatorCirculant3D LinearOperatorComposition LinearOperatorDiag
        LinearOperatorFullMatrix LinearOperatorHouseholder LinearOperatorIdentity
        LinearOperatorInversion LinearOperatorKronecker LinearOperatorLowRankUpdate
        LinearOperatorLowerTriangular LinearOperatorPermutation LinearOperatorScaledIdentity
        LinearOperatorToeplitz LinearOperatorTridiag LinearOperatorZeros adjoint band_part
        banded_triangular_solve cholesky cholesky_solve cross det diag diag_part eig eigh
        eigh_tridiagonal eigvals eigvalsh einsum experimental expm eye global_norm inv
        l2_normalize logdet logm lstsq lu lu_matrix_inverse lu_reconstruct lu_solve matmul
        matrix_rank matrix_transpose matvec norm normalize pinv qr set_diag slogdet solve
        sqrtm svd tensor_diag tensor_diag_part tensordot trace triangular_solve
        tridiagonal_matmul tridiagonal_solve
    """.split(),
    "random": """
        Algorithm Generator all_candidate_sampler categorical create_rng_state experimental
        fixed_unigram_candidate_sampler fold_in gamma get_global_generator
        learned_unigram_candidate_sampler log_uniform_candidate_sampler normal poisson
        set_global_generator set_seed shuffle split stateless_binomial stateless_categorical
        stateless_gamma stateless_normal stateless_parameterized_truncated_normal
        stateless_poisson stateless_truncated_normal stateless_uniform truncated_normal
        uniform uniform_candidate_sampler
    """.split(),
}

_LINEAR_OPERATORS = "the LinearOperator class family (lazy structured matrices) is not built"
_SAMPLERS = "candidate samplers (sampled softmax training) are not built"
_SUBMODULE = "an experimental submodule"
NOT_PROVIDED = {
    "math": {
        "approx_max_k": "TPU approximate top-k; use tl.math.top_k",
        "approx_min_k": "TPU approximate top-k; use tl.math.top_k of -x",
        "betainc": "regularized incomplete beta: no xp kernel yet",
        "igamma": "regularized incomplete gamma: no xp kernel yet",
        "igammac": "regularized incomplete gamma: no xp kernel yet",
        "sobol_sample": "quasi-random Sobol sequences are not built",
        "special": "tf.math.special (dawsn, fresnel, spence, bessel_j/y/k...) is not built",
    },
    "nn": {
        **{name: "RNN cell wrappers of TF1-style cells; use keras.layers.RNN"
           for name in ("RNNCellDeviceWrapper", "RNNCellDropoutWrapper", "RNNCellResidualWrapper")},
        **{name: _SAMPLERS for name in ("all_candidate_sampler", "compute_accidental_hits",
                                        "fixed_unigram_candidate_sampler",
                                        "learned_unigram_candidate_sampler", "nce_loss",
                                        "sampled_softmax_loss")},
        "approx_max_k": "TPU approximate top-k; use tl.nn.top_k",
        "approx_min_k": "TPU approximate top-k",
        "atrous_conv2d_transpose": "not built yet (conv2d_transpose with dilations is)",
        "batch_norm_with_global_normalization": "a TF1 op; use tl.nn.batch_normalization",
        "collapse_repeated": "CTC helper not built yet",
        "ctc_beam_search_decoder": "CTC decoding is keras.ops.ctc_decode only",
        "ctc_greedy_decoder": "CTC decoding is keras.ops.ctc_decode only",
        "ctc_unique_labels": "CTC helper not built yet",
        "depthwise_conv2d_backprop_filter": "gradient op; reached through tl.GradientTape",
        "depthwise_conv2d_backprop_input": "gradient op; reached through tl.GradientTape",
        "dilation2d": "morphological dilation is not built",
        "erosion2d": "morphological erosion is not built",
        "embedding_lookup_sparse": "needs SparseTensor weights and combiners; not built",
        "safe_embedding_lookup_sparse": "needs SparseTensor weights and combiners; not built",
        "experimental": _SUBMODULE,
        "fractional_avg_pool": "fractional pooling is not built",
        "fractional_max_pool": "fractional pooling is not built",
        "isotonic_regression": "not built",
        "max_pool_with_argmax": "not built (max_pool is)",
        "scale_regularization_loss": "a distribution-strategy helper; not built",
        "space_to_batch": "not built (space_to_depth is)",
        "with_space_to_batch": "not built",
    },
    "linalg": {
        **{name: _LINEAR_OPERATORS for name in TF_NAMES["linalg"]
           if name.startswith("LinearOperator")},
        "banded_triangular_solve": "banded storage is not built; use triangular_solve",
        "eigh_tridiagonal": "not built; use eigh",
        "experimental": _SUBMODULE,
        "expm": "matrix exponential not built yet",
        "logm": "matrix logarithm (complex) not built",
        "sqrtm": "matrix square root not built",
        "tridiagonal_matmul": "tridiagonal storage is not built",
        "tridiagonal_solve": "tridiagonal storage is not built",
    },
    "random": {
        **{name: _SAMPLERS for name in ("all_candidate_sampler", "fixed_unigram_candidate_sampler",
                                        "learned_unigram_candidate_sampler",
                                        "log_uniform_candidate_sampler",
                                        "uniform_candidate_sampler")},
        "experimental": _SUBMODULE,
    },
}


@pytest.mark.parametrize("namespace", sorted(TF_NAMES))
def test_every_tensorflow_name_is_provided_or_listed_missing(namespace):
    module = getattr(tl, namespace)
    absent = [name for name in TF_NAMES[namespace]
              if not hasattr(module, name) and name not in NOT_PROVIDED[namespace]]
    assert not absent, f"tl.{namespace} lacks {absent}"


@pytest.mark.parametrize("namespace", sorted(TF_NAMES))
def test_the_missing_list_is_true(namespace):
    module = getattr(tl, namespace)
    provided = [name for name in NOT_PROVIDED[namespace] if hasattr(module, name)]
    assert not provided, f"tl.{namespace} now has {provided}: take them off NOT_PROVIDED"
    assert set(NOT_PROVIDED[namespace]) <= set(TF_NAMES[namespace])


def test_namespace_names_are_callables_or_classes_from_the_op_modules():
    for namespace in TF_NAMES:
        module = getattr(tl, namespace)
        for name in TF_NAMES[namespace]:
            if hasattr(module, name):
                value = getattr(module, name)
                assert callable(value), f"tl.{namespace}.{name}"
                assert value.__module__.startswith("trainlib.graph.ops"), f"tl.{namespace}.{name}"

