"""Keras 3 vs trainlib: the data utilities of issue 21 give Keras's arrays (pad_sequences with
every padding/truncating choice, timeseries windows, to the element)."""
import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = []  # host-side utilities: no op types of their own


@pytest.mark.parametrize("padding", ["pre", "post"])
@pytest.mark.parametrize("truncating", ["pre", "post"])
@pytest.mark.parametrize("maxlen", [None, 2, 5])
def test_pad_sequences_matches_keras(padding, truncating, maxlen):
    seqs = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9], [1.5, 2.5]]
    for dtype in ("int32", "float32"):
        ours = tl.keras.utils.pad_sequences(seqs, maxlen=maxlen, padding=padding,
                                            truncating=truncating, dtype=dtype, value=-1)
        theirs = keras.utils.pad_sequences(seqs, maxlen=maxlen, padding=padding,
                                           truncating=truncating, dtype=dtype, value=-1)
        np.testing.assert_array_equal(ours, theirs)
        assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("stride, rate, shuffle", [(1, 1, False), (3, 2, False), (2, 1, True)])
def test_timeseries_windows_match_keras(stride, rate, shuffle):
    data = np.arange(40, dtype=np.float32).reshape(20, 2)
    targets = np.arange(20) * 10

    def windows(k):
        ds = k.utils.timeseries_dataset_from_array(data, targets, sequence_length=4,
                                                   sequence_stride=stride, sampling_rate=rate,
                                                   batch_size=3, shuffle=shuffle, seed=5,
                                                   start_index=1, end_index=18)
        pairs = [(np.asarray(x), np.asarray(y)) for x, y in ds]
        return np.concatenate([x for x, _ in pairs]), np.concatenate([y for _, y in pairs])

    (ox, oy), (kx, ky) = windows(tl.keras), windows(keras)
    if shuffle:   # the order is each library's own; the windows are the same
        ox, oy, kx, ky = ox[np.argsort(oy)], np.sort(oy), kx[np.argsort(ky)], np.sort(ky)
    np.testing.assert_array_equal(ox, kx)
    np.testing.assert_array_equal(oy, ky)
