"""Keras's data utilities (trainlib/data_utils.py, and keras.utils' pad_sequences and PyDataset):
pad_sequences against numpy formulas, PyDataset in fit, timeseries windows, split_dataset, get_file against a local
HTTP server (cache, hashes, atomic downloads, extraction that stays in its folder), and the
image helpers with Pillow."""
import functools
import hashlib
import http.server
import io
import math
import os
import tarfile
import threading
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib import keras


# ------------------------------------------------------------------ pad_sequences

@settings(deadline=None, max_examples=40)
@given(seqs=st.lists(st.lists(st.integers(1, 9), max_size=6), min_size=1, max_size=5),
       maxlen=st.one_of(st.none(), st.integers(1, 7)),
       padding=st.sampled_from(["pre", "post"]), truncating=st.sampled_from(["pre", "post"]))
def test_pad_sequences_matches_the_formula(seqs, maxlen, padding, truncating):
    out = keras.utils.pad_sequences(seqs, maxlen=maxlen, padding=padding, truncating=truncating,
                                    value=-1)
    n = maxlen if maxlen is not None else max(len(s) for s in seqs)
    assert out.shape == (len(seqs), n) and out.dtype == np.int32
    for row, s in zip(out, seqs):
        kept = (s[-n:] if truncating == "pre" else s[:n]) if n else []
        pad = [-1] * (n - len(kept))
        assert list(row) == (pad + kept if padding == "pre" else kept + pad)


# ------------------------------------------------------------------ PyDataset, series, split

class _Batches(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size, self.epochs_ended = x, y, batch_size, 0
        self.threads = set()

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, i):
        self.threads.add(threading.get_ident())
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.x[s], self.y[s]

    def on_epoch_end(self):
        self.epochs_ended += 1


@pytest.mark.parametrize("workers", [1, 3])
def test_py_dataset_trains_as_the_arrays_do(workers):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 3)).astype(np.float32), rng.normal(size=(20, 1)).astype(
        np.float32)

    def model():
        tl.random.set_seed(0)
        m = tl.Sequential([tl.layers.Input((3,)), tl.layers.Dense(1)])
        m.compile(optimizer="sgd", loss="mse")
        return m

    data = _Batches(x, y, 6, workers=workers)
    a, b = model(), model()
    a.fit(data, epochs=2, shuffle=False, verbose=0)
    b.fit(x, y, batch_size=6, epochs=2, shuffle=False, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6)
    assert data.epochs_ended == 2
    if workers == 1:
        assert len(data.threads) == 1      # in order, in the calling thread
    np.testing.assert_allclose(a.predict(_Batches(x, y, 6), verbose=0), a.predict(x, verbose=0),
                               rtol=1e-6)
    assert keras.utils.Sequence is keras.utils.PyDataset


def test_timeseries_windows_and_split():
    data = np.arange(20)
    ds = keras.utils.timeseries_dataset_from_array(data, data * 10, sequence_length=4,
                                                   sequence_stride=3, sampling_rate=2,
                                                   batch_size=2)
    windows = [(np.asarray(x), np.asarray(y)) for x, y in ds]
    xs = np.concatenate([w for w, _ in windows])
    ys = np.concatenate([t for _, t in windows])
    starts = np.arange(0, 20 - 7 + 1, 3)
    np.testing.assert_array_equal(xs, starts[:, None] + np.arange(4) * 2)
    np.testing.assert_array_equal(ys, starts * 10)
    left, right = keras.utils.split_dataset((np.arange(10), np.arange(10) * 2), left_size=0.8)
    assert [int(a) for a, _ in left] == list(range(8))
    assert [(int(a), int(b)) for a, b in right] == [(8, 16), (9, 18)]
    with pytest.raises(ValueError, match="exceeds"):
        keras.utils.split_dataset(np.arange(4), left_size=3, right_size=3)


# ------------------------------------------------------------------ get_file

@pytest.fixture()
def server(tmp_path):
    """(folder served, base URL, request log) of an HTTP server on 127.0.0.1 in a thread."""
    folder = tmp_path / "served"
    folder.mkdir()
    log = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            log.append(self.path)

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{httpd.server_address[1]}/", log
    httpd.shutdown()
    httpd.server_close()


