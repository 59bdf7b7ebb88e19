"""batch_jacobian, UnconnectedGradients, tl.types.experimental and saved_model.SaveOptions
against TensorFlow."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (3, 4)).astype("float32")
W = rng.uniform(-1, 1, (4, 2)).astype("float32")

TARGETS = {
 "matmul tanh": lambda lib, x: lib.tanh(lib.matmul(x, lib.constant(W))),
 "square": lambda lib, x: x * x,
 "softmax": lambda lib, x: lib.nn.softmax(x * 2),
 "rank 3 target": lambda lib, x: lib.reshape(lib.sin(x), [3, 2, 2]),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_batch_jacobian(name, graph):
    def program(lib):
        def run():
            x = lib.constant(X)
            with lib.GradientTape() as tape:
                tape.watch(x)
                y = TARGETS[name](lib, x)
            return tape.batch_jacobian(y, x)
        return lib.function(run)() if graph else run()
    check(program, rtol=1e-5)


@pytest.mark.parametrize("mode", ["NONE", "ZERO"])
def test_unconnected_gradients_enum(mode):
    def program(lib):
        x, z = lib.constant(X), lib.Variable(W)
        with lib.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * 3
        how = getattr(lib.UnconnectedGradients, mode)
        return [tape.gradient(y, [x, z], unconnected_gradients=how),
                tape.batch_jacobian(y, lib.constant(X), unconnected_gradients=how),
                how.value]
    check(program)


def test_types_experimental():
    def program(lib):
        f = lib.function(lambda x: x * 2)
        c = f.get_concrete_function(lib.TensorSpec([], lib.float32))
        T = lib.types.experimental
        return [isinstance(f, T.GenericFunction), isinstance(c, T.ConcreteFunction),
                isinstance(f, T.ConcreteFunction)]
    check(program)


def test_save_options(tmp_path):
    def program(lib):
        m = lib.Module()
        m.f = lib.function(lambda x: x + 1, input_signature=[lib.TensorSpec([], lib.float32)])
        opts = lib.saved_model.SaveOptions(function_aliases={"f": m.f}, save_debug_info=True)
        path = str(tmp_path / lib.__name__)
        lib.saved_model.save(m, path, options=opts)
        return [lib.saved_model.load(path).f(lib.constant(1.0)), sorted(opts.function_aliases)]
    check(program)
