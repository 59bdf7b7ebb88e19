"""A functional model with named (dict) outputs, per-output losses and metrics survives .keras."""
import numpy as np

import trainlib as tl


def test_dict_outputs_losses_and_metrics_round_trip(tmp_path):
    inp = tl.layers.Input((4,), name="x")
    h = tl.layers.Dense(8, activation="relu")(inp)
    model = tl.Model(inp, {"cls": tl.layers.Dense(3, name="cls")(h),
                           "reg": tl.layers.Dense(1, name="reg")(h)})
    model.compile("adam", loss={"cls": tl.losses.SparseCategoricalCrossentropy(from_logits=True),
                                "reg": "mse"},
                  metrics={"cls": ["accuracy"], "reg": ["mae"]}, loss_weights={"cls": 1.0, "reg": 0.5})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = {"cls": rng.integers(0, 3, 32).astype(np.int32), "reg": np.ones((32, 1), np.float32)}
    model.fit(x, y, epochs=2, verbose=0)
    path = tmp_path / "multi.keras"
    model.save(path)
    restored = tl.saving.load_model(path)
    assert sorted(restored.predict(x, verbose=0)) == ["cls", "reg"]
    assert restored.evaluate(x, y, verbose=0, return_dict=True) == \
        model.evaluate(x, y, verbose=0, return_dict=True)
    model.fit(x, y, epochs=1, verbose=0, shuffle=False)
    restored.fit(x, y, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), restored.get_weights()):
        np.testing.assert_array_equal(a, b)
