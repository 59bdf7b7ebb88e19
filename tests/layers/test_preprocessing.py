"""Preprocessing layers against numpy formulas: Normalization (adapt on arrays and Datasets,
invert), Rescaling, CenterCrop, the random image layers (training only, seeded, fresh draws in a
traced step, usable in Dataset.map), CategoryEncoding, Discretization, IntegerLookup."""
import numpy as np
import pytest

import trainlib as tl

from ._reference import check_layer_gradients

RNG = np.random.default_rng(4)


def test_normalization_adapt_array_dataset_and_invert():
    data = RNG.normal(size=(50, 3)).astype(np.float32) * [1.0, 2.0, 3.0] + [0.0, 1.0, -2.0]
    layer = tl.layers.Normalization()
    layer.adapt(data)
    want = (data - data.mean(0)) / data.std(0)
    np.testing.assert_allclose(layer(data).numpy(), want, rtol=1e-4, atol=1e-5)
    streamed = tl.layers.Normalization()
    streamed.adapt(tl.data.Dataset.from_tensor_slices(data).batch(8))
    np.testing.assert_allclose(streamed.get_weights()[0], data.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(streamed.get_weights()[1], data.var(0), rtol=1e-5)
    back = tl.layers.Normalization(mean=data.mean(0), variance=data.var(0), invert=True)
    np.testing.assert_allclose(back(want).numpy(), data, rtol=1e-4, atol=1e-4)
    whole = tl.layers.Normalization(axis=None, mean=2.0, variance=4.0, dtype="float64")
    np.testing.assert_allclose(whole(np.array([[4.0, 0.0]])).numpy(), [[1.0, -1.0]])
    check_layer_gradients(lambda lay, xs: lay(xs[0]), whole, [RNG.normal(size=(2, 3))])
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        tl.layers.Normalization(mean=1.0)
    config = layer.get_config()
    assert tl.layers.Normalization.from_config(config).get_config() == config


def test_rescaling_and_center_crop():
    x = RNG.integers(0, 256, size=(2, 6, 7, 3)).astype(np.uint8)
    out = tl.layers.Rescaling(1 / 127.5, offset=-1)(x)
    assert out.dtype == tl.float32
    np.testing.assert_allclose(out.numpy(), x / 127.5 - 1, rtol=1e-6, atol=1e-6)
    crop = tl.layers.CenterCrop(4, 3)(x.astype(np.float32))
    np.testing.assert_array_equal(crop.numpy(), x[:, 1:5, 2:5])
    first = tl.layers.CenterCrop(2, 2, data_format="channels_first")(np.ones((1, 3, 4, 4)))
    assert first.shape == (1, 3, 2, 2)
    # smaller than the crop: the aspect-ratio window (all 6 rows, 6 of 7 columns), resized
    up = tl.layers.CenterCrop(12, 12)(x.astype(np.float32)).numpy()
    np.testing.assert_allclose(up, tl.image.resize(x[:, :, 0:6].astype(np.float32),
                                                   [12, 12]).numpy(), rtol=1e-6)
    check_layer_gradients(lambda lay, xs: lay(xs[0]), tl.layers.Rescaling(0.5, dtype="float64"),
                          [RNG.normal(size=(2, 3))])


def _images(n=8):
    return (RNG.random((n, 5, 6, 3)) * 255).astype(np.float32)


def test_random_flip_training_only_and_per_image():
    x = _images()
    flip = tl.layers.RandomFlip("horizontal", seed=3)
    np.testing.assert_array_equal(flip(x, training=False).numpy(), x)
    y = flip(x, training=True).numpy()
    flipped = [np.array_equal(y[i], x[i, :, ::-1]) for i in range(len(x))]
    kept = [np.array_equal(y[i], x[i]) for i in range(len(x))]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    both = tl.layers.RandomFlip(seed=1)(x[0], training=True).numpy()
    assert any(np.array_equal(both, v) for v in
               (x[0], x[0, ::-1], x[0, :, ::-1], x[0, ::-1, ::-1]))
    with pytest.raises(ValueError, match="unknown mode"):
        tl.layers.RandomFlip("diagonal")


def test_random_brightness_and_contrast_ranges():
    x = _images(16)
    bright = tl.layers.RandomBrightness((0.1, 0.2), seed=2)
    np.testing.assert_array_equal(bright(x, training=False).numpy(), x)
    y = bright(x, training=True).numpy()
    delta = (y - x)[np.broadcast_to((x < 200), x.shape)]
    assert delta.min() >= 0.1 * 255 - 1e-3 and delta.max() <= 0.2 * 255 + 1e-3
    assert y.max() <= 255
    contrast = tl.layers.RandomContrast(0.5, value_range=(0, 1000), seed=2)
    y = contrast(x, training=True).numpy()
    mean = x.mean(axis=(1, 2), keepdims=True)
    factor = ((y - mean) / (x - mean)).reshape(16, -1)
    unclipped = ((y > 0) & (np.abs(x - mean) > 1)).reshape(16, -1)   # not clipped at 0
    per_image = np.array([np.median(f[u]) for f, u in zip(factor, unclipped)])
    np.testing.assert_allclose(np.where(unclipped, factor, per_image[:, None]),
                               np.broadcast_to(per_image[:, None], factor.shape), rtol=1e-3)
    assert (per_image >= 1.0 - 1e-4).all() and (per_image <= 1.5 + 1e-4).all()
    assert y.min() >= 0.0   # clipped to value_range
    assert bright.get_config()["factor"] == (0.1, 0.2)
    assert tl.layers.RandomContrast(0.2).factor == (0, 0.2)
    with pytest.raises(ValueError, match="factor"):
        tl.layers.RandomContrast(1.5)


def test_random_layers_in_a_train_step_and_dataset_map():
    x = _images(4)
    model = tl.Sequential([tl.layers.Input((5, 6, 3)), tl.layers.RandomFlip(seed=1),
                           tl.layers.RandomBrightness(0.3, seed=2),
                           tl.layers.RandomContrast(0.3, seed=3), tl.layers.Rescaling(1 / 255.0)])
    np.testing.assert_allclose(model.predict(x, verbose=0), x / 255.0, rtol=1e-6)
    step = tl.function(lambda t: model(t, training=True))
    a, b = step(x).numpy(), step(x).numpy()
    assert not np.allclose(a, b), "a traced step draws fresh values on each call"
    aug = tl.layers.RandomBrightness(0.5, seed=4)
    mapped = [e.numpy() for e in tl.data.Dataset.from_tensor_slices(x).batch(2).map(aug)]
    assert not np.allclose(np.concatenate(mapped), x), "Dataset.map augments (training default)"
    norm = tl.layers.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 4.0, 4.0])
    out = next(iter(tl.data.Dataset.from_tensor_slices(x).batch(4).map(norm))).numpy()
    np.testing.assert_allclose(out, (x - [1, 2, 3]) / 2, rtol=1e-5)


