"""Native (numba) kernels of fused regions: every op with a `native` form, random chains,
broadcasting, NaN/inf, both loop forms, the disk cache, and `jit_compile=True` Functions.

Compiled results are compared with the ops' own numpy kernels within the tolerances
TensorFlow's XLA tests allow (float32: 1e-6 relative for single ops, 1e-4 over chains)."""
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainlib as tl
from trainlib.graph.exec import native
from trainlib.graph.op import REGISTRY
from trainlib.graph.ops import fused

numba = pytest.importorskip("numba")


@pytest.fixture(autouse=True, scope="module")
def numba_loaded():
    """Kernels build on the call that first wants them (no background warm-up in between)."""
    native.warm_up()


@pytest.fixture(autouse=True)
def small_regions_too(monkeypatch):
    """Small test arrays run natively as large ones would (by default, regions under
    NATIVE_MIN elements keep numpy's own calls)."""
    monkeypatch.setattr(native, "NATIVE_MIN", 1)

F32_ULP = {"exp": 1, "log": 1, "tanh": 4, "sigmoid": 2, "softplus": 3, "expm1": 2, "log1p": 2,
           "erf": 1}


def _values(dtype, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    scales = np.repeat([1e-6, 1e-3, 0.1, 1.0, 5.0, 30.0, 100.0], n // 7 + 1)[:n]
    x = rng.standard_normal(n) * scales
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.7, 89.0, -87.3, -104.0, 1e-38, 1e-45,
               -1.0, 2.0, 6.0]
    return np.concatenate([x, special]).astype(dtype)


@pytest.mark.parametrize("name", sorted(F32_ULP))
def test_native_math_float32_within_ulps_of_float64_reference(name):
    import math
    g = {}
    exec(f"from numba import njit\nfrom trainlib.graph.exec import native_math as nm\n"
         f"@njit(fastmath={{'contract'}})\ndef k(x, o):\n    for i in range(x.shape[0]):\n"
         f"        o[i] = nm.{name}(x[i])\n", g)
    x = _values(np.float32, 20000)
    out = np.empty_like(x)
    g["k"](x, out)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    reference = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "expm1": np.expm1,
                 "log1p": np.log1p, "erf": erf, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                 "softplus": lambda v: np.logaddexp(0, v)}[name]
    with np.errstate(all="ignore"):
        ref = reference(x64).astype(np.float32)
    finite = np.isfinite(ref) & (ref != 0)
    ulps = np.abs(out[finite].astype(np.float64) - ref[finite]) / np.spacing(np.abs(ref[finite]))
    assert ulps.max() <= F32_ULP[name], (name, x[finite][ulps.argmax()])
    rest = ~finite
    np.testing.assert_array_equal(out[rest], ref[rest])   # inf, -inf, nan and 0 exactly


def _arity_and_kinds(opdef):
    """Input kinds ('f' float, 'b' bool) the op takes, found by its inference rule."""
    from trainlib.graph.tensor import TensorSpec
    if opdef.name == "BiasAdd":
        return "ff"
    for kinds in ("f", "ff", "fff", "b", "bb", "bff"):
        specs = [TensorSpec([3], tl.float32 if k == "f" else tl.bool) for k in kinds]
        try:
            opdef.infer(*specs, **_attrs(opdef))
            return kinds
        except (TypeError, ValueError):
            continue
    return None


def _attrs(opdef):
    return {"alpha": 0.2} if opdef.name.startswith("LeakyRelu") else \
        {"DstT": tl.float64} if opdef.name == "Cast" else {}


NATIVE_OPS = sorted(name for name, d in REGISTRY.items() if d.native is not None)


def test_the_common_ops_have_native_forms():
    for name in ("AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Exp", "Log", "Tanh", "Sigmoid",
                 "Relu", "ReluGrad", "SelectV2", "Cast", "Sqrt", "Square", "Softplus", "Pow"):
        assert name in NATIVE_OPS, name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NATIVE_OPS)
def test_each_native_op_alone_matches_its_kernel(name, dtype):
    opdef = REGISTRY[name]
    kinds = _arity_and_kinds(opdef)
    assert kinds is not None, name
    attrs = _attrs(opdef)
    if name == "Cast":
        attrs = {"DstT": tl.float32 if dtype == np.float64 else tl.float64}
    arrays = []
    for i, k in enumerate(kinds):
        v = _values(dtype, 700, seed=i)
        arrays.append(v > 0.5 if k == "b" else v)
    if name == "ClipByValue":
        arrays[1], arrays[2] = np.asarray(-1.5, dtype), np.asarray(2.5, dtype)
    if name == "Pow":
        arrays[1] = np.asarray(2.0, dtype)
    if name == "BiasAdd":
        arrays = [arrays[0][:700].reshape(100, 7), arrays[1][-7:]]
    program = ((name, tuple(range(len(arrays))), tuple(sorted(attrs.items()))),)
    with np.errstate(all="ignore"):
        got = native.run(program, arrays)
        want = fused._run_plain(np, arrays, program)
    assert got is not None, f"{name} has a native form but did not run natively"
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype == bool:
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 5e-7 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-37, equal_nan=True)


