"""Read forwarding: repeated Variable reads become one unless a write comes between."""
import numpy as np

import trainlib as tl
from trainlib.graph.passes import optimize


def _types(cf):
    return [op.type for op in cf.optimized_graph.get_operations()]


def test_reads_without_writes_are_merged():
    v = tl.Variable(2.0)

    @tl.function
    def f(x):
        return v * x + v * 3.0 + v

    cf = f.get_concrete_function(tl.constant(1.0))
    assert _types(cf).count("ReadVariableOp") == 1
    assert float(f(tl.constant(1.0))) == 2.0 + 6.0 + 2.0
    assert cf.optimized_graph.verify()


def test_a_write_ends_forwarding_and_values_stay_right():
    v = tl.Variable(1.0)

    @tl.function
    def f():
        a = v.read_value()
        v.assign_add(10.0)
        b = v.read_value()
        c = v.read_value()
        return a, b + c

    cf = f.get_concrete_function()
    assert _types(cf).count("ReadVariableOp") == 2
    a, bc = f()
    assert float(a) == 1.0 and float(bc) == 22.0
    a, bc = f()
    assert float(a) == 11.0 and float(bc) == 42.0


def test_reads_are_not_forwarded_across_control_flow_that_may_write():
    v = tl.Variable(1.0)

    @tl.function
    def f(x):
        a = v.read_value()
        if x > 0:
            v.assign(5.0)
        return a + v.read_value()

    assert float(f(tl.constant(1.0))) == 6.0
    v.assign(1.0)
    assert float(f(tl.constant(-1.0))) == 2.0


def test_adam_bias_correction_is_computed_once():
    model = tl.Sequential([tl.layers.Input((3,)), tl.layers.Dense(4), tl.layers.Dense(2)])
    opt = tl.optim.Adam(fused=False)  # per variable: one bias correction per variable to forward
    opt.build(model.trainable_variables)

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.reduce_sum(model(x))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        return loss

    x = tl.constant(np.ones([2, 3], np.float32))
    unoptimized = []
    tl.config.optimizer.set_experimental_options({"read_forwarding": False})
    try:
        n_without = len(step.get_concrete_function(x).optimized_graph.get_operations())
    finally:
        tl.config.optimizer.set_experimental_options({"read_forwarding": True})
    step2 = tl.function(step.python_function)
    cf = step2.get_concrete_function(x)
    assert len(cf.optimized_graph.get_operations()) < n_without - 20, unoptimized
    assert [op.type for op in cf.optimized_graph.get_operations()].count("Pow") == 2  # beta_1^t, beta_2^t
