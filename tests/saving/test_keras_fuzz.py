"""Fuzzing `.keras` files: damaged bytes and edited configs either load with the saved values or
raise `tl.saving.LoadError` naming the file, never another exception and never other weights."""
import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import trainlib as tl

from . import models as M

_FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _saved(kind, folder):
    """(model, bytes of its .keras file, its config, its arrays)."""
    model = M.compiled(kind)
    path = folder / f"{kind.__name__}.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z, np.load(io.BytesIO(z.read("model.weights.npz"))) as npz:
        config = json.loads(z.read("config.json"))
        arrays = {k: npz[k] for k in npz.files}
    return model, path.read_bytes(), config, arrays


@pytest.fixture(scope="module")
def saved_kinds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    return {kind: _saved(kind, folder) for kind in (M.sequential, M.functional, M.subclassed)}


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


def _assert_saved_values(model, arrays):
    """The loaded model holds exactly the file's arrays (never re-initialized or cast)."""
    for i, v in enumerate(model.weights):
        np.testing.assert_array_equal(v.numpy(), arrays[f"model_{i:05d}"])
        assert v.numpy().dtype == arrays[f"model_{i:05d}"].dtype
    if model.compiled:
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
    kind = data.draw(st.sampled_from(sorted(saved_kinds, key=lambda k: k.__name__)))
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
        _assert_saved_values(loaded, arrays)


@_FUZZ
@given(data=st.data())
def test_edited_weights(original, tmp_path, data):
    """Replacing, dropping or adding arrays: exact values or LoadError, never a silent cast."""
    _, raw, _, arrays = original
    edited = dict(arrays)
    key = data.draw(st.sampled_from(sorted(k for k in edited if k != "model_paths")))
    action = data.draw(st.sampled_from(["drop", "reshape", "retype", "add"]))
    if action == "drop":
        del edited[key]
    elif action == "reshape":
        edited[key] = np.zeros(data.draw(st.lists(st.integers(0, 3), max_size=3)), np.float32)
    elif action == "retype":
        edited[key] = edited[key].astype(data.draw(st.sampled_from([np.float64, np.int32,
                                                                    np.float16, np.bool_])))
    else:
        n = sum(k.startswith("model_0") for k in edited)   # one weight more than the model has
        edited[f"model_{n:05d}"] = np.zeros(2, np.float32)
    buf = io.BytesIO()
    np.savez(buf, **edited)
    path = tmp_path / "weights.keras"
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            out.writestr(name, buf.getvalue() if name == "model.weights.npz" else src.read(name))
    loaded = _load_or_clear_error(path)
    if loaded is not None:
        _assert_saved_values(loaded, edited)
