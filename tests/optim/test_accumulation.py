"""Gradient accumulation (`gradient_accumulation_steps=k`, Keras 3's semantics) inside the
train step's graph: k steps of batch B update as one step of batch k*B."""
import numpy as np
import pytest

import trainlib as tl

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 5)).astype(np.float32)
Y = RNG.integers(0, 3, 64).astype(np.int32)


def _model():
    model = tl.Sequential([tl.layers.Input((5,)), tl.layers.Dense(7, activation="relu"),
                           tl.layers.Dense(3)])
    model.set_weights([(np.arange(w.size).reshape(w.shape) % 7 - 3).astype(np.float32) * 0.05
                       for w in model.get_weights()])
    return model


def _fit(optimizer, batch_size, epochs=3, run_eagerly=False):
    model = _model()
    model.compile(optimizer=optimizer, run_eagerly=run_eagerly,
                  loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(X, Y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=False)
    return model, history.history


@pytest.mark.parametrize("make", [
    lambda k: tl.optim.Adam(0.01, gradient_accumulation_steps=k),
    lambda k: tl.optim.SGD(0.1, momentum=0.9, gradient_accumulation_steps=k),
    lambda k: tl.optim.AdamW(0.01, clipnorm=0.5, gradient_accumulation_steps=k),
], ids=["adam", "sgd_momentum", "adamw_clipnorm"])
def test_k_steps_of_batch_b_equal_one_step_of_batch_k_times_b(make):
    accumulated, acc_history = _fit(make(4), 8)
    big, big_history = _fit(make(None), 32)
    for a, b in zip(accumulated.get_weights(), big.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # the epoch metrics are those of the big batches: same samples, same weights
    assert acc_history["accuracy"] == big_history["accuracy"]
    np.testing.assert_allclose(acc_history["loss"], big_history["loss"], rtol=1e-6)
    assert int(accumulated.optimizer.iterations) == int(big.optimizer.iterations) == 6
    assert int(accumulated.optimizer._iterations.numpy()) == 24


def test_accumulation_is_one_graph_that_holds_the_update_until_the_kth_call():
    model = _model()
    opt = tl.optim.SGD(0.1, gradient_accumulation_steps=3)
    model.compile(optimizer=opt, loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
    start = model.get_weights()
    grads = []
    for i in range(3):
        xb, yb = X[8 * i:8 * i + 8], Y[8 * i:8 * i + 8]
        with tl.GradientTape() as tape:
            loss = model.compute_loss(y=tl.constant(yb), y_pred=model(tl.constant(xb)))
        grads.append([g.numpy() for g in tape.gradient(loss, model.trainable_variables)])
        model.set_weights(start)   # compute_loss above must not move anything; be sure
        model.train_on_batch(xb, yb)
        if i < 2:   # no update yet; the accumulators hold the sum so far
            for w, w0 in zip(model.get_weights(), start):
                np.testing.assert_array_equal(w, w0)
            for acc, *gs in zip(opt._accumulated_gradients, *grads):
                np.testing.assert_allclose(acc.numpy(), np.sum(gs, axis=0), rtol=1e-6)
    mean = [np.mean(gs, axis=0) for gs in zip(*grads)]
    for w, w0, g in zip(model.get_weights(), start, mean):
        np.testing.assert_allclose(w, w0 - 0.1 * g, rtol=1e-5, atol=1e-7)
    for acc in opt._accumulated_gradients:
        np.testing.assert_array_equal(acc.numpy(), 0.0)
    fn = model.train_function
    assert fn.experimental_get_tracing_count() == 1
    (concrete,) = fn._cache.values()
    assert [op.type for op in concrete.graph.get_operations()].count("If") == 1


def test_fused_and_per_variable_accumulation_are_bit_equal_and_eager_matches():
    results = []
    for fused, clipnorm, eager in ((True, None, False), (False, None, False),
                                   (True, 0.3, False), (False, 0.3, False), (True, None, True)):
        opt = tl.optim.Adam(0.01, fused=fused, clipnorm=clipnorm, gradient_accumulation_steps=2)
        model, _ = _fit(opt, 16, epochs=2, run_eagerly=eager)
        assert bool(opt._flat_groups) == fused
        results.append(model.get_weights())
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(results[2], results[3]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(results[0], results[4]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_accumulator_variables_come_first_among_the_slots_and_survive_a_config_round_trip():
    opt = tl.optim.Adam(0.01, gradient_accumulation_steps=5)
    v = tl.Variable([1.0, 2.0])
    opt.build([v])
    names = [x.name.split(":")[0] for x in opt.variables]
    assert names == ["iteration", "learning_rate", "Variable_gradient_accumulator",
                     "Variable_momentum", "Variable_velocity"]
    again = tl.optim.Adam.from_config(opt.get_config())
    assert again.gradient_accumulation_steps == 5
    with pytest.raises(ValueError, match="integer >= 2"):
        tl.optim.Adam(gradient_accumulation_steps=1)
