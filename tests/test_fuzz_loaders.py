"""Fuzzing the loaders of weights files, checkpoints, TFRecord, PNG, GIF and WAV: random
bytes, truncations and bit flips give a documented error (LoadError/ValueError,
InvalidArgumentError, DataLossError) or a result, within a time bound: never a hang, a
crash or another exception."""
import io
import os
import struct
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import trainlib as tl

_FUZZ = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])
_DOCUMENTED = (ValueError, tl.errors.InvalidArgumentError, tl.errors.DataLossError)


@st.composite
def _damage(draw, data):
    """`data` truncated, bit-flipped, or replaced by random bytes."""
    kind = draw(st.sampled_from(["truncate", "flip", "random"]))
    if kind == "truncate":
        return data[:draw(st.integers(0, max(len(data) - 1, 0)))]
    if kind == "random":
        return draw(st.binary(max_size=256))
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(out) - 1))
        out[i] ^= 1 << draw(st.integers(0, 7))
    return bytes(out)


def _bounded(fn):
    start = time.monotonic()
    try:
        fn()
    except _DOCUMENTED:
        pass
    assert time.monotonic() - start < 10


def _model():
    return tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(2)])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("valid")
    out = {}
    model = _model()
    model.save_weights(str(folder / "m.weights.h5"))
    out["weights"] = (folder / "m.weights.h5").read_bytes()
    prefix = tl.train.Checkpoint(v=tl.Variable([1.0, 2.0])).save(str(folder / "ck"))
    out["index"] = (folder / "ck-1.index").read_bytes()
    shard = next(p for p in folder.iterdir() if ".data-" in p.name)
    out["shard"], out["shard_name"], out["prefix"] = shard.read_bytes(), shard.name, prefix
    for compression in ("", "GZIP"):
        path = str(folder / f"r{compression}.tfrecord")
        with tl.io.TFRecordWriter(path, compression) as w:
            for i in range(5):
                w.write(b"record %d" % i)
        out[f"tfrecord{compression}"] = open(path, "rb").read()
    image = np.arange(4 * 4 * 3, dtype=np.uint8).reshape(4, 4, 3)
    out["png"] = tl.io.encode_png(image).numpy()
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, "GIF")
    out["gif"] = buf.getvalue()
    out["wav"] = tl.audio.encode_wav(np.zeros((8, 1), np.float32), 8000).numpy()
    return out


@_FUZZ
@given(data=st.data())
def test_damaged_weights_files(files, tmp_path, data):
    path = tmp_path / "d.weights.h5"
    path.write_bytes(data.draw(_damage(files["weights"])))
    _bounded(lambda: _model().load_weights(str(path)))


@_FUZZ
@given(data=st.data(), which=st.sampled_from(["index", "shard"]))
def test_damaged_checkpoints(files, tmp_path, data, which):
    folder = tmp_path / f"ck{os.urandom(4).hex()}"
    folder.mkdir()
    (folder / "ck-1.index").write_bytes(files["index"])
    (folder / files["shard_name"]).write_bytes(files["shard"])
    target = folder / ("ck-1.index" if which == "index" else files["shard_name"])
    target.write_bytes(data.draw(_damage(target.read_bytes())))
    ckpt = tl.train.Checkpoint(v=tl.Variable([0.0, 0.0]))
    _bounded(lambda: ckpt.restore(str(folder / "ck-1")))


@_FUZZ
@given(data=st.data(), compression=st.sampled_from(["", "GZIP"]))
def test_damaged_tfrecords(files, tmp_path, data, compression):
    path = tmp_path / f"d{os.urandom(4).hex()}.tfrecord"
    path.write_bytes(data.draw(_damage(files[f"tfrecord{compression}"])))
    _bounded(lambda: list(tl.data.TFRecordDataset(str(path), compression)))


@_FUZZ
@given(data=st.data(), kind=st.sampled_from(["png", "gif", "wav"]))
def test_damaged_media(files, data, kind):
    damaged = data.draw(_damage(files[kind]))
    decode = {"png": tl.io.decode_png, "gif": tl.io.decode_gif,
              "wav": tl.audio.decode_wav}[kind]
    _bounded(lambda: decode(damaged))


def test_readers_refuse_a_fifo_instead_of_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a regular file"):
        tl.io.read_file(str(fifo))
    with pytest.raises(tl.errors.InvalidArgumentError, match="not a regular file"):
        list(tl.data.TFRecordDataset(str(fifo)))
