"""keras.datasets loaders: each reads Keras's file format, fetched through get_file from a
local server (Keras's origins and hashes swapped for the server's), cached, and refuses
pickled code."""
import importlib
import os
import pickle

import numpy as np
import pytest

from trainlib.datasets import _common
from trainlib.keras import datasets
from tests.datasets.fake_files import sha256, write_all
from tests.http_server import serve


@pytest.fixture
def served(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    write_all(root)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    with serve(root) as (url, requests):
        monkeypatch.setattr(_common, "ORIGIN_FOLDER", url)
        for name, fname in (("mnist", "mnist.npz"), ("imdb", "imdb.npz"),
                            ("reuters", "reuters.npz"), ("boston_housing", "boston_housing.npz"),
                            ("california_housing", "california_housing.npz")):
            monkeypatch.setattr(importlib.import_module(f"trainlib.datasets.{name}"),
                                "_FILE_HASH", sha256(root / fname))
        for name in ("cifar10", "cifar100"):
            module = importlib.import_module(f"trainlib.datasets.{name}")
            fname = "cifar-10-python.tar.gz" if name == "cifar10" else "cifar-100-python.tar.gz"
            monkeypatch.setattr(module, "_ORIGIN", url + fname)
            monkeypatch.setattr(module, "_FILE_HASH", sha256(root / fname))
        yield root, requests, tmp_path / "home" / "datasets"


def test_mnist_reads_the_npz_and_then_the_cache(served):
    root, requests, cache = served
    (x_train, y_train), (x_test, y_test) = datasets.mnist.load_data()
    with np.load(root / "mnist.npz") as f:
        np.testing.assert_array_equal(x_train, f["x_train"])
        np.testing.assert_array_equal(y_test, f["y_test"])
    assert x_train.dtype == np.uint8 and x_test.shape == (4, 28, 28)
    assert (cache / "mnist.npz").exists()
    datasets.mnist.load_data()
    assert len(requests) == 1


def test_fashion_mnist(served):
    _, _, cache = served
    (x_train, y_train), (x_test, y_test) = datasets.fashion_mnist.load_data()
    assert x_train.shape == (5, 28, 28) and y_train.shape == (5,) and x_test.shape == (3, 28, 28)
    assert (cache / "fashion-mnist" / "t10k-images-idx3-ubyte.gz").exists()


def test_cifar10_extracts_and_stacks_channels_last(served):
    root, _, cache = served
    (x_train, y_train), (x_test, y_test) = datasets.cifar10.load_data()
    assert x_train.shape == (20, 32, 32, 3) and y_train.shape == (20, 1)
    assert x_test.shape == (4, 32, 32, 3) and y_test.dtype == np.uint8
    with open(cache / "cifar-10-batches-py-target" / "cifar-10-batches-py" / "data_batch_2",
              "rb") as f:
        batch = pickle.load(f, encoding="bytes")
    expected = batch[b"data"].reshape(4, 3, 32, 32).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(x_train[4:8], expected)
    np.testing.assert_array_equal(y_train[4:8, 0], batch[b"labels"])


def test_cifar100_label_modes(served):
    (_, fine), _ = datasets.cifar100.load_data()
    (_, coarse), (x_test, _) = datasets.cifar100.load_data("coarse")
    assert fine.shape == coarse.shape == (7, 1) and coarse.max() < 20 and x_test.shape[0] == 3
    with pytest.raises(ValueError, match="label_mode"):
        datasets.cifar100.load_data("medium")


def test_boston_housing_split_as_keras(served):
    root, _, _ = served
    (x_train, y_train), (x_test, y_test) = datasets.boston_housing.load_data(test_split=0.25)
    with np.load(root / "boston_housing.npz") as f:
        order = np.arange(20)
        np.random.RandomState(113).shuffle(order)
        np.testing.assert_array_equal(x_train, f["x"][order[:15]])
        np.testing.assert_array_equal(y_test, f["y"][order[15:]])
    with pytest.raises(ValueError, match="test_split"):
        datasets.boston_housing.load_data(test_split=1.0)


@pytest.mark.parametrize("version,rows", [("large", 700), ("small", 600)])
def test_california_housing_versions_and_split_as_keras(served, version, rows):
    root, _, cache = served
    (x_train, y_train), (x_test, y_test) = datasets.california_housing.load_data(
        version=version, test_split=0.3, seed=7)
    with np.load(root / "california_housing.npz") as f:
        x, y = f["x"][:rows], f["y"][:rows]
    order = np.arange(rows)
    np.random.RandomState(7).shuffle(order)
    cut = int(rows * 0.7)
    np.testing.assert_array_equal(x_train, x[order[:cut]])
    np.testing.assert_array_equal(y_train, y[order[:cut]])
    np.testing.assert_array_equal(x_test, x[order[cut:]])
    np.testing.assert_array_equal(y_test, y[order[cut:]])
    assert x_train.shape[1] == 8 and y_test.ndim == 1
    assert (cache / "california_housing.npz").exists()
    with pytest.raises(ValueError, match="version"):
        datasets.california_housing.load_data(version="medium")
    with pytest.raises(ValueError, match="test_split"):
        datasets.california_housing.load_data(test_split=1.0)


def test_imdb_shifts_clips_and_filters(served):
    root, _, _ = served
    raw = np.load(root / "imdb.npz", allow_pickle=True)
    (x_train, y_train), (x_test, y_test) = datasets.imdb.load_data(num_words=20, skip_top=2)
    order = np.arange(12)
    rng = np.random.RandomState(113)
    rng.shuffle(order)
    first = [1] + [w + 3 for w in raw["x_train"][order[0]]]
    assert x_train[0] == [w if 2 <= w < 20 else 2 for w in first]
    assert x_train.dtype == object and len(x_test) == 8
    np.testing.assert_array_equal(y_train, raw["y_train"][order])
    (x_short, _), _ = datasets.imdb.load_data(maxlen=8)
    assert all(len(x) < 8 for x in x_short)


def test_reuters_split(served):
    (x_train, y_train), (x_test, y_test) = datasets.reuters.load_data(test_split=0.2)
    assert len(x_train) == 12 and len(x_test) == 3 and all(x[0] == 1 for x in x_train)
    assert datasets.reuters.get_label_names()[3] == "earn"


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_a_pickled_call_in_a_dataset_file_is_refused(tmp_path):
    evil = np.empty(1, dtype=object)
    evil[0] = _Evil()
    np.savez(tmp_path / "evil.npz", x=evil)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system|Refusing"):
        _common.load_npz(tmp_path / "evil.npz")