def test_get_file_downloads_once_and_checks_hashes(server, tmp_path):
    folder, url, log = server
    (folder / "data.bin").write_bytes(b"abc" * 1000)
    digest = hashlib.sha256(b"abc" * 1000).hexdigest()
    cache = tmp_path / "cache"
    path = keras.utils.get_file(origin=url + "data.bin", file_hash=digest, cache_dir=cache)
    assert path == str(cache / "datasets" / "data.bin")
    assert open(path, "rb").read() == b"abc" * 1000
    assert keras.utils.get_file(origin=url + "data.bin", file_hash=digest, cache_dir=cache) \
        == path
    assert len(log) == 1                     # the cached file is read, not fetched again
    with open(path, "wb") as f:              # a damaged cached file is downloaded again
        f.write(b"broken")
    keras.utils.get_file(origin=url + "data.bin", file_hash=digest, cache_dir=cache)
    assert len(log) == 2 and open(path, "rb").read() == b"abc" * 1000
    with pytest.raises(ValueError, match="file hash does not match"):
        keras.utils.get_file("other.bin", origin=url + "data.bin", file_hash="0" * 64,
                             cache_dir=cache)
    assert sorted(os.listdir(cache / "datasets")) == ["data.bin"]   # nothing half-written
    with pytest.raises(Exception, match="URL fetch failure.*404"):
        keras.utils.get_file("missing.bin", origin=url + "missing.bin", cache_dir=cache)
    assert sorted(os.listdir(cache / "datasets")) == ["data.bin"]
    md5 = hashlib.md5(b"abc" * 1000).hexdigest()
    keras.utils.get_file("md5.bin", origin=url + "data.bin", md5_hash=md5, cache_dir=cache)
    os.environ["KERAS_HOME"] = str(tmp_path / "home")
    try:
        assert keras.utils.get_file(origin=url + "data.bin").startswith(str(tmp_path / "home"))
    finally:
        del os.environ["KERAS_HOME"]
    with pytest.raises(ValueError, match="origin"):
        keras.utils.get_file("x")
    with pytest.raises(ValueError, match="cache_dir"):
        keras.utils.get_file("a/b", origin=url + "data.bin", cache_dir=cache)


def _tar(path, members):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_get_file_extracts_inside_its_folder_only(server, tmp_path):
    folder, url, _ = server
    _tar(folder / "good.tar.gz", [("inner/a.txt", b"a"), ("b.txt", b"b")])
    with zipfile.ZipFile(folder / "good.zip", "w") as z:
        z.writestr("c.txt", "c")
    cache = tmp_path / "cache"
    out = keras.utils.get_file("good.tar.gz", origin=url + "good.tar.gz", extract=True,
                               cache_dir=cache)
    assert out == str(cache / "datasets" / "good_extracted")
    assert open(os.path.join(out, "inner", "a.txt")).read() == "a"
    out = keras.utils.get_file("good.zip", origin=url + "good.zip", extract=True,
                               cache_dir=cache)
    assert open(os.path.join(out, "c.txt")).read() == "c"
    _tar(folder / "evil.tar.gz", [("../../escaped.txt", b"x")])
    with pytest.raises(ValueError, match="outside the target folder"):
        keras.utils.get_file("evil.tar.gz", origin=url + "evil.tar.gz", extract=True,
                             cache_dir=cache)
    with zipfile.ZipFile(folder / "evil.zip", "w") as z:
        z.writestr("../escaped.txt", "x")
    with pytest.raises(ValueError, match="outside the target folder"):
        keras.utils.get_file("evil.zip", origin=url + "evil.zip", extract=True, cache_dir=cache)
    with tarfile.open(folder / "link.tar", "w") as archive:
        info = tarfile.TarInfo("link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(info)
    with pytest.raises(ValueError, match="link"):
        keras.utils.get_file("link.tar", origin=url + "link.tar", extract=True, cache_dir=cache)
    assert not any("escaped" in name for _, _, files in os.walk(tmp_path) for name in files)


# ------------------------------------------------------------------ images

def test_image_helpers_and_directory_dataset(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    for label, count in (("cats", 3), ("dogs", 2)):
        (tmp_path / "photos" / label).mkdir(parents=True)
        for i in range(count):
            pixels = rng.integers(0, 256, size=(6, 8, 3)).astype(np.float32)
            keras.utils.save_img(tmp_path / "photos" / label / f"{i}.png", pixels, scale=False)
    img = keras.utils.load_img(tmp_path / "photos" / "cats" / "0.png")
    array = keras.utils.img_to_array(img)
    assert array.shape == (6, 8, 3) and array.dtype == np.float32
    back = keras.utils.img_to_array(keras.utils.array_to_img(array, scale=False))
    np.testing.assert_array_equal(back, array)
    small = keras.utils.load_img(tmp_path / "photos" / "cats" / "0.png", color_mode="grayscale",
                                 target_size=(3, 4))
    assert keras.utils.img_to_array(small).shape == (3, 4, 1)
    ds = keras.utils.image_dataset_from_directory(tmp_path / "photos", image_size=(4, 4),
                                                  batch_size=2, label_mode="categorical",
                                                  seed=1, verbose=False)
    assert ds.class_names == ["cats", "dogs"]
    xs, ys = zip(*[(np.asarray(x), np.asarray(y)) for x, y in ds])
    assert np.concatenate(xs).shape == (5, 4, 4, 3)
    labels = np.concatenate(ys).argmax(-1)
    assert sorted(labels.tolist()) == [0, 0, 0, 1, 1]
    assert [os.path.basename(os.path.dirname(p)) for p in ds.file_paths] == \
        [["cats", "dogs"][i] for i in labels]
    train = keras.utils.image_dataset_from_directory(
        tmp_path / "photos", image_size=(4, 4), validation_split=0.4, subset="training",
        seed=3, verbose=False)
    val = keras.utils.image_dataset_from_directory(
        tmp_path / "photos", image_size=(4, 4), validation_split=0.4, subset="validation",
        seed=3, verbose=False)
    assert sorted(train.file_paths + val.file_paths) == sorted(ds.file_paths)
    assert len(val.file_paths) == 2
    with pytest.raises(ValueError, match="label_mode"):
        keras.utils.image_dataset_from_directory(tmp_path / "photos", label_mode="onehot")
