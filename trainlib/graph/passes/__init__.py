"""Graph optimization passes: each takes a graph and returns an equivalent graph.

`optimize(graph)` runs the pipeline in a fixed order:
  1. prune first: it implements non-strict execution (only what the outputs
     and side effects need runs), and every later pass then works on less;
  2. read forwarding: repeated reads of a Variable with no write between
     become one, so that CSE below can merge what is computed from them;
  3. constant folding before CSE and simplification: folded subtrees become
     Consts that CSE can merge and that make x*1 / x+0 patterns visible;
  4. CSE before simplification: merged inputs make more patterns match
     (e.g. the inner and outer ops of a transpose pair read one tensor);
  5. arithmetic simplification, which leaves dead ops behind;
  6. conv patch sharing after the rewrites (CSE has merged the inputs that
     convolutions and their filter gradients read): one im2col per input and
     geometry; softmax sharing likewise (one softmax for a sparse cross-entropy
     and its gradient); a convolution's BiasAdd into the convolution (after
     patch sharing, which takes the convolutions it can); ReLU + max pooling as max pooling + ReLU (the ReLU and
     its gradient on the pooled tensor) after autodiff made both gradients;
  7. dead code elimination (prune again) removes them, before fusion so
     that dead ops never join a fused cluster's use counts;
  8. fusion last: it runs after autodiff and after every rewrite, on the
     smallest graph, and only for `jit_compile=True` Functions.
Options (see `trainlib/graph/optimizer_config.py`) switch each pass off.
`memory.py` is not in the pipeline: it plans the buffers of the final graph, and the
executor (`graph/exec`) follows the plan when it compiles the graph.
"""
from .. import optimizer_config
from .constant_fold import constant_fold
from .conv_bias import fuse_conv_bias
from .conv_patches import share_patches
from .cse import cse
from .fuse import fuse, worth_fusing
from .pool_relu import pool_before_relu
from .prune import prune
from .read_forwarding import forward_reads
from .simplify import simplify
from .xent import share_softmax

# (report name, option name, pass(graph, options) -> graph)
PIPELINE = (
    ("prune", "pruning", lambda g, o: prune(g)),
    ("read_forwarding", "read_forwarding", lambda g, o: forward_reads(g)),
    ("constant_folding", "constant_folding", lambda g, o: constant_fold(g)),
    ("common_subexpression_elimination", "common_subexpression_elimination", lambda g, o: cse(g)),
    ("arithmetic_optimization", "arithmetic_optimization", lambda g, o: simplify(g)),
    ("conv_patch_sharing", "conv_patch_sharing", lambda g, o: share_patches(g)),
    ("conv_bias_fusion", "conv_bias_fusion", lambda g, o: fuse_conv_bias(g)),
    ("softmax_sharing", "softmax_sharing", lambda g, o: share_softmax(g)),
    ("pool_before_relu", "pool_before_relu", lambda g, o: pool_before_relu(g)),
    ("dead_code_elimination", "dependency_optimization", lambda g, o: prune(g)),
    ("fusion", "fusion", lambda g, o: fuse(g, jit_compile=True, min_elements=worth_fusing())
     if o.get("jit_compile") else g),
)


def optimize(graph, options=None, report=None):
    """Runs every enabled pass on `graph` in pipeline order; returns the result.

    Args:
        graph: the FuncGraph to optimize (rewritten in place).
        options: {option name: bool} overriding `tl.config.optimizer`'s options
            for this call; `"jit_compile": True` enables fusion (off by default).
        report: if a list, (pass name, op count before, op count after) is appended per pass.
    """
    options = dict(options or {})
    for name, option, run in PIPELINE:
        if not optimizer_config.enabled(option, options):
            continue
        before = len(graph.operations)
        graph = run(graph, options)
        if report is not None:
            report.append((name, before, len(graph.operations)))
    return graph
