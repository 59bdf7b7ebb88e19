"""`keras.ops` on functional-API inputs: a call on KerasTensors records a node; the model runs
the same function on tensors (eagerly, in predict's graph, and under GradientTape)."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.keras import ops

X = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)


def test_ops_build_a_functional_model():
    x = tl.keras.Input(shape=(4,))
    h = tl.keras.layers.Dense(3, name="dense")(x)
    y = ops.concatenate([ops.nn.softmax(h), ops.square(x)], axis=-1)
    assert isinstance(y, tl.layers.base.KerasTensor)
    assert tuple(y.shape) == (None, 7)
    model = tl.keras.Model(x, y)
    w, b = (v.numpy() for v in model.get_layer("dense").weights)
    logits = X @ w + b
    e = np.exp(logits - logits.max(-1, keepdims=True))
    want = np.concatenate([e / e.sum(-1, keepdims=True), X ** 2], -1)
    np.testing.assert_allclose(model(X).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X, verbose=0), want, rtol=1e-5, atol=1e-6)


def test_tuple_outputs_and_literal_arguments():
    x = tl.keras.Input(shape=(6,))
    values, indices = ops.top_k(x, k=2)
    model = tl.keras.Model(x, [values, ops.cast(indices, "float32")])
    v, i = model(X[:, :4].repeat(2, axis=1)[:, :6])
    data = X[:, :4].repeat(2, axis=1)[:, :6]
    np.testing.assert_allclose(v.numpy(), -np.sort(-data, -1)[:, :2])
    assert i.dtype == tl.float32


def test_gradients_flow_through_recorded_ops():
    x = tl.keras.Input(shape=(4,))
    y = ops.mean(ops.nn.relu(tl.keras.layers.Dense(2)(x)), axis=-1)
    model = tl.keras.Model(x, y)
    with tl.GradientTape() as tape:
        loss = ops.sum(model(X))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)


def test_the_group_and_top_level_names_are_one_function():
    assert ops.mean is ops.numpy.mean
    assert ops.softmax is ops.nn.softmax
    assert ops.solve is ops.linalg.solve


def test_errors_reach_the_user():
    with pytest.raises(ValueError, match="equal division"):
        ops.split(np.zeros((5, 2)), 2)
    with pytest.raises(ValueError, match="mode"):
        ops.qr(np.eye(2), mode="bad")


def test_python_operators_on_keras_tensors_record_ops():
    x = tl.keras.Input(shape=(4,))
    y = (2.0 * x - 1.0) ** 2 / (abs(x) + 1.0) + x[:, :1] @ np.ones((1, 4), np.float32)
    model = tl.keras.Model(x, -y)
    want = -((2 * X - 1) ** 2 / (np.abs(X) + 1) + X[:, :1] @ np.ones((1, 4)))
    np.testing.assert_allclose(model(X).numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="iterated"):
        list(x)


def test_elastic_transform_follows_the_seed_rules():
    images = np.random.default_rng(1).uniform(0, 1, (1, 12, 10, 2)).astype(np.float32)
    a = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=4).numpy()
    b = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=4).numpy()
    c = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, images)
    assert a.min() >= images.min() - 1e-6 and a.max() <= images.max() + 1e-6  # bilinear, reflect


def test_queries_on_keras_tensors_answer_from_the_spec():
    x = tl.keras.Input(shape=(4, 3))
    assert ops.shape(x) == (None, 4, 3)
    assert ops.ndim(x) == 3 and ops.dtype(x) == "float32"
    y = ops.reshape(x, (-1, ops.shape(x)[1] * ops.shape(x)[2]))
    assert tuple(y.shape) == (None, 12)


def test_shape_inside_a_function_with_unknown_dims():
    @tl.function(input_signature=[tl.TensorSpec([None, 3], tl.float32)])
    def flat(x):
        n, m = ops.shape(x)
        assert m == 3 and tl.is_tensor(n)  # unknown dims are scalar tensors, as Keras on TF
        return ops.reshape(x, (n * m,))

    assert tuple(flat(np.ones((5, 3), np.float32)).shape) == (15,)
