"""`keras.preprocessing.image` (trainlib/image_generator.py): affine warps against exact
expectations (integer shifts are rolls with the fill mode's border, 90-degree turns are
rot90), the random parameters' ranges, standardization, `flow` batches and splits, and
`flow_from_directory` over a folder of PNGs in each class_mode.
(`tests/keras_compare/test_keras2_compat.py` compares the warps with tf.keras 2's scipy ones.)
"""
import numpy as np
import pytest

from trainlib.image_generator import (DirectoryIterator, ImageDataGenerator, NumpyArrayIterator,
                                      apply_affine_transform, array_to_img, img_to_array,
                                      load_img, save_img)

IMG = np.arange(5 * 6 * 2, dtype=np.float64).reshape(5, 6, 2)
AXES = dict(row_axis=0, col_axis=1, channel_axis=2)


def test_identity_and_quarter_turns():
    assert apply_affine_transform(IMG, **AXES) is IMG
    square = np.random.default_rng(0).normal(size=(7, 7, 3))
    out = apply_affine_transform(square, theta=90, **AXES)
    turned = np.rot90(square, k=1, axes=(0, 1))
    assert np.allclose(out, turned, atol=1e-9) or np.allclose(out, np.rot90(square, -1, (0, 1)),
                                                              atol=1e-9)


@pytest.mark.parametrize("fill_mode,border", [("nearest", "edge"), ("reflect", "symmetric"),
                                              ("constant", "constant")])
def test_integer_shifts_are_rolls_with_the_border(fill_mode, border):
    # tf.keras 2 applies tx along the columns and ty along the rows of a channels-last image
    out = apply_affine_transform(IMG, tx=2, ty=-1, fill_mode=fill_mode, cval=-7.0, **AXES)
    padded = np.pad(IMG, ((1, 1), (2, 2), (0, 0)), mode=border,
                    **({"constant_values": -7.0} if border == "constant" else {}))
    np.testing.assert_allclose(out, padded[0:5, 4:10], atol=1e-9)


def test_channels_first_matches_channels_last():
    x = np.random.default_rng(1).normal(size=(6, 8, 3))
    last = apply_affine_transform(x, theta=20, zx=0.9, shear=5, **AXES)
    first = apply_affine_transform(x.transpose(2, 0, 1), theta=20, zx=0.9, shear=5, row_axis=1,
                                   col_axis=2, channel_axis=0)
    np.testing.assert_allclose(first.transpose(1, 2, 0), last, atol=1e-9)


def test_bad_arguments():
    with pytest.raises(ValueError, match="fill_mode"):
        apply_affine_transform(IMG, theta=3, fill_mode="mirror", **AXES)
    with pytest.raises(ValueError, match="zca_whitening"):
        ImageDataGenerator(zca_whitening=True)
    with pytest.raises(ValueError, match="zoom_range"):
        ImageDataGenerator(zoom_range=[0.5, 1.0, 2.0])
    with pytest.raises(ValueError, match="rank 4"):
        ImageDataGenerator().flow(np.ones((3, 4, 4)))


def test_random_parameters_stay_in_their_ranges():
    gen = ImageDataGenerator(rotation_range=10, width_shift_range=0.2, height_shift_range=3,
                             shear_range=4, zoom_range=0.1, brightness_range=(0.5, 1.5),
                             channel_shift_range=5.0)
    np.random.seed(0)
    for _ in range(50):
        p = gen.get_random_transform((10, 20, 3))
        assert abs(p["theta"]) <= 10 and abs(p["shear"]) <= 4
        assert abs(p["ty"]) <= 0.2 * 20 and abs(p["tx"]) <= 3 and float(p["tx"]).is_integer()
        assert 0.9 <= p["zx"] <= 1.1 and 0.5 <= p["brightness"] <= 1.5
    assert gen.get_random_transform((4, 4, 3), seed=3) == gen.get_random_transform((4, 4, 3),
                                                                                  seed=3)


