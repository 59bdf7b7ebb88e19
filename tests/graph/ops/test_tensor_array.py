"""tl.TensorArray: numpy references, eager == tl.function, loops (tl.while_loop, AutoGraph),
gradients against finite differences, errors.

One table (`CASES`) drives the reference, gradient and tl.function checks (and
the registry and strict-array-module coverage); the tests below it cover loops,
composite values in tl.function and cond, and the error messages.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib.graph.op import apply
from trainlib.graph.ops.tensor_array import TensorArray

from .harness import OpCase, check_against_numpy, check_gradient, make_inputs, numeric_gradient

FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int32")


def _write_read_stack(x):
    ta = TensorArray(x.dtype, size=4, element_shape=x.shape[1:])
    ta = ta.write(3, x[0]).write(0, x[2])
    ta = ta.write(1, ta.read(3) * x[1])
    return ta.stack(), ta.read(2)


def _write_read_stack_ref(x):
    out = np.zeros((4,) + x.shape[1:], x.dtype)
    out[3], out[0] = x[0], x[2]
    out[1] = x[0] * x[1]
    return out, out[2]


def _dynamic(x):
    ta = TensorArray(x.dtype, size=0, dynamic_size=True)
    ta = ta.write(1, x[0]).write(4, x[1]).write(0, x[1] + x[0])
    return ta.stack()


def _dynamic_ref(x):
    out = np.zeros((5,) + x.shape[1:], x.dtype)
    out[1], out[4], out[0] = x[0], x[1], x[1] + x[0]
    return out


def _scatter_gather(x, v):
    ta = TensorArray(x.dtype, size=5).scatter([4, 1, 2], v)
    return ta.gather([2, 4]), ta.stack()


def _scatter_gather_ref(x, v):
    out = np.zeros((5,) + v.shape[1:], v.dtype)
    out[[4, 1, 2]] = v
    return out[[2, 4]], out


def _unstack_concat(x):
    ta = TensorArray(x.dtype, size=3).unstack(x)
    ta = ta.write(1, ta.read(0) + ta.read(2))
    return ta.concat(), ta.read(1)


def _unstack_concat_ref(x):
    y = x.copy()
    y[1] = x[0] + x[2]
    return y.reshape((-1,) + x.shape[2:]), y[1]


CASES = [
    OpCase("write_read_stack", ["TensorArrayWrite", "GatherV2"], _write_read_stack,
           _write_read_stack_ref, [(3, 2)], dtypes=NUMERIC),
    OpCase("write_scalars", ["TensorArrayWrite"], _write_read_stack, _write_read_stack_ref, [(3,)],
           dtypes=FLOATS),
    OpCase("dynamic_grow", ["TensorArrayWrite", "Slice"], _dynamic, _dynamic_ref, [(2, 3)],
           dtypes=NUMERIC),
    OpCase("scatter_gather", ["TensorArrayWrite", "GatherV2"], _scatter_gather, _scatter_gather_ref,
           [(1,), (3, 2)], dtypes=NUMERIC),
    OpCase("unstack_concat", ["TensorArrayWrite", "Identity", "Reshape"], _unstack_concat,
           _unstack_concat_ref, [(3, 2, 2)], dtypes=NUMERIC),
]

PARAMS = [(c, d) for c in CASES for d in c.dtypes]


def _arrays(case, dtype, seed=0):
    return make_inputs(case, dtype, np.random.default_rng(seed))


def _numpy(out):
    return [o.numpy() for o in out] if isinstance(out, (list, tuple)) else [out.numpy()]


@pytest.mark.parametrize("case,dtype", PARAMS, ids=[f"{c}-{d}" for c, d in PARAMS])
def test_against_numpy(case, dtype):
    check_against_numpy(case, _arrays(case, dtype))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    check_gradient(case, _arrays(case, "float64"))


@pytest.mark.parametrize("case,dtype", PARAMS, ids=[f"{c}-{d}" for c, d in PARAMS])
def test_function_matches_eager(case, dtype):
    arrays = _arrays(case, dtype)
    eager = _numpy(case.fn(*[tl.constant(a) for a in arrays]))
    traced = _numpy(tl.function(case.fn)(*[tl.constant(a) for a in arrays]))
    for e, t in zip(eager, traced):
        np.testing.assert_array_equal(t, e)
        assert t.dtype == e.dtype


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_traced_gradient_matches_eager(case):
    arrays = _arrays(case, "float64")

    def grads(*xs):
        with tl.GradientTape() as tape:
            tape.watch(list(xs))
            outs = case.fn(*xs)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            total = tl.add_n([tl.reduce_sum(o * tl.cast(k + 1, o.dtype)) for k, o in enumerate(outs)
                              if o.dtype.is_floating])
        return tape.gradient(total, list(xs))

    eager = grads(*[tl.constant(a) for a in arrays])
    traced = tl.function(grads)(*[tl.constant(a) for a in arrays])
    for e, t in zip(eager, traced):
        if e is None:  # an input the case does not use
            assert t is None
            continue
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-12)


@given(st.integers(0, 5), st.lists(st.integers(0, 3), max_size=2), st.randoms(use_true_random=False))
def test_writes_in_any_order_stack_like_numpy(size, element, rnd):
    order = list(range(size))
    rnd.shuffle(order)
    rows = np.random.default_rng(size).normal(size=(size, *element)).astype(np.float32)
    ta = TensorArray(tl.float32, size=size, element_shape=element)
    for i in order:
        ta = ta.write(i, rows[i])
    np.testing.assert_array_equal(ta.stack().numpy(), rows)
    assert ta.stack().shape == (size, *element)
    traced = tl.function(lambda r: TensorArray(tl.float32, size=size, element_shape=element)
                         .unstack(r).stack())(tl.constant(rows))
    np.testing.assert_array_equal(traced.numpy(), rows)


# ------------------------------------------------------------------ loops

def _while_program(x, dynamic):
    """rows i = acc_i, acc_{i+1} = acc_i * x[i] + 1, through a TensorArray loop variable."""
    n = tl.shape(x)[0]
    ta = TensorArray(x.dtype, size=0 if dynamic else n, dynamic_size=dynamic, element_shape=x.shape[1:])

    def body(i, acc, ta):
        acc = acc * x[i] + 1.0
        return i + 1, acc, ta.write(i, acc)

    _, _, ta = tl.while_loop(lambda i, acc, ta: i < n, body, (0, tl.ones_like(x[0]), ta))
    return ta.stack()


def _while_ref(x):
    acc, rows = np.ones_like(x[0]), []
    for row in x:
        acc = acc * row + 1.0
        rows.append(acc)
    return np.stack(rows)


@pytest.mark.parametrize("dynamic", [False, True], ids=["fixed", "dynamic"])
def test_while_loop_eager_and_traced(dynamic):
    x = np.random.default_rng(1).uniform(-1, 1, (4, 3)).astype(np.float32)
    want = _while_ref(x)
    np.testing.assert_allclose(_while_program(tl.constant(x), dynamic).numpy(), want, rtol=1e-6)
    f = tl.function(lambda x: _while_program(x, dynamic))
    out = f(tl.constant(x))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    ops = [op.type for op in f.get_concrete_function(tl.constant(x)).graph.get_operations()]
    assert "While" in ops


@pytest.mark.parametrize("dynamic", [False, True], ids=["fixed", "dynamic"])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
def test_gradient_through_while_loop(dynamic, traced):
    x = np.random.default_rng(2).uniform(-1, 1, (3, 2))
    w = np.random.default_rng(3).uniform(0.5, 1.5, (3, 2))

    def loss(x):
        return tl.reduce_sum(_while_program(x, dynamic) ** 2 * tl.constant(w))

    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return tape.gradient(y, x)

    g = (tl.function(grad) if traced else grad)(tl.constant(x))
    want = numeric_gradient(lambda a: float(loss(tl.constant(a[0])).numpy()), [x.copy()], 0)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-7)


def test_autograph_for_loop_standard_pattern_traces_once():
    """TensorFlow's pattern, without element_shape: learned from the body's write."""
    @tl.function
    def squares(n):
        ta = TensorArray(tl.float32, size=n)
        for i in tl.range(n):
            ta = ta.write(i, tl.cast(i * i, tl.float32) * tl.ones([2]))
        return ta.stack()

    np.testing.assert_array_equal(squares(tl.constant(4)).numpy(), [[0, 0], [1, 1], [4, 4], [9, 9]])
    np.testing.assert_array_equal(squares(tl.constant(2)).numpy(), [[0, 0], [1, 1]])
    assert squares.experimental_get_tracing_count() == 1
    assert squares(tl.constant(0)).numpy().shape == (0, 2)


def test_autograph_while_with_dynamic_array_and_python_loop_agree():
    def collatz(n):
        ta = TensorArray(tl.int32, size=0, dynamic_size=True, element_shape=[])
        i = 0
        while n != 1:
            ta = ta.write(i, n)
            n = tl.where(n % 2 == 0, n // 2, 3 * n + 1)
            i += 1
        return ta.stack(), ta.size()

    f = tl.function(collatz)
    for start in (6, 1):
        stack, size = f(tl.constant(start))
        eager_stack, eager_size = collatz(tl.constant(start))
        np.testing.assert_array_equal(stack.numpy(), eager_stack.numpy())
        assert int(size) == int(eager_size)
    np.testing.assert_array_equal(f(tl.constant(6))[0].numpy(), [6, 3, 10, 5, 16, 8, 4, 2])
    assert f.experimental_get_tracing_count() == 1


def test_gradient_through_autograph_loop_against_finite_differences():
    w = np.array([[0.5, 1.0], [1.5, -1.0], [2.0, 0.25]])

    def loss(x):
        ta = TensorArray(tl.float64, size=3)
        h = x
        for i in tl.range(3):
            h = tl.tanh(h * tl.constant(w)[i])
            ta = ta.write(i, h)
        return tl.reduce_sum(ta.stack() * tl.constant(w))

    @tl.function
    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return tape.gradient(y, x)

    x = np.array([0.3, -0.7])
    want = numeric_gradient(lambda a: float(loss(tl.constant(a[0]))), [x.copy()], 0)
    np.testing.assert_allclose(grad(tl.constant(x)).numpy(), want, rtol=1e-6)


def test_branches_and_nested_loops_write_arrays():
    @tl.function
    def signs(n):
        ta = TensorArray(tl.float32, size=n)
        for i in tl.range(n):
            if i % 2 == 0:
                ta = ta.write(i, tl.cast(i, tl.float32))
            else:
                ta = ta.write(i, -tl.cast(i, tl.float32))
        return ta.stack()

    np.testing.assert_array_equal(signs(tl.constant(5)).numpy(), [0, -1, 2, -3, 4])

    @tl.function
    def doubled(x):
        outer = TensorArray(tl.float32, size=3, element_shape=[2])
        for i in tl.range(3):
            inner = TensorArray(tl.float32, size=2, element_shape=[])
            for j in tl.range(2):
                inner = inner.write(j, x[i, j] * 2.0)
            outer = outer.write(i, inner.stack())
        return outer.stack()

    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(doubled(tl.constant(x)).numpy(), 2 * x)


def test_variable_gradient_through_array_in_loop():
    v = tl.Variable([1.0, 2.0])

    @tl.function
    def grad():
        with tl.GradientTape() as tape:
            ta = TensorArray(tl.float32, size=3)
            s = v
            for i in tl.range(3):
                s = s * v
                ta = ta.write(i, s)
            loss = tl.reduce_sum(ta.stack())
        return tape.gradient(loss, v)

    w = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad().numpy(), 2 * w + 3 * w ** 2 + 4 * w ** 3)


def test_read_inside_loop_sums_previous_rows():
    @tl.function
    def running(x):
        ta = TensorArray(tl.float32, size=tl.shape(x)[0] + 1, element_shape=[])
        for i in tl.range(tl.shape(x)[0]):
            ta = ta.write(i + 1, ta.read(i) + x[i])
        return ta.stack()

    np.testing.assert_allclose(running(tl.constant([1.0, 2.0, 3.0])).numpy(), [0, 1, 3, 6])


# ------------------------------------------------------------------ composite value

def test_tensor_array_in_and_out_of_function_and_cond():
    @tl.function
    def put(ta, i, x):
        return ta.write(i, x)

    ta = TensorArray(tl.float32, size=3, element_shape=[2])
    out = put(ta, tl.constant(1), tl.constant([1.0, 2.0]))
    assert isinstance(out, TensorArray) and out.dtype is tl.float32
    np.testing.assert_array_equal(out.stack().numpy(), [[0, 0], [1, 2], [0, 0]])
    put(TensorArray(tl.float32, size=3, element_shape=[2]), tl.constant(2), tl.constant([3.0, 4.0]))
    assert put.experimental_get_tracing_count() == 1
    put(TensorArray(tl.float32, size=3, element_shape=[2], dynamic_size=True), tl.constant(5),
        tl.constant([3.0, 4.0]))
    assert put.experimental_get_tracing_count() == 2

    @tl.function
    def pick(flag, ta):
        ta = tl.cond(flag, lambda: ta.write(0, [5.0, 5.0]), lambda: ta.write(2, [7.0, 7.0]))
        return ta.stack()

    np.testing.assert_array_equal(pick(tl.constant(True), ta).numpy(), [[5, 5], [0, 0], [0, 0]])
    np.testing.assert_array_equal(pick(tl.constant(False), ta).numpy(), [[0, 0], [0, 0], [7, 7]])


def test_static_facts_and_helpers():
    ta = TensorArray(tl.float32, size=2)
    assert ta.dtype is tl.float32 and ta.element_shape == tl.TensorShape(None)
    assert int(ta.size()) == 2 and not ta.dynamic_size
    assert int(TensorArray(tl.float32, size=0, dynamic_size=True).write(4, 1.0).size()) == 5
    assert int(tl.function(lambda x: TensorArray(tl.float32, size=2, dynamic_size=True).unstack(x).size())(
        tl.constant([[1.0], [2.0], [3.0]]))) == 3
    ta = ta.write(1, [1.0, 2.0, 3.0])  # eagerly the element shape comes from the first write
    assert ta.element_shape == tl.TensorShape([3])
    np.testing.assert_array_equal(ta.read(0).numpy(), [0, 0, 0])  # unwritten: zeros
    same = ta.identity()
    np.testing.assert_array_equal(same.stack().numpy(), ta.stack().numpy())
    assert ta.close() is None
    assert "dtype=float32" in repr(ta) and "size=2" in repr(ta)
    sized = TensorArray(tl.int64, size=tl.constant(3), element_shape=[])
    assert sized.stack().shape == (3,) and sized.stack().dtype is tl.int64
    assert TensorArray(tl.float32, size=0, element_shape=[4]).stack().shape == (0, 4)


def test_old_array_is_unchanged_by_write():
    a = TensorArray(tl.float32, size=2, element_shape=[])
    b = a.write(0, 1.0)
    np.testing.assert_array_equal(a.stack().numpy(), [0, 0])
    np.testing.assert_array_equal(b.stack().numpy(), [1, 0])


# ------------------------------------------------------------------ errors

def test_write_past_the_end_names_index_and_size():
    ta = TensorArray(tl.float32, size=3, element_shape=[])
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"index 3 .*size is: 3.*dynamic_size"):
        ta.write(3, 1.0)

    @tl.function
    def f(i):
        return ta.write(i, 1.0).stack()

    with pytest.raises(tl.errors.InvalidArgumentError, match=r"index 7 .*size is: 3"):
        f(tl.constant(7))
    with pytest.raises(tl.errors.InvalidArgumentError, match="negative"):
        f(tl.constant(-1))


def test_write_of_another_dtype_or_shape_raises():
    ta = TensorArray(tl.float32, size=2, element_shape=[2])
    with pytest.raises(tl.errors.InvalidArgumentError, match="dtype is float32 .* dtype int32"):
        ta.write(0, tl.constant([1, 2]))
    with pytest.raises(ValueError, match=r"Incompatible shape .*\(3,\).*\(2,\)"):
        ta.write(0, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="int32 or int64"):
        ta.write(0.5, [1.0, 2.0])

    @tl.function
    def f(x):
        return ta.write(0, x).stack()

    with pytest.raises(tl.errors.InvalidArgumentError, match="dtype is float32"):
        f(tl.constant([1, 2]))


def test_read_errors():
    ta = TensorArray(tl.float32, size=2)
    with pytest.raises(ValueError, match="element_shape"):
        ta.read(0)
    with pytest.raises(ValueError, match="element_shape"):
        ta.stack()
    ta = ta.write(0, 1.0)
    with pytest.raises(tl.errors.InvalidArgumentError, match="index 2 but array size is: 2"):
        ta.read(2)
    with pytest.raises(tl.errors.InvalidArgumentError, match="not in"):
        ta.read(tl.constant(5))


def test_scatter_and_unstack_errors():
    ta = TensorArray(tl.float32, size=2, element_shape=[])
    with pytest.raises(tl.errors.InvalidArgumentError, match="twice"):
        ta.scatter([1, 1], [1.0, 2.0])
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of static size 2"):
        ta.unstack([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="rank >= 1"):
        ta.concat()


def test_loop_with_unknown_element_shape_asks_for_element_shape():
    @tl.function(input_signature=[tl.TensorSpec([None])])
    def f(x):
        ta = TensorArray(tl.float32, size=3)
        for i in tl.range(3):
            ta = ta.write(i, x * tl.cast(i, tl.float32))
        return ta.stack()

    with pytest.raises(ValueError, match="element_shape"):
        f(tl.constant([1.0, 2.0]))


def test_geometric_write_doubles_the_buffer_so_n_appends_copy_o_n_rows():
    """`geometric=True` (the While gradient's accumulators): a write past the end at least
    doubles the rows, so n appends reallocate log2(n) times and copy fewer than 2n rows."""
    buffer = tl.zeros([0, 2], dtype=tl.float32)
    grown_at = []
    for i in range(37):
        before = buffer.shape[0]
        buffer = apply("TensorArrayWrite", buffer, tl.constant(i), tl.fill([2], float(i)), geometric=True)
        if buffer.shape[0] != before:
            grown_at.append(buffer.shape[0])
    assert grown_at == [1, 2, 4, 8, 16, 32, 64]
    np.testing.assert_array_equal(buffer.numpy()[:37, 0], np.arange(37))
    np.testing.assert_array_equal(buffer.numpy()[37:], 0)   # spare capacity reads as zeros


def test_loop_owned_dynamic_array_grows_by_doubling_and_keeps_its_size():
    """A dynamic array appended to one row per iteration of a loop that owns it reallocates
    log2(n) times (the view of a base twice as big widens), not at every write."""
    from trainlib.graph.op import REGISTRY

    class CountingNumpy:
        zeros_calls = 0

        def __getattr__(self, name):
            return getattr(np, name)

        def zeros(self, *args, **kwargs):
            CountingNumpy.zeros_calls += 1
            return np.zeros(*args, **kwargs)

    write = REGISTRY["TensorArrayWrite"].in_place
    buffer = np.zeros((0, 3), np.float32).copy()
    for i in range(1000):
        buffer = write(CountingNumpy(), buffer, np.int32(i), np.full(3, i, np.float32),
                       dynamic_size=True)
        assert buffer.shape == (i + 1, 3)
    assert CountingNumpy.zeros_calls <= 12
    np.testing.assert_array_equal(buffer[:, 0], np.arange(1000))

    @tl.function(autograph=False)
    def fill(n):
        ta = tl.TensorArray(tl.float32, size=0, dynamic_size=True)
        _, ta = tl.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, tl.fill([4], tl.cast(i, tl.float32)))),
                              (tl.constant(0), ta))
        return ta.stack(), ta.size()

    assert "ip_tensor_array_write(" in fill.get_concrete_function(tl.constant(1)).python_source
    first, size = fill(tl.constant(300))
    second, _ = fill(tl.constant(5))
    assert first.shape == (300, 4) and int(size) == 300 and second.shape == (5, 4)
    np.testing.assert_array_equal(first.numpy()[:, 2], np.arange(300))
    np.testing.assert_array_equal(second.numpy()[:, 0], np.arange(5))


def test_eager_appends_copy_o_n_rows_and_every_array_keeps_its_values():
    import trainlib.graph.ops.tensor_array as ta_module

    ta = TensorArray(tl.float32, size=0, dynamic_size=True)
    history = [ta]
    for i in range(200):
        ta = ta.write(i, tl.fill([2], float(i)))
        history.append(ta)
    bases = {id(h.stack().numpy().base) for h in history[1:]}
    assert len(bases) <= 10            # a new base only when the spare rows run out
    np.testing.assert_array_equal(ta.stack().numpy()[:, 0], np.arange(200))
    for n, h in enumerate(history[1:], start=1):   # older arrays still show their rows
        assert h.size() == n
    np.testing.assert_array_equal(history[5].stack().numpy()[:, 1], np.arange(5))
    # a second append to an older array takes another base: the newer arrays keep their rows
    branch = history[5].write(5, tl.fill([2], -1.0))
    np.testing.assert_array_equal(branch.stack().numpy()[:, 0], [0, 1, 2, 3, 4, -1])
    np.testing.assert_array_equal(history[6].stack().numpy()[:, 0], np.arange(6))
    np.testing.assert_array_equal(ta.stack().numpy()[:6, 0], np.arange(6))
    assert len(ta_module._claimed) >= 1
