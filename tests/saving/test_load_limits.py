"""Loaders have limits: decompression bombs (a 1 MB `.keras` whose weights inflate to 1 GiB, a
nested one of a few KB, the same in `.weights.npz` and saved-model directories) fail at once with
LoadError inside a small address space; special files (a FIFO, /dev/zero behind a symlink) are
refused without blocking; every zip or npy defect is LoadError naming the file."""
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib

import numpy as np
import pytest

import trainlib as tl
from trainlib.saved_model import _checksum

from .test_keras_format import FIRST_FORMAT

GIB = 1 << 30


# ------------------------------------------------------------------ crafting archives

def _deflated_zeros(n_bytes, prefix=b""):
    """A raw deflate stream of `prefix` + `n_bytes` zeros, built from one repeated 1 MiB block
    (a full flush makes each block independent), without compressing 1 GiB."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return head + block * (n_bytes >> 20) + c.flush()


def _zip(members):
    """A zip archive of (name, compression method, stored bytes, declared size, crc) members (the
    CRC of a 1 GiB bomb is left 0: a loader must refuse it before inflating that far)."""
    out, central = bytearray(), bytearray()
    for name, method, data, size, crc in members:
        offset, raw_name = len(out), name.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size,
                           len(raw_name), 0) + raw_name + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc,
                               len(data), size, len(raw_name), 0, 0, 0, 0, 0, offset) + raw_name
    return bytes(out + central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members),
                                             len(members), len(central), len(out), 0))


def _npy_header(shape, dtype="<f4"):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue()


def _npz_bomb(key, honest=True, **arrays):
    """An npz of `arrays` and an array `key` that inflates to 1 GiB (its header declaring exactly
    that, or, if not `honest`, a zip header that claims a few bytes)."""
    members = []
    for name, value in arrays.items():
        buf = io.BytesIO()
        np.save(buf, value)
        data = buf.getvalue()
        members.append((f"{name}.npy", 0, data, len(data), zlib.crc32(data)))
    header = _npy_header((GIB // 4,))
    data = _deflated_zeros(GIB, header)
    return _zip(members + [(f"{key}.npy", zipfile.ZIP_DEFLATED, data,
                            len(header) + GIB if honest else 4096, 0)])


def _small_model():
    tl.random.set_seed(0)
    return tl.Sequential([tl.layers.Input((4,)), tl.layers.Dense(2)])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """{case: path} of hostile files, and the legitimate ones they were made from."""
    root = tmp_path_factory.mktemp("limits")
    model = _small_model()
    model.save(root / "good.keras")
    model.save_weights(root / "good.weights.npz")
    tl.saved_model.save(model, root / "good_dir")
    with zipfile.ZipFile(root / "good.keras") as z:
        meta, config = z.read("metadata.json"), z.read("config.json")
    out = {"good.keras": root / "good.keras"}
    stored = [(name, 0, data, len(data), zlib.crc32(data))
              for name, data in (("metadata.json", meta), ("config.json", config))]
    # a 1 MB .keras whose weights member inflates to 1 GiB
    bomb = _deflated_zeros(GIB)
    out["keras_bomb"] = root / "bomb.keras"
    out["keras_bomb"].write_bytes(_zip([
        *stored, ("model.weights.h5", zipfile.ZIP_DEFLATED, bomb, GIB, 0)]))
    # a few KB, in trainlib's first format (npz weights): the weights archive (deflated again)
    # holds an array that inflates to 1 GiB
    with zipfile.ZipFile(os.path.join(FIRST_FORMAT, "sequential.keras")) as z:
        meta, config = z.read("metadata.json"), z.read("config.json")
    stored = [(name, 0, data, len(data), zlib.crc32(data))
              for name, data in (("metadata.json", meta), ("config.json", config))]
    for honest in (True, False):
        inner = _npz_bomb("model_00000", honest)
        outer = zlib.compressobj(9, zlib.DEFLATED, -15)
        packed = outer.compress(inner) + outer.flush()
        case = "keras_nested" if honest else "keras_nested_lying"
        out[case] = root / f"{case}.keras"
        out[case].write_bytes(_zip([
            *stored, ("model.weights.npz", zipfile.ZIP_DEFLATED, packed, len(inner),
                      zlib.crc32(inner))]))
    out["npz_bomb"] = root / "bomb.weights.npz"
    out["npz_bomb"].write_bytes(_npz_bomb("w00000", __format__=np.array("trainlib.weights.v1")))
    # a saved model re-signed around an arrays file that inflates to 1 GiB
    out["dir_bomb"] = root / "bomb_dir"
    shutil.copytree(root / "good_dir", out["dir_bomb"])
    doc = json.loads((out["dir_bomb"] / "saved_model.json").read_text())
    entry = doc["model"]["files"]["variables.npz"]
    raw = _npz_bomb("variable_0")
    name = entry.get("file", "variables.npz")   # (the layout before versioned arrays files)
    (out["dir_bomb"] / name).write_bytes(raw)
    entry["sha256"] = hashlib.sha256(raw).hexdigest()
    doc["checksum"] = _checksum(doc["model"])
    (out["dir_bomb"] / "saved_model.json").write_text(json.dumps(doc))
    for case in ("keras_bomb", "npz_bomb"):
        assert out[case].stat().st_size < 2 << 20
    assert out["keras_nested"].stat().st_size < 16 << 10
    return out


_MEASURE = textwrap.dedent("""
    import json, os, resource, sys
    import trainlib as tl

    def vm_bytes():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))

    model = tl.Sequential([tl.layers.Input((4,)), tl.layers.Dense(2)])
    model(tl.ones((1, 4)))
    tl.saving.load_model(sys.argv[1])   # warm up: every import and trace a load needs
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + (512 << 20), hard))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {}
    for path in sys.argv[2:]:
        try:
            if path.endswith(".keras"):
                tl.saving.load_model(path)
            elif path.endswith(".npz"):
                model.load_weights(path)
            else:
                tl.saved_model.load(path)
            out[path] = "loaded"
        except tl.saving.LoadError as e:
            out[path] = "LoadError" if path in str(e) else "LoadError without the path: " + str(e)
        except MemoryError:
            out[path] = "MemoryError"
        except Exception as e:
            out[path] = f"{type(e).__name__}: {e}"
    out["peak_growth_mib"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps(out))
