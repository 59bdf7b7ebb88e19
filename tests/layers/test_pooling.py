"""Global pooling layers against numpy, in Sequential models and through config round trips."""
import numpy as np
import pytest

import trainlib as tl


@pytest.mark.parametrize("cls,axes,ref", [
    (tl.layers.GlobalAveragePooling1D, (1,), np.mean),
    (tl.layers.GlobalMaxPooling1D, (1,), np.max),
    (tl.layers.GlobalAveragePooling2D, (1, 2), np.mean),
    (tl.layers.GlobalMaxPooling2D, (1, 2), np.max),
])
@pytest.mark.parametrize("keepdims", [False, True])
def test_global_pooling_matches_numpy(cls, axes, ref, keepdims):
    shape = (2, 5, 3) if len(axes) == 1 else (2, 4, 5, 3)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    layer = cls(keepdims=keepdims)
    np.testing.assert_allclose(layer(x).numpy(), ref(x, axis=axes, keepdims=keepdims), rtol=1e-6)
    clone = cls.from_config(layer.get_config())
    assert clone.keepdims == keepdims


def test_global_pooling_in_a_model_and_rank_error():
    model = tl.Sequential([tl.layers.Input((6, 4)), tl.layers.GlobalAveragePooling1D(),
                           tl.layers.Dense(2)])
    assert model(np.ones((3, 6, 4), np.float32)).shape == (3, 2)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tl.layers.GlobalMaxPooling2D()(np.ones((2, 3, 4), np.float32))


def test_keras_second_names_are_the_same_classes():
    from trainlib.keras import layers as L
    pairs = [("MaxPool2D", "MaxPooling2D"), ("AvgPool1D", "AveragePooling1D"),
             ("GlobalAvgPool3D", "GlobalAveragePooling3D"), ("GlobalMaxPool1D", "GlobalMaxPooling1D"),
             ("Convolution2D", "Conv2D"), ("Convolution3DTranspose", "Conv3DTranspose"),
             ("SeparableConvolution1D", "SeparableConv1D")]
    for alias, name in pairs:
        assert getattr(L, alias) is getattr(L, name) and alias in L.__all__
    assert L.MaxPool2D(2)(np.ones((1, 4, 4, 1), np.float32)).shape == (1, 2, 2, 1)
