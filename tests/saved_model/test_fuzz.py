"""Corrupted and hand-edited saved models: loading either succeeds with equal results or raises
LoadError; never another exception, never a hang, never silently different numbers.

Three kinds of damage: random bytes (flipped or truncated) in either file, which the checksums
catch; edits of JSON fields and npz arrays with the checksums recomputed (a deliberate hand edit),
which the structural checks behind the checksum must catch; and the same edits left unsigned.
"""
import hashlib
import io
import os
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib import saved_model
from trainlib.graph.errors import OpError
from trainlib.graph.op import REGISTRY
from trainlib.graph.serialization import LoadError

from . import models
from .helpers import arrays_path, edit_json, read_doc, rewrite_npz

CASES = []  # no op of its own: the ops saved are listed in test_saved_model.CASES

FILES = ("saved_model.json", "variables.npz")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    mlp = models.trained_mlp(steps=1)
    saved_model.save(mlp, root / "mlp")
    models.collatz(tl.constant(6), tl.constant(1000))
    saved_model.save(models.collatz, root / "collatz")
    x, _ = models.data()
    ref = {"mlp": mlp(x).numpy(),
           "collatz": {k: float(v) for k, v in models.collatz(tl.constant(6), tl.constant(1000)).items()}}
    return root, ref


def run(name, loaded):
    if name == "mlp":
        return loaded.signatures["serving_default"](x=models.data()[0])["output_0"].numpy()
    return {k: float(v) for k, v in loaded(tl.constant(6), tl.constant(1000)).items()}


def same(name, a, b):
    return np.array_equal(a, b) if name == "mlp" else a == b


def check_load(saved, name, path):
    """Loads `path`: LoadError, or results equal to the original's."""
    try:
        loaded = saved_model.load(path)
    except LoadError as e:
        assert str(path) in str(e)  # the message names the file
        return "error"
    assert same(name, run(name, loaded), saved[1][name]), "a damaged model gave different results"
    return "ok"


def with_copy(saved, name, damage):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        shutil.copytree(saved[0] / name, path)
        damage(path)
        return path, check_load(saved, name, path)


@given(name=st.sampled_from(["mlp", "collatz"]), file=st.sampled_from(FILES), data=st.data())
def test_flipped_or_truncated_bytes(saved, name, file, data):
    def damage(path):
        target = path / file if file == "saved_model.json" else arrays_path(path)
        raw = bytearray(target.read_bytes())
        if data.draw(st.booleans(), label="truncate"):
            raw = raw[:data.draw(st.integers(0, len(raw) - 1), label="keep")]
        else:
            for _ in range(data.draw(st.integers(1, 3), label="flips")):
                i = data.draw(st.integers(0, len(raw) - 1), label="at")
                raw[i] ^= data.draw(st.integers(1, 255), label="xor")
        target.write_bytes(bytes(raw))

    with_copy(saved, name, damage)  # checksums catch changed content; "1e-05" -> "1E-05" loads


def _ops(graph):
    """Every op dict of a graph JSON, subgraphs included."""
    out = []
    for op in graph["ops"]:
        out.append(op)
        for value in op["attrs"].values():
            if isinstance(value, dict) and set(value) == {"graph"}:
                out.extend(_ops(value["graph"]))
    return out


DTYPES = ["float32", "float64", "int32", "int64", "bool", "resource", "float", "complex128", 7, None]
SHAPES = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-1, 20)), max_size=3),
                   st.sampled_from(["3", [1.5], {"dims": 1}]))


def _field_edit(data, doc):
    """Applies one random edit to `doc`; returns a label."""
    model = doc["model"]
    kind = data.draw(st.sampled_from(["type", "dtype", "shape", "input", "version", "var_dtype",
                                      "var_shape", "attr", "structure"]), label="kind")
    fn = data.draw(st.sampled_from(model["concrete_functions"]), label="function")
    ops = _ops(fn["graph"])
    op = data.draw(st.sampled_from(ops), label="op")
    if kind == "type":
        op["type"] = data.draw(st.sampled_from([op["type"], "NoSuchOp", "", 3, None, "__import__"]))
    elif kind == "dtype" and op["outputs"]:
        out = data.draw(st.sampled_from(op["outputs"]))
        out["dtype"] = data.draw(st.sampled_from(DTYPES + [out["dtype"]]))
    elif kind == "shape" and op["outputs"]:
        data.draw(st.sampled_from(op["outputs"]))["shape"] = data.draw(SHAPES)
    elif kind == "input" and op["inputs"]:
        i = data.draw(st.integers(0, len(op["inputs"]) - 1))
        later = ops[-1]["name"] + ":0" if ops[-1] is not op else "x:0"
        op["inputs"][i] = data.draw(st.sampled_from(
            [op["inputs"][i], "nope:0", op["name"] + ":0", later, op["inputs"][i] + "9", "", 5, None]))
    elif kind == "version":
        doc["format_version"] = data.draw(st.one_of(st.integers(-2, 5), st.sampled_from(["1", 1.0, None])))
    elif kind in ("var_dtype", "var_shape") and model["variables"]:
        var = data.draw(st.sampled_from(model["variables"]))
        if kind == "var_dtype":
            var["dtype"] = data.draw(st.sampled_from(DTYPES))
        else:
            var["shape"] = data.draw(SHAPES)
    elif kind == "attr" and op["attrs"]:
        key = data.draw(st.sampled_from(sorted(op["attrs"])))
        op["attrs"][key] = data.draw(st.sampled_from(
            [{"dtype": "nope"}, {"array": "missing", "dtype": "float32", "shape": [1]}, {"graph": 3},
             {"variable": 99}, {"shape": "x"}, {"float": "1e400"}, {"what": 1}, {"list": 5}]))
    elif kind == "structure":
        key = data.draw(st.sampled_from(["output_structure", "arg_structure", "num_args", "captures"]))
        fn[key] = data.draw(st.sampled_from([None, [], {"output": 99}, {"spec": 1}, 3, [{"variable": 99}]]))
    return kind


