"""The memory plan's joined concatenations: the pieces of a 1-D ConcatV2 (a flat optimizer's
gradient) are written straight into its buffer by their producers (`out=` a slice), only the
others are copied in; the values are those of the plain concatenation."""
import numpy as np

import trainlib as tl
from trainlib.graph.passes.memory import MemoryPlan

RNG = np.random.default_rng(0)
A = tl.constant(RNG.standard_normal((8, 5)).astype(np.float32))
B = tl.constant(RNG.standard_normal((5, 6)).astype(np.float32))


def _flat(a, b):
    m1 = tl.matmul(a, b)                  # written in place (its Reshape's only use)
    m2 = tl.matmul(tl.transpose(a), a)    # also used below: copied in at the concat
    s = tl.reduce_sum(a, axis=0)          # a kernel, no out=: copied in
    joined = tl.concat([tl.reshape(m1, [-1]), tl.reshape(m2, [-1]), s], 0)
    return joined * 2.0, tl.reduce_sum(m2)


def test_joined_concatenation_matches_the_plain_one_and_writes_in_place():
    fn = tl.function(_flat)
    got = fn(A, B)
    want = _flat(A, B)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    concrete = fn.get_concrete_function(A, B)
    source = concrete.python_source
    assert "out=concat_v2[0:48].reshape((8, 6))" in source
    assert "k_concat_v2" not in source
    assert source.count("k_reshape(") == 1   # the copied piece's; the written one's is left out
    plan = MemoryPlan(concrete.optimized_graph)
    (pieces,) = plan.joined.values()
    assert [(start, stop) for _, start, stop in pieces] == [(48, 73), (73, 78)]


def test_fused_optimizer_step_keeps_no_second_copy_of_the_gradients():
    peaks, sources = {}, {}
    for fused in (True, False):
        rng = np.random.default_rng(1)
        variables = [tl.Variable(rng.standard_normal(s).astype(np.float32))
                     for s in ((64, 64), (64,), (64, 64), (64,))]
        opt = tl.optim.SGD(0.1, fused=fused)
        x = tl.constant(rng.standard_normal((32, 64)).astype(np.float32))

        @tl.function
        def step(x):
            with tl.GradientTape() as tape:
                h = tl.tanh(tl.matmul(x, variables[0]) + variables[1])
                loss = tl.reduce_sum(tl.matmul(h, variables[2]) + variables[3])
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

        step(x)
        concrete = step.get_concrete_function(x)
        peaks[fused] = concrete._program.memory["peak_bytes"]
        sources[fused] = concrete.python_source
    assert "out=concat_v2[" in sources[True]
    # the flat buffer is allocated at the first gradient, so it may hold the others' places a
    # little earlier than the per-variable step holds them; a second copy would add them all
    gradient_bytes = (64 * 64 * 2 + 64 * 2) * 4
    assert peaks[True] < peaks[False] + gradient_bytes, peaks
