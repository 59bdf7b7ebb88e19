"""Every kernel reaches arrays only through `xp`: the whole op set runs on a strict array module.

`tests/graph/strict_xp.py` plays the GPU (installed with `backend.simulated_gpu`):
its arrays refuse every implicit numpy conversion, as CuPy's do. Each case of
every op table (math, array, nn, debugging) runs eagerly, through the tape
(gradients) and in a tl.function on it, and must give what the numpy backend
gives; random ops, printing, assertions, variables and control flow run too.
The last test fails if a registered op was never exercised here.
"""
import contextlib
import importlib
import io

import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops.harness import make_inputs
from tests.graph.strict_xp import StrictArrayError, strict_xp
from trainlib.graph import backend
from trainlib.graph.exec.program import compile_graph
from trainlib.graph.passes.fuse import fuse
from trainlib.graph.op import REGISTRY

_TABLES = ("test_math", "test_normalization", "test_array", "test_nn", "test_debugging", "test_tensor_array", "test_linalg", "test_bitwise",
           "test_numeric", "test_segment", "test_decompositions", "test_complex", "test_tf_surface",
           "test_tf_array")
_CASES = [c for name in _TABLES for c in importlib.import_module(f"tests.graph.ops.{name}").CASES]
_PARAMS = [pytest.param(c, d, id=f"{c.name}-{d}") for c in _CASES for d in c.dtypes]
_NEVER_RUN = {"Placeholder",  # fed by the Function call; its kernel only raises
              # MPI collectives: their kernels hand host buffers to mpi4py (tests/distribute)
              "CollectiveAllReduce", "CollectiveBroadcast"}
_NEVER_RUN |= {name for name, d in REGISTRY.items() if d.host}  # host-only (string) kernels

EXERCISED = set()   # op types whose kernel ran on strict_xp, or that ran in a strict graph


@contextlib.contextmanager
def strict():
    """Runs the block on the strict array module, as on a GPU."""
    with backend.simulated_gpu(strict_xp), tl.device("gpu"):
        yield


@pytest.fixture(scope="module", autouse=True)
def _record_kernels():
    """Wraps every kernel to note the ops that ran with xp = strict_xp (restored afterwards)."""
    saved = {name: d.kernel for name, d in REGISTRY.items()}

    def recording(name, kernel):
        def run(xp, *args, **kwargs):
            if xp is strict_xp:
                EXERCISED.add(name)
            return kernel(xp, *args, **kwargs)
        run.__dict__.update(kernel.__dict__)  # keeps whatever the kernel carries
        run.__name__ = getattr(kernel, "__name__", name)
        return run

    for name, d in REGISTRY.items():
        d.kernel = recording(name, d.kernel)
    yield
    for name, kernel in saved.items():
        REGISTRY[name].kernel = kernel


