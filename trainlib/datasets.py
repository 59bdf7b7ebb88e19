"""Keras 3's `keras.datasets` loaders: mnist, fashion_mnist, cifar10, imdb, reuters,
boston_housing, each `load_data()` returning `((x_train, y_train), (x_test, y_test))`.

Owns: where each dataset comes from (the URLs and hashes Keras uses) and how its files
are read. Files come through `get_file` (trainlib/data_utils.py): downloaded once into
`~/.keras/datasets` (or `$KERAS_HOME`), hash-checked, and read from the cache afterwards.
Invariant: nothing is unpickled freely: numeric arrays are read with
`allow_pickle=False`; the ragged sequences of imdb/reuters and the CIFAR batches, which
are pickle streams, go through an unpickler that only rebuilds numpy arrays, lists,
dicts, strings and numbers (as Keras 3.15 does).
"""
import gzip
import io
import json
import os
import pickle
import zipfile

import numpy as np

from .data_utils import get_file

__all__ = ["mnist", "fashion_mnist", "cifar10", "imdb", "reuters", "boston_housing"]

_GOOGLE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
# name -> (origin, sha256 or md5): the files Keras 3.15 downloads
SOURCES = {
    "mnist.npz": (_GOOGLE + "mnist.npz",
                  "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"),
    "imdb.npz": (_GOOGLE + "imdb.npz",
                 "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"),
    "imdb_word_index.json": (_GOOGLE + "imdb_word_index.json",
                             "bfafd718b763782e994055a2d397834f"),
    "reuters.npz": (_GOOGLE + "reuters.npz",
                    "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"),
    "reuters_word_index.json": (_GOOGLE + "reuters_word_index.json",
                                "4d44cc38712099c9e383dc6e5f11a921"),
    "boston_housing.npz": (_GOOGLE + "boston_housing.npz",
                           "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"),
    "cifar-10-python.tar.gz": ("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                               "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"),
}
FASHION_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _fetch(name, path=None, **kwargs):
    origin, file_hash = SOURCES[name]
    return get_file(path or name, origin=origin, file_hash=file_hash, **kwargs)


class _ArrayUnpickler(pickle.Unpickler):
    """Rebuilds numpy arrays and plain Python values only; any other global is refused."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray",
                                                            "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype"),
                ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
                ("_codecs", "encode")}   # how protocol-2 pickles spell bytes

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the dataset file names {module}.{name}, which is never "
                                     "loaded (only numpy arrays and plain values are)")


def _unpickle(stream, **kwargs):
    return _ArrayUnpickler(stream, **kwargs).load()


def _load_npz(path):
    """{key: array} of an `.npz`; object arrays through the array-only unpickler."""
    out = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            with archive.open(name) as f:
                version = np.lib.format.read_magic(f)
                read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, fortran, dtype = read_header(f)
                if dtype.hasobject:
                    array = _unpickle(f, encoding="latin1")
                else:
                    data = f.read()
                    array = np.frombuffer(data, dtype=dtype).reshape(
                        shape, order="F" if fortran else "C").copy()
            out[name[:-4] if name.endswith(".npy") else name] = array
    return out


class _Loader:
    """A `keras.datasets.<name>` module's face: `load_data` (and `get_word_index`)."""

    def __init__(self, name, load_data, get_word_index=None):
        self.__name__ = f"keras.datasets.{name}"
        self.load_data = load_data
        if get_word_index is not None:
            self.get_word_index = get_word_index

    def __repr__(self):
        return f"<dataset loader {self.__name__}>"


def _mnist_load_data(path="mnist.npz"):
    """MNIST digits: 60000 train / 10000 test images 28x28 uint8, labels 0-9 uint8."""
    f = _load_npz(_fetch("mnist.npz", path))
    return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


def _fashion_mnist_load_data():
    """Fashion-MNIST: 60000 / 10000 images 28x28 uint8 of 10 clothing classes."""
    paths = [get_file(name, origin=_GOOGLE + name,
                      cache_subdir=os.path.join("datasets", "fashion-mnist"))
             for name in FASHION_FILES]
    arrays = []
    for path, offset in zip(paths, (8, 16, 8, 16)):
        with gzip.open(path, "rb") as f:
            arrays.append(np.frombuffer(f.read(), np.uint8, offset=offset))
    y_train, x_train, y_test, x_test = arrays
    return (x_train.reshape(len(y_train), 28, 28), y_train), \
        (x_test.reshape(len(y_test), 28, 28), y_test)


def _cifar_batch(path):
    with open(path, "rb") as f:
        batch = _unpickle(f, encoding="bytes")
    batch = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in batch.items()}
    return np.asarray(batch["data"]).reshape(-1, 3, 32, 32), np.asarray(batch["labels"])


