"""Generated code reads like numpy and is safe whatever things are named: ASCII identifiers
distinct after NFKC, no builtins shadowed, one binding per helper, public accessors only,
the user's line named above each block; sources registered with linecache."""
import ast
import builtins
import linecache

import numpy as np
import pytest

import trainlib as tl
from trainlib.graph.exec.emit import Namespace, identifier
from tests.saved_model.helpers import edit_json


def _assigned_names(source):
    tree = ast.parse(source)
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Store)} | \
        {a.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for a in node.args.args}


def test_identifiers_are_ascii_and_stay_distinct_after_nfkc():
    names = Namespace()
    made = [names.fresh(text) for text in ("ﬁ", "fi", "x²", "x2", "Ⅸ", "", "9lives", "sum", "lambda",
                                           "kernel:0", "é", "e")]
    assert all(n.isascii() and n.isidentifier() for n in made)
    assert len(set(made)) == len(made)
    assert "sum" not in made and "lambda" not in made
    assert identifier("x²") == "x2" and identifier("ﬁ") == "fi"
    assert identifier("σ_max") == "sigma_max" and identifier("é") == "e"


def test_a_variable_named_x_squared_compiles():
    v = tl.Variable(3.0, name="x²")

    @tl.function
    def f(x):
        return v * x

    assert float(f(tl.constant(2.0))) == 6.0
    assert f.get_concrete_function(tl.constant(2.0)).python_source.isascii()


def test_variables_whose_names_fold_together_stay_apart():
    a = tl.Variable(1.0, name="ﬁ")   # NFKC folds this to "fi"
    b = tl.Variable(2.0, name="fi")

    @tl.function
    def f(x):
        return a * x + b * 10.0

    assert float(f(tl.constant(1.0))) == 21.0


def test_a_saved_model_with_op_names_that_fold_together_loads_and_computes(tmp_path):
    m = tl.Module()
    m.a = tl.Variable(1.0, name="a")
    m.b = tl.Variable(2.0, name="b")
    m.f = tl.function(lambda x: m.a * x + m.b * 10.0,
                      input_signature=[tl.TensorSpec([], tl.float32)])
    tl.saved_model.save(m, str(tmp_path))
    renames = {}

    def ref(r):
        name, index = r.rsplit(":", 1)
        return f"{renames.get(name, name)}:{index}"

    def craft(doc):
        for function in doc["model"]["concrete_functions"]:
            graph = function["graph"]
            reads = [op for op in graph["ops"] if op["type"] == "ReadVariableOp"]
            handles = [op for op in graph["ops"]
                       if op["type"] == "Placeholder" and "_variable" in op["attrs"]]
            for op, new in zip(reads + handles, ["ﬁ", "fi", "x²", "x2"]):
                renames[op["name"]] = new
                op["name"] = new
                op["location"] = "evil.py:1\nraise SystemExit('ran code from a file')\n#:1"
            for op in graph["ops"]:
                op["inputs"] = [ref(r) for r in op["inputs"]]
            graph["inputs"] = [ref(r) for r in graph["inputs"]]
            graph["outputs"] = [ref(r) for r in graph["outputs"]]

    edit_json(tmp_path, craft)
    assert set(renames.values()) == {"ﬁ", "fi", "x²", "x2"}
    loaded = tl.saved_model.load(str(tmp_path))
    assert float(loaded.f(tl.constant(3.0))) == 23.0
    source = loaded.f.concrete_functions[0].python_source
    assert source.isascii() and "evil.py:1?raise" in source


def test_no_builtin_is_shadowed_and_values_are_named_for_what_they_are():
    @tl.function
    def f(x):
        s = tl.reduce_sum(x * 2.0)
        m = tl.reduce_max(x)
        return tl.pow(x, 3.0) + s + m + tl.abs(x)

    src = f.get_concrete_function(tl.constant([1.0, -2.0])).python_source
    assert not (_assigned_names(src) & set(dir(builtins)))
    assert "x_times_2 = " in src
    np.testing.assert_allclose(f(tl.constant([1.0, -2.0])).numpy(), [1.0, -7.0])


