"""A tl.function called under a GradientTape is one differentiable op (PartitionedCall): its
gradient comes from a forward/backward pair built once per trace from the traced graph, with the
forward's intermediates saved (random draws are not redrawn), Variables read inside get
gradients, side effects run once per call, and higher orders work."""
import numpy as np
import pytest

import trainlib as tl


def f64(x):
    return tl.constant(np.asarray(x, np.float64))


def test_eager_tape_differentiates_through_a_function_call():
    w = tl.Variable(np.array([[1.0, -2.0], [0.5, 3.0]]))

    def body(x):
        return tl.reduce_sum(tl.tanh(tl.matmul(x, w)) ** 2)

    x = f64([[0.3, -0.7]])
    results = []
    for fn in (body, tl.function(body)):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        results.append([g.numpy() for g in tape.gradient(y, [x, w])])
    for eager, called in zip(*results):
        np.testing.assert_allclose(called, eager, rtol=1e-12)


def test_a_function_calling_a_function_and_python_arguments():
    v = tl.Variable(np.array(2.0))
    inner = tl.function(lambda x: x * x * v)

    @tl.function
    def outer(x, scale):
        return inner(x) * scale, inner(x + 1.0)

    x = f64(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        a, b = outer(x, 10.0)
        y = a + b
    gx, gv = tape.gradient(y, [x, v])
    assert float(gx) == 10 * 2 * 3 * 2 + 2 * 4 * 2 and float(gv) == 10 * 9 + 16


def test_the_backward_uses_the_forward_random_draws():
    @tl.function
    def f(x):
        return tl.nn.dropout(x, rate=0.5) * 3.0

    x = f64(np.ones(200))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        total = tl.reduce_sum(y)
    g = tape.gradient(total, x).numpy()
    kept = y.numpy() != 0
    assert 20 < kept.sum() < 180
    np.testing.assert_allclose(g, np.where(kept, 6.0, 0.0))


def test_side_effects_run_once_per_call_and_the_pair_is_built_once():
    counter = tl.Variable(np.array(0.0), trainable=False)
    w = tl.Variable(np.array(1.5))

    @tl.function
    def step(x):
        counter.assign_add(1.0)
        return x * w

    x = f64(2.0)
    for _ in range(3):
        with tl.GradientTape() as tape:
            y = step(x)
        assert float(tape.gradient(y, w)) == 2.0
    assert float(counter) == 3.0
    concrete = step.get_concrete_function(x)
    pair = concrete._graph_function()._pair
    assert pair is not None and step.experimental_get_tracing_count() == 1
    with tl.GradientTape() as tape:
        y = step(x)
    tape.gradient(y, w)
    assert concrete._graph_function()._pair is pair  # traced once, cached per trace


def _derivatives(fn, x, order):
    """[f(x), f'(x), ..., the `order`-th derivative], each tape recording the ones inside it."""
    if order == 0:
        return [fn(x)]
    with tl.GradientTape() as tape:
        tape.watch(x)
        lower = _derivatives(fn, x, order - 1)
    return lower + [tape.gradient(lower[-1], x)]


def test_second_and_third_order_through_a_call():
    cube = tl.function(lambda x: x * x * x)
    assert [float(d) for d in _derivatives(cube, f64(2.0), 3)] == [8.0, 12.0, 12.0, 6.0]


def test_no_tape_keeps_the_fast_path_and_outputs_keep_their_structure():
    @tl.function
    def f(x):
        return {"double": x * 2.0, "index": tl.argmax(x)}

    x = f64([1.0, 3.0, 2.0])
    plain = f(x)
    with tl.GradientTape() as tape:
        tape.watch(x)
        taped = f(x)
    assert sorted(taped) == ["double", "index"] and int(taped["index"]) == int(plain["index"]) == 1
    assert taped["index"].dtype is tl.int64
    np.testing.assert_array_equal(tape.gradient(taped["double"], x).numpy(), [2.0, 2.0, 2.0])


def test_errors_inside_a_recorded_call_name_the_user_line():
    @tl.function
    def f(x):
        tl.debugging.assert_greater(x, tl.zeros_like(x), message="needs positive")
        return x * 2.0

    x, ok = f64(-1.0), f64(2.0)
    with tl.GradientTape() as tape:
        tape.watch([x, ok])
        with pytest.raises(tl.errors.InvalidArgumentError, match="needs positive") as info:
            f(x)
        y = f(ok)  # the tape goes on recording after the failed call
    assert "test_calls.py" in str(info.value)  # the user's line of the assertion
    assert float(tape.gradient(y, ok)) == 2.0


def test_custom_gradients_and_unknown_dims_inside_a_called_function():
    v = tl.Variable(np.array(2.0))

    @tl.custom_gradient
    def clip(y):
        def backward(dy, variables=None):
            return tl.clip_by_value(dy, -1.0, 1.0), [tl.reduce_sum(dy) * 100.0]
        return y * v, backward

    @tl.function(input_signature=[tl.TensorSpec([None], tl.float64)])
    def f(x):
        return tl.reduce_sum(clip(x * x) * 3.0 + x)

    x = f64([1.0, -2.0, 0.5])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy() + 1.0)  # the clipped 3.0 is 1.0
    assert float(gv) == 300.0 * 3


def test_calls_no_tape_records_take_the_plain_path_and_run_once():
    counter = tl.Variable(np.array(0.0), trainable=False)

    @tl.function
    def bump(x):
        counter.assign_add(1.0)

    @tl.function
    def double(x):
        return x * 2.0

    x = f64(1.0)
    with tl.GradientTape() as tape:
        assert bump(x) is None and float(double(x)) == 2.0  # x is not watched
        tape.watch(x)
        y = double(x)
        bump(x)
    assert float(counter) == 2.0 and float(tape.gradient(y, x)) == 2.0
    assert double.get_concrete_function(x)._graph_function()._pair is not None
