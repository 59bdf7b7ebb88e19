"""tl.custom_gradient against TensorFlow: the custom rule replaces the gradient of the ops
inside (a clip, a zero rule, an identity), eagerly and in tl.function, with several inputs and
outputs, with Variables (arguments, and read inside with `variables=`), inside a while loop, and
for higher-order gradients (a tape around a tape)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402


def _clip(lib):
    @lib.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return lib.clip_by_value(dy, -2.0, 2.0)
        return y, backward
    return clip_gradients


def _zero(lib):
    @lib.custom_gradient
    def zero(x):
        def backward(dy):
            return dy * 0
        return x * x, backward
    return zero


def _two_inputs(lib):
    @lib.custom_gradient
    def f(x, y):
        def backward(dz):
            return dz * 10.0, dz * y * 0.5
        return x * y + x, backward
    return f


def _two_outputs(lib):
    @lib.custom_gradient
    def f(x):
        def backward(da, db):
            return da * 3.0 + db * 5.0
        return (x * 2.0, x * x), backward
    return f


def _scale_with_variable(lib, v):
    @lib.custom_gradient
    def scale(x):
        def backward(dy, variables=None):
            return dy * 7.0, [dy * 100.0 for _ in variables]
        return x * v, backward
    return scale


def _log1pexp(lib):
    @lib.custom_gradient
    def log1pexp(x):
        e = lib.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return lib.math.log(1 + e), grad
    return log1pexp


def _eager_and_graph(run):
    def both(lib):
        return [run(lib), lib.function(lambda: run(lib), autograph=False)()]
    return both


def _grad(lib, make, value=3.0, extra=lambda lib, y, x: y):
    x = lib.constant(value)
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = extra(lib, make(lib)(x), x)
    return tape.gradient(y, x)


CASES = {
    "clip identity": lambda lib: _grad(lib, _clip, extra=lambda lib, y, x: y * 3.0),
    "zero rule": lambda lib: _grad(lib, _zero, 2.0),
    "zero rule times input": lambda lib: _grad(lib, _zero, 2.0, lambda lib, y, x: y * x),
    "identity output reused": lambda lib: _grad(lib, _clip, 2.0, lambda lib, y, x: y * x * x),
    "log1pexp large": lambda lib: _grad(lib, _log1pexp, 100.0),
    "two inputs": lambda lib: _two_input_grads(lib),
    "two outputs": lambda lib: _grad(lib, _two_outputs, 2.0, lambda lib, y, x: y[0] + y[1] * 2.0),
    "variable argument": lambda lib: _variable_argument(lib),
    "variables read inside": lambda lib: _variables_inside(lib),
    "second order": lambda lib: _second_order(lib),
    "inside while": lambda lib: _inside_while(lib),
}


def _two_input_grads(lib):
    x, y = lib.constant(2.0), lib.constant(3.0)
    with lib.GradientTape() as tape:
        tape.watch([x, y])
        z = _two_inputs(lib)(x, y) * 2.0
    return tape.gradient(z, [x, y])


def _variable_argument(lib):
    v = lib.Variable(3.0)
    with lib.GradientTape() as tape:
        y = _clip(lib)(v) * 5.0
    return tape.gradient(y, v)


def _variables_inside(lib):
    v = lib.Variable(2.0)
    x = lib.constant(3.0)
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = _scale_with_variable(lib, v)(x) * 2.0
    return tape.gradient(y, [x, v])


def _second_order(lib):
    x = lib.constant(2.0)
    f = _log1pexp(lib)
    with lib.GradientTape() as outer:
        outer.watch(x)
        with lib.GradientTape() as inner:
            inner.watch(x)
            y = f(x) * x
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


def _inside_while(lib):
    x = lib.constant(1.5)
    f = _clip(lib)
    with lib.GradientTape() as tape:
        tape.watch(x)
        _, y = lib.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, f(y * x) * 2.0),
                              (lib.constant(0), x))
    return tape.gradient(y, x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_custom_gradient_matches_tf(name):
    check(_eager_and_graph(CASES[name]))
