"""Flat parameters (`trainlib/optim/flat.py` and the fused path of `Optimizer`): variables
and slots as views into one buffer per dtype, updated in one go, bit-equal to the
per-variable update."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.optim import flat


def _mlp_variables(seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    shapes = [(6, 8), (8,), (8, 3), (3,)]
    return [tl.Variable((rng.standard_normal(s) * 0.3).astype(dtype)) for s in shapes]


def _train(make_optimizer, fused, steps, graph=True, seed=0, mixed=False, extra_none=False):
    variables = _mlp_variables(seed)
    if mixed:  # a second dtype group beside the float32 one
        variables += [tl.Variable(np.linspace(-1, 1, 5)), tl.Variable(np.ones((2, 2)))]
    opt = make_optimizer(fused)
    rng = np.random.default_rng(seed + 1)
    x = tl.constant(rng.standard_normal((16, 6)).astype(np.float32))
    y = tl.constant(rng.integers(0, 3, 16).astype(np.int32))
    frozen = tl.Variable(np.ones(3, np.float32)) if extra_none else None

    def step():
        w1, b1, w2, b2 = variables[:4]
        with tl.GradientTape() as tape:
            logits = tl.matmul(tl.nn.relu(tl.matmul(x, w1) + b1), w2) + b2
            loss = tl.reduce_mean(tl.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            if mixed:
                loss64 = tl.reduce_sum(tl.sin(variables[4]) * 3.0) + \
                    tl.reduce_sum(tl.square(variables[5]))
        watched = variables + ([frozen] if frozen is not None else [])
        grads = tape.gradient([loss, loss64] if mixed else loss, watched)
        opt.apply_gradients(zip(grads, watched))
        return loss

    run = tl.function(step) if graph else step
    for _ in range(steps):
        run()
    return [v.numpy() for v in variables], opt


OPTIMIZERS = {
    "adam": lambda fused: tl.optim.Adam(0.01, fused=fused),
    "adam_amsgrad_clipnorm": lambda fused: tl.optim.Adam(0.01, amsgrad=True, clipnorm=0.5,
                                                         fused=fused),
    "adamw": lambda fused: tl.optim.AdamW(0.01, weight_decay=0.05, fused=fused),
    "sgd": lambda fused: tl.optim.SGD(0.1, fused=fused),
    "sgd_nesterov_global_clipnorm": lambda fused: tl.optim.SGD(
        0.1, momentum=0.9, nesterov=True, global_clipnorm=1.0, fused=fused),
    "rmsprop_centered_momentum": lambda fused: tl.optim.RMSprop(
        0.01, momentum=0.5, centered=True, clipvalue=0.3, fused=fused),
    "adagrad": lambda fused: tl.optim.Adagrad(0.05, fused=fused),
    "adam_schedule": lambda fused: tl.optim.Adam(
        tl.optim.schedules.ExponentialDecay(0.01, 10, 0.5), fused=fused),
    # Keras 3.15's other elementwise optimizers, with EMA on some
    "adadelta": lambda fused: tl.optim.Adadelta(1.0, fused=fused),
    "adamax_ema": lambda fused: tl.optim.Adamax(0.01, use_ema=True, fused=fused),
    "nadam": lambda fused: tl.optim.Nadam(0.01, fused=fused),
    "ftrl_regularized": lambda fused: tl.optim.Ftrl(
        0.1, l1_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.01,
        beta=0.1, fused=fused),
    "lion_weight_decay": lambda fused: tl.optim.Lion(0.001, weight_decay=0.1, fused=fused),
    "schedule_free_adamw_warmup": lambda fused: tl.optim.ScheduleFreeAdamW(
        0.01, warmup_steps=5, fused=fused),
    "sgd_ema_overwrite": lambda fused: tl.optim.SGD(
        0.1, momentum=0.9, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=7,
        fused=fused),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fused_update_is_bit_equal_to_the_per_variable_one_over_100_steps(name):
    fused, opt = _train(OPTIMIZERS[name], True, 100)
    plain, plain_opt = _train(OPTIMIZERS[name], False, 100)
    assert opt._flat_groups and not plain_opt._flat_groups  # the two paths really differ
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(opt.variables, plain_opt.variables):  # slots and counters too
        assert a.name == b.name
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_bit_equal_eagerly_with_two_dtype_groups_and_a_none_gradient():
    make = OPTIMIZERS["adam"]
    fused, opt = _train(make, True, 20, graph=False, mixed=True, extra_none=True)
    plain, _ = _train(make, False, 20, graph=False, mixed=True, extra_none=True)
    assert sorted(g.variable.dtype.name for g in opt._flat_groups) == ["float32", "float64"]
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_variables_and_slots_are_views_into_one_buffer_per_dtype():
    variables = _mlp_variables(0)
    before = [v.numpy() for v in variables]
    opt = tl.optim.Adam(0.1)
    grads = [tl.ones_like(v) for v in variables]
    opt.apply_gradients(zip(grads, variables))
    (group,) = opt._flat_groups
    buffer = group.variable.array
    assert buffer.ndim == 1 and buffer.size == sum(v.numpy().size for v in variables)
    for v, (a, b) in zip(variables, group.offsets):
        assert np.shares_memory(v.array, buffer)
        np.testing.assert_array_equal(buffer[a:b].reshape(v.shape), v.numpy())
    for slot in opt.momentums:  # the per-variable slots share one buffer too
        assert np.shares_memory(slot.array, opt._flat_state["momentums"][0].array)
    # Adam's first step moves every element by -lr (sign of the gradient)
    for v, b in zip(variables, before):
        np.testing.assert_allclose(v.numpy(), b - 0.1, atol=1e-5)


def test_pinned_variables_stay_attached_through_every_kind_of_write():
    variables = _mlp_variables(1)
    opt = tl.optim.SGD(1.0)
    opt.apply_gradients(zip([tl.zeros_like(v) for v in variables], variables))
    (group,) = opt._flat_groups
    w = variables[0]
    taken = w.read_value()  # a tensor taken before: keeps its value after the writes below
    kept = taken.numpy().copy()
    w.assign(np.full((6, 8), 2.0, np.float32))
    w.assign_add(np.ones((6, 8), np.float32))
    returned = w.assign_sub(np.full((6, 8), 0.5, np.float32))
    np.testing.assert_array_equal(taken.numpy(), kept)
    a, b = group.offsets[0]
    np.testing.assert_array_equal(group.variable.array[a:b], 2.5)
    opt.apply_gradients(zip([tl.ones_like(v) for v in variables], variables))  # flat update
    np.testing.assert_array_equal(w.numpy(), 1.5)
    np.testing.assert_array_equal(returned.numpy(), 2.5)  # a copy, not the live buffer

    @tl.function
    def write_in_graph():
        w.assign(tl.zeros_like(w))
        w.assign_add(tl.ones_like(w))
        return w.read_value()

    out = write_in_graph()
    np.testing.assert_array_equal(group.variable.array[a:b], 1.0)
    opt.apply_gradients(zip([tl.ones_like(v) for v in variables], variables))
    np.testing.assert_array_equal(out.numpy(), 1.0)  # the returned read is a snapshot
    np.testing.assert_array_equal(w.numpy(), 0.0)


def test_graph_reads_before_the_flat_write_see_the_old_values():
    # the memory plan treats a group's Variables as one storage: the flat in-place write
    # waits until the reads of its members are dead, and a returned read is copied
    variables = _mlp_variables(2)
    opt = tl.optim.SGD(1.0)

    @tl.function
    def step():
        before = variables[0].read_value()
        opt.apply_gradients(zip([tl.ones_like(v) for v in variables], variables))
        return before, before * 1.0

    old = variables[0].numpy()
    before, scaled = step()
    np.testing.assert_array_equal(before.numpy(), old)
    np.testing.assert_array_equal(scaled.numpy(), old)
    np.testing.assert_array_equal(variables[0].numpy(), old - 1.0)


def test_a_flat_read_still_used_after_a_write_of_its_buffer_keeps_the_old_value():
    # a pinned Variable's write goes into its buffer in place even where the plan does not
    # lower it in place: a read used after it must be a snapshot (ScheduleFreeAdamW's
    # `momentum_old` read before `momentum.assign_sub`)
    a, b = tl.Variable(np.array([1.0, 2.0], np.float32)), tl.Variable(np.array([3.0], np.float32))
    group = flat.group_for([a, b], "test_flat_read_then_write")
    out = tl.Variable(np.zeros(3, np.float32))

    @tl.function
    def step():
        old = group.variable.read_value()
        group.variable.assign_sub(tl.constant([1.0, 1.0, 1.0]))
        out.assign(old * 2.0 + group.variable)

    step()
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0, 6.0] + np.array([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(a.numpy(), [0.0, 1.0])


def test_a_member_read_after_a_write_of_its_flat_buffer_is_not_forwarded_from_before():
    # read forwarding keeps a read's value only until a write of its storage: a write through
    # the flat Variable is a write of every member (steps_per_execution runs two steps in one
    # graph: the second step's forward pass must read the updated weights)
    a, b = tl.Variable(np.array([1.0, 2.0], np.float32)), tl.Variable(np.array([3.0], np.float32))
    group = flat.group_for([a, b], "test_flat_forwarding")
    out = tl.Variable(np.zeros(2, np.float32))

    @tl.function
    def step():
        before = a.read_value() * 1.0
        group.variable.assign_sub(tl.constant([1.0, 1.0, 1.0]))
        out.assign(a.read_value() * 10.0 + before)

    step()
    np.testing.assert_array_equal(out.numpy(), [0.0 * 10 + 1.0, 1.0 * 10 + 2.0])


def test_a_second_optimizer_over_the_same_variables_shares_the_buffer_other_sets_fall_back():
    variables = _mlp_variables(3)
    first, second, third = tl.optim.SGD(0.1), tl.optim.Adam(0.1), tl.optim.Adam(0.1)
    ones = [tl.ones_like(v) for v in variables]
    first.apply_gradients(zip(ones, variables))
    second.apply_gradients(zip(ones, variables))
    assert second._flat_groups[0] is first._flat_groups[0]
    third.apply_gradients(zip(ones[:3], variables[:3]))  # another combination: one by one
    assert third._flat_groups == []
    np.testing.assert_allclose(variables[3].numpy(),
                               _mlp_variables(3)[3].numpy() - 0.1 - 0.1, atol=1e-5)


class ElementwiseSign(tl.optim.Optimizer):
    """A user optimizer in Keras 3's form that says its update is elementwise."""

    elementwise_update = True

    def build(self, var_list):
        super().build(var_list)
        self.previous = [self.add_variable_from_reference(v, "previous") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        prev = self.previous[self._var_index(variable)]
        variable.assign_sub(learning_rate * tl.sign(gradient + prev))
        prev.assign(gradient)


class PerVariableNorm(tl.optim.Optimizer):
    """A user optimizer whose step needs each variable's own norm: never flattened."""

    def build(self, var_list):
        super().build(var_list)

    def update_step(self, gradient, variable, learning_rate):
        variable.assign_sub(learning_rate * gradient / tl.norm(gradient))


def test_user_optimizers_keep_keras_build_and_update_step():
    fused, opt = _train(lambda f: ElementwiseSign(0.01, fused=f), None, 30)
    plain, _ = _train(lambda f: ElementwiseSign(0.01, fused=f), False, 30)
    assert opt._flat_groups
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    _, norm_opt = _train(lambda f: PerVariableNorm(0.01), None, 3)
    assert norm_opt._flat_groups == []
    with pytest.raises(ValueError, match="elementwise_update"):
        PerVariableNorm(0.1, fused=True)


def test_group_for_refuses_what_cannot_share_a_buffer():
    a, b = tl.Variable([1.0, 2.0]), tl.Variable(np.zeros(2))
    assert flat.group_for([a], "g") is None                 # one alone: nothing to gain
    assert flat.group_for([a, b], "g") is None              # two dtypes
    assert flat.group_for([a, a], "g") is None              # listed twice
    c = tl.Variable([3.0])
    group = flat.group_for([a, c], "g")
    assert group is flat.group_for([a, c], "g")             # the same Variables: the same group
    assert flat.group_for([c, a], "g") is None              # pinned in another order


def test_fit_with_fused_and_per_variable_optimizers_is_bit_equal():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 5)).astype(np.float32)
    y = rng.integers(0, 3, 64).astype(np.int32)
    weights = []
    for fused in (True, False):
        tl.random.set_seed(0)
        model = tl.Sequential([tl.layers.Input((5,)), tl.layers.Dense(7, activation="relu"),
                               tl.layers.Dense(3)])
        if weights:
            model.set_weights(weights[0][0])
        model.compile(optimizer=tl.optim.Adam(0.01, fused=fused),
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        start = model.get_weights()
        model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
        weights.append((start, model.get_weights(), model.optimizer._flat_groups))
    assert weights[0][2] and not weights[1][2]
    for a, b in zip(weights[0][1], weights[1][1]):
        np.testing.assert_array_equal(a, b)


def test_a_swap_inside_a_branch_keeps_the_value_read_before_the_write():
    # inside If/While bodies no memory plan orders the writes, and a pinned Variable's
    # writes go into its buffer in place: its reads there take snapshots
    variables = _mlp_variables(4)
    tl.optim.SGD(0.1).apply_gradients(zip([tl.zeros_like(v) for v in variables], variables))
    w = variables[1]
    other = tl.Variable(np.zeros(8, np.float32))
    old = w.numpy()

    @tl.function
    def swap(flag):
        def yes():
            kept = w.read_value()
            w.assign(other.read_value())
            other.assign(kept)
            return tl.constant(True)
        return tl.cond(flag, yes, lambda: tl.constant(False))

    swap(tl.constant(True))
    np.testing.assert_array_equal(other.numpy(), old)
    np.testing.assert_array_equal(w.numpy(), 0.0)


def test_loss_scale_optimizer_with_a_fused_inner_optimizer_is_bit_equal():
    results = []
    for fused in (True, False):
        inner = tl.optim.Adam(0.01, fused=fused)
        variables, opt = _train(lambda f, inner=inner: tl.optim.LossScaleOptimizer(inner), None, 5)
        results.append((variables, inner._flat_groups))
    assert results[0][1] and not results[1][1]
    for a, b in zip(results[0][0], results[1][0]):
        np.testing.assert_array_equal(a, b)
