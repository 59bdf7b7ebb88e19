"""TensorFlow vs trainlib for the top-level names a ported TF 2 program meets early:
name scopes and control dependencies, `group`/`tuple`/`case`/`switch_case`, the array
helpers (`sequence_mask`, `unravel_index`, `strided_slice`, `space_to_batch`,
`dynamic_partition`/`dynamic_stitch`, `histogram_fixed_width`...), the extra debugging
checks, the new dtypes and `tf.errors` codes. Values, dtypes and shapes must agree, eagerly
and inside a function, and both must raise on the same bad inputs.
"""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import check, in_function  # noqa: E402

RNG = np.random.default_rng(3)
IMG = RNG.normal(size=(2, 4, 6, 3)).astype(np.float32)
DATA = RNG.normal(size=(6, 2)).astype(np.float32)
PARTS = np.array([1, 0, 2, 1, 0, 1], np.int32)

PROGRAMS = {
    "sequence_mask": lambda lib: lib.sequence_mask([1, 3, 0], 4),
    "sequence_mask_default_len": lambda lib: lib.sequence_mask(lib.constant([[1, 3], [2, 0]])),
    "sequence_mask_float": lambda lib: lib.sequence_mask([2, 1], 3, dtype=lib.float32),
    "unravel_index": lambda lib: lib.unravel_index([1, 5, 4], [2, 3]),
    "unravel_index_scalar": lambda lib: lib.unravel_index(5, [2, 3]),
    "unravel_index_int64": lambda lib: lib.unravel_index(lib.constant([7], lib.int64), [2, 2, 2]),
    "unravel_index_out_of_range": lambda lib: lib.unravel_index([6], [2, 3]),
    "strided_slice": lambda lib: lib.strided_slice(lib.reshape(lib.range(24), [2, 3, 4]),
                                                   [0, 1, 0], [2, 3, 4], [1, 1, 2]),
    "strided_slice_masks": lambda lib: lib.strided_slice(
        lib.reshape(lib.range(24), [2, 3, 4]), [1, 0, 1], [2, 2, 3], [1, 1, 1],
        begin_mask=0b010, end_mask=0b100, shrink_axis_mask=0b001),
    "strided_slice_new_axis_ellipsis": lambda lib: lib.strided_slice(
        lib.reshape(lib.range(24), [2, 3, 4]), [0, 0, 1], [0, 0, 3], [1, 1, 1],
        ellipsis_mask=0b001, new_axis_mask=0b010),
    "strided_slice_negative_stride": lambda lib: lib.strided_slice(
        lib.range(10), [8], [1], [-3]),
    "space_to_batch": lambda lib: lib.space_to_batch(IMG, [2, 3], [[0, 0], [0, 0]]),
    "space_to_batch_padded": lambda lib: lib.space_to_batch(IMG, [2, 2], [[1, 1], [0, 2]]),
    "space_to_batch_nd": lambda lib: lib.space_to_batch_nd(IMG, [2, 2], [[0, 0], [1, 1]]),
    "batch_to_space": lambda lib: lib.batch_to_space(
        lib.reshape(lib.range(48.0), [8, 2, 3, 1]), [2, 4], [[0, 1], [2, 0]]),
    "space_to_batch_not_divisible": lambda lib: lib.space_to_batch(IMG, [3, 3], [[0, 0], [0, 0]]),
    "dynamic_partition": lambda lib: lib.dynamic_partition(DATA, PARTS, 3),
    "dynamic_partition_empty_part": lambda lib: lib.dynamic_partition(DATA, PARTS, 4),
    "dynamic_partition_bad_index": lambda lib: lib.dynamic_partition(DATA, PARTS + 2, 3),
    "dynamic_stitch": lambda lib: lib.dynamic_stitch([[0, 3], [1, 2, 4]],
                                                     [DATA[:2], DATA[2:5]]),
    "dynamic_stitch_repeats": lambda lib: lib.dynamic_stitch([[0, 1], [1]], [[1, 2], [9]]),
    "histogram_fixed_width": lambda lib: lib.histogram_fixed_width(
        DATA, [-1.0, 1.0], nbins=7),
    "histogram_fixed_width_bins": lambda lib: lib.histogram_fixed_width_bins(
        DATA, [-1.0, 1.0], nbins=5),
    "broadcast_dynamic_shape": lambda lib: lib.broadcast_dynamic_shape([2, 1, 3], [4, 1]),
    "broadcast_static_shape": lambda lib: lib.broadcast_static_shape(
        lib.TensorShape([2, 1, 3]), lib.TensorShape([4, 1])),
    "broadcast_static_shape_bad": lambda lib: lib.broadcast_static_shape(
        lib.TensorShape([2, 3]), lib.TensorShape([4])),
    "shape_n": lambda lib: lib.shape_n([DATA, IMG]),
    "parallel_stack": lambda lib: lib.parallel_stack([DATA, DATA * 2]),
    "identity_n": lambda lib: lib.identity_n([DATA, PARTS]),
    "saturate_cast": lambda lib: lib.saturate_cast([-5.0, 300.0, 1e10], lib.uint8),
    "saturate_cast_int": lambda lib: lib.saturate_cast(lib.constant([-70000, 5], lib.int32),
                                                       lib.int16),
    "case": lambda lib: lib.case([(lib.constant(1) > 2, lambda: lib.constant(1)),
                                  (lib.constant(3) > 2, lambda: lib.constant(2))],
                                 default=lambda: lib.constant(3)),
    "case_default": lambda lib: lib.case([(lib.constant(False), lambda: lib.constant(1.0))],
                                         default=lambda: lib.constant(-1.0)),
    "case_no_default_none_true": lambda lib: lib.case(
        [(lib.constant(False), lambda: lib.constant(1.0)),
         (lib.constant(False), lambda: lib.constant(2.0))]),
    "case_exclusive_two_true": lambda lib: lib.case(
        [(lib.constant(True), lambda: lib.constant(1.0)),
         (lib.constant(True), lambda: lib.constant(2.0))], exclusive=True),
    "switch_case": lambda lib: lib.switch_case(lib.constant(1), [lambda: lib.constant(10.0),
                                                                  lambda: lib.constant(20.0)]),
    "switch_case_out_of_range": lambda lib: lib.switch_case(
        lib.constant(7), [lambda: lib.constant(10.0), lambda: lib.constant(20.0)]),
    "switch_case_dict_default": lambda lib: lib.switch_case(
        lib.constant(-1), {0: lambda: lib.constant(1), 1: lambda: lib.constant(2)},
        default=lambda: lib.constant(9)),
    "tuple": lambda lib: lib.tuple([lib.constant(1.0), lib.constant([2, 3])]),
    "control_dependencies": lambda lib: _control_dependencies(lib),
    "assert_positive_fails": lambda lib: lib.debugging.assert_positive(lib.constant([1.0, -1.0])),
    "assert_non_negative_ok": lambda lib: (lib.debugging.assert_non_negative([0, 2]),
                                           lib.constant(1))[1],
    "assert_negative_fails": lambda lib: lib.debugging.assert_negative([0.0]),
    "assert_non_positive_ok": lambda lib: (lib.debugging.assert_non_positive([0, -2]),
                                           lib.constant(1))[1],
    "assert_rank_at_least_fails": lambda lib: lib.debugging.assert_rank_at_least(DATA, 3),
    "assert_rank_in_ok": lambda lib: (lib.debugging.assert_rank_in(DATA, [1, 2]),
                                      lib.constant(0))[1],
    "assert_scalar": lambda lib: lib.debugging.assert_scalar(lib.constant(2.0)),
    "assert_scalar_fails": lambda lib: lib.debugging.assert_scalar(lib.constant([2.0])),
    "assert_integer_fails": lambda lib: lib.debugging.assert_integer(lib.constant(2.0)),
    "assert_type_fails": lambda lib: lib.debugging.assert_type(lib.constant(2.0), lib.int32),
    "assert_all_finite": lambda lib: lib.debugging.assert_all_finite(lib.constant([1.0]), "m"),
    "assert_all_finite_fails": lambda lib: lib.debugging.assert_all_finite(
        lib.constant([np.inf]), "m"),
    "top_level_asserts": lambda lib: (lib.assert_equal(1, 1), lib.assert_less(1, 2),
                                      lib.assert_greater(2, 1), lib.assert_rank(DATA, 2),
                                      lib.constant(0))[-1],
    "top_level_assert_fails": lambda lib: lib.assert_less(2, 1),
    "uint32": lambda lib: lib.constant([1, 2], lib.uint32) + 3,
    "uint16_cast": lambda lib: lib.cast(lib.constant([70000, 3]), lib.uint16),
    "uint64_reduce": lambda lib: lib.reduce_sum(lib.constant([1, 2, 3], lib.uint64)),
    "complex128_const": lambda lib: lib.constant(np.array([1 + 2j], np.complex128)) * 2,
    "get_static_value": lambda lib: lib.constant(lib.get_static_value(lib.constant([1, 2]))),
    "name_scope_string": lambda lib: _scope_name(lib),
}


