"""Keras 3 vs trainlib: get_file's cache layout (each finds the other's files), the dataset
loaders' outputs on the same files (served on 127.0.0.1; Keras's origins are redirected
there), timeseries windows, image_dataset_from_directory's order, labels and pixels, and
split_dataset's split."""
import importlib
import os

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

from trainlib.datasets import _common  # noqa: E402
from trainlib.keras import datasets, utils  # noqa: E402
from tests.datasets.fake_files import sha256, write_all  # noqa: E402
from tests.http_server import serve  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

KERAS_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


@pytest.fixture
def served(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    write_all(root)
    with serve(root) as (url, requests):
        yield root, url, requests, tmp_path


def test_each_finds_the_others_cached_file(served):
    root, url, requests, tmp_path = served
    (root / "a.csv").write_text("1,2")
    (root / "b.csv").write_text("3,4")
    cache = str(tmp_path / "cache")
    ours = utils.get_file(origin=url + "a.csv", cache_dir=cache, file_hash=sha256(root / "a.csv"))
    theirs = keras.utils.get_file(origin=url + "a.csv", cache_dir=cache,
                                  file_hash=sha256(root / "a.csv"))
    assert ours == theirs and len(requests) == 1
    theirs = keras.utils.get_file("b", origin=url + "b.csv", cache_dir=cache, cache_subdir="x")
    assert utils.get_file("b", origin=url + "b.csv", cache_dir=cache, cache_subdir="x") == theirs
    assert len(requests) == 2


@pytest.mark.parametrize("name, call", [
    ("mnist", lambda d: d.mnist.load_data()),
    ("fashion_mnist", lambda d: d.fashion_mnist.load_data()),
    ("boston_housing", lambda d: d.boston_housing.load_data(test_split=0.3, seed=5)),
    ("california_housing", lambda d: d.california_housing.load_data(test_split=0.3, seed=5)),
    ("california_housing_small", lambda d: d.california_housing.load_data("small")),
    ("imdb", lambda d: d.imdb.load_data(num_words=25, skip_top=3, maxlen=9, oov_char=None)),
    ("imdb_defaults", lambda d: d.imdb.load_data()),
    ("reuters", lambda d: d.reuters.load_data(num_words=30, start_char=None, test_split=0.4)),
    ("cifar100", lambda d: d.cifar100.load_data("coarse")),
])
def test_loaders_equal_keras_on_the_same_files(served, monkeypatch, name, call):
    root, url, _, tmp_path = served
    monkeypatch.setattr(_common, "ORIGIN_FOLDER", url)
    for module, fname in (("mnist", "mnist.npz"), ("imdb", "imdb.npz"),
                          ("reuters", "reuters.npz"), ("boston_housing", "boston_housing.npz"),
                          ("california_housing", "california_housing.npz")):
        monkeypatch.setattr(importlib.import_module(f"trainlib.datasets.{module}"), "_FILE_HASH",
                            sha256(root / fname))
    cifar = importlib.import_module("trainlib.datasets.cifar100")
    monkeypatch.setattr(cifar, "_ORIGIN", url + "cifar-100-python.tar.gz")
    monkeypatch.setattr(cifar, "_FILE_HASH", sha256(root / "cifar-100-python.tar.gz"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "ours"))
    ours = call(datasets)

    keras_get_file = keras.utils.get_file

    def redirected(fname=None, origin=None, file_hash=None, **kwargs):
        origin = origin.replace(KERAS_FOLDER, url).replace("https://www.cs.toronto.edu/~kriz/",
                                                           url)
        local = root / origin[len(url):]
        return keras_get_file(fname, origin=origin, file_hash=sha256(local) if file_hash else None,
                              cache_dir=str(tmp_path / "theirs"), **kwargs)
    module = importlib.import_module(
        f"keras.src.datasets.{name.replace('_defaults', '').replace('_small', '')}")
    monkeypatch.setattr(module, "get_file", redirected)
    theirs = call(keras.datasets)
    for a, b in zip([v for part in ours for v in part], [v for part in theirs for v in part]):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == object:
            assert [list(s) for s in a] == [list(s) for s in b]
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs", [dict(sequence_length=4), dict(sequence_length=3,
                                    sequence_stride=2, sampling_rate=2, start_index=2,
                                    end_index=25, batch_size=4)])