UNARY = ["Neg", "Abs", "Square", "Exp", "Tanh", "Sigmoid", "Relu", "Softplus", "Sqrt", "Log",
         "Elu", "Softsign", "Sign", "Floor"]
DISCONTINUOUS = {"Floor", "Sign"}
BINARY = ["AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference"]


@st.composite
def chains(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(st.sampled_from([(300, 70), (4, 5, 6), (1000,), (3, 1, 500)]))
    n_in = draw(st.integers(1, 3))
    in_shapes = [shape] + [draw(st.sampled_from([shape, shape[-1:], (), (1,) * len(shape)]))
                           for _ in range(n_in - 1)]
    steps = []
    n = n_in
    for _ in range(draw(st.integers(2, 6))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(UNARY))
            # Floor and Sign jump at integers and zero: an ulp of difference in a computed
            # operand (numba's tanh is correctly rounded where numpy's float32 one is not)
            # moves the result by a whole unit, so they only read the chain's inputs
            last = n_in - 1 if op in DISCONTINUOUS else n - 1
            steps.append((op, (draw(st.integers(0, last)),), ()))
        else:
            a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            steps.append((draw(st.sampled_from(BINARY)), (a, b), ()))
        n += 1
    # the fusion pass's invariant: the result has the shape every input broadcasts to
    steps.append(("AddV2", (n - 1, 0), ()))
    seed = draw(st.integers(0, 100))
    return dtype, in_shapes, tuple(steps), seed


@settings(max_examples=8, deadline=None)
@given(chains())
def test_random_chains_with_broadcasting_and_specials_match_eager(case):
    dtype, shapes, program, seed = case
    rng = np.random.default_rng(seed)
    arrays = []
    for s in shapes:
        v = (rng.standard_normal(s) * 3).astype(dtype)
        flat = v.reshape(-1)
        if flat.size > 10:
            flat[:4] = [np.nan, np.inf, -np.inf, 0.0]
        arrays.append(v)
    with np.errstate(all="ignore"):
        got = native.run(program, arrays)
        want = fused._run_plain(np, arrays, program)
    assert got is not None
    assert got.shape == want.shape and got.dtype == want.dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol,
                               atol=rtol * (1 + np.abs(want[finite]).max(initial=0)))


def test_a_program_whose_result_does_not_span_its_inputs_is_not_run_natively():
    program = (("AddV2", (0, 0), ()), ("Neg", (1,), ()))
    arrays = [np.ones((30, 7), np.float32), np.ones(7, np.float32)]
    assert native.run(program, arrays) is None


def test_integer_regions_keep_the_blocked_path():
    program = (("AddV2", (0, 1), ()), ("Mul", (2, 1), ()))
    arrays = [np.arange(100000, dtype=np.int32), np.int32(3) * np.ones(100000, np.int32)]
    assert native.run(program, arrays) is None
    out = fused._fused(np, *arrays, program=program, jit_compile=True)
    np.testing.assert_array_equal(out, (arrays[0] + arrays[1]) * arrays[1])


def _chain_fn():
    def f(x, b):
        return tl.tanh(x * 2.0 + b) * tl.sigmoid(x) - x ** 2
    return f


def test_jit_function_runs_native_and_compiles_once(monkeypatch):
    monkeypatch.setattr(native, "PARALLEL_MIN", 1 << 16)   # the parallel form (opt-in)
    x = tl.constant(np.random.default_rng(0).standard_normal((256, 300)).astype(np.float32))
    b = tl.constant(np.linspace(-1, 1, 300).astype(np.float32))
    jit = tl.function(_chain_fn(), jit_compile=True)
    plain = tl.function(_chain_fn())
    np.testing.assert_allclose(jit(x, b).numpy(), plain(x, b).numpy(), rtol=2e-6, atol=2e-6)
    concrete = jit.get_concrete_function(x, b)
    first = concrete.compile_seconds
    assert first > 0
    assert "prange" in concrete.native_source and "nm.tanh" in concrete.native_source
    kernels = native.cache_stats()["kernels"]
    for _ in range(3):
        jit(x, b)
    assert concrete.compile_seconds == first        # never per call
    assert native.cache_stats()["kernels"] == kernels