def _control_dependencies(lib):
    x = lib.constant([1.0, 2.0])
    with lib.control_dependencies([lib.debugging.assert_positive(x) or x]):
        return lib.identity(x) * 2


def _scope_name(lib):
    with lib.name_scope("outer") as outer:
        with lib.name_scope("inner") as inner:
            current = lib.get_current_name_scope()
    return lib.constant([outer, inner, current])


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    check(in_function(PROGRAMS[name], graph))


def test_graph_op_names_carry_the_name_scope():
    names = {}
    for lib in (tf, tl):
        @lib.function
        def f(x):
            with lib.name_scope("block"):
                y = lib.matmul(x, x)
                with lib.name_scope("act"):
                    y = lib.nn.relu(y)
            with lib.name_scope("block"):
                z = y * 2.0
            return z
        graph = f.get_concrete_function(lib.TensorSpec([2, 2], lib.float32)).graph
        names[lib] = [op.name for op in graph.get_operations()]
    for want in ("block/MatMul", "block/act/Relu", "block_1/mul"):
        assert want in names[tf]
    # trainlib names ops by its op types (Mul where TensorFlow says mul)
    for want in ("block/MatMul", "block/act/Relu", "block_1/Mul"):
        assert want in names[tl], names[tl]


def test_variable_names_carry_the_name_scope():
    for lib in (tf, tl):
        with lib.name_scope("model"):
            with lib.name_scope("dense"):
                v = lib.Variable(1.0, name="kernel")
        assert v.name == "model/dense/kernel:0"