def test_flips_and_standardize():
    gen = ImageDataGenerator(horizontal_flip=True, vertical_flip=True, rescale=0.5,
                             samplewise_center=True)
    flipped = gen.apply_transform(IMG, {"flip_horizontal": True, "flip_vertical": True})
    np.testing.assert_array_equal(flipped, IMG[::-1, ::-1])
    std = gen.standardize(IMG.copy())
    np.testing.assert_allclose(std, IMG * 0.5 - (IMG * 0.5).mean(), atol=1e-9)


def test_featurewise_statistics_and_flow():
    x = np.random.default_rng(2).uniform(0, 255, (20, 4, 4, 3)).astype(np.float32)
    y = np.arange(20)
    gen = ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True,
                             rescale=1 / 255, validation_split=0.25)
    gen.fit(x)
    np.testing.assert_allclose(gen.mean.ravel(), (x / 255).mean(axis=(0, 1, 2)), rtol=1e-5)
    train = gen.flow(x, y, batch_size=8, subset="training", shuffle=False)
    val = gen.flow(x, y, batch_size=8, subset="validation", shuffle=False)
    assert isinstance(train, NumpyArrayIterator) and (train.n, val.n) == (15, 5)
    assert len(train) == 2 and train[1][0].shape == (7, 4, 4, 3)
    np.testing.assert_array_equal(val[0][1], y[:5])
    batch = np.concatenate([train[i][0] for i in range(len(train))])
    np.testing.assert_allclose(batch.mean(axis=(0, 1, 2)), 0, atol=0.15)
    np.testing.assert_allclose(batch.std(axis=(0, 1, 2)), 1, atol=0.15)
    # next() cycles through epochs forever, reshuffling
    it = gen.flow(x, y, batch_size=6, seed=1)
    seen = [next(it)[1] for _ in range(8)]
    assert sorted(np.concatenate(seen[:4]).tolist()) == list(range(20))
    weighted = gen.flow(x, y, sample_weight=np.ones(20), batch_size=4)
    assert len(weighted[0]) == 3


@pytest.fixture
def image_folder(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(3)
    for label in ("b_class", "a_class", "c_class"):
        (tmp_path / label).mkdir()
        for i in range(3):
            save_img(str(tmp_path / label / f"{i}.png"),
                     rng.integers(0, 255, (10, 12, 3)).astype(np.float32), scale=False)
    (tmp_path / "a_class" / "notes.txt").write_text("not an image")
    return tmp_path


@pytest.mark.parametrize("class_mode,label_shape", [("categorical", (4, 3)), ("sparse", (4,)),
                                                    ("binary", (4,)), ("input", (4, 8, 8, 1))])
def test_flow_from_directory(image_folder, class_mode, label_shape):
    gen = ImageDataGenerator(rescale=1 / 255, validation_split=1 / 3)
    it = gen.flow_from_directory(str(image_folder), target_size=(8, 8), color_mode="grayscale",
                                 class_mode=class_mode, batch_size=4, subset="training",
                                 shuffle=False)
    assert isinstance(it, DirectoryIterator)
    assert it.class_indices == {"a_class": 0, "b_class": 1, "c_class": 2}
    assert it.samples == 6 and it.classes.tolist() == [0, 0, 1, 1, 2, 2]
    x, y = it[0]
    assert x.shape == (4, 8, 8, 1) and x.max() <= 1.0 and y.shape == label_shape
    if class_mode == "categorical":
        np.testing.assert_array_equal(y.argmax(1), [0, 0, 1, 1])
    none = gen.flow_from_directory(str(image_folder), target_size=(8, 8), class_mode=None,
                                   subset="validation")
    assert none.samples == 3 and none[0].shape == (3, 8, 8, 3)


def test_image_file_helpers_round_trip(tmp_path):
    pytest.importorskip("PIL")
    pixels = np.random.default_rng(4).integers(0, 255, (5, 7, 3)).astype(np.float32)
    save_img(str(tmp_path / "a.png"), pixels, scale=False)
    back = img_to_array(load_img(str(tmp_path / "a.png")))
    np.testing.assert_array_equal(back, pixels)
    assert img_to_array(array_to_img(pixels), data_format="channels_first").shape == (3, 5, 7)
    assert img_to_array(load_img(str(tmp_path / "a.png"), "grayscale", (3, 4))).shape == (3, 4, 1)