def test_timeseries_equal_keras(kwargs):
    data = np.arange(60, dtype=np.float32).reshape(30, 2)
    targets = np.arange(30) * 3
    ours = list(utils.timeseries_dataset_from_array(data, targets, **kwargs).as_numpy_iterator())
    theirs = list(keras.utils.timeseries_dataset_from_array(data, targets, **kwargs)
                  .as_numpy_iterator())
    assert len(ours) == len(theirs)
    for (x, y), (kx, ky) in zip(ours, theirs):
        np.testing.assert_array_equal(x, kx)
        np.testing.assert_array_equal(y, ky)


def test_split_dataset_equal_keras():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    for kwargs in (dict(left_size=0.7), dict(right_size=3, shuffle=True, seed=11)):
        ours = utils.split_dataset((x, y), **kwargs)
        theirs = keras.utils.split_dataset((x, y), **kwargs)
        for o, t in zip(ours, theirs):
            for (a, b), (ka, kb) in zip(o.as_numpy_iterator(), t.as_numpy_iterator()):
                np.testing.assert_array_equal(a, ka)
                np.testing.assert_array_equal(b, kb)


def test_image_dataset_equal_keras(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(1)
    for cls in ("b", "a", "c"):
        os.makedirs(tmp_path / cls / "nested")
        for i in range(3):
            size = (int(rng.integers(5, 12)), int(rng.integers(5, 12)), 3)
            where = tmp_path / cls / ("nested" if i == 2 else "") / f"{i}.png"
            Image.fromarray(rng.integers(0, 256, size=size, dtype=np.uint8)).save(where)
    for kwargs in (dict(shuffle=False), dict(shuffle=False, interpolation="nearest",
                                             label_mode="categorical"),
                   dict(shuffle=False, crop_to_aspect_ratio=True, color_mode="rgba"),
                   dict(shuffle=False, pad_to_aspect_ratio=True, label_mode="binary",
                        class_names=["a", "c"])):
        ours = utils.image_dataset_from_directory(tmp_path, image_size=(7, 9), batch_size=4,
                                                  verbose=False, **kwargs)
        theirs = keras.utils.image_dataset_from_directory(tmp_path, image_size=(7, 9),
                                                          batch_size=4, verbose=False, **kwargs)
        assert ours.class_names == theirs.class_names and ours.file_paths == theirs.file_paths
        for (x, y), (kx, ky) in zip(ours.as_numpy_iterator(), theirs.as_numpy_iterator()):
            np.testing.assert_allclose(x, kx, rtol=1e-5, atol=1e-3)
            np.testing.assert_array_equal(y, ky)
    for subset in ("training", "validation"):
        kwargs = dict(seed=3, validation_split=0.4, subset=subset, verbose=False)
        assert (utils.image_dataset_from_directory(tmp_path, **kwargs).file_paths ==
                keras.utils.image_dataset_from_directory(tmp_path, **kwargs).file_paths)


def test_text_dataset_split_equal_keras(tmp_path):
    for label in ("neg", "pos", "mixed"):
        os.makedirs(tmp_path / label / "more")
        for i in range(4):
            where = tmp_path / label / ("more" if i == 3 else "") / f"{i}.txt"
            where.write_text(f"{label} review number {i}")
    kwargs = dict(seed=4, validation_split=0.3, subset="both", verbose=False, max_length=12,
                  label_mode="categorical", batch_size=3)
    ours = utils.text_dataset_from_directory(tmp_path, **kwargs)
    theirs = keras.utils.text_dataset_from_directory(str(tmp_path), **kwargs)
    assert ours[0].class_names == theirs[0].class_names
    # the validation part is not shuffled again: its order is Keras's
    got = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ours[1]]
    want = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in theirs[1]]
    assert got == want
    train = sorted(t for x, _ in ours[0] for t in x.numpy().tolist())
    assert train == sorted(t for x, _ in theirs[0] for t in x.numpy().tolist())