def _leaves(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _host(out):
    return [o.numpy() for o in _leaves(out)]


def _same(got, want, case, what):
    assert len(got) == len(want), f"{case} ({what}): {len(got)} outputs, numpy gave {len(want)}"
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert type(g) is np.ndarray and g.shape == w.shape and g.dtype == w.dtype, \
            f"{case} ({what}): {g.dtype}{g.shape} vs numpy {w.dtype}{w.shape}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol, err_msg=f"{case} {what}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{case} {what}")


def _gradients(case, arrays):
    xs = [tl.constant(a) for a in arrays]
    with tl.GradientTape() as tape:
        for x, a in zip(xs, arrays):
            if a.dtype.kind == "f":
                tape.watch(x)
        total = tl.add_n([tl.reduce_sum(o * tl.cast(i + 1, o.dtype) if o.dtype.is_floating else
                                        tl.zeros([], tl.float64))
                          for i, o in enumerate(_leaves(case.fn(*xs))) if o.dtype.is_floating])
    watched = [x for x, a in zip(xs, arrays) if a.dtype.kind == "f"]
    grads = tape.gradient(total, watched)
    return [np.zeros(w.shape, w.dtype.np) if g is None else g.numpy() for g, w in zip(grads, watched)]


def _note_graph_ops(fn, *args):
    EXERCISED.update(op.type for op in fn.get_concrete_function(*args).graph.get_operations())


@pytest.mark.parametrize("case,dtype", _PARAMS)
def test_case_runs_on_strict_xp(case, dtype):
    """Eager, gradient and tl.function results on the strict module equal numpy's."""
    arrays = make_inputs(case, dtype, np.random.default_rng(0))
    want = _host(case.fn(*[tl.constant(a) for a in arrays]))
    with strict():
        inputs = [tl.constant(a) for a in arrays]
        assert all(t.device == "gpu" for t in inputs)
        out = case.fn(*inputs)
        assert all(o.device == "gpu" for o in _leaves(out)), f"{case}: an output left the device"
        _same(_host(out), want, case, "eager")
    floating = any(a.dtype.kind == "f" for a in arrays)
    if case.grad and floating and dtype in ("float64", case.dtypes[-1]):
        want_grads = _gradients(case, arrays)
        with strict():
            _same(_gradients(case, arrays), want_grads, case, "gradient")
    if dtype == case.dtypes[0]:
        with strict():
            # a lambda: codegen names the generated function after the Python one, and a
            # function named like an op (tl.shape) shadowed its kernel (reported)
            fn = tl.function(lambda *xs: case.fn(*xs), autograph=False)
            inputs = [tl.constant(a) for a in arrays]
            _same(_host(fn(*inputs)), want, case, "tl.function")
            _note_graph_ops(fn, *inputs)


def test_random_ops_draw_on_strict_xp_and_follow_set_seed():
    def draws():
        return [tl.random.uniform([3, 2]), tl.random.uniform([5], 0, 10, dtype=tl.int64),
                tl.random.normal([4], seed=3), tl.random.truncated_normal([50], dtype=tl.float64),
                tl.random.categorical(tl.math.log([[0.5, 0.5]]), 6),
                tl.random.shuffle(tl.range(6)), tl.random.uniform(tl.constant([2, 2])),
                gamma_draws(tl.constant([3]), 2.0, seed=2)]

    from trainlib.graph.ops.random import gamma_draws
    with strict():
        tl.random.set_seed(5)
        first = draws()
        assert all(t.device == "gpu" for t in first)
        tl.random.set_seed(5)
        second = draws()
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert 0 <= first[0].numpy().min() and first[0].numpy().max() < 1
        assert first[1].dtype is tl.int64 and 0 <= first[1].numpy().min() <= first[1].numpy().max() < 10
        assert np.abs(first[3].numpy()).max() <= 2
        assert sorted(first[5].numpy().tolist()) == list(range(6))
        f = tl.function(draws)
        tl.random.set_seed(7)
        a = [t.numpy() for t in f()]
        tl.random.set_seed(7)
        b = [t.numpy() for t in f()]
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        _note_graph_ops(f)
    tl.random.set_seed(None)


def test_stateless_random_ops_on_strict_xp():
    from trainlib.graph.ops import stateless_random as sr

    def draws(seed):
        return [sr.stateless_uniform([3], seed), sr.stateless_normal([3], seed),
                sr.stateless_truncated_normal([3], seed),
                sr.stateless_uniform([3], seed, 0, 5, dtype=tl.int64),
                sr.stateless_random_gamma([3], seed, 2.0), sr.stateless_random_binomial([3], seed, 4, 0.5),
                sr.stateless_poisson([3], seed, 2.0)]

    with strict():
        seed = tl.constant([3, 4], tl.int64)
        first, second = draws(seed), draws(seed)
        for a, b in zip(first, second):
            assert a.device == "gpu"
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        f = tl.function(draws)
        for a, b in zip(f(seed), first):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        _note_graph_ops(f, seed)


def test_print_and_asserts_on_strict_xp():
    def program(x):
        out = io.StringIO()
        tl.print("x:", x, tl.reduce_sum(x), output_stream=out)
        tl.debugging.assert_equal(x, x, message="same")
        tl.debugging.assert_less(x, x + 1.0)
        tl.debugging.check_numerics(x, "x")
        return out.getvalue()

    x = np.array([[1.5, -2.0], [0.25, 3.0]], np.float32)
    want = program(tl.constant(x))
    with strict():
        assert program(tl.constant(x)) == want
        with pytest.raises(tl.errors.InvalidArgumentError, match="differ"):
            tl.debugging.assert_equal(tl.constant(x), tl.constant(x) + 1.0, message="differ")
        with pytest.raises(tl.errors.InvalidArgumentError):
            tl.debugging.check_numerics(tl.constant([np.nan], tl.float32), "bad")

        @tl.function
        def checked(v):
            tl.print(v)
            tl.debugging.assert_greater(v, 0.0)
            started = tl.timestamp()
            with tl.control_dependencies([tl.group(started)]):
                return v * 2.0 + 0.0 * tl.cast(started - started, tl.float32)

        np.testing.assert_array_equal(checked(tl.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
        with pytest.raises(tl.errors.InvalidArgumentError):
            checked(tl.constant([-1.0, 2.0]))
        _note_graph_ops(checked, tl.constant([1.0, 2.0]))


def _control_flow_and_variables():
    v = tl.Variable([1.0, 2.0])

    @tl.function
    def step(x, n):
        with tl.GradientTape() as tape:
            y = tl.cond(tl.reduce_sum(x) > 0, lambda: x * v, lambda: x - v)
            i, acc = tl.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * 1.5),
                                   [tl.constant(0), y])
            loss = tl.reduce_sum(acc * acc)
        g = tape.gradient(loss, v)
        v.assign_sub(0.1 * g)
        v.assign_add(tl.ones([2]))
        v.assign(v * 0.5)
        return loss, g, tl.sigmoid(tl.tanh(x * 2.0 + 1.0)) - x * x

    results = [step(tl.constant([0.5, -0.25]), tl.constant(3)),
               step(tl.constant([-3.0, 1.0]), tl.constant(2))]
    return [r.numpy() for out in results for r in out] + [v.numpy()], step


def test_variables_control_flow_on_strict_xp():
    """A graph with If, While, variable reads/writes, gradients and an elementwise chain."""
    want, _ = _control_flow_and_variables()
    with strict():
        got, step = _control_flow_and_variables()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
        _note_graph_ops(step, tl.constant([0.5, -0.25]), tl.constant(3))


@pytest.mark.parametrize("shape", [(7,), (3, 5000)], ids=["small", "blocked"])
def test_fused_elementwise_on_strict_xp(shape):
    """The fusion pass's FusedElementwise (plain and cache-blocked runs) compiled for strict_xp."""
    def chain(x, b):
        return tl.sigmoid(tl.tanh(x * 2.0 + b)) - x * x

    x = np.random.default_rng(0).uniform(-3, 3, shape).astype(np.float32)
    b = np.float32(0.5) * np.ones(shape[-1:], np.float32)
    want = chain(tl.constant(x), tl.constant(b)).numpy()
    for jit in (False, True):
        with strict():
            graph = tl.function(chain).get_concrete_function(tl.constant(x), tl.constant(b)).graph
            graph = fuse(graph, jit_compile=jit)
            assert "FusedElementwise" in [op.type for op in graph.get_operations()]
            program = compile_graph(graph, strict_xp)
            out, = program.fn(strict_xp.asarray(x), strict_xp.asarray(b))
            assert type(out) is strict_xp.ndarray
            EXERCISED.update(op.type for op in graph.get_operations())
        np.testing.assert_allclose(out.get(), want, rtol=1e-6, atol=1e-7)


def test_fused_reduction_on_strict_xp():
    """A reduction ending a fused region (FusedReduction) compiled for strict_xp."""
    def loss(x, y):
        return tl.reduce_mean(tl.square(x - y), axis=-1)

    x = np.random.default_rng(1).uniform(-3, 3, (4, 9)).astype(np.float32)
    y = np.random.default_rng(2).uniform(-3, 3, (4, 9)).astype(np.float32)
    want = loss(tl.constant(x), tl.constant(y)).numpy()
    with strict():
        graph = tl.function(loss).get_concrete_function(tl.constant(x), tl.constant(y)).graph
        graph = fuse(graph, jit_compile=True)
        assert "FusedReduction" in [op.type for op in graph.get_operations()]
        out, = compile_graph(graph, strict_xp).fn(strict_xp.asarray(x), strict_xp.asarray(y))
        assert type(out) is strict_xp.ndarray
        EXERCISED.update(op.type for op in graph.get_operations())
    np.testing.assert_allclose(out.get(), want, rtol=1e-6)


def test_shared_conv_patches_on_strict_xp():
    """The conv_patch_sharing pass's ConvPatches, ConvFromPatches and ConvFilterFromPatches in a
    strict graph give what the numpy backend gives."""
    x = np.random.default_rng(0).standard_normal((2, 5, 5, 3)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 3, 3, 4)).astype(np.float32)

    def step(x, w):
        with tl.GradientTape() as tape:
            tape.watch(w)
            y = tl.nn.conv2d(x, w, 1, "SAME")
            loss = tl.reduce_sum(y * y)
        return y, tape.gradient(loss, w)
    want = [t.numpy() for t in tl.function(step)(tl.constant(x), tl.constant(w))]
    from trainlib.graph import optimizer_config
    optimizer_config.set_experimental_options({"conv_patch_sharing": True})   # opt-in
    try:
        with strict():
            fn = tl.function(step)
            got = fn(tl.constant(x), tl.constant(w))
            types = [op.type for op in fn.get_concrete_function(tl.constant(x), tl.constant(w))
                     .optimized_graph.get_operations()]
    finally:
        optimizer_config.reset_experimental_options()
    with strict():
        assert {"ConvPatches", "ConvFromPatches", "ConvFilterFromPatches"} <= set(types)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-6, atol=1e-6)


