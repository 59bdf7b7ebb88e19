"""The op registry is complete: every differentiable op has a gradient rule and a gradient check.

Unions the `CASES` tables of the op test modules (and the tests that check the
gradients of ops only reachable through other machinery: control flow,
custom_gradient and the driver's own broadcasting ops).
"""
import importlib

from trainlib.graph.op import REGISTRY

_TABLE_MODULES = ("test_math", "test_normalization", "test_array", "test_nn", "test_debugging", "test_tensor_array", "test_linalg", "test_bitwise",
                  "test_numeric", "test_segment", "test_decompositions", "test_complex", "test_script_ops",
                  "test_tf_surface", "test_tf_array")

# op -> the test that checks its gradient outside the CASES tables
_CHECKED_ELSEWHERE = {
    "If": "tests/graph/test_autodiff.py::test_gradient_through_if_against_finite_differences",
    "While": "tests/graph/test_autodiff.py::test_gradient_through_while_with_input_dependent_trip_count",
    "ReadVariableOp": "tests/graph/test_autodiff.py::test_variables_are_watched_automatically",
    "Identity": "tests/graph/test_autodiff.py::test_custom_gradient",
    "PartitionedCall": "tests/graph/test_calls.py::test_eager_tape_differentiates_through_a_function_call",
    "StatefulPartitionedCall": "tests/graph/test_calls.py::test_side_effects_run_once_per_call_and_the_pair_is_built_once",
    "CustomGradient": "tests/graph/test_autodiff.py::test_custom_gradient_several_inputs_outputs_and_variables",
    "OptimizationBarrier": "tests/graph/test_recompute_grad.py::test_the_barrier_is_an_identity_whose_gradient_passes_through",
    "Cast": "tests/graph/ops/test_math.py::test_cast_gradient_between_floats",
    "SumToShapeOf": "tests/graph/ops/test_math.py (gradients with None-dim input signatures)",
    "BroadcastToShapeOf": "tests/graph/ops/test_math.py (second order with None dims)",
    **{op: "tests/graph/ops/test_signal.py::test_fft_op_gradients_against_finite_differences"
       for op in ("FFT", "IFFT", "RFFT", "IRFFT")},
}


def _checked_ops():
    ops = set()
    for name in _TABLE_MODULES:
        module = importlib.import_module(f"tests.graph.ops.{name}")
        for case in getattr(module, "CASES", ()):
            if getattr(case, "grad", False):
                ops.update(case.ops)
    return ops


def test_every_differentiable_op_has_a_gradient_rule():
    missing = sorted(name for name, d in REGISTRY.items() if d.differentiable and d.grad is None)
    assert not missing, f"differentiable ops without a gradient rule: {missing}"


def test_every_differentiable_op_has_a_gradient_check():
    checked = _checked_ops() | set(_CHECKED_ELSEWHERE)
    unchecked = sorted(name for name, d in REGISTRY.items()
                       if d.differentiable and name not in checked)
    assert not unchecked, f"differentiable ops with no finite-difference check: {unchecked}"


def test_every_op_has_kernel_and_inference():
    for name, d in REGISTRY.items():
        assert callable(d.kernel) and callable(d.infer), name
        assert d.name == name
