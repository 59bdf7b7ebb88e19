"""py_function, numpy_function, init_scope, map_fn, vectorized_map, scan, foldl, foldr against
TensorFlow: values, dtypes, shapes and gradients, eagerly and in a (tl|tf).function."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check, in_function  # noqa: E402

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (4, 3)).astype("float32")
I = rng.integers(-3, 3, (5, 2)).astype("int32")


PROGRAMS = {
 "map_fn": lambda lib: lib.map_fn(lambda r: lib.sin(r) * r[0], lib.constant(X)),
 "map_fn sig": lambda lib: lib.map_fn(lambda r: lib.reduce_sum(r), lib.constant(I),
                                      fn_output_signature=lib.int32),
 "map_fn dtype change": lambda lib: lib.map_fn(lambda r: lib.cast(r, lib.float32), lib.constant(I),
                                               fn_output_signature=lib.float32),
 "map_fn tuple": lambda lib: lib.map_fn(lambda t: (t[0] * 2, t[1] + 1.0),
                                        (lib.constant(I), lib.constant(X[:, :2].repeat(2, 0)[:5]))),
 "map_fn dict": lambda lib: lib.map_fn(lambda d: d["a"] * 3, {"a": lib.constant(X)},
                                       fn_output_signature=lib.float32),
 "vectorized_map": lambda lib: lib.vectorized_map(lambda r: lib.reduce_max(r) - r, lib.constant(X)),
 "scan": lambda lib: lib.scan(lambda a, r: a * 0.5 + r, lib.constant(X)),
 "scan init": lambda lib: lib.scan(lambda a, r: a + lib.reduce_sum(r), lib.constant(I),
                                   initializer=lib.constant(0)),
 "scan reverse": lambda lib: lib.scan(lambda a, r: a + r, lib.constant(I), reverse=True),
 "scan tuple acc": lambda lib: lib.scan(lambda a, r: (a[0] + r, a[1] * 2), lib.constant(X),
                                        initializer=(lib.zeros([3]), lib.ones([]))),
 "foldl": lambda lib: lib.foldl(lambda a, r: a * r, lib.constant(X)),
 "foldl init": lambda lib: lib.foldl(lambda a, r: a - r, lib.constant(I), initializer=lib.constant([1, 1])),
 "foldr": lambda lib: lib.foldr(lambda a, r: a * 2 + r, lib.constant(I)),
 "map_fn mismatched lengths": lambda lib: lib.map_fn(lambda t: t[0], (lib.ones([2]), lib.ones([3]))),
 "py_function": lambda lib: lib.py_function(lambda a, b: a * b + 1, [lib.constant(X), 2.0], lib.float32),
 "py_function two": lambda lib: lib.py_function(lambda a: [a, lib.cast(a, lib.int64)],
                                                [lib.constant(I)], [lib.int32, lib.int64]),
 "numpy_function": lambda lib: lib.numpy_function(lambda a: (a * 2).astype(np.float64),
                                                  [lib.constant(X)], lib.float64),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values(name, graph):
    program = PROGRAMS[name]
    if graph and name.startswith(("py_function", "numpy_function")):
        # shapes are unknown inside a graph (both libraries); compare through a reshape
        def program(lib, p=PROGRAMS[name]):
            out = p(lib)
            return [lib.reshape(o, lib.shape(o)) for o in out] if isinstance(out, list) else out
    check(in_function(program, graph), rtol=1e-5)


GRADS = {
 "map_fn": lambda lib, x: lib.map_fn(lambda r: lib.exp(r) * r[1], x),
 "vectorized_map": lambda lib, x: lib.vectorized_map(lambda r: lib.reduce_sum(r * r), x),
 "scan": lambda lib, x: lib.scan(lambda a, r: a * r + lib.sin(r), x),
 "foldl": lambda lib, x: lib.foldl(lambda a, r: a * r, x),
 "foldr": lambda lib, x: lib.foldr(lambda a, r: lib.tanh(a + r), x, initializer=lib.zeros([3])),
 "py_function": lambda lib, x: lib.py_function(lambda a: lib.sin(a) * a, [x], lib.float32),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name, graph):
    def program(lib):
        x = lib.constant(X)
        with lib.GradientTape() as tape:
            tape.watch(x)
            y = lib.reduce_sum(GRADS[name](lib, x) ** 2)
        return tape.gradient(y, x)
    check(in_function(program, graph), rtol=1e-5, atol=1e-6)


def test_py_function_runs_per_call_in_both():
    def program(lib):
        calls = []

        def effect(x):
            calls.append(1)
            return x + 1

        f = lib.function(lambda x: lib.py_function(effect, [x], lib.int32))
        outs = [f(lib.constant(i)) for i in range(3)]
        return [lib.stack(outs), lib.constant(len(calls))]
    check(program)


def test_init_scope_in_both():
    def program(lib):
        seen = []

        @lib.function
        def f(x):
            with lib.init_scope():
                seen.append(lib.executing_eagerly())
            seen.append(lib.executing_eagerly())
            return x
        f(lib.constant(1))
        return lib.constant(seen)
    check(program)