def test_shared_softmax_cross_entropy_on_strict_xp():
    """The softmax_sharing pass's SparseSoftmaxCrossEntropyWithLogitsAndGrad in a strict graph
    gives what the numpy backend gives."""
    logits = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    labels = np.array([0, 4, 2, 2], np.int32)

    def step(y, x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(y, x))
        return loss, tape.gradient(loss, x)
    want = [t.numpy() for t in tl.function(step)(tl.constant(labels), tl.constant(logits))]
    with strict():
        fn = tl.function(step)
        got = fn(tl.constant(labels), tl.constant(logits))
        types = [op.type for op in fn.get_concrete_function(tl.constant(labels), tl.constant(logits))
                 .optimized_graph.get_operations()]
        assert "SparseSoftmaxCrossEntropyWithLogitsAndGrad" in types
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-6, atol=1e-6)


def test_fused_conv_bias_on_strict_xp():
    """The conv_bias_fusion pass's FusedConv2D / FusedConv3D in a strict graph give what the
    numpy backend gives."""
    rng = np.random.default_rng(0)
    for conv, x, f in ((tl.nn.conv2d, rng.standard_normal((2, 5, 5, 3)), rng.standard_normal((3, 3, 3, 4))),
                       (tl.nn.conv3d, rng.standard_normal((2, 4, 4, 4, 2)), rng.standard_normal((2, 2, 2, 2, 3)))):
        x, f = x.astype(np.float32), f.astype(np.float32)
        b = np.arange(f.shape[-1], dtype=np.float32)

        def forward(x, conv=conv, f=f, b=b):
            return tl.nn.bias_add(conv(x, f, 1, "SAME"), b)
        want = tl.function(forward)(tl.constant(x)).numpy()
        with strict():
            fn = tl.function(forward)
            got = fn(tl.constant(x))
            types = [op.type for op in fn.get_concrete_function(tl.constant(x))
                     .optimized_graph.get_operations()]
            assert {"FusedConv2D", "FusedConv3D"} & set(types)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


