"""`keras.datasets.imdb`: 50,000 movie reviews as word-id lists, labelled positive/negative."""
import numpy as np

from ..downloads import get_file
from . import _common

_FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
_INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    """`(x_train, y_train), (x_test, y_test)` as Keras 3's: x are object arrays of id lists
    (each starting with `start_char`, ids shifted by `index_from`; ids not in
    [skip_top, num_words) become `oov_char`), reviews of `maxlen` words or more dropped, each
    part shuffled with `seed`. Other keyword arguments are accepted and ignored, as Keras."""
    path = get_file(fname=path, origin=f"{_common.ORIGIN_FOLDER}imdb.npz", file_hash=_FILE_HASH)
    f = _common.load_npz(path)
    rng = np.random.RandomState(seed)
    x_train, labels_train = _common.shuffled(rng, f["x_train"], f["y_train"])
    x_test, labels_test = _common.shuffled(rng, f["x_test"], f["y_test"])
    x_train, labels_train = _common.word_ids(x_train, labels_train, start_char, oov_char,
                                             index_from, maxlen)
    x_test, labels_test = _common.word_ids(x_test, labels_test, start_char, oov_char,
                                           index_from, maxlen)
    if maxlen and (not x_train or not x_test):
        raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                         "sequence was kept. Increase maxlen.")
    xs = _common.clip_words(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    idx = len(x_train)
    return ((np.array(xs[:idx], dtype="object"), labels[:idx]),
            (np.array(xs[idx:], dtype="object"), labels[idx:]))


def get_word_index(path="imdb_word_index.json"):
    """The word -> index dictionary of the IMDB reviews (indices before `index_from`)."""
    return _common.word_index(path, "imdb_word_index.json", _INDEX_HASH)
