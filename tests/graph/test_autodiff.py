"""GradientTape eagerly and inside graphs: aggregation, variables, higher order, If/While, custom_gradient."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from tests.graph.ops.harness import numeric_gradient


def f64(x):
    return tl.constant(np.asarray(x, np.float64))


def tape_grad(fn, *xs):
    with tl.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    return tape.gradient(y, list(xs))


def test_basic_and_aggregation():
    x = f64(3.0)
    (g,) = tape_grad(lambda x: x * x + x * 2.0 + x, x)
    assert float(g) == pytest.approx(9.0)


def test_broadcast_gradient_is_summed_to_input_shape():
    a = f64(np.ones([2, 3]))
    b = f64([1.0, 2.0, 3.0])
    ga, gb = tape_grad(lambda a, b: tl.reduce_sum(a * b), a, b)
    assert ga.shape == (2, 3) and gb.shape == (3,)
    np.testing.assert_allclose(gb.numpy(), [2.0, 2.0, 2.0])


def test_variables_are_watched_automatically():
    w = tl.Variable(np.array([1.0, 2.0]))
    frozen = tl.Variable(np.array([3.0]), trainable=False)
    with tl.GradientTape() as tape:
        y = tl.reduce_sum(w * w) + tl.reduce_sum(frozen)
    gw, gf = tape.gradient(y, [w, frozen])
    np.testing.assert_allclose(gw.numpy(), [2.0, 4.0])
    assert gf is None
    assert tape.watched_variables() == (w,)


def test_unconnected_and_integer_sources():
    x, z = f64(1.0), f64(2.0)
    i = tl.constant(3)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch([x, z, i])
        y = x * 2.0
    assert tape.gradient(y, z) is None
    assert float(tape.gradient(y, z, unconnected_gradients="zero")) == 0.0
    assert tape.gradient(y, i) is None
    with pytest.raises(ValueError):
        tape.gradient(y, x, unconnected_gradients="bogus")


def test_non_persistent_tape_used_twice_raises():
    x = f64(1.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)


def test_stop_recording_and_stop_gradient():
    x = f64(2.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            a = x * x
        b = tl.stop_gradient(x * x) + x
    assert tape.gradient(a, x) is None
    assert float(tape.gradient(b, x)) == 1.0


def test_output_gradients_and_nested_sources():
    x = f64([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    g = tape.gradient(y, {"a": x, "b": [x]}, output_gradients=f64([1.0, 10.0]))
    np.testing.assert_allclose(g["a"].numpy(), [3.0, 30.0])
    np.testing.assert_allclose(g["b"][0].numpy(), [3.0, 30.0])


def test_second_order():
    x = f64(3.0)
    with tl.GradientTape() as outer:
        outer.watch(x)
        with tl.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert float(dy) == pytest.approx(27.0) and float(d2y) == pytest.approx(18.0)


def test_second_order_through_matmul_and_tanh():
    a0 = np.random.default_rng(0).uniform(-1, 1, [2, 2])
    w = f64(a0)
    with tl.GradientTape() as outer:
        outer.watch(w)
        with tl.GradientTape() as inner:
            inner.watch(w)
            y = tl.reduce_sum(tl.tanh(tl.matmul(w, w)))
        g = inner.gradient(y, w)
        s = tl.reduce_sum(g * g)
    h = outer.gradient(s, w).numpy()

    def grad_sq(arrs):
        ww = f64(arrs[0])
        with tl.GradientTape() as t:
            t.watch(ww)
            yy = tl.reduce_sum(tl.tanh(tl.matmul(ww, ww)))
        return float(tl.reduce_sum(t.gradient(yy, ww) ** 2))

    np.testing.assert_allclose(h, numeric_gradient(grad_sq, [a0.copy()], 0), rtol=1e-4, atol=1e-6)


def test_jacobian():
    x = f64([1.0, 2.0, 3.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    j = tape.jacobian(y, x)
    np.testing.assert_allclose(j.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_custom_gradient():
    @tl.custom_gradient
    def clipped_identity(x):
        def grad(dy):
            return dy * 0.5
        return x * 1.0, grad

    x = f64(2.0)
    (g,) = tape_grad(lambda x: clipped_identity(x) * 3.0, x)
    assert float(g) == pytest.approx(1.5)

    @tl.function
    def in_graph(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = clipped_identity(x) * 3.0
        return tape.gradient(y, x)

    assert float(in_graph(x)) == pytest.approx(1.5)


def test_custom_gradient_with_variables():
    v = tl.Variable(np.array(2.0))

    @tl.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad

    x = f64(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    gx, gv = tape.gradient(y, [x, v])
    assert float(gx) == 2.0 and float(gv) == 30.0


def _in_both(fn):
    """fn() eagerly and traced by tl.function: both results as lists of floats."""
    return [[float(t) for t in fn()], [float(t) for t in tl.function(fn, autograph=False)()]]


def test_custom_gradient_replaces_the_gradient_of_an_identity():
    # the rule alone counts: without the fix the identity's own gradient was added on top
    @tl.custom_gradient
    def clip(y):
        return y, lambda dy: tl.clip_by_value(dy, -2.0, 2.0)

    @tl.custom_gradient
    def zero(x):
        return x, lambda dy: dy * 0

    def run():
        x = f64(2.0)
        with tl.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a = clip(x) * 3.0
            b = zero(x) * x * x
        return [tape.gradient(a, x), tape.gradient(b, x)]

    assert _in_both(run) == [[2.0, 8.0], [2.0, 8.0]]


def test_custom_gradient_several_inputs_outputs_and_variables():
    v = tl.Variable(np.array(2.0))

    @tl.custom_gradient
    def f(x, y):
        def grad(da, db, variables=None):
            return (da * 10.0 + db, da * 0.5), [da * 100.0]
        return (x * y * v, x + y), grad

    def run():
        x, y = f64(2.0), f64(3.0)
        with tl.GradientTape() as tape:
            tape.watch([x, y])
            a, b = f(x, y)
            z = a + 2.0 * b
        return tape.gradient(z, [x, y, v])

    assert _in_both(run) == [[12.0, 0.5, 100.0]] * 2


def test_custom_gradient_of_a_variable_argument():
    v = tl.Variable(np.array(3.0))

    @tl.custom_gradient
    def half(x):  # v is an argument, so its rule has no `variables`
        return x * x, lambda dy: dy * 0.5

    def run():
        with tl.GradientTape() as tape:
            y = half(v) * 4.0
        return [tape.gradient(y, v)]

    assert _in_both(run) == [[2.0], [2.0]]


def test_custom_gradient_inside_while_and_second_order():
    @tl.custom_gradient
    def clip(y):
        return y, lambda dy: tl.clip_by_value(dy, -1.0, 1.0)

    @tl.custom_gradient
    def cube(x):
        return x * x * x, lambda dy: dy * 3.0 * x * x

    def run():
        x = f64(1.5)
        with tl.GradientTape() as tape:
            tape.watch(x)
            _, y = tl.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, clip(y * x) * 2.0),
                                 (tl.constant(0), x))
        in_loop = tape.gradient(y, x)
        with tl.GradientTape() as outer:
            outer.watch(x)
            with tl.GradientTape() as inner:
                inner.watch(x)
                c = cube(x)
            g = inner.gradient(c, x)
        return [in_loop, g, outer.gradient(g, x)]

    # the loop: the upstream gradient (2.0 or 3.0) of each step is clipped to 1.0 before
    # `y * x`, so d/dx sums each step's y (1.5 + 4.5 + 13.5) and the 1.5 reaching the initial
    # y = x: 21.0, as TensorFlow
    assert _in_both(run) == [[21.0, 6.75, 9.0]] * 2


# ------------------------------------------------------------------ in graphs

def test_tape_inside_function_equals_eager():
    w = tl.Variable(np.random.default_rng(1).uniform(-1, 1, [3, 2]))
    x = f64(np.random.default_rng(2).uniform(-1, 1, [4, 3]))

    def step(x):
        with tl.GradientTape() as tape:
            y = tl.reduce_mean(tl.tanh(tl.matmul(x, w)) ** 2)
        return tape.gradient(y, w)

    eager = step(x).numpy()
    graph = tl.function(step)(x).numpy()
    np.testing.assert_allclose(graph, eager, rtol=1e-12)


def test_backward_pass_is_in_the_same_graph():
    w = tl.Variable(np.ones([2, 2]))

    @tl.function
    def train(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(tl.matmul(x, w))
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    train(f64(np.ones([1, 2])))
    types = [op.type for op in train.get_concrete_function(f64(np.ones([1, 2]))).graph.get_operations()]
    assert types.count("MatMul") >= 2 and "AssignSubVariableOp" in types


def test_gradient_through_if_against_finite_differences():
    def f(x):
        return tl.cond(tl.reduce_sum(x) > 0.0, lambda: tl.reduce_sum(x * x * x),
                       lambda: tl.reduce_sum(tl.sin(x)))

    @tl.function(autograph=False)
    def grad(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    for a in (np.array([0.5, 1.0]), np.array([-0.5, -1.0])):
        want = numeric_gradient(lambda arrs: float(f(f64(arrs[0]))), [a.copy()], 0)
        np.testing.assert_allclose(grad(f64(a)).numpy(), want, rtol=1e-6)
    assert grad.experimental_get_tracing_count() == 1


def test_gradient_through_while_with_input_dependent_trip_count():
    # x is doubled until it exceeds the limit: trip count depends on x
    def f(x, limit):
        _, y = tl.while_loop(lambda i, y: y < limit, lambda i, y: (i + 1, y * 2.0 + tl.sin(y)),
                             (tl.constant(0), x))
        return y

    @tl.function(autograph=False)
    def grad(x, limit):
        with tl.GradientTape() as tape:
            tape.watch([x, limit])
            y = f(x, limit)
        return tape.gradient(y, x)

    for x0 in (0.3, 1.1, 7.0, 20.0):
        want = numeric_gradient(lambda arrs: float(f(f64(arrs[0]), f64(10.0))), [np.array(x0)], 0)
        got = grad(f64(x0), f64(10.0))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert grad.experimental_get_tracing_count() == 1


def test_gradient_through_while_captured_variable():
    w = tl.Variable(np.array(1.5))

    @tl.function(autograph=False)
    def grad(x):
        with tl.GradientTape() as tape:
            _, y = tl.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w), (tl.constant(0), x))
        return tape.gradient(y, w)

    # y = x * w^3 -> dy/dw = 3 x w^2
    assert float(grad(f64(2.0))) == pytest.approx(3 * 2.0 * 1.5 ** 2)


def _all_ops(graph):
    """The operations of `graph` and of every subgraph nested in them (If branches, While bodies)."""
    for op in graph.get_operations():
        yield op
        for value in op.attrs.values():
            if hasattr(value, "get_operations"):
                yield from _all_ops(value)


def test_while_gradient_saves_iterations_in_buffers_written_in_place():
    # the forward loop of the gradient saves each iteration in a buffer that grows
    # geometrically and is written in place: no concat (a copy of the history per iteration)
    @tl.function(autograph=False)
    def grad(x, n):
        with tl.GradientTape() as tape:
            tape.watch(x)
            _, y = tl.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * 0.7 + 0.2 * tl.sin(y)),
                                 (tl.constant(0), x))
        return tape.gradient(y, x)

    concrete = grad.get_concrete_function(f64([0.1, 0.2]), tl.constant(3))
    types = [op.type for op in _all_ops(concrete.graph)]
    assert "ConcatV2" not in types
    writes = [op for op in _all_ops(concrete.graph) if op.type == "TensorArrayWrite"]
    # y is saved; the counter i is not (no float value depends on it: its first value serves)
    assert len(writes) == 1 and writes[0].attrs.get("geometric") and writes[0].inputs[2].dtype == tl.float64
    assert concrete.python_source.count("ip_tensor_array_write") == len(writes)
    x = np.array([0.1, 0.2])
    want = numeric_gradient(lambda a: float(tl.reduce_sum(tl.while_loop(
        lambda i, y: i < 40, lambda i, y: (i + 1, y * 0.7 + 0.2 * tl.sin(y)), (0, f64(a[0])))[1])), [x.copy()], 0)
    np.testing.assert_allclose(grad(f64(x), tl.constant(40)).numpy(), want, rtol=1e-6)


def test_the_forward_loop_itself_saves_its_iterations():
    # the loss and its gradient: the forward While becomes the loop that saves (it runs once),
    # then the backward loop: two loops, not three. A persistent tape asked twice agrees.
    def step(i, y):
        return i + 1, y * 0.7 + 0.2 * tl.sin(y)

    @tl.function(autograph=False)
    def loss_and_grads(x, n):
        with tl.GradientTape(persistent=True) as tape:
            tape.watch(x)
            _, y = tl.while_loop(lambda i, y: i < n, step, (tl.constant(0), x))
            loss = tl.reduce_sum(y * y)
        return loss, tape.gradient(loss, x), tape.gradient(loss, x)

    @tl.function(autograph=False)
    def loss_and_grad(x, n):
        with tl.GradientTape() as tape:
            tape.watch(x)
            _, y = tl.while_loop(lambda i, y: i < n, step, (tl.constant(0), x))
            loss = tl.reduce_sum(y * y)
        return loss, tape.gradient(loss, x)

    x = np.array([0.1, -0.4])
    assert loss_and_grad.get_concrete_function(f64(x), tl.constant(3)).python_source.count("while True") == 2
    loss, g1, g2 = loss_and_grads(f64(x), tl.constant(7))
    want = numeric_gradient(lambda a: float(tl.reduce_sum(tl.while_loop(
        lambda i, y: i < 7, step, (0, f64(a[0])))[1] ** 2)), [x.copy()], 0)
    np.testing.assert_allclose(g1.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(loss_and_grad(f64(x), tl.constant(7))[1].numpy(), want, rtol=1e-6)


def test_while_gradient_of_every_kind_of_loop_variable_against_finite_differences():
    # w passes through unchanged, h grows and is read by the body (saved flat with its
    # shapes), ta is only written (its shape is saved, not its values), s has a fixed shape
    def f(x, w, n):
        ta = tl.TensorArray(tl.float64, size=0, dynamic_size=True, element_shape=[])

        def body(i, w, h, s, ta):
            s = s * w + tl.reduce_sum(h) * 0.1
            return i + 1, w, tl.concat([h, tl.sin(s[:1])], 0), s, ta.write(i, tl.reduce_sum(s * s))

        _, _, h, s, ta = tl.while_loop(
            lambda i, w, h, s, ta: i < n, body, (tl.constant(0), w, x[:1], x, ta),
            shape_invariants=(None, None, tl.TensorShape([None]), None, None), maximum_iterations=6)
        return tl.reduce_sum(h * h) + tl.reduce_sum(s) + tl.reduce_sum(tl.cos(ta.stack()))

    @tl.function(autograph=False)
    def grad(x, w, n):
        with tl.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w, n)
        return tape.gradient(y, [x, w])

    x, w = np.array([0.3, -0.4, 0.5]), np.array(0.9)
    for n in (0, 1, 4, 9):   # 9: stopped by maximum_iterations
        got = grad(f64(x), f64(w), tl.constant(n))
        for k, a in enumerate((x, w)):
            want = numeric_gradient(lambda arrs: float(f(f64(arrs[0]), f64(arrs[1]), n)),
                                    [x.copy(), w.copy()], k)
            np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-6, atol=1e-9)


def _cubic_or_square(x):
    return tl.cond(x > 0.0, lambda: x * x * x, lambda: x * x)


def _fourth_power(x):
    return tl.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x))[1]


@pytest.mark.parametrize("f, x, want", [(_cubic_or_square, 2.0, 12.0), (_cubic_or_square, -2.0, 2.0),
                                        (_fourth_power, 1.5, 12 * 1.5 ** 2)])
def test_second_order_through_cond_and_while(f, x, want):
    @tl.function(autograph=False)
    def d2(x):
        with tl.GradientTape() as outer:
            outer.watch(x)
            with tl.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        return outer.gradient(g, x)

    assert float(d2(f64(x))) == pytest.approx(want)


@given(st.floats(-2, 2), st.floats(-2, 2))
def test_tape_graph_equals_eager_hypothesis(a, b):
    def fn(x, y):
        with tl.GradientTape() as tape:
            tape.watch([x, y])
            z = tl.reduce_sum(tl.tanh(x * y) + x * x - y)
        return tape.gradient(z, [x, y])

    x, y = f64([a, b]), f64([b, a])
    eager = [g.numpy() for g in fn(x, y)]
    graph = [g.numpy() for g in tl.function(fn)(x, y)]
    for e, g in zip(eager, graph):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)