def test_gradient_driver_ops_on_strict_xp():
    """SumToShapeOf / BroadcastToShapeOf: gradients of broadcasting with unknown dims."""
    with strict():
        @tl.function(input_signature=[tl.TensorSpec([None, 3]), tl.TensorSpec([None, 1])])
        def grads(a, b):
            with tl.GradientTape() as t2:
                t2.watch(b)
                with tl.GradientTape() as t1:
                    t1.watch([a, b])
                    y = tl.reduce_mean(a * b)
                ga, gb = t1.gradient(y, [a, b])
                z = tl.reduce_sum(gb * b)
            return ga, gb, t2.gradient(z, b)

        a, b = np.ones((2, 3), np.float32), np.full((2, 1), 2.0, np.float32)
        out = [t.numpy() for t in grads(tl.constant(a), tl.constant(b))]
        np.testing.assert_allclose(out[0], np.full((2, 3), 2 / 6))
        np.testing.assert_allclose(out[1], np.full((2, 1), 3 / 6))
        np.testing.assert_allclose(out[2], np.full((2, 1), 3 / 6))
        _note_graph_ops(grads, tl.constant(a), tl.constant(b))
        x = tl.constant(np.ones((2, 3), np.float32))
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = x * tl.constant([[1.0], [2.0]])
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[1, 1, 1], [2, 2, 2]])


