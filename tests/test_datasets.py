"""`keras.datasets` loaders (trainlib/datasets.py) on small files in the datasets' own formats,
served by a local HTTP server (no internet): each loader fetches through get_file into
$KERAS_HOME, checks the hash, reads the cached file afterwards, and returns Keras's
structure; pickled members are read by the array-only unpickler, which refuses other code."""
import gzip
import hashlib
import io
import pickle
import tarfile

import numpy as np
import pytest

from trainlib import datasets, keras

from .test_data_utils import server  # noqa: F401 -- the local HTTP server fixture


def _npz(path, **arrays):
    np.savez(path, **arrays)


def _ragged(lists):
    out = np.empty(len(lists), dtype=object)
    out[:] = [list(x) for x in lists]
    return out


@pytest.fixture()
def served(server, monkeypatch, tmp_path):  # noqa: F811
    folder, url, log = server
    rng = np.random.default_rng(0)
    files = {}
    x = rng.integers(0, 256, size=(6, 28, 28)).astype(np.uint8)
    files["mnist"] = dict(x_train=x[:4], y_train=np.arange(4, dtype=np.uint8), x_test=x[4:],
                          y_test=np.arange(2, dtype=np.uint8))
    _npz(folder / "mnist.npz", **files["mnist"])
    seqs = [rng.integers(1, 30, size=n).tolist() for n in (3, 5, 2, 7, 4, 6)]
    _npz(folder / "imdb.npz", x_train=_ragged(seqs[:4]), y_train=np.array([0, 1, 0, 1]),
         x_test=_ragged(seqs[4:]), y_test=np.array([1, 0]))
    _npz(folder / "reuters.npz", x=_ragged(seqs), y=np.arange(6))
    files["boston"] = dict(x=rng.normal(size=(10, 13)), y=rng.normal(size=10))
    _npz(folder / "boston_housing.npz", **files["boston"])
    for name, data in zip(datasets.FASHION_FILES, (np.arange(4, dtype=np.uint8), x[:4],
                                                   np.arange(2, dtype=np.uint8), x[4:])):
        header = b"\0" * (8 if "labels" in name else 16)
        (folder / name).write_bytes(gzip.compress(header + data.tobytes()))
    images = rng.integers(0, 256, size=(12, 3, 32, 32)).astype(np.uint8)
    with tarfile.open(folder / "cifar-10-python.tar.gz", "w:gz") as archive:
        for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
            raw = pickle.dumps({b"data": images[2 * i:2 * i + 2].reshape(2, -1),
                                b"labels": [i, i + 1]}, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            archive.addfile(info, io.BytesIO(raw))
    files["cifar_images"] = images
    sources = {}
    for name in datasets.SOURCES:
        path = folder / name
        if path.exists():
            sources[name] = (url + name, hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.setattr(datasets, "SOURCES", sources)
    monkeypatch.setattr(datasets, "_GOOGLE", url)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    return files, log


def test_loaders_return_keras_structures(served):
    files, log = served
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(x_train, files["mnist"]["x_train"])
    np.testing.assert_array_equal(y_test, files["mnist"]["y_test"])
    keras.datasets.mnist.load_data()
    assert log.count("/mnist.npz") == 1          # read from the cache the second time
    (fx, fy), (tx, ty) = keras.datasets.fashion_mnist.load_data()
    np.testing.assert_array_equal(fx, files["mnist"]["x_train"])
    assert fy.tolist() == [0, 1, 2, 3] and tx.shape == (2, 28, 28)
    (cx, cy), (ctx, cty) = keras.datasets.cifar10.load_data()
    assert cx.shape == (10, 32, 32, 3) and cy.shape == (10, 1) and ctx.shape == (2, 32, 32, 3)
    np.testing.assert_array_equal(cx[0], files["cifar_images"][0].transpose(1, 2, 0))
    assert cty.ravel().tolist() == [5, 6]
    (bx, by), (btx, bty) = keras.datasets.boston_housing.load_data(test_split=0.2, seed=113)
    order = np.arange(10)
    np.random.RandomState(113).shuffle(order)
    np.testing.assert_array_equal(bx, files["boston"]["x"][order[:8]])
    np.testing.assert_array_equal(bty, files["boston"]["y"][order[8:]])


def test_word_sequences_follow_keras_preparation(served):
    (x_train, y_train), (x_test, _) = keras.datasets.imdb.load_data(num_words=20, seed=113)
    assert x_train.dtype == object and len(x_train) == 4 and len(x_test) == 2
    for seq in list(x_train) + list(x_test):
        assert seq[0] == 1                                  # start_char
        assert all(w == 2 or 3 <= w < 20 for w in seq[1:])  # index_from 3, oov 2
    (short, _), (short_test, _) = keras.datasets.imdb.load_data(maxlen=7)
    assert all(len(s) < 7 for s in list(short) + list(short_test))
    assert len(short) == 3 and len(short_test) == 1
    (rx, ry), (rtx, rty) = keras.datasets.reuters.load_data(test_split=0.5)
    assert len(rx) == 3 and len(rtx) == 3 and sorted(ry.tolist() + rty.tolist()) == list(range(6))


def test_pickled_members_cannot_run_code(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    path = tmp_path / "evil.npz"
    np.savez(path, x=np.array([Evil()], dtype=object))
    with pytest.raises(pickle.UnpicklingError, match="builtins.print"):
        datasets._load_npz(path)
