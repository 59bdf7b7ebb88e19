"""Random traced graphs for the pass tests: a hypothesis strategy of small programs.

A program is a list of instructions over a pool of values that starts with two
inputs and two constants (so constant-only subtrees occur); instructions cover
elementwise math, matmul, reshape/transpose chains, casts, reductions, shape
queries, identities, the x*1 / x+0 patterns and repeated subexpressions. Every
pool value has the inputs' shape or is a scalar, so any two combine.
"""
import numpy as np
from hypothesis import strategies as st

import trainlib as tl
from trainlib.graph import optimizer_config
from trainlib.graph.exec.program import compile_graph
from trainlib.graph.passes import PIPELINE

SHAPES = [(3, 4), (2, 3), (4, 1)]
UNARY = ["neg", "abs", "tanh", "sigmoid", "square", "identity", "relu"]
BINARY = ["add", "sub", "mul", "maximum"]
SPECIAL = ["mul1", "one_mul", "add0", "zero_add", "sub0", "div1", "negneg", "cast_same",
           "cast_roundtrip", "reshape_chain", "transpose_chain", "sum_broadcast", "matmul_sum",
           "size", "dup"]
KINDS = UNARY + BINARY + SPECIAL


def _apply(kind, a, b, shape):
    if kind == "neg":
        return -a
    if kind == "abs":
        return tl.abs(a)
    if kind == "tanh":
        return tl.tanh(a)
    if kind == "sigmoid":
        return tl.sigmoid(a)
    if kind == "square":
        return tl.square(tl.clip_by_value(a, -3.0, 3.0)) if a.shape.rank else tl.square(a)
    if kind == "identity":
        return tl.identity(a)
    if kind == "relu":
        return tl.nn.relu(a)
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "maximum":
        return tl.maximum(a, b)
    if kind == "mul1":
        return a * 1
    if kind == "one_mul":
        return tl.ones([], a.dtype) * a
    if kind == "add0":
        return a + 0
    if kind == "zero_add":
        return tl.zeros([], a.dtype) + a
    if kind == "sub0":
        return a - 0
    if kind == "div1":
        return a / 1
    if kind == "negneg":
        return -(-a)
    if kind == "cast_same":
        return _cast_same(a)
    if kind == "cast_roundtrip":
        other = tl.float64 if a.dtype is tl.float32 else tl.float32
        return tl.cast(tl.cast(a, other), a.dtype)
    if kind == "reshape_chain":
        return tl.reshape(tl.reshape(a, [-1]), a.shape)
    if kind == "transpose_chain":
        return tl.transpose(tl.transpose(a)) if a.shape.rank == 2 else a
    if kind == "sum_broadcast":
        return a + tl.reduce_sum(a, axis=-1, keepdims=True) if a.shape.rank else a
    if kind == "matmul_sum":
        if a.shape.rank != 2:
            return a
        return b * tl.reduce_mean(tl.matmul(a, tl.transpose(a)))
    if kind == "size":
        return a + tl.cast(tl.size(a), a.dtype) / 10
    raise AssertionError(kind)


def _cast_same(a):
    from trainlib.graph.op import apply  # noqa: PLC0415 -- tl.cast skips same-dtype casts
    return apply("Cast", a, DstT=a.dtype)


@st.composite
def programs(draw, dtypes=("float32", "float64"), kinds=KINDS, max_len=10):
    """(shape, dtype, instructions, input arrays, constant arrays, outputs)."""
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.integers(2, max_len))
    instructions = []
    for i in range(n):
        kind = draw(st.sampled_from(kinds))
        a = draw(st.integers(0, 3 + i))
        b = draw(st.integers(0, 3 + i))
        instructions.append((kind, a, b))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, shape).astype(dtype) for _ in range(2)]
    consts = [rng.uniform(-2, 2, shape).astype(dtype), np.asarray(rng.uniform(-2, 2), dtype)]
    n_out = draw(st.integers(1, 2))
    outputs = [draw(st.integers(0, 3 + n)) for _ in range(n_out)]
    return shape, dtype, instructions, inputs, consts, outputs


def make_function(program):
    """The Python function of a program (tensors in, tuple of tensors out)."""
    shape, _, instructions, _, consts, outputs = program

    def f(x, y):
        pool = [x, y, tl.constant(consts[0]), tl.constant(consts[1])]
        last = None
        for kind, ia, ib in instructions:
            if kind == "dup":
                if last is None:
                    continue
                kind, ia, ib = last
            a, b = pool[ia % len(pool)], pool[ib % len(pool)]
            pool.append(_apply(kind, a, b, shape))
            last = (kind, ia, ib)
        return tuple(pool[i % len(pool)] for i in outputs)
    return f


def trace_unoptimized(f, *arrays, **function_kwargs):
    """The graph of `f` traced with every pass off (not even pruning)."""
    off = {option: False for _, option, _ in PIPELINE}
    saved = optimizer_config.get_experimental_options()
    optimizer_config.set_experimental_options(off)
    try:
        return tl.function(f, autograph=False, **function_kwargs).get_concrete_function(
            *[tl.constant(a) for a in arrays]).optimized_graph  # every pass is off: as traced, outputs unwrapped
    finally:
        optimizer_config.reset_experimental_options()
        optimizer_config.set_experimental_options(saved)


def run_graph(graph, *arrays):
    """The outputs of `graph` on `arrays`, compiled as ConcreteFunction compiles it."""
    return [np.asarray(r) for r in compile_graph(graph, np).fn(*arrays)]


def run_eagerly(f, *arrays):
    return [np.asarray(t.numpy()) for t in f(*[tl.constant(a) for a in arrays])]