""")


def test_decompression_bombs_fail_at_once_in_a_small_address_space(files):
    cases = ["keras_bomb", "keras_nested", "keras_nested_lying", "npz_bomb", "dir_bomb"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", _MEASURE, str(files["good.keras"])]
                            + [str(files[c]) for c in cases], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for case in cases:
        assert out[str(files[case])] == "LoadError", (case, out[str(files[case])])
    # nothing near the 1 GiB the members inflate to was ever held
    assert out["peak_growth_mib"] < 128, out


def test_bomb_errors_name_the_limit(files):
    with pytest.raises(tl.saving.LoadError, match=r"bomb\.keras.*model\.weights\.h5.*"
                                                  r"1073741824 bytes.*max_bytes"):
        tl.saving.load_model(files["keras_bomb"])
    with pytest.raises(tl.saving.LoadError, match="model_00000.npy"):
        tl.saving.load_model(files["keras_nested"])


def test_limits_are_overridable(files, tmp_path):
    path = files["good.keras"]
    with pytest.raises(tl.saving.LoadError, match="more than the 100 allowed"):
        tl.saving.load_model(path, max_member_bytes=100)
    with zipfile.ZipFile(path) as z:   # room for the JSON members, not for the weights
        json_bytes = sum(z.getinfo(n).file_size for n in ("config.json", "metadata.json"))
    with pytest.raises(tl.saving.LoadError, match="'model.weights.h5'.*allowed for this model"):
        tl.saving.load_model(path, max_bytes=json_bytes + 10)
    model = _small_model()
    model.save_weights(tmp_path / "w.weights.npz")
    previous = tl.saving.set_load_limits(max_bytes=500)
    try:
        assert tl.saving.get_load_limits()["max_bytes"] == 500
        with pytest.raises(tl.saving.LoadError, match="w.weights.npz"):
            model.load_weights(tmp_path / "w.weights.npz")
        with pytest.raises(tl.saving.LoadError, match="saved_model.json.*500 allowed"):
            tl.saved_model.load(files["good.keras"].parent / "good_dir")
        # an explicit argument wins over the setting
        tl.saved_model.load(files["good.keras"].parent / "good_dir", max_bytes=10 << 20)
    finally:
        tl.saving.set_load_limits(**previous)
    model.load_weights(tmp_path / "w.weights.npz")
    with pytest.raises(ValueError, match="positive int"):
        tl.saving.set_load_limits(max_bytes=-1)


_SPECIAL = textwrap.dedent("""
    import json, os, shutil, sys
    import trainlib as tl
    root, good_keras, good_dir = sys.argv[1:]
    model = tl.Sequential([tl.layers.Input((4,)), tl.layers.Dense(2)])
    model(tl.ones((1, 4)))
    model.save_weights(os.path.join(root, "good.weights.npz"))

    def saved_dir(name):
        path = os.path.join(root, name)
        shutil.copytree(good_dir, path)
        return path

    def arrays_file(path):
        doc = json.load(open(os.path.join(path, "saved_model.json")))
        return os.path.join(path, doc["model"]["files"]["variables.npz"].get("file", "variables.npz"))

    cases = {}
    d = saved_dir("json_to_dev_zero")
    os.remove(os.path.join(d, "saved_model.json"))
    os.symlink("/dev/zero", os.path.join(d, "saved_model.json"))
    cases["json_to_dev_zero"] = lambda: tl.saved_model.load(d)
    e = saved_dir("json_symlink")
    os.replace(os.path.join(e, "saved_model.json"), os.path.join(root, "elsewhere.json"))
    os.symlink(os.path.join(root, "elsewhere.json"), os.path.join(e, "saved_model.json"))
    cases["json_symlink"] = lambda: tl.saved_model.load(e)
    f = saved_dir("arrays_fifo")
    os.remove(arrays_file(f))
    os.mkfifo(arrays_file(f))
    cases["arrays_fifo"] = lambda: tl.saved_model.load(f)
    g = saved_dir("json_fifo")
    os.remove(os.path.join(g, "saved_model.json"))
    os.mkfifo(os.path.join(g, "saved_model.json"))
    cases["json_fifo"] = lambda: tl.saved_model.load(g)
    h = saved_dir("json_dir")
    os.remove(os.path.join(h, "saved_model.json"))
    os.mkdir(os.path.join(h, "saved_model.json"))
    cases["json_dir"] = lambda: tl.saved_model.load(h)
    os.mkfifo(os.path.join(root, "fifo.keras"))
    cases["keras_fifo"] = lambda: tl.saving.load_model(os.path.join(root, "fifo.keras"))
    os.symlink("/dev/zero", os.path.join(root, "zero.keras"))
    cases["keras_dev_zero"] = lambda: tl.saving.load_model(os.path.join(root, "zero.keras"))
    os.mkfifo(os.path.join(root, "fifo.weights.npz"))
    cases["npz_fifo"] = lambda: model.load_weights(os.path.join(root, "fifo.weights.npz"))
    os.symlink("/dev/zero", os.path.join(root, "zero.weights.npz"))
    cases["npz_dev_zero"] = lambda: model.load_weights(os.path.join(root, "zero.weights.npz"))
    os.symlink(good_keras, os.path.join(root, "link.keras"))   # a link to a real file is fine
    cases["keras_link_to_file"] = lambda: tl.saving.load_model(os.path.join(root, "link.keras"))
    out = {}
    for name, load in cases.items():
        try:
            load()
            out[name] = "loaded"
        except tl.saving.LoadError as error:
            out[name] = str(error)
    print(json.dumps(out))
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                    reason="needs FIFOs and /dev/zero")
def test_special_files_are_refused_without_blocking(files, tmp_path):
    import resource  # noqa: PLC0415 -- POSIX only, as the test

    def limit_memory():   # /dev/zero read to the end would otherwise take all memory
        resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, resource.getrlimit(resource.RLIMIT_AS)[1]))

    good = files["good.keras"]
    result = subprocess.run([sys.executable, "-c", _SPECIAL, str(tmp_path), str(good),
                             str(good.parent / "good_dir")], capture_output=True, text=True,
                            timeout=120, preexec_fn=limit_memory)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out.pop("keras_link_to_file") == "loaded"
    expected = {"json_to_dev_zero": "symbolic link", "json_symlink": "symbolic link",
                "arrays_fifo": "named pipe", "json_fifo": "named pipe", "json_dir": "directory",
                "keras_fifo": "named pipe", "keras_dev_zero": "character device",
                "npz_fifo": "named pipe", "npz_dev_zero": "character device"}
    for case, what in expected.items():
        assert what in out[case] and str(tmp_path) in out[case], (case, out[case])


