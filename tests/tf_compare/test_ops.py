"""Every public math/array/nn op on TensorFlow and trainlib: values, dtypes, shapes, which raise.

Random inputs over dtypes (float32/float64/int32/int64/bool) and shapes (scalar, empty,
broadcasting), keyword arguments, and Python values in the place of tensors.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import DTYPES, check, sample  # noqa: E402

RNG = np.random.default_rng(0)
SHAPES = [(), (0,), (3,), (2, 3)]
POSITIVE = {"log", "sqrt", "rsqrt", "log1p"}
TRANSCENDENTAL = dict(rtol=2e-6, atol=1e-6)

MATH_UNARY = ["negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "reciprocal",
              "sin", "cos", "tanh", "sigmoid", "round", "floor", "ceil", "logical_not", "is_nan",
              "is_finite", "is_inf"]
NN_UNARY = ["relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "swish", "softplus", "softmax",
            "log_softmax", "sigmoid", "tanh", "l2_normalize"]


def _unary_cases():
    for module, names in (("math", MATH_UNARY), ("nn", NN_UNARY)):
        for name in names:
            for dtype in DTYPES:
                for shape in SHAPES:
                    yield pytest.param(module, name, dtype, shape, id=f"{module}.{name}-{dtype}-{shape}")


@pytest.mark.parametrize("module,name,dtype,shape", list(_unary_cases()))
def test_unary(module, name, dtype, shape):
    x = sample(dtype, shape, RNG, positive=name in POSITIVE)
    check(lambda lib: getattr(getattr(lib, module), name)(lib.constant(x)), **TRANSCENDENTAL)


@pytest.mark.parametrize("module,name", [(m, n) for m, ns in (("math", MATH_UNARY), ("nn", NN_UNARY))
                                         for n in ns])
@pytest.mark.parametrize("value", [2, 2.5, [1, 2], [1.5, 2.0], True], ids=repr)
def test_unary_python_values(module, name, value):
    check(lambda lib: getattr(getattr(lib, module), name)(value), **TRANSCENDENTAL)


BINARY = ["add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "pow",
          "maximum", "minimum", "squared_difference", "equal", "not_equal", "greater", "greater_equal",
          "less", "less_equal", "logical_and", "logical_or", "logical_xor"]
DIVIDING = {"floordiv", "floormod", "mod", "divide", "truediv", "pow"}
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((0,), (1,)), ((2,), (3,))]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_binary(name, dtype, shapes):
    a = sample(dtype, shapes[0], RNG)
    b = sample(dtype, shapes[1], RNG, positive=name in DIVIDING and "int" in dtype)
    check(lambda lib: getattr(lib.math, name)(lib.constant(a), lib.constant(b)), **TRANSCENDENTAL)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int32", "float32"), ("int32", "int64")], ids=str)
def test_binary_mixed_dtypes_raise_alike(name, dtypes):
    a, b = sample(dtypes[0], (2,), RNG), sample(dtypes[1], (2,), RNG)
    check(lambda lib: getattr(lib.math, name)(lib.constant(a), lib.constant(b)))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "float64", "bool"])
@pytest.mark.parametrize("value", [2, 1.5, -1, [1, 2], [1.5, 2.0], True, 0], ids=repr)
def test_binary_weak_python_values(name, dtype, value):
    a = sample(dtype, (2,), RNG, positive=True)
    check(lambda lib: getattr(lib.math, name)(lib.constant(a), value), **TRANSCENDENTAL)
    if name not in ("add", "truediv"):  # tf.add/tf.truediv convert x first: see test_known_differences
        check(lambda lib: getattr(lib.math, name)(value, lib.constant(a)), **TRANSCENDENTAL)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("values", [(1, 2), (1.0, 2), (1, 2.5), ([1, 2], 1.5), (True, False), (2, [1.0, 2.0])],
                         ids=repr)
def test_binary_python_only(name, values):
    check(lambda lib: getattr(lib.math, name)(*values), **TRANSCENDENTAL)


REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all",
              "reduce_any", "reduce_logsumexp", "reduce_variance", "reduce_std"]
AXES = [None, 0, -1, 1, 3, [0, 1], (0,), [], [0, 0], [-1, 1]]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0), (2, 3, 4)], ids=str)
def test_reductions(name, dtype, shape):
    x = sample(dtype, shape, RNG)
    for axis in AXES:
        for keepdims in (False, True):
            check(lambda lib: getattr(lib.math, name)(lib.constant(x), axis=axis, keepdims=keepdims),
                  rtol=3e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0)], ids=str)
def test_scans_and_arg(name, dtype, shape):
    x = sample(dtype, shape, RNG)
    kwargs = [{}, {"exclusive": True}, {"reverse": True}] if name == "cumsum" else [{}, {"output_type": "int32"}]
    for axis in (0, 1, -1, 2):
        for kw in kwargs:
            def run(lib, kw=kw):
                kw = {k: getattr(lib, v) if k == "output_type" else v for k, v in kw.items()}
                return getattr(lib.math, name)(lib.constant(x), axis=axis, **kw)
            check(run)


@pytest.mark.parametrize("name", REDUCTIONS + ["argmax", "argmin", "cumsum"])
@pytest.mark.parametrize("value", [[1, 2], [1.5, 2], [True, False], 3, [[1, 2], [3, 4]]], ids=repr)
def test_reductions_of_python_values(name, value):
    check(lambda lib: getattr(lib.math, name)(value))


# ------------------------------------------------------------------ array ops, one table

X = RNG.uniform(-3, 3, (2, 3, 4)).astype("float32")
M = RNG.uniform(-3, 3, (3, 4)).astype("float32")
V = np.arange(5, dtype="int32")
A23 = RNG.uniform(size=(5, 2, 3)).astype("float32")
B34 = RNG.uniform(size=(5, 3, 4)).astype("float32")


def C(lib, a):
    return lib.constant(a)


ARRAY = {}


def case(name, fn):
    ARRAY[name] = fn


for sh in ([4, 6], [-1], [2, -1], [-1, -1], [5, 5], [], [24], (2, 12), [0, -1]):
    case(f"reshape {sh}", lambda lib, sh=sh: lib.reshape(C(lib, X), sh))
case("reshape scalar", lambda lib: lib.reshape(C(lib, 3.0), [1, 1]))
case("reshape tensor shape", lambda lib: lib.reshape(C(lib, X), lib.constant([4, 6])))
for p in (None, [2, 0, 1], [0, 1], [0, 0, 1], [-1, 0, 1], [3, 0, 1]):
    case(f"transpose {p}", lambda lib, p=p: lib.transpose(C(lib, X), perm=p))
for ax in (0, 1, -1, 2, 3, -4):
    case(f"concat {ax}", lambda lib, ax=ax: lib.concat([C(lib, X), C(lib, X)], axis=ax))
    case(f"stack {ax}", lambda lib, ax=ax: lib.stack([C(lib, X), C(lib, X)], axis=ax))
    case(f"unstack {ax}", lambda lib, ax=ax: lib.unstack(C(lib, X), axis=ax))
    case(f"expand_dims {ax}", lambda lib, ax=ax: lib.expand_dims(C(lib, X), ax))
    case(f"squeeze {ax}", lambda lib, ax=ax: lib.squeeze(lib.zeros([1, 2, 1]), ax))
    case(f"reverse {ax}", lambda lib, ax=ax: lib.reverse(C(lib, X), [ax]))
    case(f"gather axis {ax}", lambda lib, ax=ax: lib.gather(C(lib, X), [0, 1], axis=ax))
case("concat mixed", lambda lib: lib.concat([C(lib, M), C(lib, M.astype("float64"))], 0))
case("concat bad", lambda lib: lib.concat([C(lib, M), C(lib, X)], 0))
case("concat one", lambda lib: lib.concat([C(lib, M)], 0))
case("concat py", lambda lib: lib.concat([[1, 2], [3]], 0))
case("concat scalars", lambda lib: lib.concat([C(lib, 1.0), C(lib, 2.0)], 0))
case("stack py", lambda lib: lib.stack([1, 2, 3]))
case("stack mixed py", lambda lib: lib.stack([C(lib, 1.0), 2]))
case("stack numpy scalars", lambda lib: lib.stack([C(lib, 1.0), 2.0, np.float64(3)]))
case("stack bad", lambda lib: lib.stack([C(lib, [1.0]), C(lib, [1.0, 2])]))
case("unstack num", lambda lib: lib.unstack(C(lib, M), num=3))
case("unstack badnum", lambda lib: lib.unstack(C(lib, M), num=2))
case("unstack scalar", lambda lib: lib.unstack(C(lib, 1.0)))
case("squeeze all", lambda lib: lib.squeeze(lib.zeros([1, 2, 1])))
case("squeeze list", lambda lib: lib.squeeze(lib.zeros([1, 2, 1]), [0, 2]))
case("squeeze bad", lambda lib: lib.squeeze(lib.zeros([1, 2, 1]), [1]))
for s in ([2, 3, 4], [3, 2, 3, 4], [1, 4], [4], [2, 1, 4], [2, 3, 5]):
    case(f"broadcast_to {s}", lambda lib, s=s: lib.broadcast_to(C(lib, X), s))
case("broadcast_to scalar", lambda lib: lib.broadcast_to(3, [2, 2]))
for mult in ([1, 2, 1], [2, 1, 3], [0, 1, 1], [2], [2, 2, 2, 2]):
    case(f"tile {mult}", lambda lib, mult=mult: lib.tile(C(lib, X), mult))
for pads in ([[1, 1], [0, 2], [1, 0]], [[1, 1]], [[0, 0], [0, 0], [3, 0]], [[-1, 0], [0, 0], [0, 0]]):
    for mode in ("CONSTANT", "REFLECT", "SYMMETRIC", "constant", "bad"):
        case(f"pad {pads} {mode}", lambda lib, pads=pads, mode=mode: lib.pad(C(lib, X), pads, mode=mode))
case("pad cval", lambda lib: lib.pad(C(lib, M), [[1, 1], [1, 1]], constant_values=7))
case("pad cval float on ints", lambda lib: lib.pad(C(lib, V), [[1, 1]], constant_values=1.5))
for idx in ([0, 2, 1], [[0, 1], [2, 2]], [3], [-1], [5], [], 1):
    case(f"gather {idx}", lambda lib, idx=idx: lib.gather(C(lib, V), idx))
case("gather batch_dims", lambda lib: lib.gather(C(lib, M), [[0, 1], [1, 2], [2, 3]], axis=1, batch_dims=1))
case("gather float idx", lambda lib: lib.gather(C(lib, V), [0.0]))
case("gather int64 idx", lambda lib: lib.gather(C(lib, V), C(lib, np.array([0, 1]))))
case("gather_nd", lambda lib: lib.gather_nd(C(lib, M), [[0, 1], [2, 3]]))
case("gather_nd slice", lambda lib: lib.gather_nd(C(lib, M), [[0], [2]]))
case("gather_nd batch", lambda lib: lib.gather_nd(C(lib, X), [[0], [2]], batch_dims=1))
case("gather_nd oob", lambda lib: lib.gather_nd(C(lib, M), [[5, 1]]))
for depth, kw in ((4, {}), (3, {"on_value": 5, "off_value": -1}), (3, {"axis": 0}), (3, {"dtype": "int32"}),
                  (0, {}), (3, {"on_value": 2.0}), (3, {"on_value": 2, "dtype": "float32"}),
                  (3, {"on_value": 1, "off_value": 0.5}), (3, {"dtype": "bool"})):
    def one_hot(lib, depth=depth, kw=kw):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kw.items()}
        return lib.one_hot([0, 2, -1, 5], depth, **kw)
    case(f"one_hot {depth} {kw}", one_hot)
case("one_hot 2d", lambda lib: lib.one_hot([[0, 1], [2, 0]], 3, axis=1))
case("one_hot float idx", lambda lib: lib.one_hot([0.0, 1.0], 3))
case("shape", lambda lib: lib.shape(C(lib, X)))
case("shape i64", lambda lib: lib.shape(C(lib, X), out_type=lib.int64))
case("shape scalar", lambda lib: lib.shape(3.0))
case("size", lambda lib: lib.size(C(lib, X)))
case("size i64", lambda lib: lib.size(C(lib, X), out_type=lib.int64))
case("rank", lambda lib: lib.rank(C(lib, X)))
case("rank py", lambda lib: lib.rank([[1, 2]]))
case("identity", lambda lib: lib.identity([1, 2]))
case("stop_gradient", lambda lib: lib.stop_gradient(2.0))
for b, s in (([0, 1], [1, 2]), ([0, 0, 0], [-1, -1, -1]), ([1, 0, 2], [1, 3, 2]), ([0], [5]),
             ([1, 1, 1], [2, 2, 2]), ([0, 0, 0], [2, 3, 4])):
    case(f"slice {b} {s}", lambda lib, b=b, s=s: lib.slice(C(lib, X), b, s))
for idx in [0, -1, 2, slice(None), slice(1, None), (0, 1), (0, slice(None), 2), (Ellipsis, 1), (None, 0),
            (slice(None, None, -1),), (slice(None, None, 2), Ellipsis, None), (0, 0, 0), (0, 0, 0, 0),
            slice(5, 10), (slice(0, 1), 1, slice(-2, None)), 1.0, [0, 1], (Ellipsis,), (Ellipsis, None, Ellipsis)]:
    case(f"getitem {idx}", lambda lib, idx=idx: C(lib, X)[idx])
case("getitem tensor", lambda lib: C(lib, X)[lib.constant(1)])
case("getitem tensor slice", lambda lib: C(lib, X)[lib.constant(0):lib.constant(1)])
case("getitem bool tensor", lambda lib: C(lib, V)[lib.constant(V > 2)])
case("getitem scalar", lambda lib: C(lib, 3.0)[0])
case("getitem scalar ...", lambda lib: C(lib, 3.0)[...])
case("getitem scalar None", lambda lib: C(lib, 3.0)[None])
case("boolean_mask", lambda lib: lib.boolean_mask(C(lib, V), V > 2))
case("boolean_mask 2d", lambda lib: lib.boolean_mask(C(lib, M), [True, False, True]))
case("boolean_mask axis", lambda lib: lib.boolean_mask(C(lib, M), [True, False, True, True], axis=1))
case("boolean_mask bad", lambda lib: lib.boolean_mask(C(lib, M), [True, False]))
for n in (2, 3, [1, 2, 1], [2, -1, 1], [1, 1]):
    case(f"split {n}", lambda lib, n=n: lib.split(C(lib, M), n, axis=1 if n != 3 else 0))
case("split 4 axis1", lambda lib: lib.split(C(lib, M), 4, axis=1))
case("split bad", lambda lib: lib.split(C(lib, M), 3, axis=1))
case("split num", lambda lib: lib.split(C(lib, M), [2, 2], axis=1, num=2))
for kw in ({}, {"dtype": "int32"}, {"dtype": "bool"}):
    for fn in ("zeros", "ones"):
        case(f"{fn} {kw}", lambda lib, fn=fn, kw=kw: getattr(lib, fn)([2, 3], **{k: getattr(lib, w) for k, w in kw.items()}))
        case(f"{fn}_like {kw}", lambda lib, fn=fn, kw=kw: getattr(lib, fn + "_like")(
            C(lib, V), **{k: getattr(lib, w) for k, w in kw.items()}))
case("zeros scalar", lambda lib: lib.zeros([]))
case("zeros int", lambda lib: lib.zeros(3))
case("zeros tensor shape", lambda lib: lib.zeros(lib.constant([2, 1])))
case("zeros_like py", lambda lib: lib.zeros_like([1.5, 2]))
case("ones_like bool", lambda lib: lib.ones_like(C(lib, V > 1)))
case("fill", lambda lib: lib.fill([2, 2], 3))
case("fill f", lambda lib: lib.fill([2, 2], 3.5))
case("fill scalar", lambda lib: lib.fill([], True))
for args in ((3,), (2, 3), (3, None, [2]), (2, 2, None, "int32"), (0,)):
    case(f"eye {args}", lambda lib, args=args: lib.eye(*[getattr(lib, a) if isinstance(a, str) else a for a in args]))
for args, kw in (((5,), {}), ((1, 5), {}), ((1, 5, 2), {}), ((5, 1, -1), {}), ((0.5, 2.5, 0.5), {}),
                 ((1, 5), {"dtype": "float32"}), ((1.0, 5), {}), ((5,), {"dtype": "int64"}), ((1, 5, 0), {}),
                 ((3,), {"dtype": "float64"}), ((1, 4.5), {}), ((1, 2), {"delta": 0.5})):
    case(f"range {args} {kw}", lambda lib, args=args, kw=kw: lib.range(
        *args, **{k: (getattr(lib, w) if k == "dtype" else w) for k, w in kw.items()}))
case("range tensor", lambda lib: lib.range(lib.constant(4)))
for args in ((0.0, 1.0, 5), (0, 1, 5), (0.0, 1.0, 1), (0.0, 1.0, 0), (1.0, 0.0, 3)):
    case(f"linspace {args}", lambda lib, args=args: lib.linspace(*args))
case("linspace vec", lambda lib: lib.linspace([0.0, 1.0], [1.0, 2.0], 3))
case("linspace vec axis", lambda lib: lib.linspace([0.0, 1.0], [1.0, 2.0], 3, axis=1))
for dt in ("float32", "int32", "bool", "int64", "float64", "uint8", "int8", "float16"):
    for src in (np.array([-1.7, 0.0, 2.5, 300.0], "float32"), np.array([-1, 0, 2, 300], "int32"),
                np.array([True, False])):
        case(f"cast {src.dtype}->{dt}", lambda lib, src=src, dt=dt: lib.cast(C(lib, src), getattr(lib, dt)))
case("cast py", lambda lib: lib.cast(1.7, lib.int32))
case("cast py list", lambda lib: lib.cast([1, 2], lib.float32))
case("cast str dtype", lambda lib: lib.cast(C(lib, V), "float32"))
for lo, hi, x in ((0.0, 1.0, M), (-1, 1, M), (1, 3, V), (1.5, 3, V), ([0.0, 0, 0, 0], 1.0, M), (1.0, 0.0, M)):
    case(f"clip_by_value {lo} {hi} {x.dtype}", lambda lib, lo=lo, hi=hi, x=x: lib.clip_by_value(C(lib, x), lo, hi))
for c in ([True, False, True, True], [[True], [False], [True]], True):
    case(f"where {c}", lambda lib, c=c: lib.where(c, C(lib, M), C(lib, -M)))
case("where 1", lambda lib: lib.where([True, False, True]))
case("where 1 2d", lambda lib: lib.where(C(lib, M) > 0))
case("where 1 int", lambda lib: lib.where(C(lib, V)))
case("where weak", lambda lib: lib.where(C(lib, M) > 0, C(lib, M), 0.0))
case("where weak int", lambda lib: lib.where(C(lib, M) > 0, C(lib, M), 0))
case("where both py", lambda lib: lib.where([True, False], 1, 2.5))
case("where bad cond", lambda lib: lib.where(C(lib, V), C(lib, V), C(lib, V)))
case("where x only", lambda lib: lib.where([True], x=C(lib, V)))
for eq in ("ij,jk->ik", "ij->ji", "ij->", "ij,ij->ij", "bij,bjk->bik", "...j,jk->...k", "ii->i", "ij,kj->ik", "ij,jk"):
    def einsum(lib, eq=eq):
        a = C(lib, M)
        b = C(lib, M.T.copy()) if eq in ("ij,jk->ik", "ij,jk") else a
        if eq == "bij,bjk->bik":
            a, b = C(lib, X), C(lib, np.transpose(X, (0, 2, 1)).copy())
        if eq == "...j,jk->...k":
            a, b = C(lib, X), C(lib, M.T.copy())
        if eq == "ii->i":
            a = C(lib, M[:, :3].copy())
        return lib.einsum(eq, a, b) if "," in eq else lib.einsum(eq, a)
    case(f"einsum {eq}", einsum)
for ta, tb, a, b in ((False, False, A23[0], B34[0]), (True, False, A23[0].T.copy(), B34[0]),
                     (False, True, A23[0], B34[0].T.copy()), (False, False, A23, B34[0]), (False, False, A23, B34),
                     (False, False, A23[0, 0], B34[0]), (False, False, A23[0], A23[0]), (False, False, A23[:1], B34)):
    case(f"matmul {ta} {tb} {a.shape} {b.shape}", lambda lib, ta=ta, tb=tb, a=a, b=b: lib.matmul(
        C(lib, a), C(lib, b), transpose_a=ta, transpose_b=tb))
case("matmul int", lambda lib: lib.matmul(C(lib, [[1, 2]]), C(lib, [[1], [2]])))
case("matmul bool", lambda lib: lib.matmul(C(lib, [[True]]), C(lib, [[True]])))
case("matmul py", lambda lib: lib.matmul([[1.0, 2]], [[1.0], [2]]))
case("matmul mixed", lambda lib: lib.matmul(C(lib, [[1.0, 2]]), C(lib, np.ones((2, 1)))))
case("add_n", lambda lib: lib.add_n([C(lib, M), C(lib, M), C(lib, M)]))
case("add_n py", lambda lib: lib.add_n([1, 2]))
case("add_n one", lambda lib: lib.add_n([C(lib, V)]))
case("add_n mixed", lambda lib: lib.add_n([C(lib, V), C(lib, V.astype("int64"))]))
case("add_n bcast", lambda lib: lib.add_n([C(lib, M), C(lib, M[0])]))
case("add_n empty", lambda lib: lib.add_n([]))


@pytest.mark.parametrize("name", list(ARRAY))
def test_array_and_misc_ops(name):
    check(ARRAY[name], rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ nn ops with several inputs

NN = {
    "sigmoid_ce": lambda lib: lib.nn.sigmoid_cross_entropy_with_logits(labels=C(lib, M > 0) * 1.0, logits=C(lib, M)),
    "sigmoid_ce int labels": lambda lib: lib.nn.sigmoid_cross_entropy_with_logits(labels=[1, 0], logits=[1.0, 2.0]),
    "softmax_ce": lambda lib: lib.nn.softmax_cross_entropy_with_logits(lib.one_hot([0, 1, 3], 4), C(lib, M)),
    "softmax_ce f64 logits": lambda lib: lib.nn.softmax_cross_entropy_with_logits(
        lib.one_hot([0, 1, 3], 4), C(lib, M.astype("float64"))),
    "softmax_ce axis0": lambda lib: lib.nn.softmax_cross_entropy_with_logits(lib.one_hot([0, 1, 2, 1], 3, axis=0),
                                                                              C(lib, M), axis=0),
    "sparse_ce": lambda lib: lib.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 3], C(lib, M)),
    "sparse_ce int64": lambda lib: lib.nn.sparse_softmax_cross_entropy_with_logits(C(lib, np.array([0, 1, 3])), C(lib, M)),
    "sparse_ce out of range": lambda lib: lib.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 4], C(lib, M)),
    "sparse_ce bad rank": lambda lib: lib.nn.sparse_softmax_cross_entropy_with_logits([[0, 1, 3]], C(lib, M)),
    "bias_add": lambda lib: lib.nn.bias_add(C(lib, X), C(lib, X[0, 0])),
    "bias_add bad": lambda lib: lib.nn.bias_add(C(lib, X), C(lib, X[0, :, 0])),
    "moments": lambda lib: lib.nn.moments(C(lib, X), axes=[0, 1]),
    "moments keepdims": lambda lib: lib.nn.moments(C(lib, X), axes=[2], keepdims=True),
    "l2_normalize axis": lambda lib: lib.nn.l2_normalize(C(lib, M), axis=1),
    "leaky alpha": lambda lib: lib.nn.leaky_relu(C(lib, M.astype("float64")), alpha=0.3),
    "softmax axis0": lambda lib: lib.nn.softmax(C(lib, M), axis=0),
    "log_softmax axis": lambda lib: lib.nn.log_softmax(C(lib, X), axis=1),
    "softmax bad axis": lambda lib: lib.nn.softmax(C(lib, M), axis=2),
    "gelu approx": lambda lib: lib.nn.gelu(C(lib, M.astype("float64")), approximate=True),
    "silu beta": lambda lib: lib.nn.silu(C(lib, M), beta=0.5),
    "conv2d same": lambda lib: lib.nn.conv2d(C(lib, RNG_IMG), C(lib, RNG_FILT), strides=1, padding="SAME"),
    "conv2d valid s2": lambda lib: lib.nn.conv2d(C(lib, RNG_IMG), C(lib, RNG_FILT), strides=[1, 2, 2, 1], padding="VALID"),
    "conv2d dilated": lambda lib: lib.nn.conv2d(C(lib, RNG_IMG), C(lib, RNG_FILT), strides=1, padding="SAME", dilations=2),
    "conv2d bad channels": lambda lib: lib.nn.conv2d(C(lib, RNG_IMG), C(lib, RNG_FILT[:, :, :1]), strides=1, padding="SAME"),
    "max_pool2d": lambda lib: lib.nn.max_pool2d(C(lib, RNG_IMG), 2, 2, "VALID"),
    "max_pool2d same": lambda lib: lib.nn.max_pool2d(C(lib, RNG_IMG), 3, 2, "SAME"),
    "avg_pool2d same": lambda lib: lib.nn.avg_pool2d(C(lib, RNG_IMG), 3, 2, "SAME"),
    "avg_pool2d valid": lambda lib: lib.nn.avg_pool2d(C(lib, RNG_IMG), [2, 3], [1, 2], "VALID"),
}
RNG_IMG = RNG.uniform(-1, 1, (2, 6, 5, 3)).astype("float32")
RNG_FILT = RNG.uniform(-1, 1, (3, 2, 3, 4)).astype("float32")


@pytest.mark.parametrize("name", list(NN))
def test_nn_ops(name):
    check(NN[name], rtol=1e-5, atol=1e-5)
