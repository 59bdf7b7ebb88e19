"""`keras.datasets.reuters`: 11,228 newswires as word-id lists in 46 topics."""
import numpy as np

from ..downloads import get_file
from . import _common

_FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"

_LABELS = ("cocoa grain veg-oil earn acq wheat copper housing money-supply coffee sugar trade "
           "reserves ship cotton carcass crude nat-gas cpi money-fx interest gnp meal-feed alum "
           "oilseed gold tin strategic-metal livestock retail ipi iron-steel rubber heat jobs lei "
           "bop zinc orange pet-chem dlr gas silver wpi hog lead").split()


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3):
    """`(x_train, y_train), (x_test, y_test)` as Keras 3's: the wires shuffled with `seed`,
    shifted and clipped as `imdb.load_data`, the last `test_split` held out."""
    path = get_file(fname=path, origin=f"{_common.ORIGIN_FOLDER}reuters.npz",
                    file_hash=_FILE_HASH)
    f = _common.load_npz(path)
    xs, labels = _common.shuffled(np.random.RandomState(seed), f["x"], f["y"])
    xs, labels = _common.word_ids(xs, labels, start_char, oov_char, index_from, maxlen)
    xs = _common.clip_words(xs, num_words, skip_top, oov_char)
    idx = int(len(xs) * (1 - test_split))
    return ((np.array(xs[:idx], dtype="object"), np.array(labels[:idx])),
            (np.array(xs[idx:], dtype="object"), np.array(labels[idx:])))


def get_word_index(path="reuters_word_index.json"):
    """The word -> index dictionary of the Reuters wires."""
    return _common.word_index(path, "reuters_word_index.json", _INDEX_HASH)


def get_label_names():
    """The 46 topic names, in label order."""
    return tuple(_LABELS)
