"""Layer assets in a `.keras` archive, as Keras 3 keeps them: the files a layer writes with
`save_assets(dir_path)` (a learned vocabulary) are stored under `assets/<layer path>/` and
handed back, in a fresh folder, to `load_assets(dir_path)` of the rebuilt layer.

Owns: `collect(model)` ({archive member: bytes}) and `restore(model, names, read)`. A layer
path is the path Keras gives the layer's weights in `model.weights.h5` (`layers/string_lookup`,
`layers/functional/layers/string_lookup`: keras_h5.weight_groups), so archives move between
Keras and trainlib; archives of trainlib's earlier form (`assets/<layer names>/`) still load.
Invariants: only regular files are collected; a member name that would leave its layer's
folder (`..`, absolute) is a LoadError; reading goes through the caller's `read`, which
applies the archive's load limits; a layer without assets in the archive still gets its
`load_assets` call (its own check says what is missing).
"""
import os
import posixpath
import tempfile

from ..graph.serialization import LoadError
from .keras_h5 import weight_groups

ROOT = "assets/"


def _names_path(model, target, path=""):
    """trainlib's earlier asset path of `target`: the layer names from `model` down."""
    for sub in model._sublayers():
        sub_path = f"{path}{sub.name}/"
        if sub is target:
            return sub_path
        found = _names_path(sub, target, sub_path)
        if found:
            return found
    return None


def _layers_with_assets(model):
    """(Keras's path + "/", layer) for every layer of `model` with save/load hooks."""
    for path, layer in weight_groups(model):
        if hasattr(layer, "save_assets") or hasattr(layer, "load_assets"):
            yield (f"{path}/" if path else ""), layer


def collect(model):
    """{"assets/<layer path>/<file>": bytes} of every layer's `save_assets` files."""
    members = {}
    for path, layer in _layers_with_assets(model):
        if not hasattr(layer, "save_assets"):
            continue
        with tempfile.TemporaryDirectory() as folder:
            layer.save_assets(folder)
            for root, _, files in os.walk(folder):
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not os.path.isfile(full) or os.path.islink(full):
                        continue
                    rel = os.path.relpath(full, folder).replace(os.sep, "/")
                    with open(full, "rb") as f:
                        members[ROOT + path + rel] = f.read()
    return members


def restore(model, names, read):
    """Calls `load_assets` of every layer of `model` with a folder holding its archive members
    (`names`: the archive's member names; `read(name)`: a member's bytes)."""
    for path, layer in _layers_with_assets(model):
        if not hasattr(layer, "load_assets"):
            continue
        prefix = ROOT + path
        if not any(name.startswith(prefix) for name in names):
            legacy = _names_path(model, layer)       # an archive of trainlib's earlier form
            if legacy and any(name.startswith(ROOT + legacy) for name in names):
                prefix = ROOT + legacy
        with tempfile.TemporaryDirectory() as folder:
            for name in names:
                if not name.startswith(prefix) or name.endswith("/"):
                    continue
                rel = name[len(prefix):]
                clean = posixpath.normpath(rel)
                if clean.startswith(("../", "/")) or clean == ".." or posixpath.isabs(rel):
                    raise LoadError(f"asset member {name!r} leaves its layer's folder")
                target = os.path.join(folder, *clean.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(read(name))
            try:
                layer.load_assets(folder)
            except (OSError, ValueError, UnicodeDecodeError) as e:
                raise LoadError(f"layer {path.rstrip('/')!r} could not load its assets "
                                f"({type(e).__name__}: {e})") from e
