"""Keras 3's `.weights.h5` file (HDF5, through h5py): the layout, save and load.

Owns: where each layer's weights live in Keras 3's HDF5 weights layout, and
`save_weights_h5` / `load_weights_h5` on it. Keras 3 stores a model as a tree
of groups: the model's own variables under `vars`, each layer's own variables
(trainable then non-trainable, creation order) under `<path>/vars/0..n`, and
the optimizer's variables under `optimizer/vars`. A layer's path comes from the
walk Keras does: a Sequential or functional model's `layers` list first, then
the object's attributes in name order (public before private); a layer inside a
list or dict is named by its snake-cased class (`dense`, `dense_1`...), a layer
held by an attribute by the attribute's name, and a layer reached twice keeps
its first path. The walk is generic over `_trainable_variables +
_non_trainable_variables` and nested layers, so any layer class goes through it.

Invariants: a save writes a temporary file in the target's folder and renames it
into place (`file_io.write_file_atomically`). A load opens the file only as a
regular file, checks every dataset's declared size against the load budget
before reading it, reads only numeric datasets (no pickle, no code, no object
dtypes), checks every array against the model (shape, dtype) before assigning
any, and reports every defect as `LoadError` naming the file.
"""
import os
import re

import numpy as np

from ..file_io import LoadBudget, open_regular, write_file_atomically
from ..graph.serialization import LoadError
from ..layers import base as layers_base
from . import legacy_h5
from .h5_arrays import check_arrays as _check, declared_bytes, h5py_module as _h5py, \
    open_plain, \
    read_dataset

__all__ = ["save_weights_h5", "load_weights_h5", "write_weights", "read_weights", "weight_groups",
           "declared_bytes"]


def _snake(name):
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def _name_key(name):
    return f"~{name}" if name.startswith("_") else name


def _unique(name, used):
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


_MODEL_TYPES = ("Model", "Functional", "Sequential")
_INTERNAL = {"_layers", "_tracked_layers", "_input_layer", "_functional", "_operations",
             "_self_unconditional_dependency_names", "optimizer"}


def _obj_type(obj):
    """Keras's kind of `obj` ("Layer", "Model", "Functional", "Sequential"; None for others):
    this module sits below the model classes, so it asks instead of importing them."""
    kind = getattr(obj, "_obj_type", None)
    return kind() if callable(kind) else None


def _skipset(obj):
    skip = set(dir(layers_base.Layer)) | _INTERNAL
    if _obj_type(obj) in _MODEL_TYPES:  # the attributes of Keras's Model class itself
        model_class = next(c for c in type(obj).__mro__
                           if "_obj_type" in vars(c) and c._obj_type(obj) == "Model")
        skip |= set(dir(model_class)) - {"layers"}
    return skip


def _children(obj):
    """(attribute name, value) pairs Keras's walk visits below `obj`, in its order."""
    if _obj_type(obj) in ("Sequential", "Functional"):
        yield "layers", obj.layers
    skip = _skipset(obj)
    # Keras walks dir(obj): the instance's attributes and the properties of its class
    # (MultiHeadAttention's `key_dense` names the layer its `_key_dense` holds)
    properties = {n for n in dir(type(obj)) if isinstance(getattr(type(obj), n, None), property)}
    names = [n for n in set(vars(obj)) | properties if not n.startswith("__") and n not in skip]
    if _obj_type(obj) in _MODEL_TYPES and "layers" not in names:
        names.append("layers")
    for name in sorted(names, key=_name_key):
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 -- Keras's walk skips attributes that raise too
            continue
        yield name, value


def weight_groups(model):
    """[(group path, layer)] for every layer under `model` (the model itself at ""), each
    once, at the path Keras 3 gives it in a `.weights.h5` file."""
    out, visited = [], set()

    def visit(layer, path):
        if id(layer) in visited:
            return
        visited.add(id(layer))
        out.append((path, layer))
        for attr, child in _children(layer):
            sub = f"{path}/{attr}" if path else attr
            if isinstance(child, layers_base.Layer):
                visit(child, sub)
            elif isinstance(child, (list, tuple, dict)):
                container(child, sub, set())

    def container(items, path, seen):
        if id(items) in seen:
            return
        seen.add(id(items))
        used = {}
        for item in (items.values() if isinstance(items, dict) else items):
            if isinstance(item, layers_base.Layer):
                visit(item, f"{path}/{_unique(_snake(type(item).__name__), used)}")
            elif isinstance(item, (list, tuple, dict)):
                container(item, f"{path}/{_unique('container', used)}", seen)

    visit(model, "")
    return out


def _own(layer):
    return list(layer._trainable_variables) + list(layer._non_trainable_variables)


def _optimizer_variables(model):
    opt = getattr(model, "optimizer", None)
    variables = list(getattr(opt, "variables", None) or []) if opt is not None else []
    return opt, variables


def _vars_path(path):
    return f"{path}/vars" if path else "vars"


def write_weights(model, f, include_optimizer=True):
    """Writes `model`'s weights (and, if built and asked for, its optimizer's) in Keras 3's
    layout to the binary file object `f`."""
    h5py = _h5py()
    opt, opt_vars = _optimizer_variables(model) if include_optimizer else (None, [])
    with h5py.File(f, "w") as h5:
        for path, layer in weight_groups(model):
            g = h5.create_group(_vars_path(path))
            g.attrs["name"] = layer.name
            for i, v in enumerate(_own(layer)):
                g.create_dataset(str(i), data=np.asarray(v.numpy()))
        if opt_vars:
            g = h5.create_group("optimizer/vars")
            g.attrs["name"] = _snake(type(opt).__name__)
            for i, v in enumerate(opt_vars):
                g.create_dataset(str(i), data=np.asarray(v.numpy()))
            # a LossScaleOptimizer's or MultiOptimizer's inner optimizers are saveables of
            # their own too, as Keras 3 writes them (their variables are also in the outer
            # `variables`, so reading ignores these groups)
            used = {}
            inner = [("inner_optimizer", o) for o in (getattr(opt, "inner_optimizer", None),)
                     if o is not None]
            inner += [(f"optimizers/{_unique(_snake(type(o).__name__), used)}", o)
                      for o in getattr(opt, "optimizers", None) or ()]
            for path, o in inner:
                g = h5.create_group(f"optimizer/{path}/vars")
                g.attrs["name"] = o.name
                for i, v in enumerate(o.variables):
                    g.create_dataset(str(i), data=np.asarray(v.numpy()))