# ------------------------------------------------------------------ damaged .weights.npz

def _weights_file(tmp_path):
    model = _small_model()
    path = tmp_path / "model.weights.npz"
    model.save_weights(path)
    return model, path


def _rezip(path, change):
    """Rewrites the zip at `path` with `change(ZipInfo, data) -> (ZipInfo, data)` per member."""
    with zipfile.ZipFile(path) as z:
        members = [(info, z.read(info)) for info in z.infolist()]
    with zipfile.ZipFile(path, "w") as z:
        for info, data in members:
            info, data = change(info, data)
            z.writestr(info, data)


def test_unsupported_compression_method_is_a_load_error(tmp_path):
    model, path = _weights_file(tmp_path)
    raw = bytearray(path.read_bytes())
    for sig, field in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # method 99 in every header
        at = 0
        while (at := raw.find(sig, at)) >= 0:
            struct.pack_into("<H", raw, at + field, 99)
            at += 4
    path.write_bytes(bytes(raw))
    with pytest.raises(tl.saving.LoadError, match=r"model\.weights\.npz.*(compression|corrupted)"):
        model.load_weights(path)


@pytest.mark.parametrize("damage", ["object_array", "huge_header", "extra_member", "not_npy",
                                    "wrong_dtype", "missing_format"])