def test_the_gradient_of_a_region_is_a_native_region():
    x = tl.constant(np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32))
    w = tl.Variable(np.random.default_rng(2).standard_normal((128,)).astype(np.float32))

    def step(x):
        with tl.GradientTape() as tape:
            y = tl.reduce_sum(tl.nn.relu(x * w) * tl.sigmoid(x) + tl.nn.softplus(x - w))
        return tape.gradient(y, [w])[0]

    jit = tl.function(step, jit_compile=True)
    np.testing.assert_allclose(jit(x).numpy(), tl.function(step)(x).numpy(), rtol=1e-5, atol=1e-5)
    source = jit.get_concrete_function(x).native_source
    assert "ReluGrad" in source and source.count("def kernel") >= 2


def test_parallel_and_serial_forms_agree_under_concurrent_callers(monkeypatch):
    monkeypatch.setattr(native, "PARALLEL_MIN", 1000)
    program = (("Mul", (0, 0), ()), ("Tanh", (2,), ()), ("AddV2", (3, 1), ()))
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((50, 400)).astype(np.float32),
              rng.standard_normal(400).astype(np.float32)]
    want = np.tanh(arrays[0] * arrays[0]) + arrays[1]
    results, errors = [], []

    def call():
        try:
            for _ in range(20):
                results.append(native.run(program, arrays))
        except Exception as e:   # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 80
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-6, atol=1e-6)


_CHILD = """
import numpy as np, trainlib as tl
from trainlib.graph.exec import native
def f(x):
    return tl.nn.softplus(x * 3.0) - tl.exp(-x)
jit = tl.function(f, jit_compile=True)
x = tl.constant(np.linspace(-5, 5, 70000).astype(np.float32))
native.warm_up()
jit(x)
print(native.cache_stats())
"""

_FIRST_CALL = """
import numpy as np, trainlib as tl
from trainlib.graph.exec import native
def f(x):
    return tl.nn.softplus(x * 3.0) - tl.exp(-x)
x = tl.constant(np.linspace(-5, 5, 70000).astype(np.float32))
want = tl.function(f)(x).numpy()
jit = tl.function(f, jit_compile=True)
first = jit(x).numpy()
print(native.cache_stats()["kernels"], native.warm_up(wait=False))
native.warm_up()
second = jit(x).numpy()
print(native.cache_stats()["kernels"], np.allclose(first, want, rtol=1e-6, atol=1e-6),
      np.allclose(second, want, rtol=1e-5, atol=1e-6))
"""


