"""`Model.compile(remat=...)`: a Sequential model's layers in segments, recomputed one at a time
in the backward pass, each segment's gradients applied at once: the same training, a lower
planned peak."""
import numpy as np
import pytest

import trainlib as tl

RNG = np.random.default_rng(0)
X = RNG.standard_normal((48, 32)).astype(np.float32)
Y = RNG.integers(0, 3, 48).astype(np.int32)


def _model(regularized=False, depth=8):
    extra = dict(kernel_regularizer="l2", activity_regularizer="l1") if regularized else {}
    model = tl.Sequential([tl.layers.Input((32,))] +
                          [tl.layers.Dense(64, activation="tanh", **extra) for _ in range(depth)] +
                          [tl.layers.Dense(3)])
    model.set_weights([(RNG.standard_normal(w.shape) * 0.2).astype(np.float32)
                       for w in model.get_weights()])
    return model


@pytest.mark.parametrize("remat", [True, 2, 4], ids=["sqrt", "two_per_segment", "four"])
@pytest.mark.parametrize("regularized", [False, True], ids=["plain", "regularized"])
def test_remat_trains_bit_equal_to_the_plain_step(remat, regularized):
    base = _model(regularized)
    start = base.get_weights()
    runs = []
    for option in (False, remat):
        model = _model(regularized)
        model.set_weights(start)
        model.compile(optimizer=tl.optim.Adam(0.01), metrics=["accuracy"], remat=option,
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(X, Y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        runs.append((model.get_weights(), history.history, int(model.optimizer.iterations)))
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_array_equal(a, b)
    assert runs[0][1] == runs[1][1]
    assert runs[0][2] == runs[1][2] == 6


@pytest.mark.parametrize("make", [lambda: tl.optim.Nadam(0.01, use_ema=True),
                                  lambda: tl.optim.Adamax(0.01, use_ema=True,
                                                          ema_overwrite_frequency=2)],
                         ids=["nadam_ema", "adamax_ema_overwrite"])
def test_remat_with_step_wide_optimizer_state_is_bit_equal(make):
    # Nadam's momentum-cache product moves once per step and the moving averages follow the
    # whole step, not once per segment
    start = _model(depth=3).get_weights()
    runs = []
    for option in (False, 2):
        model = _model(depth=3)
        model.set_weights(start)
        model.compile(optimizer=make(), remat=option,
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False)
        runs.append([v.numpy() for v in model.weights + model.optimizer.variables])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_remat_lowers_the_planned_peak_of_the_train_step():
    # deep, with a batch large enough for the activations to outweigh the weights' gradients
    x = np.tile(X, (8, 1))
    y = np.tile(Y, 8)
    peaks = []
    for option in (False, True):
        model = _model(depth=15)
        model.compile(optimizer=tl.optim.SGD(0.1), remat=option,
                      loss=tl.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.train_on_batch(x, y)
        (concrete,) = model.train_function._cache.values()
        peaks.append(concrete._program.memory["peak_bytes"])
    assert peaks[1] <= 0.6 * peaks[0], peaks


def test_remat_refuses_what_it_cannot_do():
    inputs = tl.keras.Input((4,))
    functional = tl.keras.Model(inputs, tl.keras.layers.Dense(2)(inputs))
    with pytest.raises(ValueError, match="no Sequential"):
        functional.compile(optimizer="sgd", loss="mse", remat=True)
    model = _model()
    with pytest.raises(ValueError, match="global_clipnorm"):
        model.compile(optimizer=tl.optim.SGD(0.1, global_clipnorm=1.0), loss="mse", remat=True)
    with pytest.raises(ValueError, match="remat must be"):
        model.compile(optimizer="sgd", loss="mse", remat="yes")
