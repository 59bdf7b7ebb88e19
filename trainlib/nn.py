"""`tl.nn`: TensorFlow's `tf.nn` names (re-exports only; each op lives in `graph/ops/`)."""
from .graph.ops.math import (  # noqa: F401
    erf, in_top_k, sigmoid, softplus, softsign, tanh, top_k, zero_fraction)
from .graph.ops.nn import (  # noqa: F401
    atrous_conv2d, avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, batch_normalization,
    bias_add, compute_average_loss, conv1d, conv1d_transpose, conv2d, conv2d_transpose,
    conv3d, conv3d_transpose, conv_transpose, convolution, crelu, ctc_loss, depth_to_space,
    depthwise_conv2d, dropout, elu, embedding_lookup, gelu, l2_loss, l2_normalize,
    leaky_relu, local_response_normalization, log_poisson_loss, log_softmax, lrn, max_pool,
    max_pool1d, max_pool2d, max_pool3d, moments, normalize_moments, pool, relu, relu6, selu,
    separable_conv2d, sigmoid_cross_entropy_with_logits, silu, softmax,
    softmax_cross_entropy_with_logits, space_to_depth,
    sparse_softmax_cross_entropy_with_logits, sufficient_statistics, swish,
    weighted_cross_entropy_with_logits, weighted_moments)
