"""A weights file holds its objects itself: external storage, virtual datasets, soft and
external links are refused (LoadError naming the object) before anything is assigned."""
import os

import h5py
import numpy as np
import pytest

import trainlib as tl

from ..bounded import error_of


def _model_and_file(tmp_path):
    model = tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(2, name="d")])
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as h5:
        names = []
        h5.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return model, path, names[0]   # the kernel's dataset path


def _rewrite(path, where, make):
    with h5py.File(path, "a") as h5:
        shape, dtype = h5[where].shape, h5[where].dtype
        del h5[where]
        make(h5, where, shape, dtype)


def _external(tmp_path, file_bytes):
    def make(h5, where, shape, dtype):
        src = tmp_path / "secret.bin"
        if file_bytes is None:
            os.mkfifo(src)
        else:
            src.write_bytes(file_bytes)
        h5.create_dataset(where, shape, dtype, external=[(str(src), 0, h5py.h5f.UNLIMITED)])
    return make


def _virtual(tmp_path):
    def make(h5, where, shape, dtype):
        layout = h5py.VirtualLayout(shape, dtype)
        layout[...] = h5py.VirtualSource(str(tmp_path / "other.h5"), "x", shape)
        h5.create_virtual_dataset(where, layout, fillvalue=0)
    return make


def _soft(h5, where, shape, dtype):
    h5.create_dataset("elsewhere", data=np.ones(shape, dtype))
    h5[where] = h5py.SoftLink("/elsewhere")


def _extlink(tmp_path):
    def make(h5, where, shape, dtype):
        with h5py.File(tmp_path / "other.h5", "w") as other:
            other.create_dataset("x", data=np.ones(shape, dtype))
        h5[where] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/x")
    return make


@pytest.mark.parametrize("kind", ["external", "fifo", "virtual", "soft", "extlink"])
def test_weights_file_objects_outside_the_file_are_refused(tmp_path, kind):
    model, path, where = _model_and_file(tmp_path)
    make = {"external": lambda: _external(tmp_path, b"\x01" * 64),
            "fifo": lambda: _external(tmp_path, None), "virtual": lambda: _virtual(tmp_path),
            "soft": lambda: _soft, "extlink": lambda: _extlink(tmp_path)}[kind]()
    _rewrite(path, where, make)
    before = [w.numpy().copy() for w in model.weights]
    error = error_of(lambda: model.load_weights(path))   # a FIFO must not block the load
    assert isinstance(error, ValueError), error
    assert "refused" in str(error)
    for w, b in zip(model.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)
