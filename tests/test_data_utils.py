"""timeseries_dataset_from_array, image_dataset_from_directory and split_dataset against
their definitions (Keras's own outputs are compared in tests/keras_compare)."""
import random
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib.keras import utils


def _batches(ds):
    return list(ds.as_numpy_iterator())


@given(n=st.integers(8, 40), length=st.integers(1, 5), stride=st.integers(1, 4),
       rate=st.integers(1, 3), start=st.integers(0, 3), batch=st.integers(1, 7))
def test_timeseries_windows_are_the_definition(n, length, stride, rate, start, batch):
    data = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    targets = np.arange(n) * 10
    ds = utils.timeseries_dataset_from_array(data, targets, length, sequence_stride=stride,
                                             sampling_rate=rate, batch_size=batch,
                                             start_index=start or None)
    got = _batches(ds)
    xs = np.concatenate([x for x, _ in got]) if got else np.zeros((0, length, 2))
    ys = np.concatenate([y for _, y in got]) if got else np.zeros(0)
    count = n - start - (length - 1) * rate
    positions = list(range(0, max(count, 0), stride))
    assert len(xs) == len(positions)
    for i, p in enumerate(positions):
        np.testing.assert_array_equal(xs[i], data[start + p + np.arange(length) * rate])
        assert ys[i] == targets[start + p]
    assert all(len(x) <= batch for x, _ in got)


def test_timeseries_shuffle_keeps_the_windows_and_checks_arguments():
    data = np.arange(30)
    plain = np.concatenate(_batches(utils.timeseries_dataset_from_array(data, None, 4)))
    mixed = np.concatenate(_batches(utils.timeseries_dataset_from_array(
        data, None, 4, shuffle=True, seed=3, batch_size=5)))
    assert sorted(map(tuple, mixed)) == sorted(map(tuple, plain))
    assert not np.array_equal(mixed, plain)
    with pytest.raises(ValueError, match="sampling_rate"):
        utils.timeseries_dataset_from_array(data, None, 4, sampling_rate=0)
    with pytest.raises(ValueError, match="end_index"):
        utils.timeseries_dataset_from_array(data, None, 4, start_index=5, end_index=3)


def test_split_dataset_sizes_and_order():
    x, y = np.arange(10), np.arange(10) * 2
    left, right = utils.split_dataset((x, y), left_size=0.7)
    assert [a.tolist() for a, _ in left.as_numpy_iterator()] == list(range(7))
    assert [b.tolist() for _, b in right.as_numpy_iterator()] == [14, 16, 18]
    left, right = utils.split_dataset(x, left_size=2, right_size=3)
    assert [int(a) for a in left.as_numpy_iterator()] == [0, 1]
    assert [int(a) for a in right.as_numpy_iterator()] == [7, 8, 9]
    expected = list(zip(x, y))
    random.seed(5)
    random.shuffle(expected)
    left, _ = utils.split_dataset((x, y), right_size=0.5, shuffle=True, seed=5)
    assert [int(a) for a, _ in left.as_numpy_iterator()] == [int(a) for a, _ in expected[:5]]


def test_split_dataset_of_a_batched_dataset_rebatches():
    ds = tl.data.Dataset.from_tensor_slices({"a": np.arange(10)}).batch(3)
    left, right = utils.split_dataset(ds, right_size=2)
    assert [b["a"].tolist() for b in left.as_numpy_iterator()] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert [b["a"].tolist() for b in right.as_numpy_iterator()] == [[8, 9]]


@pytest.mark.parametrize("kwargs, match", [({}, "At least one"), ({"left_size": 10}, "left_size"),
                                           ({"left_size": 0.6, "right_size": 0.6}, "greater"),
                                           ({"left_size": "1"}, "Type")])
def test_split_dataset_errors(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        utils.split_dataset(np.arange(10), **kwargs)


@pytest.fixture
def image_dir(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(0)
    pixels = {}
    for cls, count in (("cat", 3), ("dog", 4)):
        (tmp_path / cls).mkdir()
        for i in range(count):
            p = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
            Image.fromarray(p).save(tmp_path / cls / f"{i}.png")
            pixels[f"{cls}/{i}.png"] = p
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    return tmp_path, pixels


def test_image_dataset_order_labels_and_pixels(image_dir):
    root, pixels = image_dir
    ds = utils.image_dataset_from_directory(root, image_size=(6, 8), shuffle=False, batch_size=4,
                                            verbose=False)
    assert ds.class_names == ["cat", "dog"]
    names = [p[len(str(root)) + 1:] for p in ds.file_paths]
    assert names == ["cat/0.png", "cat/1.png", "cat/2.png", "dog/0.png", "dog/1.png",
                     "dog/2.png", "dog/3.png"]
    batches = _batches(ds)
    images = np.concatenate([x for x, _ in batches])
    labels = np.concatenate([y for _, y in batches])
    assert images.dtype == np.float32 and images.shape == (7, 6, 8, 3)
    assert labels.tolist() == [0, 0, 0, 1, 1, 1, 1]
    for image, name in zip(images, names):  # same size: the resize changes nothing
        np.testing.assert_array_equal(image, pixels[name])


def test_image_dataset_resize_modes_and_splits(image_dir):
    root, _ = image_dir
    ds = utils.image_dataset_from_directory(root, image_size=(3, 4), label_mode="categorical",
                                            color_mode="grayscale", batch_size=None,
                                            shuffle=False, verbose=False)
    x, y = next(iter(ds))
    assert x.shape == (3, 4, 1) and y.numpy().tolist() == [1.0, 0.0]
    train, val = utils.image_dataset_from_directory(root, image_size=(4, 4), seed=7,
                                                    validation_split=0.3, subset="both",
                                                    verbose=False)
    assert len(val.file_paths) == 2 and len(train.file_paths) == 5
    assert not set(train.file_paths) & set(val.file_paths)
    order = sorted(train.file_paths + val.file_paths)
    shuffled = list(order)
    np.random.RandomState(7).shuffle(shuffled)
    assert train.file_paths + val.file_paths == shuffled
    binary = utils.image_dataset_from_directory(root, image_size=(4, 4), label_mode="binary",
                                                crop_to_aspect_ratio=True, shuffle=False,
                                                verbose=False)
    _, yb = next(iter(binary))
    assert yb.shape == (7, 1) and yb.dtype == tl.float32
    with pytest.raises(ValueError, match="seed"):
        utils.image_dataset_from_directory(root, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="color_mode"):
        utils.image_dataset_from_directory(root, color_mode="cmyk")


def test_image_dataset_without_pillow_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install pillow"):
        utils.image_dataset_from_directory(tmp_path)


def test_format_argument_as_keras(tmp_path):
    assert len(list(utils.timeseries_dataset_from_array(np.arange(6), None, 2,
                                                        format="tf"))) == 1
    with pytest.raises(NotImplementedError, match="grain"):
        utils.text_dataset_from_directory(tmp_path, format="grain")
    with pytest.raises(ValueError, match="format"):
        utils.image_dataset_from_directory(tmp_path, format="torch")
