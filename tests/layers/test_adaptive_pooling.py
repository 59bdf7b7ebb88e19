"""AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D against a numpy reference of
Keras's bins (floor start, ceil end), finite differences in float64, channels_first, graph
mode, configs and errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl

from ._reference import check_layer_gradients

L = tl.keras.layers


def _reference(x, sizes, reduce):
    """Channels-last numpy adaptive pooling, one spatial axis at a time."""
    for axis, m in enumerate(sizes, start=1):
        n = x.shape[axis]
        bins = [reduce(np.take(x, range(i * n // m, -(-(i + 1) * n // m)), axis=axis),
                       axis=axis, keepdims=True) for i in range(m)]
        x = np.concatenate(bins, axis=axis)
    return x


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), min_size=1, max_size=3),
       st.sampled_from(["average", "max"]))
def test_adaptive_pooling_matches_numpy_bins(axes, mode):
    rank = len(axes)
    name = f"Adaptive{'Average' if mode == 'average' else 'Max'}Pooling{rank}D"
    x = np.random.default_rng(rank).normal(size=(2, *[n for n, _ in axes], 3))
    sizes = tuple(m for _, m in axes)
    layer = getattr(L, name)(sizes, dtype="float64")
    want = _reference(x, sizes, np.mean if mode == "average" else np.max)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls, shape, size", [
    (L.AdaptiveAveragePooling1D, (2, 7, 3), 3), (L.AdaptiveMaxPooling1D, (2, 5, 2), (4,)),
    (L.AdaptiveAveragePooling2D, (2, 5, 7, 2), (2, 3)), (L.AdaptiveMaxPooling2D, (1, 6, 4, 2), 3),
    (L.AdaptiveAveragePooling3D, (1, 3, 4, 5, 2), 2),
    (L.AdaptiveMaxPooling3D, (1, 4, 3, 5, 1), (3, 2, 2))])
def test_adaptive_pooling_gradients_channels_first_and_graph(cls, shape, size):
    x = np.random.default_rng(3).normal(size=shape)
    layer = cls(size, dtype="float64")
    check_layer_gradients(lambda lay, xs: lay(xs[0]), layer, [x])
    first = cls(size, data_format="channels_first", dtype="float64")
    moved = np.moveaxis(x, -1, 1)
    np.testing.assert_allclose(np.moveaxis(first(moved).numpy(), 1, -1), layer(x).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(tl.function(layer)(x).numpy(), layer(x).numpy(), rtol=1e-12)
    again = cls.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()
    assert tuple(layer.compute_output_shape(shape)) == tuple(layer(x).shape)


def test_adaptive_pooling_in_a_model_and_errors():
    inputs = tl.keras.Input((None, 6, 2))
    with pytest.raises(ValueError, match="statically known"):
        L.AdaptiveAveragePooling2D(2)(inputs)
    inputs = tl.keras.Input((8, 6, 2))
    out = L.Flatten()(L.AdaptiveMaxPooling2D((2, 3))(inputs))
    assert tuple(out.shape) == (None, 12)
    model = tl.keras.Model(inputs, L.Dense(1)(out))
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).normal(size=(4, 8, 6, 2)).astype(np.float32)
    model.fit(x, np.ones((4, 1), np.float32), verbose=0)
    ints = L.AdaptiveAveragePooling1D(2)(np.arange(8).reshape(1, 4, 2))
    np.testing.assert_allclose(ints.numpy(), [[[1.0, 2.0], [5.0, 6.0]]])
    with pytest.raises(ValueError, match="must have length 1"):
        L.AdaptiveMaxPooling1D((2, 2))
    with pytest.raises(TypeError, match=r"\(height, width\) tuple"):
        L.AdaptiveMaxPooling2D((2, 2, 2))
    with pytest.raises(TypeError, match="depth, height, width"):
        L.AdaptiveAveragePooling3D("2")
    with pytest.raises(ValueError, match="expected ndim=4"):
        L.AdaptiveAveragePooling2D(2)(np.ones((2, 3, 4), np.float32))
