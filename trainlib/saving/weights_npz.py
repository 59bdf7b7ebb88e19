"""`.weights.npz` weight files: what `Model.save_weights` / `load_weights` read and write.

Owns: the file (one array per weight, in `weights` order, with the weights'
names and a format tag), written to a temporary file in the target's folder,
synced, then renamed into place, and read with `allow_pickle=False`.
Invariant: a load assigns nothing unless every array fits the model (count,
shape, dtype); every defect raises ValueError naming the file.
"""
import os
import tempfile
import zipfile

import numpy as np

__all__ = ["save_weights", "load_weights"]

FORMAT = "trainlib.weights.v1"


def save_weights(model, filepath, overwrite=True):
    """Writes `model.weights` to an `.npz` file, atomically.

    Raises:
        ValueError: if the name does not end in ".npz".
        FileExistsError: if the file exists and `overwrite` is False.
    """
    filepath = os.fspath(filepath)
    if not filepath.endswith(".npz"):
        raise ValueError(f"save_weights writes .npz files (e.g. 'model.weights.npz'); got "
                         f"{filepath!r}")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(filepath)
    weights = model.weights
    arrays = {f"w{i:05d}": np.asarray(v.numpy()) for i, v in enumerate(weights)}
    arrays["__names__"] = np.array([v.name for v in weights], dtype=np.str_)
    arrays["__format__"] = np.array(FORMAT)
    folder = os.path.dirname(os.path.abspath(filepath))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filepath)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load_weights(model, filepath):
    """Reads weights written by `save_weights` into a built `model` (never unpickles anything).

    Raises:
        ValueError: for a truncated, foreign or mismatched file (naming it), or an unbuilt model.
    """
    filepath = os.fspath(filepath)
    try:
        with np.load(filepath, allow_pickle=False) as data:
            if "__format__" not in data.files or str(data["__format__"]) != FORMAT:
                raise ValueError("it is not a trainlib weights file")
            keys = sorted(k for k in data.files if k.startswith("w"))
            arrays = [data[k] for k in keys]
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise ValueError(f"Cannot load weights from {filepath!r}: {e}") from None
    if not model.built:
        raise ValueError(f"Cannot load weights from {filepath!r} into an unbuilt model: call it "
                         "on data or build() it first")
    try:
        model.set_weights(arrays)
    except ValueError as e:
        raise ValueError(f"Cannot load weights from {filepath!r}: {e}") from None
