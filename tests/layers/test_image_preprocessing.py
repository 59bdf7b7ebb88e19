"""Resizing, RandomCrop, RandomRotation, RandomZoom, RandomTranslation against numpy
references (exact turns, integer shifts, fill modes), and their training switch,
seeding and use in tl.function and Dataset.map (no Keras needed)."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.layers.image_preprocessing import affine_transform

L = tl.keras.layers
RNG = np.random.default_rng(4)
SQUARE = RNG.uniform(size=(2, 6, 6, 2)).astype(np.float32)


def _shift_reference(image, dy, dx, mode):
    """Output pixel (y, x) reads input (y - dy, x - dx) with numpy's padding modes."""
    pad = {"reflect": "symmetric", "wrap": "wrap", "nearest": "edge"}[mode]
    h, w = image.shape[:2]
    padded = np.pad(image, [(h, h), (w, w), (0, 0)], mode=pad)
    return padded[h - dy:2 * h - dy, w - dx:2 * w - dx]


@pytest.mark.parametrize("mode", ["reflect", "wrap", "nearest"])
def test_integer_shifts_follow_the_fill_mode(mode):
    for dy, dx in ((2, -1), (-3, 4), (0, 3)):   # TF wraps shifts of len - 1 or more oddly
        t = np.tile(np.array([[1, 0, -dx, 0, 1, -dy, 0, 0]], np.float32), (2, 1))
        out = affine_transform(tl.constant(SQUARE), tl.constant(t), "bilinear", mode).numpy()
        for i in range(2):
            np.testing.assert_allclose(out[i], _shift_reference(SQUARE[i], dy, dx, mode),
                                       rtol=1e-6)


def test_constant_fill_and_a_quarter_turn():
    t = np.array([[1, 0, -2, 0, 1, 0, 0, 0]] * 2, np.float32)
    out = affine_transform(tl.constant(SQUARE), tl.constant(t), "nearest", "constant", 5.0)
    np.testing.assert_array_equal(out.numpy()[:, :, :2], 5.0)
    np.testing.assert_array_equal(out.numpy()[:, :, 2:], SQUARE[:, :, :4])
    rot = L.RandomRotation((0.25, 0.25), fill_mode="constant")
    turned = rot(SQUARE, training=True).numpy()
    np.testing.assert_allclose(turned, np.rot90(SQUARE, k=1, axes=(1, 2)), atol=1e-5)


def test_zoom_and_translation_formulas():
    zoom = L.RandomZoom((0.5, 0.5), fill_mode="constant", interpolation="nearest")
    out = zoom(SQUARE, training=True).numpy()      # sampling scale 1.5 about the centre
    y, x = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    sy, sx = 1.5 * y - 2.5 * 0.5, 1.5 * x - 2.5 * 0.5
    ry = np.sign(sy) * np.floor(np.abs(sy) + 0.5)
    rx = np.sign(sx) * np.floor(np.abs(sx) + 0.5)
    inside = (ry >= 0) & (ry <= 5) & (rx >= 0) & (rx <= 5)
    expected = np.where(inside[None, :, :, None],
                        SQUARE[:, np.clip(ry, 0, 5).astype(int), np.clip(rx, 0, 5).astype(int)],
                        0.0)
    np.testing.assert_allclose(out, expected)
    shift = L.RandomTranslation((0.5, 0.5), (-1 / 3, -1 / 3), fill_mode="wrap")
    np.testing.assert_allclose(shift(SQUARE, training=True).numpy(),
                               np.roll(SQUARE, (3, -2), axis=(1, 2)), atol=1e-5)


def test_random_layers_are_identity_at_inference_and_draw_per_image_when_training():
    x = np.repeat(SQUARE[:1], 4, axis=0)
    for layer in (L.RandomRotation(0.3, seed=1), L.RandomZoom(0.3, seed=1),
                  L.RandomTranslation(0.3, 0.3, seed=1)):
        np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
        out = layer(x, training=True).numpy()
        assert not np.allclose(out[0], out[1])        # one draw per image
        model = tl.keras.Sequential([tl.keras.Input((6, 6, 2)), layer])
        np.testing.assert_array_equal(model.predict(x, verbose=0), x)
        step = tl.function(lambda v: layer(v, training=True))
        assert not np.allclose(step(x).numpy(), step(x).numpy())   # fresh draws per call


def test_in_dataset_map_the_random_layers_augment():
    layer = L.RandomTranslation(0.4, 0.4, seed=3, fill_mode="constant")
    ds = tl.data.Dataset.from_tensor_slices(np.repeat(SQUARE[:1], 4, 0)).batch(4).map(layer)
    batch = next(iter(ds)).numpy()
    assert batch.shape == (4, 6, 6, 2) and not np.allclose(batch[0], SQUARE[0])


def test_resizing_and_random_crop():
    x = RNG.uniform(size=(2, 4, 6, 1)).astype(np.float32)
    up = L.Resizing(8, 12, interpolation="nearest")(x).numpy()
    np.testing.assert_array_equal(up, x.repeat(2, 1).repeat(2, 2))
    chw = L.Resizing(2, 3, data_format="channels_first")(np.transpose(x, (0, 3, 1, 2)))
    np.testing.assert_allclose(np.transpose(chw.numpy(), (0, 2, 3, 1)),
                               L.Resizing(2, 3)(x).numpy(), rtol=1e-6)
    crop = L.RandomCrop(3, 4, seed=2)
    out = crop(x, training=True).numpy()
    assert any(np.array_equal(out, x[:, i:i + 3, j:j + 4]) for i in range(2) for j in range(3))
    np.testing.assert_array_equal(crop(x, training=False).numpy(), x)
    with pytest.raises(ValueError, match="pad_to_aspect_ratio"):
        L.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="factor"):
        L.RandomZoom(1.5)


def test_traced_training_outputs_keep_static_shapes():
    spec = tl.TensorSpec([None, 6, 6, 2], tl.float32)
    for layer, shape in ((L.RandomCrop(4, 5, seed=1), [None, 4, 5, 2]),
                         (L.RandomRotation(0.2), [None, 6, 6, 2]),
                         (L.RandomZoom(0.2), [None, 6, 6, 2]),
                         (L.RandomTranslation(0.2, 0.1), [None, 6, 6, 2])):
        fn = tl.function(_training_call(layer), input_signature=[spec])
        assert fn.get_concrete_function().outputs[0].shape.as_list() == shape


def _training_call(layer):
    return lambda v: layer(v, training=True)