@given(name=st.sampled_from(["mlp", "collatz"]), data=st.data(), sign=st.booleans())
def test_edited_json_fields(saved, name, data, sign):
    before = {}

    def damage(path):
        doc = read_doc(path)
        before["doc"] = read_doc(path)
        _field_edit(data, doc)
        before["changed"] = doc != before["doc"]
        edit_json(path, lambda d: d.update(doc), fix_checksum=sign)

    _, outcome = with_copy(saved, name, damage)
    if before["changed"] and not sign:
        assert outcome == "error"


@given(name=st.sampled_from(["mlp", "collatz"]), data=st.data(), sign=st.booleans())
def test_changed_array_shapes(saved, name, data, sign):
    def damage(path):
        def change(arrays):
            key = data.draw(st.sampled_from(sorted(arrays)), label="array")
            shape = data.draw(st.lists(st.integers(0, 4), max_size=3), label="shape")
            dtype = data.draw(st.sampled_from([arrays[key].dtype, np.float64, np.int8]), label="dtype")
            if tuple(shape) == arrays[key].shape and dtype == arrays[key].dtype:
                shape = list(shape) + [2]
            arrays[key] = np.zeros(shape, dtype)
        rewrite_npz(path, change, fix_checksum=sign)

    _, outcome = with_copy(saved, name, damage)
    assert outcome == "error"


@given(data=st.data())
def test_swapped_registered_op_types(saved, data):
    """A re-signed file that swaps an op for another registered one may be a valid, different
    model: loading and running it must still fail only with clear errors, and run no foreign code."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp"
        shutil.copytree(saved[0] / "mlp", path)
        doc = read_doc(path)
        fn = data.draw(st.sampled_from(doc["model"]["concrete_functions"]))
        op = data.draw(st.sampled_from(_ops(fn["graph"])))
        op["type"] = data.draw(st.sampled_from(sorted(REGISTRY)))
        edit_json(path, lambda d: d.update(doc))
        try:
            loaded = saved_model.load(path)
        except LoadError:
            return
        try:
            out = run("mlp", loaded)
        except (OpError, TypeError, ValueError):
            return
        assert isinstance(out, np.ndarray)


def _members(raw):
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return [(info.filename, z.read(info)) for info in z.infolist()]


def _zip_bytes(members, compression):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a duplicated name is part of the damage
        with zipfile.ZipFile(buf, "w", compression=compression) as z:
            for name, raw in members:
                z.writestr(name, raw)
    return buf.getvalue()


@given(name=st.sampled_from(["mlp", "collatz"]), data=st.data(), sign=st.booleans())
def test_replaced_members(saved, name, data, sign):
    """Arrays of the variables file replaced by random bytes, truncated, deleted, duplicated or
    moved to another member's name, or whole files swapped with the other saved model's (re-signed
    or not): LoadError naming the file, or the original results."""
    other = "collatz" if name == "mlp" else "mlp"
    files = {}

    def damage(path):
        files["before"] = {p.name: p.read_bytes() for p in path.iterdir()}
        replace(path)
        files["after"] = {p.name: p.read_bytes() for p in path.iterdir()}

    def replace(path):
        action = data.draw(st.sampled_from(["member", "swap_json", "swap_arrays", "remove"]))
        if action == "swap_json":   # names an arrays file this directory does not hold
            shutil.copy(saved[0] / other / "saved_model.json", path / "saved_model.json")
            return
        if action == "swap_arrays":
            shutil.copy(arrays_path(saved[0] / other), arrays_path(path))
        elif action == "remove":
            os.remove(data.draw(st.sampled_from([path / "saved_model.json", arrays_path(path)])))
            return
        else:
            members = _members(arrays_path(path).read_bytes())
            i = data.draw(st.integers(0, len(members) - 1), label="member")
            key, raw = members[i]
            how = data.draw(st.sampled_from(["random", "truncate", "delete", "duplicate", "rename"]))
            if how == "random":
                members[i] = (key, data.draw(st.binary(max_size=64)))
            elif how == "truncate":
                members[i] = (key, raw[:data.draw(st.integers(0, max(len(raw) - 1, 0)))])
            elif how == "delete":
                del members[i]
            elif how == "duplicate":
                members.append((key, data.draw(st.sampled_from([b"", raw[:20]]))))
            else:
                members[i] = (data.draw(st.sampled_from([m for m, _ in members] + ["x.npy"])), raw)
            compression = data.draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
            arrays_path(path).write_bytes(_zip_bytes(members, compression))
        if sign:
            raw = arrays_path(path).read_bytes()
            edit_json(path, lambda doc: doc["model"]["files"]["variables.npz"].__setitem__(
                "sha256", hashlib.sha256(raw).hexdigest()))

    _, outcome = with_copy(saved, name, damage)
    if not sign and files["after"] != files["before"]:   # the checksums see every change
        assert outcome == "error"