@pytest.mark.parametrize("name", ["partition", "stitch", "space_to_batch", "batch_to_space",
                                  "strided_slice", "grad_pass_through"])
def test_gradients_match_tensorflows(name):
    programs = {
        "partition": lambda lib, x: lib.reduce_sum(
            [lib.reduce_sum(p * (i + 1.0)) for i, p in enumerate(lib.dynamic_partition(x, PARTS, 3))]),
        "stitch": lambda lib, x: lib.reduce_sum(
            lib.dynamic_stitch([[0, 3], [1, 2, 4, 0]], [x[:2], x[2:6]]) ** 2),
        "space_to_batch": lambda lib, x: lib.reduce_sum(
            lib.space_to_batch(lib.reshape(x, [1, 4, 3, 1]), [2, 1], [[0, 2], [1, 1]]) ** 2),
        "batch_to_space": lambda lib, x: lib.reduce_sum(
            lib.batch_to_space(lib.reshape(x, [4, 1, 3, 1]), [2, 2], [[0, 1], [1, 0]]) ** 3),
        "strided_slice": lambda lib, x: lib.reduce_sum(
            lib.strided_slice(x, [5, 0], [0, 2], [-2, 1]) ** 2),
        "grad_pass_through": lambda lib, x: lib.reduce_sum(lib.grad_pass_through(lib.round)(x * 3.0)),
    }
    grads = []
    for lib in (tf, tl):
        x = lib.Variable(DATA)
        with lib.GradientTape() as tape:
            y = programs[name](lib, x)
        grads.append(tape.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_error_codes_and_classes_are_tensorflows():
    for name in dir(tf.errors):
        if name.isupper():
            assert getattr(tl.errors, name) == getattr(tf.errors, name), name
        elif name.endswith("Error") and name != "OpError":
            cls = getattr(tl.errors, name)
            if hasattr(getattr(tf.errors, name), "error_code") and issubclass(cls, tl.errors.OpError):
                assert cls(None, None, "message").error_code == \
                    getattr(tf.errors, name)(None, None, "message").error_code, name
    e = tl.errors.InvalidArgumentError(None, None, "bad value")
    assert e.message == "bad value" and str(e) == "bad value"