def _cifar10_load_data():
    """CIFAR-10: 50000 / 10000 color images 32x32x3 uint8 (channels last), labels (n, 1)."""
    folder = get_file("cifar-10-batches-py-target", origin=SOURCES["cifar-10-python.tar.gz"][0],
                      file_hash=SOURCES["cifar-10-python.tar.gz"][1], extract=True)
    folder = os.path.join(folder, "cifar-10-batches-py")
    train = [_cifar_batch(os.path.join(folder, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([x for x, _ in train]).astype("uint8")
    y_train = np.concatenate([y for _, y in train]).astype("uint8").reshape(-1, 1)
    x_test, y_test = _cifar_batch(os.path.join(folder, "test_batch"))
    return (x_train.transpose(0, 2, 3, 1), y_train), \
        (x_test.astype("uint8").transpose(0, 2, 3, 1), y_test.astype("uint8").reshape(-1, 1))


def _shuffled(rng, x, y):
    order = np.arange(len(x))
    rng.shuffle(order)
    return x[order], y[order]


def _offset(xs, start_char, index_from):
    head = [start_char] if start_char is not None else []
    return [head + [w + index_from for w in s] for s in xs]


def _drop_long(maxlen, xs, ys):
    if not maxlen:
        return xs, ys
    keep = [i for i, s in enumerate(xs) if len(s) < maxlen]
    return [xs[i] for i in keep], ys[keep]


def _vocabulary(xs, num_words, skip_top, oov_char):
    """Words outside [skip_top, num_words) become `oov_char` (or are dropped), as Keras."""
    if not num_words:
        num_words = max(max(s) for s in xs if s)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in s] for s in xs]
    return [[w for w in s if skip_top <= w < num_words] for s in xs]


def _object_array(lists):
    out = np.empty(len(lists), dtype=object)
    out[:] = lists
    return out


def _imdb_load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
                    start_char=1, oov_char=2, index_from=3, **kwargs):
    """IMDB reviews as word-index sequences (object arrays of lists), labels 0/1."""
    f = _load_npz(_fetch("imdb.npz", path))
    rng = np.random.RandomState(seed)
    x_train, y_train = _shuffled(rng, f["x_train"], f["y_train"])
    x_test, y_test = _shuffled(rng, f["x_test"], f["y_test"])
    x_train, y_train = _drop_long(maxlen, _offset(x_train, start_char, index_from), y_train)
    x_test, y_test = _drop_long(maxlen, _offset(x_test, start_char, index_from), y_test)
    if not x_train or not x_test:
        raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                         "sequence was kept. Increase maxlen.")
    xs = _vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    n = len(x_train)
    return (_object_array(xs[:n]), y_train), (_object_array(xs[n:]), y_test)


def _reuters_load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None,
                       test_split=0.2, seed=113, start_char=1, oov_char=2, index_from=3):
    """Reuters newswires as word-index sequences, 46 topic labels."""
    f = _load_npz(_fetch("reuters.npz", path))
    xs, labels = _shuffled(np.random.RandomState(seed), f["x"], f["y"])
    xs, labels = _drop_long(maxlen, _offset(xs, start_char, index_from), labels)
    xs = _vocabulary(xs, num_words, skip_top, oov_char)
    idx = int(len(xs) * (1 - test_split))
    return (_object_array(xs[:idx]), labels[:idx]), (_object_array(xs[idx:]), labels[idx:])


def _word_index(name, path):
    with open(_fetch(name, path), "rb") as f:
        return json.load(io.TextIOWrapper(f, encoding="utf-8"))


def _boston_housing_load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """Boston housing prices: 13 features per house, the price in k$."""
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must be in [0, 1), received {test_split}")
    with np.load(_fetch("boston_housing.npz", path), allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    cut = int(len(x) * (1 - test_split))
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])


mnist = _Loader("mnist", _mnist_load_data)
fashion_mnist = _Loader("fashion_mnist", _fashion_mnist_load_data)
cifar10 = _Loader("cifar10", _cifar10_load_data)
imdb = _Loader("imdb", _imdb_load_data,
               lambda path="imdb_word_index.json": _word_index("imdb_word_index.json", path))
reuters = _Loader("reuters", _reuters_load_data,
                  lambda path="reuters_word_index.json": _word_index("reuters_word_index.json",
                                                                     path))
boston_housing = _Loader("boston_housing", _boston_housing_load_data)
