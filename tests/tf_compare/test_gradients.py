"""GradientTape against TensorFlow: gradients of many op compositions (float32 and float64,
constants watched and Variables), unconnected sources, integer sources and targets, persistent
and nested tapes, jacobians, watch_accessed_variables, tl.cond / tl.while_loop results and
gradients, eagerly and in tl.function."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

rng = np.random.default_rng(0)
x0 = rng.uniform(0.5, 2, (2, 3)).astype("float32")
w0 = rng.uniform(-1, 1, (3, 2)).astype("float32")


def G(expr, watch_const=True, dtype="float32", **gradient_kwargs):
    def run(lib):
        x = lib.constant(x0.astype(dtype)) if watch_const else lib.Variable(x0.astype(dtype))
        w = lib.Variable(w0.astype(dtype))
        with lib.GradientTape(persistent=True) as tape:
            if watch_const:
                tape.watch(x)
            y = expr(lib, x, w)
        return tape.gradient(y, [x, w], **gradient_kwargs)
    return run


exprs = {
 "sum": lambda lib, x, w: lib.reduce_sum(x),
 "matmul": lambda lib, x, w: lib.matmul(x, w),
 "mean sq": lambda lib, x, w: lib.reduce_mean(lib.square(lib.matmul(x, w))),
 "softmax ce": lambda lib, x, w: lib.nn.softmax_cross_entropy_with_logits(lib.one_hot([0, 1], 2), lib.matmul(x, w)),
 "sparse ce": lambda lib, x, w: lib.nn.sparse_softmax_cross_entropy_with_logits([0, 1], lib.matmul(x, w)),
 "sigmoid ce": lambda lib, x, w: lib.nn.sigmoid_cross_entropy_with_logits(lib.ones([2, 2]), lib.matmul(x, w)),
 "exp log": lambda lib, x, w: lib.exp(x) * lib.math.log(x),
 "pow": lambda lib, x, w: x ** 3 + 2 ** x,
 "pow xx": lambda lib, x, w: x ** x,
 "sqrt rsqrt": lambda lib, x, w: lib.sqrt(x) + lib.math.rsqrt(x),
 "div": lambda lib, x, w: 1.0 / x + x / 3.0,
 "max min": lambda lib, x, w: lib.maximum(x, 1.0) + lib.minimum(x, 1.0),
 "max tie": lambda lib, x, w: lib.maximum(x, x),
 "abs sign": lambda lib, x, w: lib.abs(x - 1.0) + lib.sign(x),
 "relu": lambda lib, x, w: lib.nn.relu(x - 1.0),
 "relu0": lambda lib, x, w: lib.nn.relu(x * 0.0),
 "tanh sigmoid": lambda lib, x, w: lib.tanh(x) * lib.sigmoid(x),
 "reduce_max": lambda lib, x, w: lib.reduce_max(x, axis=1),
 "reduce_max tie": lambda lib, x, w: lib.reduce_max(lib.ones_like(x) * 2.0 + x * 0.0),
 "reduce_max ties x": lambda lib, x, w: lib.reduce_max(lib.concat([x, x], 0)),
 "reduce_min": lambda lib, x, w: lib.reduce_min(x),
 "reduce_prod": lambda lib, x, w: lib.reduce_prod(x, axis=0),
 "logsumexp": lambda lib, x, w: lib.reduce_logsumexp(x, axis=1),
 "cumsum": lambda lib, x, w: lib.cumsum(x, axis=1, reverse=True),
 "gather": lambda lib, x, w: lib.gather(x, [0, 0, 1], axis=1),
 "gather_nd": lambda lib, x, w: lib.gather_nd(x, [[0, 1], [0, 1]]),
 "slice": lambda lib, x, w: x[:, 1:] * 2,
 "getitem": lambda lib, x, w: x[0, ::-1],
 "concat stack": lambda lib, x, w: lib.stack([lib.concat([x, x], 1), lib.concat([x, x], 1)]),
 "reshape transpose": lambda lib, x, w: lib.transpose(lib.reshape(x, [3, 2])) * w,
 "tile": lambda lib, x, w: lib.tile(x, [2, 1]),
 "pad": lambda lib, x, w: lib.pad(x, [[1, 0], [0, 2]], mode="REFLECT"),
 "broadcast": lambda lib, x, w: x + lib.reduce_sum(w, axis=1),
 "where": lambda lib, x, w: lib.where(x > 1.0, x * x, lib.zeros_like(x)),
 "clip": lambda lib, x, w: lib.clip_by_value(x, 0.8, 1.5),
 "einsum": lambda lib, x, w: lib.einsum("ij,jk->ik", x, w),
 "split": lambda lib, x, w: lib.split(x, 3, axis=1)[1],
 "unstack": lambda lib, x, w: lib.unstack(x)[0],
 "cast": lambda lib, x, w: lib.cast(x, lib.float64),
 "cast int": lambda lib, x, w: lib.cast(x, lib.int32),
 "round floor": lambda lib, x, w: lib.round(x) + lib.floor(x) + lib.math.ceil(x),
 "argmax": lambda lib, x, w: lib.argmax(x),
 "stop": lambda lib, x, w: lib.stop_gradient(x) * x,
 "unconnected": lambda lib, x, w: lib.constant(3.0),
 "identity": lambda lib, x, w: lib.identity(x),
 "softmax": lambda lib, x, w: lib.nn.softmax(x) * lib.constant([[1.0, 2, 3]]),
 "log_softmax": lambda lib, x, w: lib.nn.log_softmax(x, axis=0) * lib.constant([[1.0, 2, 3]]),
 "gelu elu selu": lambda lib, x, w: lib.nn.gelu(x) + lib.nn.elu(x - 1) + lib.nn.selu(x - 1),
 "softplus leaky": lambda lib, x, w: lib.nn.softplus(x) + lib.nn.leaky_relu(x - 1),
 "l2norm": lambda lib, x, w: lib.nn.l2_normalize(x, axis=1),
 "moments": lambda lib, x, w: lib.nn.moments(x, axes=[0])[1],
 "variance": lambda lib, x, w: lib.math.reduce_std(x, axis=1),
 "squared_difference": lambda lib, x, w: lib.math.squared_difference(x, 1.0),
 "floordiv mod": lambda lib, x, w: (x // 0.7) + (x % 0.7),
 "add_n": lambda lib, x, w: lib.add_n([x, x, x]),
 "list target": lambda lib, x, w: [lib.reduce_sum(x), lib.reduce_sum(w)],
 "dict target": lambda lib, x, w: {"a": x, "b": w},
 "sin cos": lambda lib, x, w: lib.sin(x) * lib.cos(x),
 "log1p": lambda lib, x, w: lib.math.log1p(x),
 "reciprocal": lambda lib, x, w: lib.math.reciprocal(x),
 "expand squeeze": lambda lib, x, w: lib.squeeze(lib.expand_dims(x, 0)),
 "broadcast_to": lambda lib, x, w: lib.broadcast_to(x[0], [4, 3]),
 "boolean_mask": lambda lib, x, w: lib.boolean_mask(x, [True, False]),
 "reverse": lambda lib, x, w: lib.reverse(x, [1]) * lib.constant([1.0, 2, 3]),
 "bias_add": lambda lib, x, w: lib.nn.bias_add(x, lib.reduce_sum(w, 1) * lib.constant([1.0, 2, 3])),
 "norm like": lambda lib, x, w: lib.sqrt(lib.reduce_sum(x * x)),
 "sqrt zero": lambda lib, x, w: lib.sqrt(x * 0.0),
 "div zero": lambda lib, x, w: x / (x * 0.0),
 "abs zero": lambda lib, x, w: lib.abs(x * 0.0),
 "max eq": lambda lib, x, w: lib.maximum(x, lib.ones_like(x)),
}


@pytest.mark.parametrize("name", list(exprs))
def test_gradients(name):
    e = exprs[name]
    check(G(e), rtol=2e-5, atol=1e-5)
    check(G(e, unconnected_gradients="zero"), rtol=2e-5, atol=1e-5)
    check(G(e, dtype="float64"), rtol=1e-9, atol=1e-9)
    check(G(e, watch_const=False), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["mean sq", "softmax ce", "sigmoid ce", "tanh sigmoid", "reduce_max", "gather",
                                  "where", "pad", "einsum", "logsumexp"])
def test_gradients_in_function(name):
    e = exprs[name]

    def run(lib):
        return lib.function(lambda: G(e)(lib))()
    check(run, rtol=2e-5, atol=1e-5)


CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f


@case
def int_source(lib):
    x = lib.constant(3)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    return t.gradient(y, x)
@case
def int_source_zero(lib):
    x = lib.constant(3)
    with lib.GradientTape() as t:
        t.watch(x); y = lib.cast(x, lib.float32) * 2.0
    return t.gradient(y, x, unconnected_gradients="zero")
@case
def int_target(lib):
    x = lib.constant(3.0)
    with lib.GradientTape() as t:
        t.watch(x); y = lib.cast(x, lib.int32)
    return t.gradient(y, x)
@case
def nonpersistent_twice(lib):
    x = lib.constant(3.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    t.gradient(y, x)
    return t.gradient(y, x)
@case
def persistent_twice(lib):
    x = lib.constant(3.0)
    with lib.GradientTape(persistent=True) as t:
        t.watch(x); y = x * x; z = y * x
    return t.gradient(y, x), t.gradient(z, x), t.gradient(z, y)
@case
def no_watch_const(lib):
    x = lib.constant(3.0)
    with lib.GradientTape() as t:
        y = x * x
    return t.gradient(y, x)
@case
def no_watch_accessed(lib):
    v = lib.Variable(3.0); w = lib.Variable(2.0)
    with lib.GradientTape(watch_accessed_variables=False) as t:
        t.watch(w); y = v * w
    return t.gradient(y, [v, w])
@case
def nontrainable(lib):
    v = lib.Variable(3.0, trainable=False)
    with lib.GradientTape() as t:
        y = v * v
    return t.gradient(y, v)
@case
def watched_vars(lib):
    v = lib.Variable(3.0, name="a"); w = lib.Variable(2.0, name="b")
    with lib.GradientTape() as t:
        y = w * v
    return [x.name for x in t.watched_variables()]
@case
def nested(lib):
    x = lib.constant(3.0)
    with lib.GradientTape() as t1:
        t1.watch(x)
        with lib.GradientTape() as t2:
            t2.watch(x); y = x ** 3
        dy = t2.gradient(y, x)
    return dy, t1.gradient(dy, x)
@case
def nested3(lib):
    x = lib.Variable(1.5)
    with lib.GradientTape() as a:
        with lib.GradientTape() as b:
            with lib.GradientTape() as c:
                y = lib.sin(x) * x
            d1 = c.gradient(y, x)
        d2 = b.gradient(d1, x)
    return d1, d2, a.gradient(d2, x)
@case
def jacobian(lib):
    x = lib.constant([1.0, 2.0, 3.0])
    with lib.GradientTape() as t:
        t.watch(x); y = x[:, None] * x[None, :]
    return t.jacobian(y, x)
@case
def jacobian_var(lib):
    v = lib.Variable([[1.0, 2.0]])
    with lib.GradientTape() as t:
        y = lib.matmul(v, lib.constant([[1.0], [3.0]]))
    return t.jacobian(y, v)
@case
def jacobian_unconnected(lib):
    x = lib.constant([1.0, 2.0]); z = lib.constant(1.0)
    with lib.GradientTape() as t:
        t.watch([x, z]); y = x * 2
    return t.jacobian(y, [x, z])
@case
def jacobian_unconnected_zero(lib):
    x = lib.constant([1.0, 2.0]); z = lib.constant([1.0])
    with lib.GradientTape() as t:
        t.watch([x, z]); y = x * 2
    return t.jacobian(y, [x, z], unconnected_gradients="zero")
@case
def output_gradients(lib):
    x = lib.constant([1.0, 2.0])
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    return t.gradient(y, x, output_gradients=lib.constant([3.0, 4.0]))
@case
def output_gradients_py(lib):
    x = lib.constant([1.0, 2.0])
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    return t.gradient(y, x, output_gradients=[3.0, 4.0])
@case
def bad_unconnected(lib):
    x = lib.constant(1.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    return t.gradient(y, x, unconnected_gradients="bad")
@case
def target_none(lib):
    x = lib.constant(1.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
    return t.gradient(None, x)
@case
def stop_recording(lib):
    x = lib.constant(2.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
        with t.stop_recording():
            z = y * x
        w = z + y
    return t.gradient(w, x)
@case
def grad_inside_tape(lib):
    x = lib.constant(2.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
        g = t.gradient(y, x)
    return g
@case
def reset(lib):
    x = lib.constant(2.0)
    with lib.GradientTape() as t:
        t.watch(x); y = x * x
        t.reset()
        t.watch(x); z = x * 3.0
    return t.gradient(z, x), 
@case
def cond_grad(lib):
    x = lib.constant(2.0)
    with lib.GradientTape() as t:
        t.watch(x)
        y = lib.cond(x > 1.0, lambda: x * x, lambda: x * 3.0)
    return y, t.gradient(y, x)
@case
def cond_grad_fn(lib):
    v = lib.Variable(2.0)
    @lib.function
    def f(p):
        with lib.GradientTape() as t:
            y = lib.cond(p, lambda: v * v, lambda: v * 3.0)
        return y, t.gradient(y, v)
    return f(lib.constant(True)), f(lib.constant(False))
@case
def while_grad(lib):
    x = lib.constant(1.5)
    with lib.GradientTape() as t:
        t.watch(x)
        i, y = lib.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, lib.constant(1.0)])
    return i, y, t.gradient(y, x)
@case
def while_grad_fn(lib):
    @lib.function
    def f(x, n):
        with lib.GradientTape() as t:
            t.watch(x)
            i, y = lib.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, lib.sin(y) * x), [0, x])
        return y, t.gradient(y, x)
    return f(lib.constant(0.7), lib.constant(4))
@case
def while_shape_change_fn(lib):
    return lib.function(lambda: lib.while_loop(lambda x: lib.shape(x)[0] < 4, lambda x: lib.concat([x, x], 0), [lib.constant([1.0])]))()
@case
def while_shape_invariants(lib):
    return lib.function(lambda: lib.while_loop(lambda x: lib.shape(x)[0] < 4, lambda x: lib.concat([x, x], 0), [lib.constant([1.0])], shape_invariants=[lib.TensorShape([None])]))()
@case
def while_dtype_change(lib):
    return lib.function(lambda: lib.while_loop(lambda x: x < 4, lambda x: lib.cast(x, lib.float32) + 1.0, [lib.constant(1)]))()
@case
def cond_py_pred(lib):
    return lib.cond(True, lambda: lib.constant(1), lambda: lib.constant(2))
@case
def cond_struct(lib):
    return lib.cond(lib.constant(False), lambda: (lib.constant(1), [lib.constant(2.0)]), lambda: (lib.constant(3), [lib.constant(4.0)]))
@case
def cond_mismatch_fn(lib):
    return lib.function(lambda p: lib.cond(p, lambda: lib.constant(1), lambda: lib.constant(2.0)))(lib.constant(True))
@case
def cond_mismatch_shape_fn(lib):
    f = lib.function(lambda p: lib.cond(p, lambda: lib.constant([1.0]), lambda: lib.constant([2.0, 3.0])))
    return f(lib.constant(True)), f.get_concrete_function(lib.constant(True)).outputs[0].shape
@case
def cond_none(lib):
    return lib.cond(lib.constant(True), lambda: None, lambda: None)
@case
def cond_nonscalar_pred(lib):
    return lib.cond(lib.constant([True]), lambda: 1, lambda: 2)
@case
def cond_int_pred(lib):
    return lib.cond(lib.constant(1), lambda: lib.constant(1), lambda: lib.constant(2))
@case
def cond_py_values(lib):
    return lib.function(lambda p: lib.cond(p, lambda: 1, lambda: 2))(lib.constant(True))


@pytest.mark.parametrize("name", list(CASES))
def test_tape_and_control_flow(name):
    check(CASES[name], rtol=1e-5, atol=1e-6)
