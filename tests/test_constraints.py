"""tl.constraints: Keras 3's projections, names and configs, and their application after
each optimizer update inside the compiled train step."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import constraints, keras

W = np.array([[3.0, -0.1], [4.0, 0.2]], np.float32)   # column norms 5 and ~0.224
EPS = 1e-7


def test_projections_match_keras_formulas():
    norms = np.sqrt((W ** 2).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(constraints.MaxNorm(2.0)(W).numpy(),
                               W * np.clip(norms, 0, 2.0) / (EPS + norms), rtol=1e-6)
    np.testing.assert_allclose(constraints.UnitNorm()(W).numpy(), W / (EPS + norms), rtol=1e-6)
    np.testing.assert_allclose(constraints.NonNeg()(W).numpy(), np.maximum(W, 0))
    desired = 0.5 * np.clip(norms, 1.0, 2.0) + 0.5 * norms
    np.testing.assert_allclose(constraints.MinMaxNorm(1.0, 2.0, rate=0.5)(W).numpy(),
                               W * desired / (EPS + norms), rtol=1e-6)
    rows = np.sqrt((W ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(constraints.UnitNorm(axis=1)(W).numpy(), W / (EPS + rows),
                               rtol=1e-6)


def test_names_and_config_round_trip():
    assert isinstance(constraints.get("non_neg"), constraints.NonNeg)
    assert isinstance(constraints.get("MaxNorm"), constraints.MaxNorm)
    assert constraints.get(None) is None
    with pytest.raises(ValueError, match="Could not interpret constraint"):
        constraints.get("positive")
    c = constraints.MinMaxNorm(0.5, 1.5, rate=0.7, axis=[0, 1])
    config = constraints.serialize(c)
    assert config["module"] == "keras.constraints" and config["class_name"] == "MinMaxNorm"
    again = constraints.deserialize(config)
    assert (again.min_value, again.max_value, again.rate, again.axis) == (0.5, 1.5, 0.7, [0, 1])


def test_constraints_apply_after_each_update_inside_the_train_graph():
    model = keras.Sequential([keras.Input((3,)),
                              keras.layers.Dense(4, kernel_constraint=keras.constraints.MaxNorm(0.3),
                                                 bias_constraint="non_neg")])
    model.compile(keras.optimizers.SGD(0.5), "mse")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 3)).astype(np.float32), rng.normal(size=(32, 4)).astype(np.float32)
    seen = []

    class Check(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            kernel, bias = self.model.get_weights()
            seen.append((np.sqrt((kernel ** 2).sum(axis=0)).max(), bias.min()))

    model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[Check()])
    assert len(seen) == 8
    assert all(norm <= 0.3 + 1e-5 and low >= 0.0 for norm, low in seen)
    ops = {op.type for concrete in model.train_function._concrete_functions()
           for op in concrete.graph.get_operations()}
    assert "Maximum" in ops                      # NonNeg's projection is part of the step


def test_optimizer_applies_a_variables_constraint():
    v = keras.Variable(np.array([1.0, -1.0], np.float32))
    v.constraint = constraints.NonNeg()
    tl.optim.SGD(1.0).apply_gradients([(tl.constant([0.5, 0.5]), v)])
    np.testing.assert_allclose(v.numpy(), [0.5, 0.0])
