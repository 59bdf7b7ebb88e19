"""Shared check of the layer-family tests: a float64 layer's input and weight gradients of
sum(layer(x) * w) equal central finite differences."""
import numpy as np

import trainlib as tl
from tests.graph.ops.harness import numeric_gradient


def check_layer_gradients(call, layer, inputs, rtol=1e-5, atol=1e-7):
    """`call(layer, tensors)` -> output; compares tape gradients w.r.t. each float input and
    each trainable weight with central differences (all float64)."""
    rng = np.random.default_rng(1)
    inputs = [np.array(a, dtype=np.float64) for a in inputs]
    out0 = call(layer, [tl.constant(a) for a in inputs])
    weight = rng.uniform(0.5, 1.5, size=tuple(out0.shape))
    # at least 1-d: numeric_gradient perturbs through a flat view
    weights = [np.atleast_1d(w.numpy().astype(np.float64)) for w in layer.trainable_weights]

    def scalar(arrays):
        xs, ws = arrays[:len(inputs)], arrays[len(inputs):]
        for var, value in zip(layer.trainable_weights, ws):
            var.assign(value.reshape(var.shape))
        return float(np.sum(call(layer, [tl.constant(a) for a in xs]).numpy() * weight))

    xs = [tl.constant(a) for a in inputs]
    with tl.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        total = tl.reduce_sum(call(layer, xs) * tl.constant(weight))
    grads = tape.gradient(total, xs + list(layer.trainable_weights))
    arrays = inputs + weights
    for i, g in enumerate(grads):
        want = numeric_gradient(scalar, arrays, i)
        np.testing.assert_allclose(np.asarray(g), want.reshape(np.shape(g)), rtol=rtol, atol=atol,
                                   err_msg=f"gradient {i}")
    scalar(arrays)   # leaves the weights as they were
