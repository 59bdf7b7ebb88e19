"""TensorFlow's top-level array helpers and the partition ops (`graph/ops/tf_array.py`), the
control-dependency and branching functions (`grouping.py`, `case.py`), `tl.name_scope`, and the
extra checks of `tl.debugging` (`checks.py`): numpy references, float64 finite differences,
traced == eager. One table, CASES (unioned by the registry test).
"""
import numpy as np
import pytest

import trainlib as tl
from tests.graph.ops.harness import OpCase, table_tests

PARTS = np.array([1, 0, 2, 1, 0, 1], np.int32)


def _partition_ref(x):
    return [x[PARTS == i] for i in range(3)]


def _stitch_ref(a, b):
    out = np.zeros((5,) + a.shape[1:], a.dtype)
    out[[0, 3]] = a
    out[[1, 2, 4]] = b
    return out


def _space_to_batch_ref(x, block, pads):
    x = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    b, h, w, c = x.shape
    x = x.reshape(b, h // block[0], block[0], w // block[1], block[1], c)
    return x.transpose(2, 4, 0, 1, 3, 5).reshape(b * block[0] * block[1], h // block[0],
                                                 w // block[1], c)


CASES = [
    OpCase("dynamic_partition", ["DynamicPartition"],
           lambda x: tl.dynamic_partition(x, PARTS, 3), _partition_ref, [(6, 2)]),
    OpCase("dynamic_stitch", ["DynamicStitch"],
           lambda a, b: tl.dynamic_stitch([[0, 3], [1, 2, 4]], [a, b]), _stitch_ref,
           [(2, 3), (3, 3)]),
    OpCase("space_to_batch", ["Transpose", "PadV2"],
           lambda x: tl.space_to_batch(x, [2, 3], [[1, 1], [0, 1]]),
           lambda x: _space_to_batch_ref(x, (2, 3), [(1, 1), (0, 1)]), [(2, 4, 5, 3)]),
    OpCase("batch_to_space_inverts", ["Transpose"],
           lambda x: tl.batch_to_space(tl.space_to_batch(x, [2, 2], [[0, 0], [1, 1]]), [2, 2],
                                       [[0, 0], [1, 1]]),
           lambda x: x, [(3, 4, 2, 2)]),
    OpCase("strided_slice", ["StridedSlice"],
           lambda x: tl.strided_slice(x, [4, 0, 1], [0, 3, 0], [-2, 1, 1], end_mask=0b100,
                                      shrink_axis_mask=0),
           lambda x: x[4:0:-2, 0:3, 1:], [(6, 3, 4)]),
    OpCase("sequence_mask", ["Less"], lambda n: tl.sequence_mask(n, 5),
           lambda n: np.arange(5) < n[..., None], [(2, 3)], low=0, high=6, dtypes=("int32",),
           grad=False),
    OpCase("unravel_index", ["FloorDiv", "FloorMod"], lambda i: tl.unravel_index(i, [3, 4, 2]),
           lambda i: np.stack(np.unravel_index(i, (3, 4, 2))).astype(i.dtype), [(7,)], low=0,
           high=23, dtypes=("int32", "int64"), grad=False),
    OpCase("histogram_fixed_width", ["Bincount"],
           lambda v: tl.histogram_fixed_width(v, [-1.0, 1.0], nbins=6),
           lambda v: np.histogram(np.clip(v, -1, 1 - 1e-9), bins=6, range=(-1, 1))[0].astype(np.int32),
           [(40,)], dtypes=("float64",), grad=False),
    OpCase("saturate_cast", ["Cast"], lambda x: tl.saturate_cast(x * 100.0, tl.int8),
           lambda x: np.clip(x * 100.0, -128, 127).astype(np.int8), [(10,)], grad=False),
    OpCase("identity_n", ["Identity"], lambda a, b: tl.identity_n([a, b]),
           lambda a, b: [a, b], [(2,), (3, 1)]),
]


test_against_reference, test_gradient, test_traced_equals_eager = table_tests(CASES)


def test_bad_partitions_and_indices_name_the_op():
    with pytest.raises(tl.errors.InvalidArgumentError, match="DynamicPartition.*not in \\[0, 2\\)"):
        tl.dynamic_partition([1, 2, 3], [0, 2, 1], 2)
    with pytest.raises(tl.errors.InvalidArgumentError, match="UnravelIndex"):
        tl.unravel_index([6], [2, 3])
    with pytest.raises(ValueError, match="divisible"):
        tl.space_to_batch(np.zeros((1, 3, 3, 1), np.float32), [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(TypeError, match="scalar bool"):
        tl.case([(tl.constant([True, False]), lambda: 1)])


def test_lists_of_tensors_pack_with_gradients():
    """`tl.reduce_sum([a, b])` packs the tensors (as TensorFlow), so gradients reach them."""
    v = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        y = tl.reduce_sum([v * 1.0, [v * 3.0][0], 1.0])
    assert float(y) == 9.0 and float(tape.gradient(y, v)) == 4.0
    assert tl.constant(tl.TensorShape([2, 3])).dtype is tl.int32
    with pytest.raises(tl.errors.InvalidArgumentError, match="dtype"):
        tl.convert_to_tensor([tl.constant(1.0), tl.constant(1)])


def test_name_scopes_name_graph_ops_and_variables():
    @tl.function(autograph=False)
    def f(x):
        with tl.name_scope("block") as scope:
            assert scope == "block/"
            y = tl.matmul(x, x)
            with tl.name_scope("act"):
                assert tl.get_current_name_scope() == "block/act"
                y = tl.nn.relu(y)
        with tl.name_scope("block"):
            y = y * 2.0
        with tl.name_scope("abs/"):
            y = -y
        return y
    names = [op.name for op in f.get_concrete_function(tl.TensorSpec([2, 2])).graph.get_operations()]
    for want in ("block/MatMul", "block/act/Relu", "block_1/Mul", "abs/Neg"):
        assert want in names
    src = f.get_concrete_function(tl.TensorSpec([2, 2])).python_source
    compile(src, "<check>", "exec")
    with tl.name_scope("outer"):
        v = tl.Variable(1.0, name="v")
    assert v.name == "outer/v:0" and tl.get_current_name_scope() == ""
    with pytest.raises(ValueError, match="not a valid scope name"):
        tl.name_scope("a b").__enter__()


def test_control_dependencies_order_and_keep_ops():
    log = []

    @tl.function(autograph=False)
    def f(x):
        side = tl.py_function(lambda: log.append("side") or 0.0, [], tl.float32)
        with tl.control_dependencies([side]):
            return tl.identity(x) + 1.0
    assert float(f(tl.constant(1.0))) == 2.0 and log == ["side"]
    graph = f.get_concrete_function(tl.TensorSpec([])).graph
    add = [op for op in graph.get_operations() if op.type == "Identity"][0]
    assert any(c.type.startswith("EagerPyFunc") or "Py" in c.type for c in add.control_inputs)
    # eagerly the block does nothing; group returns None
    with tl.control_dependencies([tl.constant(1.0)]):
        assert float(tl.identity(2.0)) == 2.0
    assert tl.group(tl.constant(1.0)) is None and tl.no_op() is None


def test_group_and_tuple_while_tracing():
    @tl.function(autograph=False)
    def f(x):
        op = tl.group(x * 2.0, [x + 1.0])
        assert op.type == "NoOp" and len(op.control_inputs) == 2
        a, b = tl.tuple([x, x * 3.0])
        return a + b
    assert float(f(tl.constant(1.0))) == 4.0


def test_case_and_switch_case_trace_each_branch_once():
    calls = []

    def branch(k):
        def fn():
            calls.append(k)
            return tl.constant(float(k))
        return fn

    @tl.function(autograph=False)
    def f(i):
        return tl.switch_case(i, [branch(0), branch(1), branch(2)])
    assert [float(f(tl.constant(k))) for k in (0, 1, 2, 5)] == [0.0, 1.0, 2.0, 2.0]
    assert sorted(calls) == [0, 1, 2]

    @tl.function(autograph=False)
    def g(x):
        return tl.case([(x < 0, lambda: -x), (x < 10, lambda: x * 2.0)], default=lambda: x)
    assert [float(g(tl.constant(v))) for v in (-3.0, 4.0, 20.0)] == [3.0, 8.0, 20.0]


def test_debugging_checks():
    tl.debugging.assert_positive([1, 2])
    with pytest.raises(tl.errors.InvalidArgumentError, match="assert_positive"):
        tl.debugging.assert_positive([1, 0])
    with pytest.raises(tl.errors.InvalidArgumentError, match="assert_non_positive"):
        tl.debugging.assert_non_positive([1.0])
    with pytest.raises(ValueError, match="rank at least 3"):
        tl.debugging.assert_rank_at_least(tl.zeros([2, 2]), 3)
    with pytest.raises(TypeError, match="integer"):
        tl.debugging.assert_integer(tl.constant(1.0))
    assert tl.debugging.assert_same_float_dtype([tl.constant(1.0)]) is tl.float32
    with pytest.raises(ValueError):
        tl.debugging.assert_same_float_dtype([tl.constant(1.0), tl.constant(1.0, tl.float64)])
    assert tl.debugging.is_numeric_tensor(tl.constant(1)) and \
        not tl.debugging.is_numeric_tensor(tl.constant("a"))

    @tl.function(autograph=False)
    def f(x):
        tl.debugging.assert_rank_in(x, [1, 2])
        return tl.debugging.assert_all_finite(x, "x")
    f(tl.constant([1.0]))
    with pytest.raises(tl.errors.InvalidArgumentError, match="x : Tensor had Inf"):
        f(tl.constant([np.inf]))


def test_static_values_and_misc():
    assert tl.get_static_value(tl.constant([1, 2])).tolist() == [1, 2]
    seen = {}

    @tl.function(autograph=False)
    def f(x):
        seen["shape"] = tl.get_static_value(tl.shape(x))
        seen["x"] = tl.get_static_value(x)
        seen["inside"] = tl.inside_function() and tl.is_symbolic_tensor(x)
        return x
    f(tl.zeros([2, 3]))
    assert seen["shape"].tolist() == [2, 3] and seen["x"] is None and seen["inside"]
    assert not tl.inside_function()
    t0 = float(tl.timestamp())
    assert abs(t0 - __import__("time").time()) < 60
    assert tl.compat.as_text(b"a") == "a" and tl.compat.as_bytes("a") == b"a"
    assert tl.compat.v2 is tl and tl.version.VERSION == tl.__version__
    with pytest.raises(AttributeError, match="no TensorFlow 1 API"):
        tl.compat.v1.placeholder
    assert tl.get_logger().name == "trainlib"
    assert tl.constant_initializer([1, 2, 3, 4])([2, 2]).numpy().tolist() == [[1, 2], [3, 4]]
    assert tl.constant([1, 2], tl.uint32).dtype is tl.uint32
    assert tl.constant(np.array([1j])).dtype is tl.complex128
    e = tl.errors.NotFoundError(None, None, "gone")
    assert e.message == "gone" and e.error_code == tl.errors.NOT_FOUND == 5


def test_variable_accepts_tensorflows_arguments():
    v = tl.Variable([1.0, -2.0], constraint=lambda w: tl.maximum(w, 0.0),
                    aggregation=tl.VariableAggregation.MEAN,
                    synchronization=tl.VariableSynchronization.ON_READ, validate_shape=False)
    assert v.shape.as_list() == [None] and v.aggregation is tl.VariableAggregation.MEAN
    opt = tl.keras.optimizers.SGD(1.0)
    opt.apply_gradients([(tl.constant([0.0, 0.0]), v)])
    assert v.numpy().tolist() == [1.0, 0.0]
