"""`tl.random`: TensorFlow's `tf.random` names (re-exports only; the ops live in
`graph/ops/random.py` (stateful draws) and `graph/ops/stateless_random.py` (seeded draws,
`Generator`))."""
from .graph.ops.random import (  # noqa: F401
    categorical, normal, set_seed, shuffle, truncated_normal, uniform)
from .graph.ops.stateless_random import (  # noqa: F401
    Algorithm, Generator, create_rng_state, fold_in, gamma, get_global_generator, poisson,
    set_global_generator, split, stateless_binomial, stateless_categorical, stateless_gamma,
    stateless_normal, stateless_parameterized_truncated_normal, stateless_poisson,
    stateless_truncated_normal, stateless_uniform)
