"""Small models the saved-model tests save: a trained MLP (tl.Module) and AutoGraph control flow.

Only the tests import this module; the subprocess that loads the saved
models must not (that is what the tests check).
"""
import numpy as np

import trainlib as tl


class MLP(tl.Module):
    """4 -> 8 -> 3 classifier; `__call__` has an input_signature, `train_step` is traced on use."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.w1 = tl.Variable(rng.normal(size=(4, 8)).astype(np.float32) * 0.5, name="w1")
        self.b1 = tl.Variable(np.zeros(8, np.float32), name="b1")
        self.w2 = tl.Variable(rng.normal(size=(8, 3)).astype(np.float32) * 0.5, name="w2")
        self.b2 = tl.Variable(np.zeros(3, np.float32), name="b2")
        self.steps = tl.Variable(0, trainable=False, name="steps")

    @tl.function(input_signature=[tl.TensorSpec([None, 4], tl.float32, name="x")])
    def __call__(self, x):
        h = tl.nn.relu(tl.matmul(x, self.w1) + self.b1)
        return tl.matmul(h, self.w2) + self.b2

    @tl.function
    def train_step(self, x, y):
        with tl.GradientTape() as tape:
            logits = self(x)
            loss = tl.reduce_mean(
                tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, self.trainable_variables)
        for v, g in zip(self.trainable_variables, grads):
            v.assign_sub(0.1 * g)
        self.steps.assign_add(1)
        return {"loss": loss, "steps": self.steps.read_value()}


def data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = (np.arange(16) % 3).astype(np.int32)
    return x, y


def trained_mlp(steps=3):
    model = MLP()
    x, y = data()
    for _ in range(steps):
        model.train_step(x, y)
    return model


@tl.function
def collatz(n, limit):
    """Collatz steps of n (AutoGraph: while/if on tensors), and a tl.cond on the result."""
    steps = tl.constant(0)
    while n != 1 and steps < limit:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    parity = tl.cond(steps % 2 == 0, lambda: tl.constant(1.0), lambda: tl.constant(-1.0))
    total = tl.while_loop(lambda i, s: i < steps, lambda i, s: (i + 1, s + tl.cast(i, tl.float32)),
                          (tl.constant(0), tl.constant(0.0)))[1]
    return {"steps": steps, "parity": parity, "total": total}
