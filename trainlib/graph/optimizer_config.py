"""The graph optimizer's switches: which passes run (`tl.config.optimizer.*`).

Owns: the process-wide experimental options, named as TensorFlow's Grappler
names them where a Grappler equivalent exists. Invariants: every known option
is a bool; unknown names are refused (a typo must not silently do nothing);
`get_experimental_options()` returns only what was set, as TensorFlow does.
"""

# option -> what it switches (on by default except OFF_BY_DEFAULT; fusion runs only for
# jit_compile=True Functions)
OPTIONS = {
    "pruning": "non-strict execution: drop ops neither outputs nor side effects need",
    "read_forwarding": "reuse a Variable read when no write to it came between (lets CSE merge more)",
    "constant_folding": "evaluate ops on constants (and static shape queries) while tracing",
    "common_subexpression_elimination": "merge identical non-stateful ops",
    "arithmetic_optimization": "x*1, x+0, x-0, x/1, --x, constant selects, transpose/reshape chains, same-dtype casts, identities",
    "conv_patch_sharing": "one im2col patches op for the convolutions and filter gradients of one input",
    "softmax_sharing": "one softmax for a sparse cross-entropy and its gradient",
    "conv_bias_fusion": "a BiasAdd of a convolution's output added inside the convolution's kernel",
    "pool_before_relu": "max pooling before a ReLU, so the ReLU and its gradient run on the pooled tensor",
    "dependency_optimization": "dead code elimination after the rewrites",
    "fusion": "fuse elementwise chains into one op (jit_compile=True Functions)",
}

# conv_patch_sharing keeps the patches alive from the forward to the backward pass: with
# glibc's default allocator the extra page faults cost more than building them twice
# (bench/conv_patches.py: 1.06-1.11x the step), so it is opt-in
OFF_BY_DEFAULT = frozenset({"conv_patch_sharing"})

_options = {}


def set_experimental_options(options):
    """Turns graph optimization passes on or off for Functions traced from now on.

    Args:
        options: a dict {option name: bool}; names: `pruning`, `read_forwarding`, `constant_folding`,
            `common_subexpression_elimination`, `arithmetic_optimization`,
            `conv_patch_sharing`, `conv_bias_fusion`, `softmax_sharing`, `pool_before_relu`, `dependency_optimization`, `fusion`. Missing names keep their setting.

    Raises:
        ValueError: for an unknown option name.
        TypeError: for a value that is not a bool.

    Example:
        >>> tl.config.optimizer.set_experimental_options({"constant_folding": False})
    """
    for key, value in dict(options).items():
        if key not in OPTIONS:
            raise ValueError(f"unknown optimizer option {key!r}; expected one of {sorted(OPTIONS)}")
        if not isinstance(value, bool):
            raise TypeError(f"optimizer option {key!r} must be a bool, got {value!r}")
    _options.update(options)


def get_experimental_options():
    """The options set with `set_experimental_options` (a new dict; unset ones are on, except
    `conv_patch_sharing`).

    Example:
        >>> tl.config.optimizer.get_experimental_options()
        {'constant_folding': False}
    """
    return dict(_options)


def reset_experimental_options():
    """Every pass back to its default (for tests)."""
    _options.clear()


def enabled(name, overrides=None):
    """Whether pass option `name` is on: `overrides` first, then the global options."""
    if overrides is not None and name in overrides:
        return bool(overrides[name])
    return _options.get(name, name not in OFF_BY_DEFAULT)
