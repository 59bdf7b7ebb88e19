"""Lowering (graph/exec): readable generated code, direct ufunc calls, memory planning (free
early, reuse via out=), in-place writes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph.exec.program import compile_graph
from trainlib.graph.passes.memory import MemoryPlan

_UNARY = [tl.tanh, tl.exp, lambda a: a * 2.0, lambda a: -a, tl.square, lambda a: a + 1.0]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, tl.maximum]


def _graph(fn, *args):
    return tl.function(fn).get_concrete_function(*args).graph


def _run(graph, arrays, plan_memory):
    return compile_graph(graph, np, "f", plan_memory=plan_memory).fn(*arrays)


def test_chain_reuses_dead_buffers_and_reports_peak():
    def chain(x):
        return tl.tanh(tl.exp(x * 2.0) + 1.0) * x - x

    x = tl.constant(np.linspace(-1, 1, 4096).astype(np.float32))
    cf = tl.function(chain).get_concrete_function(x)
    src = cf.python_source
    assert "out=" in src and "xp_tanh(" in src and "k_" not in src.split("\n", 1)[1]
    memory = cf._program.memory
    assert memory["reused_bytes"] > 0
    assert memory["peak_bytes"] < memory["unplanned_peak_bytes"]
    np.testing.assert_allclose(tl.function(chain)(x).numpy(), chain(x).numpy(), rtol=1e-6)


def test_intermediates_are_deleted_after_last_use():
    def f(x, w):
        h = tl.matmul(x, w)            # dies after relu: not reusable (matmul consumer below)
        r = tl.nn.relu(h)
        return tl.reduce_sum(tl.matmul(r, w))

    x = tl.constant(np.ones([64, 64], np.float32))
    src = tl.function(f).get_concrete_function(x, x).python_source
    assert "del " in src


def test_outputs_and_variables_are_never_overwritten():
    v = tl.Variable(np.ones(2048, np.float32))

    @tl.function
    def f(x):
        a = x * 2.0
        v.assign(a)            # a escapes into the Variable: its buffer must not be reused
        b = tl.exp(a) + 1.0
        return a, b * 3.0

    x = tl.constant(np.full(2048, 0.5, np.float32))
    a, b = f(x)
    np.testing.assert_allclose(v.numpy(), np.full(2048, 1.0))
    np.testing.assert_allclose(a.numpy(), np.full(2048, 1.0))
    a2, _ = f(x)  # a second call must not write into the first call's outputs
    np.testing.assert_allclose(a.numpy(), np.full(2048, 1.0))
    np.testing.assert_allclose(b.numpy(), (np.exp(1.0) + 1.0) * 3.0, rtol=1e-6)


def test_views_keep_their_base_alive():
    def f(x):
        y = x * 2.0
        t = tl.transpose(y)      # a view of y: y's buffer must not be reused while t lives
        z = tl.exp(x) + 1.0
        return t + tl.transpose(z)

    x = tl.constant(np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096.0)
    np.testing.assert_allclose(tl.function(f)(x).numpy(), f(x).numpy(), rtol=1e-6)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 4)), min_size=1, max_size=10))
def test_planned_equals_unplanned_and_eager(program):
    def fn(x, y):
        values = [x, y]
        for u, b, j in program:
            a = _UNARY[u](values[-1])
            values.append(_BINARY[b](tl.tanh(a), values[j % len(values)]))
        return values[-1], values[len(values) // 2]

    rng = np.random.default_rng(len(program))
    arrays = [rng.uniform(-1, 1, size=[33, 40]).astype(np.float32) for _ in range(2)]
    graph = _graph(fn, *[tl.constant(a) for a in arrays])
    planned = _run(graph, arrays, True)
    unplanned = _run(graph, arrays, False)
    eager = fn(*[tl.constant(a) for a in arrays])
    for p, u, e in zip(planned, unplanned, eager):
        np.testing.assert_array_equal(p, u)
        np.testing.assert_allclose(p, e.numpy(), rtol=1e-5, atol=1e-6)
    plan = MemoryPlan(graph)
    assert plan.peak_bytes <= plan.total_intermediate_bytes


def test_variable_writes_are_in_place_only_when_no_old_value_is_used_later():
    v = tl.Variable(np.ones(1024, np.float32))

    @tl.function
    def step(g):
        v.assign_sub(g * 0.5)          # nothing reads the old value later: in place
        return tl.reduce_sum(v.read_value())

    g = tl.constant(np.ones(1024, np.float32))
    held = v.read_value()               # an eager read: the caller holds the current array
    step(g)
    np.testing.assert_array_equal(held.numpy(), np.ones(1024))  # not mutated under the caller
    src = step.get_concrete_function(g).python_source
    assert "ip_assign_sub_variable_op(" in src
    before = v._array
    step(g)
    assert v._array is before           # updated in place now that the Variable owns it
    np.testing.assert_allclose(v.numpy(), np.zeros(1024))


def test_an_update_delta_is_made_in_a_dead_buffer_and_the_buffer_reused_after():
    # Adam's shape: each delta is a product of a dying temporary, read by the Variable write
    m, p = tl.Variable(np.zeros(4096, np.float32)), tl.Variable(np.ones(4096, np.float32))

    @tl.function
    def step(g):
        m.assign_add((g - m) * 0.1)
        p.assign_sub(m * 0.5 / (tl.sqrt(m * m) + 1.0))
        return tl.constant(0.0)

    g = tl.constant(np.full(4096, 2.0, np.float32))
    for _ in range(2):
        step(g)
    m_want = 2.0 - 2.0 * 0.9 ** 2
    np.testing.assert_allclose(m.numpy(), np.full(4096, m_want), rtol=1e-6)
    src = step.get_concrete_function(g).python_source
    delta = next(line for line in src.splitlines() if "xp_multiply(" in line and "c_0_1" in line)
    assert "out=" in delta    # into the dying (g - m), not a fresh array
    assert src.count("out=") >= 5 and "ip_assign_sub_variable_op(" in src


def test_reads_used_after_a_write_or_returned_keep_their_values():
    v = tl.Variable(np.full(64, 2.0, np.float32))

    @tl.function
    def f():
        old = v.read_value()
        v.assign_add(tl.ones([64]))
        return old, old * 1.0 + v.read_value()   # old is used after the write

    for _ in range(3):
        before = v.numpy()
        old, total = f()
        np.testing.assert_array_equal(old.numpy(), before)
        np.testing.assert_array_equal(total.numpy(), before + before + 1)
    src = f.get_concrete_function().python_source
    assert "ip_assign_add_variable_op(" not in src

    @tl.function
    def read_then_write():
        out = v.read_value()
        v.assign_sub(tl.ones([64]))   # out escapes as an output: must not be written in place
        return out

    first = read_then_write()
    snapshot = first.numpy().copy()
    read_then_write()
    np.testing.assert_array_equal(first.numpy(), snapshot)


def test_ops_listed_as_fresh_never_return_their_inputs_memory():
    import importlib

    from tests.graph.ops.harness import make_inputs
    from trainlib.graph.op import REGISTRY
    _FRESH_OUTPUT_OPS = {name for name, d in REGISTRY.items() if d.fresh_output}
    seen = set()
    for module in ("test_math", "test_nn", "test_array"):
        for case in importlib.import_module(f"tests.graph.ops.{module}").CASES:
            fresh = [o for o in case.ops if o in _FRESH_OUTPUT_OPS]
            if not fresh or len(case.ops) != 1:
                continue
            arrays = make_inputs(case, case.dtypes[0], np.random.default_rng(0))
            tensors = [tl.constant(a) for a in arrays]
            out = case.fn(*tensors)
            for o in (out if isinstance(out, (list, tuple)) else [out]):
                for t in tensors:
                    assert not np.shares_memory(np.asarray(o._value), np.asarray(t._value)), case
            seen.update(fresh)
    assert len(seen) >= 10, seen


def test_a_read_stored_into_another_variable_is_not_written_under_it():
    w = tl.Variable(np.ones(256, np.float32))
    v = tl.Variable(np.zeros(256, np.float32))

    @tl.function
    def copy_then_update():
        copied = v.assign(w.read_value())   # v now holds w's current value (result used)
        total = tl.reduce_sum(copied)
        w.assign_add(tl.ones([256]))        # later writes to w must not change v
        return total

    for step in range(3):
        copy_then_update()
        np.testing.assert_array_equal(v.numpy(), np.full(256, 1.0 + step))
        np.testing.assert_array_equal(w.numpy(), np.full(256, 2.0 + step))


def test_loop_owned_tensor_array_writes_in_place_and_keep_calls_independent():
    @tl.function(autograph=False)
    def squares(n):
        ta = tl.TensorArray(tl.float32, size=n)
        _, ta = tl.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, tl.cast(i * i, tl.float32))),
                              (tl.constant(0), ta))
        return ta.stack()

    src = squares.get_concrete_function(tl.constant(4)).python_source
    assert "ip_tensor_array_write(" in src and ".copy()" in src
    first = squares(tl.constant(4))
    second = squares(tl.constant(4))   # the initial buffer was not written under the first call
    np.testing.assert_array_equal(first.numpy(), [0.0, 1.0, 4.0, 9.0])
    np.testing.assert_array_equal(second.numpy(), first.numpy())

    @tl.function(autograph=False)
    def running(n):   # the body also reads the buffer: every write copies
        ta = tl.TensorArray(tl.float32, size=n + 1).write(0, 1.0)
        _, ta = tl.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i + 1, ta.read(i) * 2.0)),
                              (tl.constant(0), ta))
        return ta.stack()

    assert "ip_tensor_array_write(" not in running.get_concrete_function(tl.constant(3)).python_source
    np.testing.assert_array_equal(running(tl.constant(3)).numpy(), [1.0, 2.0, 4.0, 8.0])


def test_lowering_facts_agree_with_the_kernels():
    """Each op's lowering facts (its OpDef fields) say what its kernel does: a `ufunc` op is
    that xp function, an `into` form writes what the kernel returns (float32 sigmoid and
    tanh by their faster formulas, within 1e-6), C expressions only on elementwise ops."""
    from trainlib.graph import dtypes
    from trainlib.graph.op import REGISTRY

    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, size=(4, 5)).astype(np.float32)
    y = rng.uniform(0.5, 2, size=(4, 5)).astype(np.float32)
    checked = 0
    for name, d in REGISTRY.items():
        if d.c_expr is not None or d.into is not None:
            assert d.elementwise and not d.stateful, name
        if d.ufunc is not None:
            assert d.into == d.ufunc or callable(d.into), name
        if d.into is None or not d.elementwise or d.num_outputs != 1:
            continue
        for inputs in ([x], [x, y], [x > 0, x, y]):
            attrs = {"DstT": dtypes.float64} if name == "Cast" else {}
            try:
                want = d.kernel(np, *inputs, **attrs)
            except (TypeError, ValueError):
                continue
            if isinstance(inputs[0], np.ndarray) and inputs[0].dtype == bool and name != "SelectV2":
                continue
            out = np.empty_like(want)
            if isinstance(d.into, str):
                getattr(np, d.into)(*inputs, out=out)
            else:
                d.into(np, *inputs, out, np.empty_like(want), **attrs)
            np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6, err_msg=name)
            checked += 1
            break
    assert checked >= 30, checked


# ------------------------------------------------------------------ buffers that live across calls

def _chain(x):
    return tl.tanh(x * 2.0 + 1.0) * tl.sigmoid(x) - x ** 2


def _chain_np(a):
    return np.tanh(a * 2 + 1) * (1 / (1 + np.exp(-a.astype(np.float64)))) - a.astype(np.float64) ** 2


def test_intermediate_buffers_are_kept_between_calls_and_outputs_never_alias():
    f = tl.function(_chain)
    a = np.linspace(-3, 3, 4096, dtype=np.float32)
    b = a[::-1].copy()
    cf = f.get_concrete_function(tl.constant(a))
    pool = cf._program.buffers
    assert cf._program.memory["slots"] >= 1 and cf._program.memory["persistent_bytes"] > 0
    first = f(tl.constant(a))
    kept = [id(buf) for buf in pool.free[0]]
    second = f(tl.constant(b))          # the same slots, written again
    assert [id(buf) for buf in pool.free[0]] == kept and len(pool) == 1
    one, two = first.numpy(), second.numpy()
    assert not np.shares_memory(one, two)
    for buf in pool.free[0]:
        assert not np.shares_memory(one, buf) and not np.shares_memory(two, buf)
    np.testing.assert_allclose(one, _chain_np(a), rtol=1e-5, atol=1e-5)   # not overwritten
    np.testing.assert_allclose(two, _chain_np(b), rtol=1e-5, atol=1e-5)


def test_values_a_kernel_may_view_or_return_never_take_a_slot():
    @tl.function
    def f(x):
        y = x * 2.0                     # read by a reshape (a view): must not be a slot
        z = tl.exp(x) + 1.0             # a slot
        return tl.reshape(y, [-1]), z * 3.0, y + z

    x = tl.constant(np.ones((64, 64), np.float32))
    assert f.get_concrete_function(x)._program.memory["slots"] == 1   # z's chain only
    results = [f(x) for _ in range(3)]
    for r in results:
        np.testing.assert_allclose(r[0].numpy(), 2.0)
        np.testing.assert_allclose(r[1].numpy(), (np.e + 1) * 3, rtol=1e-6)
    arrays = [t.numpy() for r in results for t in r]
    for i, p in enumerate(arrays):
        for q in arrays[i + 1:]:
            assert not np.shares_memory(p, q)


def test_threads_calling_one_function_use_their_own_buffers():
    import threading

    f = tl.function(_chain)
    inputs = [np.full(8192, v, np.float32) for v in (-1.0, 0.5, 2.0, 3.0)]
    f(tl.constant(inputs[0]))
    errors, barrier = [], threading.Barrier(len(inputs))

    def work(a):
        want = _chain_np(a)
        barrier.wait()
        for _ in range(40):
            got = f(tl.constant(a)).numpy()
            if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                errors.append((a[0], got[0], want[0]))

    threads = [threading.Thread(target=work, args=(a,)) for a in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    pool = f.get_concrete_function(tl.constant(inputs[0]))._program.buffers
    assert 1 <= len(pool) <= len(inputs)


def test_unknown_dims_keep_a_buffer_per_shape_seen():
    f = tl.function(_chain, input_signature=[tl.TensorSpec([None, 16], tl.float32)])
    cf = f.get_concrete_function()
    assert cf._program.memory["slots"] >= 1 and "buffers[" in cf.python_source
    rng = np.random.default_rng(0)
    held = []
    for rows in (8, 8, 3, 8, 3):
        a = rng.uniform(-2, 2, (rows, 16)).astype(np.float32)
        out = f(tl.constant(a)).numpy()
        np.testing.assert_allclose(out, _chain_np(a), rtol=1e-5, atol=1e-5)
        held.append((a, out))
    slots = cf._program.buffers.free[0]
    assert any(getattr(s, "shape", None) == (3, 16) for s in slots)   # made for the last shape
    for a, out in held:      # earlier results untouched by later calls of other shapes
        np.testing.assert_allclose(out, _chain_np(a), rtol=1e-5, atol=1e-5)


def test_a_failed_call_does_not_give_back_its_buffers():
    @tl.function
    def f(x, i):
        y = tl.exp(x) * 2.0
        return tl.gather(y + 1.0, i)

    x = tl.constant(np.zeros(1024, np.float32))
    np.testing.assert_allclose(f(x, tl.constant([0])).numpy(), [3.0])
    pool = f.get_concrete_function(x, tl.constant([0]))._program.buffers
    assert len(pool) == 1
    with pytest.raises(tl.errors.InvalidArgumentError):
        f(x, tl.constant([5000]))
    assert len(pool) == 0          # the failed call's set is dropped, not reused half-written
    np.testing.assert_allclose(f(x, tl.constant([1])).numpy(), [3.0])
    assert len(pool) == 1


def test_slots_of_known_and_unknown_shape_in_one_function():
    @tl.function(input_signature=[tl.TensorSpec([None, 16], tl.float32),
                                  tl.TensorSpec([16], tl.float32)])
    def f(x, w):
        scale = tl.exp(w) * 2.0                 # known shape: allocated once
        return tl.tanh(x * 3.0) * 0.5 + scale   # unknown rows: made per shape seen

    x = np.linspace(-1, 1, 5 * 16, dtype=np.float32).reshape(5, 16)
    w = np.linspace(0, 1, 16, dtype=np.float32)
    memory = f.get_concrete_function()._program.memory
    assert memory["slots"] >= 2 and memory["persistent_bytes"] == 16 * 4
    for rows in (5, 2, 5):
        got = f(tl.constant(x[:rows]), tl.constant(w)).numpy()
        np.testing.assert_allclose(got, np.tanh(x[:rows] * 3) * 0.5 + np.exp(w) * 2, rtol=1e-6)


def test_one_row_gather_is_a_view_in_compiled_code_and_still_checks_its_index():
    v = tl.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))

    @tl.function
    def f(i):
        row = tl.gather(v, i)            # a view of the Variable's array in compiled code
        v.assign_add(tl.ones([4, 3]))    # so this write must not go under it
        return row * 1.0, tl.gather(v, i)

    src = f.get_concrete_function(tl.constant(1)).python_source
    assert "[i] if 0 <= i < len(" in src
    before, after = f(tl.constant(1))
    np.testing.assert_array_equal(before.numpy(), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(after.numpy(), [4.0, 5.0, 6.0])
    for bad in (4, -1):
        with pytest.raises(tl.errors.InvalidArgumentError, match=f"= {bad} is not in \\[0, 4\\)"):
            f(tl.constant(bad))


def test_a_loop_iteration_is_plain_calls_no_identity_kernels():
    @tl.function(autograph=False)
    def rnn(x, w, u):
        steps = tl.shape(x)[0]
        ta = tl.TensorArray(tl.float32, size=steps)

        def body(i, h, ta):
            h = tl.tanh(tl.gather(x, i) @ w + h @ u)
            return i + 1, h, ta.write(i, h)

        _, h, ta = tl.while_loop(lambda i, h, ta: i < steps, body,
                                 (tl.constant(0), tl.zeros([4, 8]), ta))
        return h, ta.stack()

    rng = np.random.default_rng(0)
    x, w, u = (rng.normal(size=s).astype(np.float32) for s in ((6, 4, 3), (3, 8), (8, 8)))
    src = rnn.get_concrete_function(*(tl.constant(a) for a in (x, w, u))).python_source
    loop = src[src.index("while True:"):]
    assert "k_identity" not in src and "k_gather_v2(xp" in loop
    assert "xp_less(" not in loop and " < c_" in loop   # the condition: a scalar comparison
    assert "] if 0 <= " in loop   # the row read is a view
    h, seq = rnn(*(tl.constant(a) for a in (x, w, u)))
    want_h, want = np.zeros((4, 8), np.float32), []
    for t in range(6):
        want_h = np.tanh(x[t] @ w + want_h @ u)
        want.append(want_h)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seq.numpy(), np.stack(want), rtol=1e-5, atol=1e-6)


def test_while_gradient_sums_row_gradients_of_a_captured_tensor_in_place():
    rng = np.random.default_rng(1)
    x = tl.constant(rng.normal(size=(7, 3, 4)).astype(np.float32))
    u = tl.constant(rng.normal(size=(4, 4)).astype(np.float32) * 0.5)

    def loss(x, u):
        def body(i, h):
            return i + 1, tl.tanh(tl.gather(x, i) + h @ u)   # row i of a captured tensor
        _, h = tl.while_loop(lambda i, h: i < 7, body, (tl.constant(0), tl.zeros([3, 4], x.dtype)))
        return tl.reduce_sum(h * h)

    def grads(x, u):
        with tl.GradientTape() as tape:
            tape.watch([x, u])
            value = loss(x, u)
        return tape.gradient(value, [x, u])

    traced = tl.function(grads)
    src = traced.get_concrete_function(x, u).python_source
    backward = src[src.rindex("while True:"):]
    assert "ip_tensor_scatter_add(xp, " in backward and "k_gather_v2_grad" not in backward
    for _ in range(2):   # the accumulator is the loop's own copy: calls stay independent
        for got, want in zip(traced(x, u), grads(x, u)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    # finite differences on one entry of x
    eps, (gx, _) = 1e-2, traced(x, u)
    bump = np.zeros((7, 3, 4), np.float32)
    bump[2, 1, 3] = eps
    xa = x.numpy().astype(np.float64)
    numeric = (float(loss(tl.constant(xa + bump), tl.constant(u.numpy().astype(np.float64)))) -
               float(loss(tl.constant(xa - bump), tl.constant(u.numpy().astype(np.float64))))) / (2 * eps)
    assert abs(gx.numpy()[2, 1, 3] - numeric) < 1e-3 * max(1.0, abs(numeric))


def test_a_steady_call_allocates_only_what_it_returns():
    import tracemalloc

    f = tl.function(_chain)
    x = tl.constant(np.linspace(-3, 3, 100_000, dtype=np.float32))
    f(x)
    f(x)
    tracemalloc.start()
    try:
        out = f(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the result (400 kB) and small change; the unplanned graph would hold 3-4 such arrays
    assert out.numpy().nbytes <= peak < 1.25 * out.numpy().nbytes


def test_large_values_read_through_views_take_private_slots_unless_they_escape():
    @tl.function(autograph=False)
    def f(x, w, v):
        y = tl.reshape(x @ w, [256, 256])    # 256 kB read through a view: a slot of its own
        z = tl.reshape(x @ w + 1.0, [-1])   # a view of it is returned: never a slot
        return y @ v, z

    rng = np.random.default_rng(0)
    args = [rng.normal(size=s).astype(np.float32) for s in ((256, 64), (64, 256), (256, 8))]
    cf = f.get_concrete_function(*(tl.constant(a) for a in args))
    assert cf._program.memory["slots"] == 1
    assert cf._program.memory["persistent_bytes"] == 256 * 256 * 4
    pool = cf._program.buffers
    results = []
    for scale in (1.0, -2.0):
        a = [args[0] * scale, args[1], args[2]]
        out, z = f(*(tl.constant(b) for b in a))
        results.append((out.numpy(), z.numpy()))
        np.testing.assert_allclose(out.numpy(), (a[0] @ a[1]) @ a[2], rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(z.numpy(), (a[0] @ a[1] + 1.0).reshape(-1), rtol=1e-5,
                                   atol=1e-4)
    for out, z in results:
        for buf in pool.free[0]:
            assert not np.shares_memory(out, buf) and not np.shares_memory(z, buf)
    np.testing.assert_allclose(results[0][1], (args[0] @ args[1] + 1.0).reshape(-1),
                               rtol=1e-5, atol=1e-4)   # not overwritten by the second call


def test_a_loop_owned_buffer_takes_a_slot_when_it_does_not_escape():
    def make(returned):
        @tl.function(autograph=False)
        def f(x, v):
            steps = x.shape[0]
            ta = tl.TensorArray(tl.float32, size=steps, element_shape=[64, 64])
            _, ta = tl.while_loop(lambda i, ta: i < steps,
                                  lambda i, ta: (i + 1, ta.write(i, tl.gather(x, i) * 2.0)),
                                  (tl.constant(0), ta))
            rows = tl.reshape(ta.stack(), [-1, 64])   # (16 * 64, 64): 256 kB
            return (rows @ v, rows) if returned else rows @ v
        return f

    rng = np.random.default_rng(1)
    x, v = rng.normal(size=(16, 64, 64)).astype(np.float32), rng.normal(size=(64, 4)).astype(np.float32)
    want = (x * 2.0).reshape(-1, 64) @ v
    kept = make(False)
    src = kept.get_concrete_function(tl.constant(x), tl.constant(v)).python_source
    assert "[...] = " in src and ".copy()" not in src
    first = kept(tl.constant(x), tl.constant(v)).numpy()
    second = kept(tl.constant(-x), tl.constant(v)).numpy()
    np.testing.assert_allclose(first, want, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(second, -want, rtol=1e-4, atol=1e-3)
    escaping = make(True)
    src = escaping.get_concrete_function(tl.constant(x), tl.constant(v)).python_source
    assert ".copy()" in src and "[...] = " not in src
    _, rows = escaping(tl.constant(x), tl.constant(v))
    escaping(tl.constant(-x), tl.constant(v))
    np.testing.assert_allclose(rows.numpy(), (x * 2.0).reshape(-1, 64))   # still its own


def test_a_loop_step_writes_rows_by_assignment_and_reuses_its_temporaries():
    @tl.function(autograph=False)
    def f(x, u):
        ta = tl.TensorArray(tl.float32, size=5)

        def body(i, h, ta):
            h = tl.tanh(tl.gather(x, i) + h @ u) * 0.5
            return i + 1, h, ta.write(i, h)

        _, h, ta = tl.while_loop(lambda i, h, ta: i < 5, body,
                                 (tl.constant(0), tl.zeros([3, 4]), ta))
        return ta.stack()

    rng = np.random.default_rng(2)
    x, u = rng.normal(size=(5, 3, 4)).astype(np.float32), rng.normal(size=(4, 4)).astype(np.float32)
    loop = f.get_concrete_function(tl.constant(x), tl.constant(u)).python_source
    loop = loop[loop.index("while True:"):]
    assert "[loop_var" in loop and "] = " in loop      # the row write is an assignment
    assert "out=" in loop                               # step temporaries written in place
    h, want = np.zeros((3, 4), np.float32), []
    for t in range(5):
        h = np.tanh(x[t] + h @ u) * 0.5
        want.append(h)
    for _ in range(2):
        np.testing.assert_allclose(f(tl.constant(x), tl.constant(u)).numpy(), np.stack(want),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sizes", [4, [2, 3, 3], [1, -1]])
def test_a_split_of_static_sizes_is_written_as_slices(sizes):
    @tl.function
    def f(x):
        return [p * 1.0 for p in tl.split(x, sizes, axis=-1)]

    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    src = f.get_concrete_function(tl.constant(x)).python_source
    assert "k_split" not in src and "[:, 0:" in src
    want = np.split(x, 4, axis=-1) if sizes == 4 else \
        np.split(x, np.cumsum([s if s > 0 else 8 - 1 for s in sizes])[:-1], axis=-1)
    for got, w in zip(f(tl.constant(x)), want):
        np.testing.assert_array_equal(got.numpy(), w)


@pytest.mark.parametrize("op", [tl.less, tl.less_equal, tl.greater, tl.greater_equal, tl.equal,
                                tl.not_equal])
@pytest.mark.parametrize("a,b", [(1, 2), (2, 2), (3.0, float("nan")), (-1.5, -2.5)])
def test_scalar_comparisons_are_operators_with_the_ufunc_results(op, a, b):
    f = tl.function(lambda x, y: op(x, y))
    x, y = tl.constant(a), tl.constant(b)
    src = f.get_concrete_function(x, y).python_source
    assert "xp_" not in src.split("return")[0].split("\n", 1)[1]
    got = f(x, y)
    want = getattr(np, op.__name__)(np.asarray(a, x.dtype.np), np.asarray(b, y.dtype.np))
    assert got.dtype == tl.bool and got.numpy() == want


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["add", "subtract", "multiply", "divide"]),
       dtype=st.sampled_from([np.float32, np.float64]),
       a=st.floats(-1e30, 1e30, allow_subnormal=False), b=st.floats(-1e30, 1e30, allow_subnormal=False))
def test_scalar_float_arithmetic_is_operators_with_the_ufunc_results(op, dtype, a, b):
    """Two float scalars (Adam's step size) are added, multiplied... by numpy's scalar
    operators: the ufunc's value and dtype, bit for bit, also after a Variable read."""
    v = tl.Variable(np.asarray(b, dtype))
    f = tl.function(lambda x, y: getattr(tl.math, op)(getattr(tl.math, op)(x, y), v) * 0.5)
    x, y = tl.constant(np.asarray(a, dtype)), tl.constant(np.asarray(b, dtype))
    src = f.get_concrete_function(x, y).python_source
    assert "xp_" not in src.split("return")[0].split("\n", 1)[1]
    ufunc = getattr(np, "true_divide" if op == "divide" else op)
    with np.errstate(all="ignore"):
        want = np.multiply(ufunc(ufunc(x.numpy(), y.numpy()), v.numpy()), dtype(0.5))
        got = f(x, y)
    assert got.dtype.np == dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_scalar_integer_arithmetic_keeps_the_ufunc():
    """numpy's scalar operators warn on integer overflow where the ufunc wraps, as TensorFlow
    does: integer scalars stay ufunc calls."""
    f = tl.function(lambda x, y: x * y + x)
    x, y = tl.constant(np.int32(2 ** 30)), tl.constant(np.int32(4))
    assert "xp_multiply(" in f.get_concrete_function(x, y).python_source
    a = np.asarray(2 ** 30, np.int32)
    assert f(x, y).numpy() == np.add(np.multiply(a, np.asarray(4, np.int32)), a)


def test_a_loop_gradient_saves_its_iterations_in_buffers_kept_between_calls():
    """With maximum_iterations, the forward loop's saved rows have a static shape: large ones
    are slots the loop copies its start into, not fresh arrays per call."""
    rng = np.random.default_rng(3)
    x = tl.constant(rng.normal(size=(64, 32, 64)).astype(np.float32))
    u = tl.constant(rng.normal(size=(64, 64)).astype(np.float32) * 0.1)

    def grads(x, u):
        with tl.GradientTape() as tape:
            tape.watch(u)
            _, h = tl.while_loop(lambda i, h: i < 64,
                                 lambda i, h: (i + 1, tl.tanh(tl.gather(x, i) + h @ u)),
                                 (tl.constant(0), tl.zeros([32, 64])), maximum_iterations=64)
            loss = tl.reduce_sum(h * h)
        # (scaled: a new array; what a loop returns may be a view of what it read)
        return tape.gradient(loss, u) * 2.0

    traced = tl.function(grads)
    src = traced.get_concrete_function(x, u).python_source
    forward = src[:src.index("while True:")]
    assert "[...] = " in forward   # the saved rows: 64 x 32 x 64 float32 in a slot
    want = grads(x, u).numpy()
    for _ in range(2):
        np.testing.assert_allclose(traced(x, u).numpy(), want, rtol=1e-4, atol=1e-5)


def test_bias_add_and_relu_of_static_shapes_are_direct_calls_into_planned_buffers():
    """A Dense layer's bias-add is `xp.add` (its shapes were checked while tracing) written
    into the matmul's dead buffer; with an unknown channel dim the kernel checks them."""
    layer = tl.layers.Dense(6, activation="relu")
    x = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    want = layer(tl.constant(x)).numpy()
    f = tl.function(layer)
    source = f.get_concrete_function(tl.constant(x)).python_source
    assert "xp_add(mat_mul, bias_value, out=mat_mul)" in source and "k_bias_add" not in source
    np.testing.assert_array_equal(f(tl.constant(x)).numpy(), want)
    bias = tl.constant(np.arange(3, dtype=np.float32))
    g = tl.function(lambda v: tl.nn.relu(tl.nn.bias_add(v, bias)),
                    input_signature=[tl.TensorSpec([None, None], tl.float32)])
    assert "k_bias_add" in g.get_concrete_function().python_source
    v = np.array([[-5.0, 0.5, -1.0]], np.float32)
    np.testing.assert_array_equal(g(v).numpy(), np.maximum(v + np.arange(3), 0))
    with pytest.raises(tl.errors.InvalidArgumentError, match="BiasAdd"):
        g(np.ones((1, 4), np.float32))


def test_a_variable_updates_delta_is_written_into_a_dying_buffer():
    """AssignAdd/AssignSub only read their delta, so Adam's `(g - m) * 0.1` goes into the
    dying `g - m` (no new array per step), and the Variables still take the right values
    over calls that reuse the buffers."""
    rng = np.random.default_rng(0)
    g0 = rng.standard_normal(4096).astype(np.float32)
    m, p = tl.Variable(np.zeros(4096, np.float32)), tl.Variable(np.ones(4096, np.float32))

    @tl.function
    def step(g):
        m.assign_add((g - m) * 0.1)
        p.assign_sub((m * 2.0) / (tl.sqrt(g * g) + 1.0))
        return tl.reduce_sum(p)

    g = tl.constant(g0)
    src = step.get_concrete_function(g).python_source
    assert "_times_0_1 = xp_multiply(sub, c_0_1, out=sub)" in src
    want_m, want_p = np.zeros(4096, np.float32), np.ones(4096, np.float32)
    for _ in range(3):
        total = step(g).numpy()
        want_m += (g0 - want_m) * np.float32(0.1)
        want_p -= (want_m * np.float32(2)) / (np.sqrt(g0 * g0) + np.float32(1))
        np.testing.assert_array_equal(m.numpy(), want_m)
        np.testing.assert_array_equal(p.numpy(), want_p)
        np.testing.assert_allclose(total, want_p.sum(), rtol=1e-5)
