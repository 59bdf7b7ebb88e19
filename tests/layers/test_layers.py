"""Layers against numpy: outputs, default initializers, weights order, training flag, build in a trace."""
import numpy as np
import pytest

import trainlib as tl
from trainlib import initializers, layers

CASES = []  # Keras-level module: no op types of its own


def test_dense_matches_numpy_and_initializers():
    d = layers.Dense(5, activation="relu")
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    out = d(x).numpy()
    k, b = d.get_weights()
    np.testing.assert_allclose(out, np.maximum(x @ k + b, 0), rtol=1e-6)
    assert np.all(b == 0) and np.abs(k).max() <= np.sqrt(6 / 9) + 1e-6
    assert d.count_params() == 25 and [v.name for v in d.weights] == ["kernel", "bias"]
    assert d(np.ones((2, 7, 4), np.float32)).shape == (2, 7, 5)


@pytest.mark.parametrize("signature", [(2, 7, 3, 4), (None, 7, 3, 4), (None, None, 3, 4)])
def test_dense_on_rank_4_inputs_matches_numpy_eager_and_traced_with_its_gradients(signature):
    d = layers.Dense(5)
    x = np.random.default_rng(2).normal(size=(2, 7, 3, 4)).astype(np.float32)
    d(x)
    k, b = d.get_weights()
    w = np.random.default_rng(3).normal(size=(2, 7, 3, 5)).astype(np.float32)

    def step(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            loss = tl.reduce_sum(d(x) * w)
        return (d(x), *tape.gradient(loss, [x, d.kernel, d.bias]))

    traced = tl.function(step, input_signature=[tl.TensorSpec(signature, tl.float32)])
    for out, dx, dk, db in (step(tl.constant(x)), traced(x)):
        np.testing.assert_allclose(out.numpy(), x @ k + b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dx.numpy(), w @ k.T, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dk.numpy(), np.einsum("abci,abcj->ij", x, w), rtol=1e-4,
                                   atol=1e-4)
        np.testing.assert_allclose(db.numpy(), w.sum((0, 1, 2)), rtol=1e-5, atol=1e-5)


def test_conv_pool_flatten_embedding_shapes_and_values():
    x = np.random.default_rng(1).normal(size=(2, 6, 6, 3)).astype(np.float32)
    conv = layers.Conv2D(4, 3, padding="same", kernel_initializer="ones")
    assert conv(x).shape == (2, 6, 6, 4)
    np.testing.assert_allclose(conv(x).numpy()[:, 2, 2, 0], x[:, 1:4, 1:4, :].sum((1, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(layers.MaxPooling2D()(x).numpy(),
                               x.reshape(2, 3, 2, 3, 2, 3).max((2, 4)), rtol=1e-6)
    np.testing.assert_allclose(layers.AveragePooling2D()(x).numpy(),
                               x.reshape(2, 3, 2, 3, 2, 3).mean((2, 4)), rtol=1e-5)
    assert layers.Flatten()(x).shape == (2, 108)
    emb = layers.Embedding(10, 3)
    idx = np.array([[1, 2], [9, 0]])
    np.testing.assert_array_equal(emb(idx).numpy(), emb.embeddings.numpy()[idx])


def test_normalization_layers():
    x = np.random.default_rng(2).normal(2.0, 3.0, size=(16, 4)).astype(np.float32)
    bn = layers.BatchNormalization()
    out = bn(x, training=True).numpy()
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.99 + 0.01 * x.var(0), rtol=1e-5)
    inference = bn(x, training=False).numpy()
    np.testing.assert_allclose(inference, (x - bn.moving_mean.numpy()) /
                               np.sqrt(bn.moving_variance.numpy() + 1e-3), rtol=1e-4)
    assert len(bn.trainable_weights) == 2 and len(bn.non_trainable_weights) == 2
    ln = layers.LayerNormalization()
    np.testing.assert_allclose(ln(x).numpy(), (x - x.mean(1, keepdims=True)) /
                               np.sqrt(x.var(1, keepdims=True) + 1e-3), rtol=1e-4, atol=1e-5)


def test_dropout_training_flag_and_activation_names():
    x = tl.ones((200, 50))
    drop = layers.Dropout(0.5)
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())
    y = drop(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    z = np.linspace(-3, 3, 7).astype(np.float32)
    for name, ref in [("relu", np.maximum(z, 0)), ("sigmoid", 1 / (1 + np.exp(-z))),
                      ("tanh", np.tanh(z)), ("linear", z)]:
        np.testing.assert_allclose(layers.Activation(name)(z).numpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Unknown activation"):
        layers.Dense(2, activation="relux")


def test_build_on_first_call_inside_a_trace():
    d = layers.Dense(3)

    @tl.function
    def f(x):
        return d(x)
    out = f(tl.ones((2, 4)))
    assert d.built and len(d.weights) == 2 and out.shape == (2, 3)
    f(tl.ones((5, 4)))
    np.testing.assert_allclose(f(tl.ones((2, 4))).numpy(), d(tl.ones((2, 4))).numpy(), rtol=1e-6)


def test_trainable_flag_and_nested_weight_order():
    class Block(layers.Layer):
        def __init__(self):
            super().__init__()
            self.first = layers.Dense(2)
            self.second = layers.Dense(1)

        def call(self, x):
            return self.second(self.first(x))
    block = Block()
    block(np.ones((1, 3), np.float32))
    assert [tuple(v.shape) for v in block.weights] == [(3, 2), (2,), (2, 1), (1,)]
    block.trainable = False
    assert block.trainable_weights == [] and len(block.non_trainable_weights) == 4


def test_initializers():
    tl.random.set_seed(0)
    for name, check in [("zeros", lambda a: np.all(a == 0)), ("ones", lambda a: np.all(a == 1)),
                        ("glorot_uniform", lambda a: np.abs(a).max() <= np.sqrt(6 / 300)),
                        ("he_normal", lambda a: abs(a.std() - np.sqrt(2 / 100)) < 0.03)]:
        assert check(initializers.get(name)((100, 200)).numpy()), name
    assert initializers.compute_fans((3, 3, 4, 8)) == (36, 72)
    with pytest.raises(ValueError, match="Unknown initializer"):
        initializers.get("glorot")


def test_functional_symbolic_shapes_and_errors():
    inp = layers.Input(shape=(8, 8, 1))
    h = layers.Conv2D(2, 3)(inp)
    assert tuple(h.shape) == (None, 6, 6, 2)
    assert tuple(layers.Flatten()(h).shape) == (None, 72)
    with pytest.raises(ValueError):
        layers.Input()


def test_built_layers_check_input_channels_at_call():
    import numpy as np
    import pytest
    from trainlib.layers.convolutional import Conv2D, Conv1D, DepthwiseConv2D
    from trainlib.layers.core import Dense
    for layer, built, bad in [(Conv2D(4, 3), (None, 8, 8, 4), (1, 8, 8, 2)),
                              (Conv1D(4, 3), (None, 8, 3), (1, 8, 2)),
                              (DepthwiseConv2D(3), (None, 8, 8, 3), (1, 8, 8, 2)),
                              (Dense(4), (None, 3), (1, 2))]:
        layer.build(built)
        with pytest.raises(ValueError, match=f'layer "{layer.name}".*expected axis -1'):
            layer(np.zeros(bad, "float32"))


@pytest.mark.parametrize("input_dim, output_dim", [(0, 4), (-5, 4), (10, 0)])
def test_embedding_refuses_non_positive_sizes(input_dim, output_dim):
    with pytest.raises(ValueError, match="should be positive"):
        tl.keras.layers.Embedding(input_dim, output_dim)


@pytest.mark.parametrize("cls", ["SimpleRNN", "LSTM", "GRU"])
def test_recurrent_layers_name_the_expected_rank(cls):
    layer = getattr(tl.keras.layers, cls)(4)
    with pytest.raises(ValueError, match=r"expected ndim=3.*found ndim=4"):
        layer(np.zeros((2, 3, 5, 6), np.float32))
    assert layer(np.zeros((2, 3, 5), np.float32)).shape == (2, 4)