def test_helpers_are_bound_once_and_variables_read_through_a_public_accessor():
    vs = [tl.Variable(np.ones(8, np.float32)) for _ in range(3)]

    @tl.function
    def step(g):
        for v in vs:
            v.assign_add(g)
        return tl.add_n([tl.reduce_sum(v.read_value()) for v in vs])

    src = step.get_concrete_function(tl.constant(np.ones(8, np.float32))).python_source
    calls = [line.split("(")[0].strip() for line in src.splitlines() if "(xp, " in line and "=" not in line]
    assert len(calls) == 3 and len(set(calls)) == 1   # three in-place writes, one helper
    assert "._" not in src                             # no private fields
    assert ".array" in src
    assert float(step(tl.constant(np.ones(8, np.float32)))) == 48.0


def test_each_block_names_the_users_line():
    @tl.function
    def f(x):
        y = x * 3.0
        return tl.exp(y)

    src = f.get_concrete_function(tl.constant(1.0)).python_source
    first = f.__wrapped__.__code__.co_firstlineno if hasattr(f, "__wrapped__") else None
    lines = src.splitlines()
    comments = [line.strip() for line in lines if line.strip().startswith("#")]
    assert comments and all(c.startswith("# test_emit.py:") for c in comments)
    assert len(comments) == 2   # one per user line: `y = x * 3.0`, `return tl.exp(y)`
    assert first is None or int(comments[0].rsplit(":", 1)[1]) == first + 2


def test_fused_loops_are_generated_by_the_emitter_and_in_linecache(monkeypatch):
    from trainlib.graph.exec import native
    from trainlib.graph.ops import fused

    monkeypatch.setattr(native, "_numba", False)   # the blocked path, as without numba
    monkeypatch.setattr(native, "_WARNED", [True])
    saved = fused.BLOCK
    fused.BLOCK = 64
    try:
        f = tl.function(lambda x: tl.sigmoid(x * 2.0 + 1.0) - tl.nn.relu(x), jit_compile=True)
        x = np.linspace(-3, 3, 4096).astype(np.float32)
        np.testing.assert_allclose(f(tl.constant(x)).numpy(),
                                   1 / (1 + np.exp(-(x * 2 + 1))) - np.maximum(x, 0), atol=1e-6)
        runners = list(fused._BLOCKED.values())
    finally:
        fused.BLOCK = saved
    assert runners
    runner = runners[-1]
    assert "def run(" in "".join(linecache.getlines(runner.filename))
    assert "sigmoid_into(" in runner.source and "relu_into(" in runner.source


@pytest.mark.parametrize("name", ["x²", "def", "lambda"])
def test_function_names_of_any_text_compile(name):
    def g(x):
        return x + 1.0
    g.__name__ = name
    assert float(tl.function(g)(tl.constant(1.0))) == 2.0


def test_cupy_kernels_are_built_from_the_ops_c_expressions():
    """An op's C form is a field of its own definition: a new op brings its own."""
    from trainlib.graph.op import REGISTRY, defop
    from trainlib.graph.ops import fused

    class FakeCupy:   # records what would be compiled
        def ElementwiseKernel(self, params, out, body, name):  # noqa: N802 -- CuPy's name
            return params, out, body

    defop("TestCube", infer=lambda x: x, differentiable=False, elementwise=True,
          c_expr="({0} * {0} * {0})")(lambda xp, x: x * x * x)
    try:
        a = np.ones(4, np.float32)
        program = (("Mul", (0, 1), ()), ("TestCube", (2,), ()), ("Sigmoid", (3,), ()),
                   ("Cast", (4,), (("DstT", tl.bool),)))
        params, out, body = fused._cupy_kernel(FakeCupy(), program, [a, a])
    finally:
        del REGISTRY["TestCube"]
    assert params == "float32 x0, float32 x1" and out == "bool y"
    assert "(x0 * x1)" in body and "(t0 * t0 * t0)" in body and "exp(-t1)" in body
    assert "bool t3 = (bool)((bool)t2);" in body   # C++: non-zero is true
    assert fused._cupy_kernel(FakeCupy(), (("Round", (0,), ()),), [a]) is None  # no C form


def test_generated_source_leaves_linecache_with_its_function():
    import gc
    import linecache
    import numpy as np
    import trainlib as tl

    def count():
        return sum(1 for k in list(linecache.cache) if str(k).startswith("<trainlib-"))

    gc.collect()
    before = count()
    for i in range(200):
        f = tl.function(lambda x: x * 2.0 + float(i))
        f(np.ones(3, np.float32))
        del f
    gc.collect()
    assert count() - before < 50
