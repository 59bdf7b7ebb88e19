"""Fuzzing `.keras` and `.weights.npz` files: damaged bytes, replaced members and edited configs
either load with the saved values (or exactly the arrays an edited file holds) or raise
`tl.saving.LoadError` naming the file, never another exception and never other weights."""
import io
import json
import warnings
import zipfile

import os

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import trainlib as tl

from . import models as M
from .test_keras_format import FIRST_FORMAT, _arrays, _config

_FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _saved(kind, folder):
    """(model, bytes of its .keras file, its config, its arrays)."""
    model = M.compiled(kind)
    path = folder / f"{kind.__name__}.keras"
    model.save(path)
    return model, path.read_bytes(), _config(path), _arrays(path, model)


def _first_format(kind):
    """(None, bytes, config, arrays) of trainlib's first-format fixture file of `kind`."""
    path = os.path.join(FIRST_FORMAT, f"{kind.__name__}.keras")
    with open(path, "rb") as f:
        return None, f.read(), _config(path), _arrays(path)


@pytest.fixture(scope="module")
def saved_kinds(tmp_path_factory):
    """{kind: saved file} in Keras 3's layout; {("first", kind): ...} in the first format."""
    folder = tmp_path_factory.mktemp("fuzz")
    out = {kind: _saved(kind, folder) for kind in (M.sequential, M.functional, M.subclassed)}
    out.update({("first", kind): _first_format(kind)
                for kind in (M.sequential, M.functional, M.subclassed)})
    return out


def _key(kind):
    return kind[1].__name__ + "-first" if isinstance(kind, tuple) else kind.__name__


@pytest.fixture(scope="module")
def original(saved_kinds):
    return saved_kinds[M.sequential]


def _load_or_clear_error(path):
    """The loaded model, or None after checking the error is LoadError naming the file."""
    try:
        return tl.saving.load_model(path)
    except tl.saving.LoadError as e:
        assert str(path) in str(e)
        return None


def _assert_saved_values(model, arrays, optimizer=True):
    """The loaded model holds exactly the file's arrays (never re-initialized or cast); its
    optimizer too (Keras 3's files: unless its state did not fit and was left out, warned)."""
    for i, v in enumerate(model.weights):
        np.testing.assert_array_equal(v.numpy(), arrays[f"model_{i:05d}"])
        assert v.numpy().dtype == arrays[f"model_{i:05d}"].dtype
    if model.compiled and optimizer:
        for i, v in enumerate(model.optimizer.variables):
            np.testing.assert_array_equal(v.numpy(), arrays[f"optimizer_{i:05d}"])


@_FUZZ
@given(data=st.data())
def test_damaged_bytes(original, tmp_path, data):
    model, raw, _, arrays = original
    damage = data.draw(st.sampled_from(["flip", "truncate", "splice"]))
    buf = bytearray(raw)
    if damage == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] ^= data.draw(st.integers(1, 255))
    elif damage == "truncate":
        buf = buf[:data.draw(st.integers(0, len(buf) - 1))]
    else:
        i = data.draw(st.integers(0, len(buf)))
        buf[i:i] = data.draw(st.binary(min_size=1, max_size=16))
    path = tmp_path / "damaged.keras"
    path.write_bytes(bytes(buf))
    loaded = _load_or_clear_error(path)
    if loaded is not None:   # the damage missed everything read (e.g. a timestamp)
        _assert_saved_values(loaded, arrays)
        for a, b in zip(loaded.weights, model.weights):
            assert a.shape == b.shape


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 12)
                     | st.floats(-2, 2, allow_nan=False) | st.text(max_size=6)
                     | st.sampled_from(["Dense", "relu", "same", "float64", "int32", "Sequential"]),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=2), max_leaves=4)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@_FUZZ