def test_engine_ops_on_strict_xp():
    """CustomGradient eagerly and in a graph, and calls of Functions under a tape (the call
    ops: PartitionedCall, StatefulPartitionedCall) and dataset iterators in graphs
    (AnonymousIterator, IteratorGetNext, IteratorGetNextAsOptional) on the strict array module."""
    @tl.custom_gradient
    def clip(y):
        return y * 1.0, lambda dy: tl.clip_by_value(dy, -1.0, 1.0)

    def run(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = clip(x) * 3.0
        return tape.gradient(y, x)

    with strict():
        x = tl.constant([2.0, -2.0])
        np.testing.assert_allclose(run(x).numpy(), [1.0, 1.0])
        np.testing.assert_allclose(tl.function(run)(x).numpy(), [1.0, 1.0])
        v = tl.Variable([1.0, 2.0])
        pure = tl.function(lambda x: x * v)
        stateful = tl.function(lambda x: (v.assign_add(x), x * 2.0)[1])
        with tl.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y, z = pure(x), stateful(x)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 2.0])
        np.testing.assert_allclose(tape.gradient(z, x).numpy(), [2.0, 2.0])
        ds = tl.data.Dataset.range(4).batch(3)
        it = iter(ds)
        step = tl.function(lambda: next(it))
        assert step().device == "gpu" and step().numpy().tolist() == [3]

        @tl.function
        def total(ds):
            s = tl.constant(0, tl.int64)
            for b in ds:
                s += tl.reduce_sum(b)
            return s

        assert int(total(ds).numpy()) == 6


def test_python_calls_and_ffts_on_strict_xp():
    """py_function / numpy_function (and py_function's gradient) and the FFT ops, eagerly
    and in a tl.function."""
    with strict():
        x = tl.constant([0.5, 1.5, 2.0, -1.0])

        def run(x):
            with tl.GradientTape() as tape:
                tape.watch(x)
                y = tl.reshape(tl.py_function(lambda a: a * a, [x], tl.float32), [4])
                spectrum = tl.signal.rfft(y)
                z = tl.signal.irfft(tl.signal.ifft(tl.signal.fft(spectrum)))
                total = tl.reduce_sum(z)
            doubled = tl.numpy_function(lambda a: a * 2, [x], tl.float32)
            return z, tape.gradient(total, x), doubled

        for fn in (run, tl.function(run)):
            z, grad, doubled = fn(x)
            np.testing.assert_allclose(z.numpy(), x.numpy() ** 2, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(grad.numpy(), 2 * x.numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(doubled.numpy(), 2 * x.numpy())


def test_shim_is_strict():
    """The shim catches what CuPy would reject: numpy calls on device arrays, numpy operands."""
    a = strict_xp.asarray(np.arange(6.0).reshape(2, 3))
    for bad in (lambda: np.sum(a), lambda: np.asarray(a), lambda: a + np.ones(3),
                lambda: strict_xp.add(a, np.ones(3)), lambda: np.float64(a)):
        with pytest.raises(TypeError):
            bad()
    assert type(a.sum()) is strict_xp.ndarray and a.sum().ndim == 0  # 0-d array, as CuPy
    assert type(a.get()) is np.ndarray and backend.device_of(a) == "gpu"
    np.testing.assert_array_equal(backend.to_numpy(a[1]), [3.0, 4.0, 5.0])
    assert issubclass(StrictArrayError, TypeError)


def test_recompute_grad_and_a_fused_optimizer_on_strict_xp():
    """tl.recompute_grad (its OptimizationBarrier), flat optimizer buffers (pinned views,
    a joined gradient concatenation written in place) on the strict array module."""
    with strict():
        w = tl.Variable(np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4))
        b = tl.Variable(np.zeros(4, np.float32))
        x = tl.constant(np.ones((2, 3), np.float32))
        opt = tl.optim.Adam(0.1)
        block = tl.recompute_grad(lambda h: tl.tanh(tl.matmul(h, w) + b))

        @tl.function
        def step(x):
            with tl.GradientTape() as tape:
                loss = tl.reduce_sum(block(x))
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
            return loss

        step(x)
        step(x)
        assert opt._flat_groups and backend.device_of(w.array) == "gpu"
        assert "out=concat_v2[" in step.get_concrete_function(x).python_source
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(block(x))
        assert tape.gradient(loss, w).device == "gpu"


def test_every_registered_op_ran_on_strict_xp(request):
    """Runs last: every op in the registry was exercised by the tests above."""
    ran = [item for item in request.session.items if item.module is request.module
           and item.name != request.node.name]
    if len(ran) < len(_PARAMS) + 8:
        pytest.skip("only meaningful when the whole module runs")
    missing = sorted(set(REGISTRY) - EXERCISED - _NEVER_RUN)
    assert not missing, f"ops never run on the strict array module: {missing}"
