"""Prints the generated source of the Dense 64-128-10 + Adam train step (batch 32).

Run: python bench/step_source.py
The model and step are built as bench/fit_step.py builds them (Sequential Input(64),
Dense(128, relu), Dense(10); sparse softmax cross-entropy from logits; Keras-3 Adam,
learning rate 1e-3), written out here with the public API only, so the same script runs
against older versions of the engine (docs/generated-source.md shows two listings).
"""
import numpy as np

import trainlib as tl

B, D, H, C = 32, 64, 128, 10


def main():
    rng = np.random.default_rng(0)
    model = tl.Sequential([tl.layers.Input((D,)), tl.layers.Dense(H, activation="relu"),
                           tl.layers.Dense(C)])
    opt = tl.optim.Adam(1e-3)
    opt.build(model.trainable_variables)
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tl.function
    def step(x, y):
        with tl.GradientTape() as tape:
            value = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(value, model.trainable_variables),
                                model.trainable_variables))
        return value

    x = tl.constant(rng.standard_normal((B, D)).astype(np.float32))
    y = tl.constant(rng.integers(0, C, size=B).astype(np.int32))
    step(x, y)  # trace, compile and run once
    print(step.get_concrete_function(x, y).python_source, end="")


if __name__ == "__main__":
    main()