@given(data=st.data())
def test_edited_config(saved_kinds, tmp_path, data):
    """Any edit of config.json (the zip rewritten with valid checksums, as a hand edit would)."""
    kind = data.draw(st.sampled_from(sorted(saved_kinds, key=_key)))
    _, raw, config, arrays = saved_kinds[kind]
    edited = json.loads(json.dumps(config))
    paths = [p for p in _paths(edited) if p]
    where = data.draw(st.sampled_from(paths))
    parent = edited
    for key in where[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[where[-1]]
    else:
        parent[where[-1]] = data.draw(_JSON)
    path = tmp_path / "edited.keras"
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            out.writestr(name, json.dumps(edited) if name == "config.json" else src.read(name))
    loaded = _load_or_clear_error(path)
    if loaded is not None:
        # an edited optimizer config may not fit the saved optimizer state: it is then left
        # out with a warning, as Keras does; the weights must still be exact
        _assert_saved_values(loaded, arrays, optimizer="compile_config" not in where)


@_FUZZ
@given(data=st.data())
def test_edited_weights(saved_kinds, tmp_path, data):
    """Replacing, dropping or adding arrays (in the HDF5 weights, or the first format's npz):
    exact values or LoadError, never a silent cast."""
    first = data.draw(st.booleans(), label="first format")
    _, raw, _, arrays = saved_kinds[("first", M.sequential) if first else M.sequential]
    action = data.draw(st.sampled_from(["drop", "reshape", "retype", "add"]))
    path = tmp_path / "weights.keras"
    if first:
        edited = dict(arrays)
        key = data.draw(st.sampled_from(sorted(k for k in edited if k != "model_paths")))
        if action == "drop":
            del edited[key]
        elif action == "reshape":
            edited[key] = np.zeros(data.draw(st.lists(st.integers(0, 3), max_size=3)),
                                   np.float32)
        elif action == "retype":
            edited[key] = edited[key].astype(data.draw(st.sampled_from(
                [np.float64, np.int32, np.float16, np.bool_])))
        else:
            n = sum(k.startswith("model_0") for k in edited)   # one weight more than the model
            edited[f"model_{n:05d}"] = np.zeros(2, np.float32)
        buf = io.BytesIO()
        np.savez(buf, **edited)
        member, weights = "model.weights.npz", buf.getvalue()
    else:
        with zipfile.ZipFile(io.BytesIO(raw)) as src:
            buf = io.BytesIO(src.read("model.weights.h5"))
        with h5py.File(buf, "a") as f:
            names = []
            f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
            name = data.draw(st.sampled_from(sorted(names)))
            value = f[name][()]
            del f[name]
            if action == "reshape":
                f[name] = np.zeros(data.draw(st.lists(st.integers(0, 3), max_size=3)),
                                   np.float32)
            elif action == "retype":
                f[name] = np.asarray(value).astype(data.draw(st.sampled_from(
                    [np.float64, np.int32, np.float16, np.bool_])))
            elif action == "add":
                f[name] = value
                group = name.rsplit("/", 1)[0]
                f[f"{group}/{len(f[group])}"] = np.zeros(2, np.float32)
        member, weights = "model.weights.h5", buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            out.writestr(name, weights if name == member else src.read(name))
    loaded = _load_or_clear_error(path)
    if loaded is not None:
        held = edited if first else _arrays(path, loaded)
        _assert_saved_values(loaded, held, optimizer=first)


def _npz_arrays(raw):
    """The arrays zipfile and numpy's npy reader find in npz bytes (None if they cannot)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return {info.filename[:-4]: np.lib.format.read_array(io.BytesIO(z.read(info)),
                                                                 allow_pickle=False)
                    for info in z.infolist()}
    except Exception:  # noqa: BLE001 -- any failure: the reference readers cannot read it
        return None


def _replace_member(data, members, what):
    """Replaces, truncates, deletes or swaps one (name, bytes) of `members`; returns the list."""
    members = list(members)
    i = data.draw(st.integers(0, len(members) - 1), label=f"{what} member")
    name, raw = members[i]
    action = data.draw(st.sampled_from(["other", "random", "truncate", "delete", "duplicate"]))
    if action == "other":
        members[i] = (name, members[data.draw(st.integers(0, len(members) - 1))][1])
    elif action == "random":
        members[i] = (name, data.draw(st.binary(max_size=64)))
    elif action == "truncate":
        members[i] = (name, raw[:data.draw(st.integers(0, max(len(raw) - 1, 0)))])
    elif action == "delete":
        del members[i]
    else:
        members.append((name, data.draw(st.sampled_from([raw, b"", b"\x93NUMPY"]))))
    return members


def _zip_bytes(members, data):
    buf = io.BytesIO()
    method = data.draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]), label="method")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a duplicated name is part of the damage
        with zipfile.ZipFile(buf, "w", compression=method) as z:
            for name, raw in members:
                z.writestr(name, raw)
    return buf.getvalue()


def _members(raw):
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return [(info.filename, z.read(info)) for info in z.infolist()]


@_FUZZ
@given(data=st.data())
def test_replaced_members(saved_kinds, tmp_path, data):
    """Members of the archive, or arrays inside its weights archive, replaced by other members,
    random bytes, truncated, deleted or duplicated (the zips rewritten with valid CRCs, as a
    tool would): LoadError naming the file, or exactly the arrays the edited file holds."""
    kind = data.draw(st.sampled_from(sorted(saved_kinds, key=_key)))
    _, raw, _, _ = saved_kinds[kind]
    outer = _members(raw)
    first = isinstance(kind, tuple)
    inside = data.draw(st.booleans(), label="inside the weights archive")
    if inside and first:
        i = next(i for i, (name, _) in enumerate(outer) if name == "model.weights.npz")
        outer[i] = (outer[i][0], _zip_bytes(_replace_member(data, _members(outer[i][1]), "npz"),
                                            data))
    elif inside:   # the HDF5 weights' bytes damaged
        i = next(i for i, (name, _) in enumerate(outer) if name == "model.weights.h5")
        damaged = bytearray(outer[i][1])
        if data.draw(st.booleans(), label="truncate"):
            damaged = damaged[:data.draw(st.integers(0, len(damaged) - 1))]
        else:
            for _ in range(data.draw(st.integers(1, 4))):
                j = data.draw(st.integers(0, len(damaged) - 1))
                damaged[j] ^= data.draw(st.integers(1, 255))
        outer[i] = (outer[i][0], bytes(damaged))
    else:
        outer = _replace_member(data, outer, "keras")
    path = tmp_path / "replaced.keras"
    path.write_bytes(_zip_bytes(outer, data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # an optimizer state that no longer fits is left out
        loaded = _load_or_clear_error(path)
    if loaded is not None:
        if first:
            weights = [raw for name, raw in outer if name == "model.weights.npz"][-1]
            held = _npz_arrays(weights)
            assert held is not None, "loaded weights numpy cannot read"
        else:
            held = _arrays(path, loaded)    # what h5py reads from the file
        _assert_saved_values(loaded, held, optimizer=first)


@pytest.fixture(scope="module")
def weights_file(tmp_path_factory):
    """(model, bytes of its .weights.npz, its arrays in order)."""
    model = M.compiled(M.sequential)
    path = tmp_path_factory.mktemp("weights") / "model.weights.npz"
    model.save_weights(path)
    return model, path.read_bytes(), [v.numpy().copy() for v in model.weights]


@_FUZZ
@given(data=st.data())
def test_damaged_weights_npz(weights_file, tmp_path, data):
    """A `.weights.npz` truncated, bit-flipped or with members replaced: LoadError naming the file
    (and no weight assigned), or exactly the arrays the file holds (the saved ones, when the
    damage left the zip's CRCs to check it)."""
    model, raw, saved = weights_file
    damage = data.draw(st.sampled_from(["flip", "truncate", "splice", "replace"]))
    buf = bytearray(raw)
    if damage == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] ^= data.draw(st.integers(1, 255))
    elif damage == "truncate":
        buf = buf[:data.draw(st.integers(0, len(buf) - 1))]
    elif damage == "splice":
        i = data.draw(st.integers(0, len(buf)))
        buf[i:i] = data.draw(st.binary(min_size=1, max_size=16))
    else:
        buf = _zip_bytes(_replace_member(data, _members(raw), "npz"), data)
    path = tmp_path / "damaged.weights.npz"
    path.write_bytes(bytes(buf))
    for v in model.weights:   # a marker: nothing may be assigned from a defective file
        v.assign(np.full(v.shape, -7, v.dtype.np))
    try:
        model.load_weights(path)
    except tl.saving.LoadError as e:
        assert str(path) in str(e)
        for v in model.weights:
            assert (v.numpy() == -7).all()
        return
    held = _npz_arrays(bytes(buf))
    assert held is not None, "loaded weights numpy cannot read"
    for i, v in enumerate(model.weights):
        np.testing.assert_array_equal(v.numpy(), held[f"w{i:05d}"])
        assert v.numpy().dtype == held[f"w{i:05d}"].dtype
        if damage != "replace":   # the CRCs vouch for the bytes
            np.testing.assert_array_equal(v.numpy(), saved[i])
