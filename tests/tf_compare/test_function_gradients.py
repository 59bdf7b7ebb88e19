"""Gradients through tl.function calls against TensorFlow: an eager GradientTape around a call
of a Function (the call is one differentiable op, as TF's PartitionedCall), a Function calling
another Function, Variables read inside the called Function, several outputs, Python
arguments, persistent tapes, second order, and a tape inside a Function calling a Function."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

x0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
w0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)


def _model(lib):
    w = lib.Variable(w0)
    b = lib.Variable([0.5, -0.5])

    @lib.function
    def layer(x):
        return lib.tanh(lib.matmul(x, w) + b)

    @lib.function
    def loss(x, scale):
        h = layer(x)
        return lib.reduce_sum(h * h) * scale, h

    return w, b, layer, loss


def eager_tape_around_call(lib):
    w, b, layer, _ = _model(lib)
    x = lib.constant(x0)
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = lib.reduce_sum(layer(x) ** 2)
    return tape.gradient(y, [x, w, b])


def nested_functions(lib):
    w, b, _, loss = _model(lib)
    x = lib.constant(x0)
    with lib.GradientTape() as tape:
        value, h = loss(x, 3.0)
        total = value + lib.reduce_sum(h)
    return [value, tape.gradient(total, [w, b])]


def only_variables(lib):
    w, b, layer, _ = _model(lib)
    with lib.GradientTape() as tape:
        y = lib.reduce_mean(layer(lib.constant(x0)))
    return tape.gradient(y, [w, b])


def second_order(lib):
    @lib.function
    def cube(x):
        return x * x * x

    x = lib.constant([1.0, 2.0])
    outer = lib.GradientTape(persistent=True)
    inner = lib.GradientTape()
    with outer:
        outer.watch(x)
        with inner:
            inner.watch(x)
            y = cube(x)
        first = inner.gradient(y, x)
    return [first, outer.gradient(first, x), outer.gradient(y, x)]


def persistent_and_unconnected(lib):
    w, b, layer, _ = _model(lib)
    unused = lib.Variable(1.0)
    x = lib.constant(x0)
    with lib.GradientTape(persistent=True) as tape:
        h = layer(x)
        y = lib.reduce_sum(h[:, 0])
    return [tape.gradient(y, [w, unused]), tape.gradient(h, b)]


def tape_inside_function_calling_function(lib):
    w, b, layer, _ = _model(lib)

    @lib.function
    def grads(x):
        with lib.GradientTape() as tape:
            y = lib.reduce_sum(layer(x))
        return tape.gradient(y, [w, b])

    return grads(lib.constant(x0))


def integer_and_float_outputs(lib):
    @lib.function
    def f(x):
        return lib.argmax(x, axis=1), lib.reduce_max(x, axis=1) * 2.0

    x = lib.constant(x0)
    with lib.GradientTape() as tape:
        tape.watch(x)
        i, m = f(x)
    return [i, tape.gradient(m, x)]


CASES = {f.__name__: f for f in (eager_tape_around_call, nested_functions, only_variables,
                                 second_order, persistent_and_unconnected,
                                 tape_inside_function_calling_function, integer_and_float_outputs)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_through_function_calls_match_tf(name):
    check(CASES[name], rtol=1e-5, atol=1e-6)