def test_a_first_call_runs_on_numpy_while_numba_loads_in_the_background(tmp_path):
    env = dict(os.environ, TRAINLIB_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    before, after = (line.split() for line in done.stdout.strip().splitlines()[-2:])
    assert before[0] == "0"                   # the first call built no kernel: numpy ran it
    assert after == [after[0], "True", "True"] and int(after[0]) >= 1   # then native, same values


def test_a_second_process_loads_kernels_from_the_disk_cache(tmp_path):
    env = dict(os.environ, TRAINLIB_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                           text=True, timeout=300, check=True) for _ in range(2)]
    first, second = (eval(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert first["disk_misses"] >= 1 and first["disk_hits"] == 0
    assert second["disk_misses"] == 0 and second["disk_hits"] == first["disk_misses"]
    assert list((tmp_path / "native").glob("*/k_*.py"))


def test_without_numba_jit_compile_warns_once_and_still_runs(monkeypatch):
    monkeypatch.setattr(native, "_numba", False)
    monkeypatch.setattr(native, "_WARNED", [])
    x = tl.constant(np.ones((300, 300), np.float32))
    f = tl.function(lambda x: tl.tanh(x * 2.0) + 1.0, jit_compile=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(x)
        f(x * 2.0)
    said = [w for w in caught if "trainlib[jit]" in str(w.message)]
    assert len(said) == 1
    np.testing.assert_allclose(out.numpy(), np.tanh(2.0) + 1.0, rtol=1e-6)


def test_a_forked_child_runs_parallel_kernels_after_its_parent_did(monkeypatch):
    monkeypatch.setattr(native, "PARALLEL_MIN", 1 << 16)   # the parallel form (opt-in)
    from ..passes.test_fuse import sum_in_forked_child
    x = tl.constant(np.random.default_rng(4).standard_normal(300_000).astype(np.float32))
    fn = tl.function(lambda a: tl.tanh(a) * a + 1.0, jit_compile=True)
    want = fn(x).numpy()       # the parent has used the parallel pool
    assert "prange" in fn.get_concrete_function(x).native_source
    pid, total = sum_in_forked_child(fn, x)
    assert pid != os.getpid() and total == float(np.sum(want))


def test_bias_add_and_its_activation_are_one_native_region():
    layer = tl.layers.Dense(300, activation="sigmoid")
    x = tl.constant(np.random.default_rng(5).standard_normal((256, 40)).astype(np.float32))
    layer(x)
    layer.bias.assign(np.linspace(-1, 1, 300).astype(np.float32))
    jit = tl.function(lambda x: layer(x), jit_compile=True)
    np.testing.assert_allclose(jit(x).numpy(), tl.function(lambda x: layer(x))(x).numpy(),
                               rtol=1e-6, atol=1e-7)
    source = jit.get_concrete_function(x).native_source
    assert "BiasAdd -> Sigmoid" in source and "i1[0, d1]" in source   # the bias per column


@pytest.mark.parametrize("kind,axis,keepdims", [
    ("Sum", (1,), False), ("Mean", (-1,), True), ("Max", (1, 2), False), ("Min", None, False),
    ("Sum", None, True), ("Mean", (0,), False)])
def test_a_reduction_ends_a_native_region(kind, axis, keepdims):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((40, 30, 60)).astype(np.float32)
    a[3, 4, 5] = np.nan
    b = rng.standard_normal(60).astype(np.float32)
    program = (("Mul", (0, 1), ()), ("Tanh", (2,), ()))
    reduce = (kind, axis, keepdims)
    from trainlib.graph.ops.fused import _fused_reduction
    with np.errstate(all="ignore"):
        got = _fused_reduction(np, a, b, program=program, reduce=reduce, jit_compile=True)
    want = REGISTRY[kind].kernel(np, np.tanh(a * b), axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)
    ran_natively = native.run(program, [a, b], (), reduce) is not None
    axes = {a % 3 for a in (axis or range(3))}
    innermost = axes == set(range(3 - len(axes), 3))
    assert ran_natively == innermost   # reducing outer axes only: the reduction's own kernel


def test_a_loss_term_is_one_fused_reduction_only_under_jit_compile():
    x = tl.constant(np.random.default_rng(7).standard_normal((128, 300)).astype(np.float32))
    y = tl.constant(np.random.default_rng(8).standard_normal((128, 300)).astype(np.float32))

    def mse(x, y):
        return tl.reduce_mean(tl.square(x - y), axis=-1)
    jit, plain = tl.function(mse, jit_compile=True), tl.function(mse)
    np.testing.assert_allclose(jit(x, y).numpy(), plain(x, y).numpy(), rtol=1e-6)
    types = [op.type for op in jit.get_concrete_function(x, y).optimized_graph.operations]
    assert types.count("FusedReduction") == 1 and "Mean" not in types
    assert "FusedReduction" not in [op.type for op in
                                    plain.get_concrete_function(x, y).optimized_graph.operations]
    assert "Sub -> Square -> Mean" in jit.get_concrete_function(x, y).native_source


def test_small_regions_keep_numpys_calls_by_default(monkeypatch):
    monkeypatch.setattr(native, "NATIVE_MIN", 2048)
    program = (("Mul", (0, 1), ()), ("Tanh", (2,), ()))
    small = [np.ones((10, 100), np.float32), np.ones(100, np.float32)]
    large = [np.ones((30, 100), np.float32), np.ones(100, np.float32)]
    assert native.run(program, small) is None
    np.testing.assert_allclose(native.run(program, large), np.tanh(1.0), rtol=1e-6)


def test_a_jit_optimizer_step_updates_its_slots_in_place():
    rng = np.random.default_rng(3)
    x = tl.constant(rng.standard_normal((8, 60)).astype(np.float32))
    y = tl.constant(rng.integers(0, 5, 8).astype(np.int32))

    def trainer(jit):
        tl.keras.utils.set_random_seed(0)
        model = tl.Sequential([tl.layers.Input((60,)), tl.layers.Dense(40, activation="relu"),
                               tl.layers.Dense(5)])
        opt = tl.optim.Adam(1e-2)
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

        @tl.function(jit_compile=jit)
        def step(x, y):
            with tl.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            return loss
        return model, step
    model, step = trainer(True)
    plain_model, plain_step = trainer(False)
    for _ in range(3):
        got, want = step(x, y), plain_step(x, y)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    source = step.get_concrete_function(x, y).python_source
    assert "k_fused_elementwise" in source and "k_assign_add_variable_op" not in source
    assert "ip_assign_add_variable_op" in source
    for a, b in zip(model.get_weights(), plain_model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_damaged_cache_file_is_rebuilt_not_imported(tmp_path):
    env = dict(os.environ, TRAINLIB_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                   timeout=300, check=True)
    files = list((tmp_path / "native").glob("*/k_*.py"))
    assert files
    good = {f: f.read_text() for f in files}
    for f in files:
        f.write_text("def kernel(:\n")   # a damaged entry: a SyntaxError if imported
    run = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert all(f.read_text() == text for f, text in good.items())