def test_category_encoding_and_discretization():
    ids = np.array([[0, 1, 1], [3, 3, 3]])
    np.testing.assert_array_equal(tl.layers.CategoryEncoding(4, "count")(ids).numpy(),
                                  [[1, 2, 0, 0], [0, 0, 0, 3]])
    np.testing.assert_array_equal(tl.layers.CategoryEncoding(4)(ids).numpy(),
                                  [[1, 1, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(tl.layers.CategoryEncoding(4, "one_hot")(np.array([2, 0])).numpy(),
                                  np.eye(4)[[2, 0]])
    with pytest.raises(ValueError, match="output_mode"):
        tl.layers.CategoryEncoding(3, "tf_idf")
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    bounds = [-0.5, 0.0, 1.0]
    disc = tl.layers.Discretization(bounds)
    np.testing.assert_array_equal(disc(x).numpy(), np.digitize(x, bounds))
    assert tl.layers.Discretization.from_config(disc.get_config()).bin_boundaries == bounds


def test_integer_lookup_vocabulary_adapt_mask_and_invert():
    layer = tl.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
    np.testing.assert_array_equal(layer(np.array([[12, 1138, 42], [42, 1000, 36]])).numpy(),
                                  [[1, 3, 4], [4, 0, 2]])
    adapted = tl.layers.IntegerLookup(num_oov_indices=2)
    adapted.adapt(tl.data.Dataset.from_tensor_slices(np.array([5, 9, 3, 9, 5, 1])).batch(4))
    assert adapted.get_vocabulary() == [-1, -1, 9, 5, 3, 1]
    np.testing.assert_array_equal(adapted(np.array([5, 100, 101])).numpy(), [3, 0, 1])
    masked = tl.layers.IntegerLookup(vocabulary=[12, 36], mask_token=0)
    np.testing.assert_array_equal(masked(np.array([12, 0, 36, 5])).numpy(), [2, 0, 3, 1])
    inverse = tl.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], invert=True)
    np.testing.assert_array_equal(inverse(np.array([1, 0, 4, 2])).numpy(), [12, -1, 42, 36])
    counts = tl.layers.IntegerLookup(vocabulary=[7, 8], output_mode="count")
    np.testing.assert_array_equal(counts(np.array([[7, 7, 9]])).numpy(), [[1, 2, 0]])
    again = tl.layers.IntegerLookup.from_config(layer.get_config())
    assert again.get_vocabulary() == layer.get_vocabulary()
    with pytest.raises(ValueError, match="repeated"):
        tl.layers.IntegerLookup(vocabulary=[1, 1])


def test_discretization_adapt_finds_quantiles():
    x = RNG.normal(size=(4000,)).astype(np.float32)
    layer = tl.layers.Discretization(num_bins=4, epsilon=0.001)
    layer.adapt(x)
    np.testing.assert_allclose(layer.bin_boundaries, np.quantile(x, [0.25, 0.5, 0.75]), atol=0.02)
    counts = np.bincount(layer(x).numpy(), minlength=4)
    assert counts.min() > 900                       # four near-equal buckets
    batched = tl.layers.Discretization(num_bins=4, epsilon=0.001)
    batched.adapt(tl.data.Dataset.from_tensor_slices(x).batch(500))
    np.testing.assert_allclose(batched.bin_boundaries, layer.bin_boundaries, atol=0.05)
    again = tl.layers.Discretization.from_config(layer.get_config())
    assert again.bin_boundaries == layer.bin_boundaries and again.num_bins == 4
    with pytest.raises(ValueError, match="num_bins"):
        tl.layers.Discretization([0.0]).adapt(x)
    with pytest.raises(ValueError, match="adapt"):
        tl.layers.Discretization(num_bins=3)(x)


def test_hashing_buckets_are_farmhash_of_the_decimal_text():
    from trainlib.graph.ops.farmhash import fingerprint64
    ints = np.array([[0, 5, -12], [7, 123456789, 0]], np.int64)
    out = tl.layers.Hashing(num_bins=6)(ints).numpy()
    expected = [[fingerprint64(str(v).encode()) % 6 for v in row] for row in ints]
    np.testing.assert_array_equal(out, expected)
    masked = tl.layers.Hashing(num_bins=6, mask_value=0)(ints).numpy()
    np.testing.assert_array_equal(masked == 0, ints == 0)
    assert masked[ints != 0].min() >= 1 and masked.max() <= 5
    hot = tl.layers.Hashing(num_bins=6, output_mode="multi_hot")(ints).numpy()
    np.testing.assert_array_equal(hot, [np.isin(np.arange(6), row) for row in expected])
    traced = tl.function(lambda v: tl.layers.Hashing(num_bins=6)(v))(ints)
    np.testing.assert_array_equal(traced.numpy(), out)
    salted = tl.layers.Hashing(6, salt=1)(ints).numpy()   # the keyed (SipHash) hash
    assert salted.shape == out.shape and salted.max() <= 5
    with pytest.raises(ValueError, match="num_bins"):
        tl.layers.Hashing(0)