def test_damaged_weights_npz_is_a_load_error(tmp_path, damage):
    model, path = _weights_file(tmp_path)
    before = [v.numpy().copy() for v in model.weights]
    if damage == "object_array":
        buf = io.BytesIO()
        np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        _rezip(path, lambda i, d: (i, buf.getvalue() if i.filename == "w00000.npy" else d))
    elif damage == "huge_header":   # declares 2**40 floats, holds a few
        _rezip(path, lambda i, d: (i, _npy_header((1 << 40,)) + b"\0" * 64
                                   if i.filename == "w00000.npy" else d))
    elif damage == "extra_member":
        _rezip(path, lambda i, d: (i, d) if i.filename != "w00000.npy" else
               (zipfile.ZipInfo("../../evil.sh"), b"#!/bin/sh"))
    elif damage == "not_npy":
        _rezip(path, lambda i, d: (i, b"\x93NUMPY garbage" if i.filename == "w00001.npy" else d))
    elif damage == "wrong_dtype":
        buf = io.BytesIO()
        np.save(buf, model.weights[0].numpy().astype(np.float64))
        _rezip(path, lambda i, d: (i, buf.getvalue() if i.filename == "w00000.npy" else d))
    else:
        _rezip(path, lambda i, d: (zipfile.ZipInfo("other.npy") if i.filename == "__format__.npy"
                                   else i, d))
    with pytest.raises(tl.saving.LoadError, match=str(path).replace(".", r"\.")):
        model.load_weights(path)
    for v, b in zip(model.weights, before):   # nothing was assigned
        np.testing.assert_array_equal(v.numpy(), b)


def test_archives_listing_too_many_members_are_refused_before_parsing(tmp_path, monkeypatch):
    """zipfile builds an object per listed member: the count is checked from the end record."""
    from trainlib import file_io  # noqa: PLC0415 -- the limit is patched down for the test
    model, path = _weights_file(tmp_path)
    monkeypatch.setattr(file_io, "MAX_MEMBERS", len(model.weights) + 1)
    with pytest.raises(tl.saving.LoadError, match=r"model\.weights\.npz.*lists 4 members"):
        model.load_weights(path)
    model.save(tmp_path / "m.keras")
    monkeypatch.setattr(file_io, "MAX_MEMBERS", 2)
    with pytest.raises(tl.saving.LoadError, match=r"m\.keras.*lists 3 members"):
        tl.saving.load_model(tmp_path / "m.keras")