def save_weights_h5(model, filepath):
    """Writes `model`'s weights (and its optimizer's, once built) to `filepath` in Keras 3's
    `.weights.h5` layout, atomically."""
    write_file_atomically(os.fspath(filepath), lambda f: write_weights(model, f))


def _read_group(h5py, group, where, budget):
    """The arrays `0..n-1` of an HDF5 group, each checked for size and kind before reading."""
    names = list(group.keys())
    return [read_dataset(group, str(i), where, budget,
                         f"{where} lacks dataset {i} (holds {sorted(names)})")
            for i in range(len(names))]


def read_weights(model, f, budget, optimizer_variables=None):
    """Reads a Keras 3 weights file (a binary file object) for `model`, assigning nothing.

    Returns:
        ([(variable, array)] for every layer weight, checked; the optimizer's arrays in its
        `variables` order, or None when the file holds none). The optimizer's are checked
        against `optimizer_variables` when given (counted, shaped; integer/float kinds kept).

    Raises:
        LoadError: (without the file's name: callers add it) for any defect.
    """
    h5py = _h5py()
    try:
        try:
            h5 = open_plain(f)
        except OSError as e:
            raise LoadError(f"it is not an HDF5 file ({e})") from None
        with h5:
            pairs = []
            for gpath, layer in weight_groups(model):
                own = _own(layer)
                where = _vars_path(gpath)
                group = h5.get(where)
                if group is None:
                    if not own:
                        continue
                    raise LoadError(f"it has no group '{where}' for layer '{layer.name}' "
                                    f"({type(layer).__name__}); the file's top groups: "
                                    f"{sorted(h5.keys())}")
                if not isinstance(group, h5py.Group):
                    raise LoadError(f"'{where}' is not a group")
                arrays = _read_group(h5py, group, where, budget)
                _check(where, own, arrays, f"layer '{layer.name}'")
                pairs.extend(zip(own, arrays))
            group = h5.get("optimizer/vars")
            opt_arrays = None
            if isinstance(group, h5py.Group) and len(group.keys()):
                opt_arrays = _read_group(h5py, group, "optimizer/vars", budget)
                if optimizer_variables is not None:
                    _check("optimizer/vars", optimizer_variables, opt_arrays, "the optimizer",
                           same_kind=True)
                    opt_arrays = [a.astype(v.dtype.np)
                                  for v, a in zip(optimizer_variables, opt_arrays)]
            return pairs, opt_arrays
    except LoadError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError) as e:  # h5py's errors on a damaged file
        raise LoadError(f"the HDF5 file is damaged ({type(e).__name__}: {e})") from None


def _is_legacy(f):
    """True for a file in tf.keras 2's HDF5 layout (the file object is rewound)."""
    try:
        with _h5py().File(f, "r") as h5:
            return legacy_h5.is_legacy_file(h5)
    except OSError:
        return False     # not HDF5: read_weights says so
    finally:
        f.seek(0)


def load_weights_h5(model, filepath, max_bytes=None):
    """Assigns the weights of a Keras 3 `.weights.h5` file (Keras's or `save_weights_h5`'s)
    to the built `model`; the optimizer's too when the file and the built optimizer both
    hold them. A file in tf.keras 2's layout (its `save_weights("w.h5")` or a whole-model
    `.h5`) is read by trainlib/saving/legacy_h5.py, layers matched in order. Nothing is
    assigned unless every array fits.

    Raises:
        LoadError: naming the file, for a file that is not HDF5, lacks a layer's group,
            or holds arrays that do not fit the model (count, shape, dtype) or the limits.
        ValueError: for an unbuilt model.
        FileNotFoundError: if there is no such file.
    """
    path = os.fspath(filepath)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No weights file at {path!r}")
    if not model.built:
        raise ValueError(f"Cannot load weights from {path!r} into an unbuilt model: call it "
                         "on data or build() it first")
    _, opt_vars = _optimizer_variables(model)
    budget = LoadBudget(path, max_bytes)
    budget.size_to(declared_bytes(model.weights + opt_vars))
    try:
        f, _ = open_regular(path, follow_symlinks=True)
    except LoadError as e:
        raise LoadError(f"Cannot load weights from {e}") from None
    try:
        with f:
            if _is_legacy(f):   # tf.keras 2's layout: layers matched in order, no optimizer
                pairs, opt_arrays = legacy_h5.read_legacy_weights(
                    model, open_plain(f), budget), None
            else:
                pairs, opt_arrays = read_weights(model, f, budget, opt_vars or None)
    except LoadError as e:
        raise LoadError(f"Cannot load weights from {path!r}: {e}") from None
    except (OSError, KeyError, ValueError, RuntimeError) as e:   # h5py on a damaged file
        raise LoadError(f"Cannot load weights from {path!r}: the HDF5 file is damaged "
                        f"({type(e).__name__}: {e})") from None
    if opt_vars and opt_arrays is not None:
        pairs.extend(zip(opt_vars, opt_arrays))
    for v, a in pairs:
        v.assign(a)
