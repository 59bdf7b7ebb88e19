"""Editing saved models on disk for tests: JSON fields and npz arrays, optionally re-signing them
(recomputing the checksums, as a deliberate hand edit would), so the checks behind the checksum
are exercised too."""
import hashlib
import io
import json

import numpy as np

from trainlib.saved_model import _checksum


def arrays_path(path):
    """The arrays file `saved_model.json` names (`variables.<content hash>.npz`; the old layout's
    `variables.npz`)."""
    entry = read_doc(path)["model"]["files"]["variables.npz"]
    return path / entry.get("file", "variables.npz")


def read_doc(path):
    return json.loads((path / "saved_model.json").read_text())


def write_doc(path, doc, fix_checksum=True):
    if fix_checksum:
        doc["checksum"] = _checksum(doc["model"])
    (path / "saved_model.json").write_text(json.dumps(doc))


def edit_json(path, change, fix_checksum=True):
    doc = read_doc(path)
    change(doc)
    write_doc(path, doc, fix_checksum)


def rewrite_npz(path, change, fix_checksum=True):
    with np.load(arrays_path(path), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    change(arrays)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    arrays_path(path).write_bytes(buf.getvalue())
    if fix_checksum:
        doc = read_doc(path)
        doc["model"]["files"]["variables.npz"]["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
        write_doc(path, doc)
