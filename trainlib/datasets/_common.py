"""What the dataset loaders share: Keras's download folder, reading `.npz` files and CIFAR
batches whose object arrays need unpickling, through an unpickler that rebuilds numpy arrays,
lists, dicts and bytes only (anything else, such as a code-running `__reduce__`, is refused),
and Keras's `remove_long_seq`."""
import io
import json
import pickle
import zipfile

import numpy as np

from ..downloads import get_file

ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"

_ALLOWED = frozenset({("numpy", "ndarray"), ("numpy", "dtype"),
                      ("numpy.core.multiarray", "_reconstruct"),
                      ("numpy._core.multiarray", "_reconstruct")})


class _ArraysOnly(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Refusing to load `{module}.{name}` from a dataset file: only numpy arrays may be "
            "rebuilt (the file may be corrupted or malicious)")


def _read_npy(buffer):
    try:
        return np.lib.format.read_array(buffer, allow_pickle=False)
    except ValueError:  # an object array: rebuild it with the restricted unpickler
        buffer.seek(0)
        version = np.lib.format.read_magic(buffer)
        if version[0] == 1:
            np.lib.format.read_array_header_1_0(buffer)
        elif version[0] in (2, 3):
            np.lib.format.read_array_header_2_0(buffer)
        else:
            raise ValueError(f"Unsupported .npy format version {version}") from None
        return _ArraysOnly(buffer).load()


def load_npz(path):
    """The arrays of an `.npz` file by name; object arrays are rebuilt without running code."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                with archive.open(member) as raw:
                    arrays[member[:-4]] = _read_npy(io.BytesIO(raw.read()))
    return arrays


def load_batch(fpath, label_key="labels"):
    """(data as [n, 3, 32, 32] uint8, labels) from one pickled CIFAR batch file."""
    with open(fpath, "rb") as f:
        d = _ArraysOnly(f, encoding="bytes").load()
    d = {k.decode("utf8"): v for k, v in d.items()}
    data = d["data"]
    return data.reshape(data.shape[0], 3, 32, 32), d[label_key]


def remove_long_seq(maxlen, seq, label):
    """The sequences shorter than `maxlen` and their labels, as Keras's."""
    kept = [(x, y) for x, y in zip(seq, label) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def shuffled(rng, *arrays):
    """`arrays` indexed by one permutation drawn from `rng`, as the Keras loaders shuffle."""
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return [a[indices] for a in arrays]


def check_test_split(test_split):
    """Raises Keras's ValueError unless 0 <= test_split < 1."""
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 "
                         "and 1 (exclusive of 1).")


def regression_split(x, y, test_split, seed):
    """`(x_train, y_train), (x_test, y_test)` as Keras's regression loaders make them: the
    rows shuffled with `np.random.RandomState(seed)`, the last `test_split` held out."""
    x, y = shuffled(np.random.RandomState(seed), x, y)
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


def word_ids(xs, labels, start_char, oov_char, index_from, maxlen):
    """Word-id lists shifted by `index_from` after `start_char`, and those of `maxlen` or more
    dropped, as Keras's imdb/reuters loaders do."""
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    else:
        xs = [list(x) for x in xs]
    if maxlen:
        xs, labels = remove_long_seq(maxlen, xs, labels)
    return xs, labels


def clip_words(xs, num_words, skip_top, oov_char):
    """Ids outside [skip_top, num_words) become `oov_char` (dropped when it is None)."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def word_index(fname, origin_name, file_hash):
    """A dataset's word -> id dictionary, from its cached JSON file."""
    with open(get_file(fname, origin=ORIGIN_FOLDER + origin_name, file_hash=file_hash)) as f:
        return json.load(f)
