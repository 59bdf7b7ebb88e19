"""The `.keras` whole-model file (Keras 3's format, weights as `.npz`): save, load, registration.

Owns: the archive (a zip holding `config.json`: the model's class, config,
per-layer build shapes and compile config; `metadata.json`: format and
versions; `model.weights.npz`: the model's weights in `weights` order and the
optimizer's variables in `variables` order), the `.weights.npz` file of
`save_weights` / `load_weights`, `register_keras_serializable`, and the
whole-model half of `tl.saving.save_model` / `load_model`.

Invariants: a save writes a temporary file in the target's folder and renames
it into place, so an existing file is never left half-written (and removes the
temporaries of killed saves: `file_io.write_file_atomically`). A load reads
`config.json` first, rebuilds the model, and reads the weights within limits
sized to the rebuilt model's weights (`file_io.LoadBudget`). Loading never
runs code from the file: layer classes come only from the layer registry (or
the caller's `custom_objects`), optimizers, losses and metrics only from
trainlib's tables, arrays only through `file_io.read_npz` (no pickle). Every
defect of the file (truncated, corrupted, edited, unknown class, weights that
do not fit the rebuilt model) raises `LoadError` (a ValueError) naming the file
and the problem; weights are assigned only after all of them were checked
against the rebuilt model (count, shape and dtype), never cast or skipped.
"""
import datetime
import io
import json
import os
import re
import sys
import zipfile

import numpy as np

from ..file_io import LoadBudget, open_regular, open_zip, read_npz, read_zip_member, \
    write_file_atomically
from ..graph.serialization import LoadError
from ..layers import base as layers_base
from ..saving.object_registration import (get_registered_name, get_registered_object,  # noqa: F401
                                          register_keras_serializable)
from ..trainers.compile_utils import compile_config, compile_from_config

__all__ = ["save_model", "load_model", "load_weights", "register_keras_serializable",
           "get_registered_name", "get_registered_object", "LoadError"]

FORMAT = "trainlib.keras"
FORMAT_VERSION = 1
CONFIG_FILE, METADATA_FILE, WEIGHTS_FILE = "config.json", "metadata.json", "model.weights.npz"
_H5_HINT = ("whole-model HDF5 files (tf.keras 2's legacy '.h5') are not supported: save the "
            "whole model as '.keras' (model.save('model.keras')); weights go to '.weights.h5' "
            "(model.save_weights('model.weights.h5'), Keras 3's layout).")

# ------------------------------------------------------------------ configs

def _encode_shapes(value):
    """A build shape (a tuple of ints/None, or a nested list/tuple/dict of them) as JSON."""
    if value is None:
        return None
    if hasattr(value, "as_list") and getattr(value, "rank", None) is not None:
        value = tuple(value.as_list())   # a TensorShape handed to build()
    if isinstance(value, (tuple, list)) and all(d is None or isinstance(d, (int, np.integer))
                                                for d in value):
        return {"shape": [None if d is None else int(d) for d in value]}
    if isinstance(value, (tuple, list)):
        return [_encode_shapes(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): _encode_shapes(v) for k, v in value.items()}}
    raise TypeError(f"cannot record the build shape {value!r}")


def _decode_shapes(value):
    if value is None:
        return None
    if isinstance(value, list):
        return [_decode_shapes(v) for v in value]
    if isinstance(value, dict) and set(value) == {"shape"} and isinstance(value["shape"], list):
        for d in value["shape"]:
            if d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0):
                raise LoadError(f"a build shape holds {d!r}, expected a non-negative int or null")
        return tuple(value["shape"])
    if isinstance(value, dict) and set(value) == {"dict"} and isinstance(value["dict"], dict):
        return {k: _decode_shapes(v) for k, v in value["dict"].items()}
    raise LoadError(f"malformed build shape {value!r}")


def _build_tree(layer):
    """Each layer's build input shape, nested like `_sublayers()` (for models built by calls)."""
    return {"input_shape": _encode_shapes(layer._build_input_shape) if layer.built else None,
            "layers": [_build_tree(sub) for sub in layer._sublayers()]}


def _apply_build_tree(layer, tree):
    """Builds `layer` and its sublayers, depth first, from the shapes `_build_tree` recorded."""
    if not isinstance(tree, dict):
        raise LoadError(f"malformed build_config for layer '{layer.name}'")
    shape = _decode_shapes(tree.get("input_shape"))
    if not layer.built and shape is not None:
        layer.build(shape)
        layer._build_input_shape = shape
        layer.built = True
    subtrees = tree.get("layers") or []
    for sub, subtree in zip(layer._sublayers(), subtrees):
        _apply_build_tree(sub, subtree)


# ------------------------------------------------------------------ save

def _check_extension(filepath, zipped=None):
    path = os.fspath(filepath)
    if path.endswith((".h5", ".hdf5")):
        raise ValueError(f"Cannot save to {path!r}: {_H5_HINT}")
    if not path.endswith(".keras"):
        raise ValueError("Invalid filepath extension for saving. Please add a `.keras` extension "
                         "for the native Keras format. Use `model.export(filepath)` if you want "
                         "to export a SavedModel for serving (tl.saved_model.load). Received: "
                         f"filepath={path}")
    if zipped is False:
        raise ValueError("zipped=False (an unzipped .keras directory) is not supported; save a "
                         "zipped '.keras' file")
    return path


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves `model` (architecture, weights, compile config, optimizer state) as a `.keras` file.

    Args:
        model: a Sequential, functional or registered subclassed `tl.Model`.
        filepath: a path ending in ".keras".
        overwrite: if False, an existing file raises FileExistsError.
        zipped: True or None (a zip archive; an unzipped directory is not supported).

    Raises:
        ValueError: for another extension (".h5" needs h5py; use `model.export` for a
            SavedModel), or a compile argument that cannot be written.
        FileExistsError: if the file exists and `overwrite` is False.

    Example:
        >>> model.save("model.keras")
        >>> restored = tl.saving.load_model("model.keras")
    """
    if kwargs.get("save_format") not in (None, "keras"):
        raise ValueError(f"save_format={kwargs['save_format']!r} is not supported: save a '.keras' "
                         "file, or use model.export(filepath) for a SavedModel")
    kwargs.pop("save_format", None)
    kwargs.pop("include_optimizer", None)
    if kwargs:
        raise TypeError(f"save got unexpected keyword arguments {sorted(kwargs)}")
    path = _check_extension(filepath, zipped)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it")
    # everything is encoded before the file is touched: a failure leaves nothing behind
    config = {"module": type(model).__module__, "class_name": type(model).__name__,
              "registered_name": get_registered_name(type(model)),
              "config": model.get_config(),
              "build_config": _build_tree(model),
              "compile_config": compile_config(model)}
    config_bytes = json.dumps(config, indent=1, allow_nan=False).encode("utf-8")
    metadata = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "trainlib_version": getattr(sys.modules.get("trainlib"), "__version__", "unknown"),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = _weight_arrays(model)
    buffer = io.BytesIO()
    np.savez(buffer, **weights)

    def write(f):
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(METADATA_FILE, json.dumps(metadata, indent=1))
            archive.writestr(CONFIG_FILE, config_bytes)
            archive.writestr(WEIGHTS_FILE, buffer.getvalue())

    write_file_atomically(path, write, legacy_temps=_LEGACY_TEMPS)


# what saves of older versions named their temporaries (tempfile.mkstemp in the same folder)
_LEGACY_TEMPS = re.compile(r"\.tmp-[a-z0-9_]{8}\.(keras|npz)")


def _weight_arrays(model):
    weights = model.weights
    arrays = {f"model_{i:05d}": np.asarray(v.numpy()) for i, v in enumerate(weights)}
    paths = _weight_paths(model)
    arrays["model_paths"] = np.array([paths.get(id(v), v.name) for v in weights], dtype=np.str_)
    opt = getattr(model, "optimizer", None) if getattr(model, "compiled", False) else None
    if opt is not None:
        arrays.update({f"optimizer_{i:05d}": np.asarray(v.numpy())
                       for i, v in enumerate(opt.variables)})
        arrays["optimizer_built"] = np.array(bool(opt.built))
    return arrays


# ------------------------------------------------------------------ load

class _Archive:
    """An open `.keras` file: its zip, read within one LoadBudget; every defect a LoadError."""

    def __init__(self, path, budget):
        self.path, self.budget = path, budget
        f, _ = open_regular(path, follow_symlinks=True)   # never a pipe or a device
        try:
            self.zip = open_zip(f)
        except BaseException:
            f.close()
            raise
        self.file = f
        names = set(self.zip.namelist())
        for needed in (METADATA_FILE, CONFIG_FILE, WEIGHTS_FILE):
            if needed not in names:
                raise LoadError(f"the archive has no {needed!r} (it holds {sorted(names)[:10]})")

    def close(self):
        self.zip.close()
        self.file.close()

    def config(self):
        """(config, metadata), checked to describe a file this trainlib reads."""
        metadata = json.loads(read_zip_member(self.zip, METADATA_FILE, self.budget, json=True))
        config = json.loads(read_zip_member(self.zip, CONFIG_FILE, self.budget, json=True))
        if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
            raise LoadError(f"{METADATA_FILE} does not describe a {FORMAT} file")
        version = metadata.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
            raise LoadError(f"format version {version!r} is not supported (this trainlib reads "
                            f"version {FORMAT_VERSION} and older): upgrade trainlib")
        if not isinstance(config, dict):
            raise LoadError(f"{CONFIG_FILE} is not a JSON object")
        return config, metadata

    def arrays(self, declared_bytes):
        """The weights archive's arrays, the load limit sized to the model's declared weights."""
        self.budget.size_to(declared_bytes)
        data = read_zip_member(self.zip, WEIGHTS_FILE, self.budget)
        return read_npz(io.BytesIO(data), self.budget, WEIGHTS_FILE)


def _with_archive(path, budget, work):
    """`work(archive)` on the open `.keras` file; any defect becomes LoadError naming `path`."""
    try:
        archive = _Archive(path, budget)
    except FileNotFoundError:
        raise
    except LoadError as e:
        raise LoadError(_named(path, e)) from None
    except Exception as e:  # noqa: BLE001 -- any defect of the bytes is the file's
        raise LoadError(f"Cannot load {path!r}: it is truncated, corrupted or not a .keras file "
                        f"({type(e).__name__}: {e})") from None
    try:
        return work(archive)
    except LoadError as e:
        raise LoadError(_named(path, e)) from e.__cause__
    except Exception as e:  # noqa: BLE001 -- an edited file can fail anywhere (zip, JSON, config)
        raise LoadError(f"Cannot load {path!r}: it is truncated, corrupted or edited "
                        f"({type(e).__name__}: {e})") from e
    finally:
        archive.close()


def _named(path, error):
    """The message of `error` as "Cannot load '<path>': what is wrong"."""
    text = str(error)
    if text.startswith(f"Cannot load {path!r}"):
        return text
    if text.startswith(f"{path}: "):   # the limits and the npz reader name the file first
        text = text[len(path) + 2:]
    return f"Cannot load {path!r}: {text}"


def _declared_bytes(variables):
    return sum(int(np.prod(v.shape, dtype=np.int64)) * v.dtype.np.itemsize for v in variables)


def _saved_list(arrays, prefix):
    """The arrays `prefix_00000`, `prefix_00001`... in order; LoadError if one is missing."""
    keys = sorted(k for k in arrays if k.startswith(prefix + "_") and k[len(prefix) + 1:].isdigit())
    for i, k in enumerate(keys):
        if k != f"{prefix}_{i:05d}":
            raise LoadError(f"the weights file lacks {prefix} array {i}")
    return [arrays[k] for k in keys]


def _weight_paths(layer, prefix=""):
    """{id(variable): "model/layer/name"} for every weight under `layer`, for messages."""
    prefix = f"{prefix}{layer.name}/"
    out = {}
    for v in layer._trainable_variables + layer._non_trainable_variables:
        out.setdefault(id(v), prefix + v.name.split(":")[0])
    for sub in layer._sublayers():
        for key, path in _weight_paths(sub, prefix).items():
            out.setdefault(key, path)
    return out


def _check_arrays(what, variables, arrays, paths=None):
    """Raises LoadError unless `arrays` fit `variables` exactly (count, shape, dtype)."""
    if len(arrays) != len(variables):
        raise LoadError(f"the file holds {len(arrays)} {what} weights, the model has "
                        f"{len(variables)}")
    for i, (v, a) in enumerate(zip(variables, arrays)):
        label = f"{what} weight {i} ('{(paths or {}).get(id(v), v.name)}')"
        if tuple(a.shape) != tuple(v.shape):
            raise LoadError(f"{label} has shape {tuple(a.shape)} in the file, the model expects "
                            f"{tuple(v.shape)}")
        if a.dtype != v.dtype.np:
            raise LoadError(f"{label} has dtype {a.dtype} in the file, the model expects "
                            f"{v.dtype.name}")


def _rebuild(config, custom_objects):
    """The model `config.json` describes, built, with freshly initialized weights."""
    class_name, layer_config = config.get("class_name"), config.get("config")
    if not isinstance(class_name, str) or not isinstance(layer_config, dict):
        raise LoadError(f"{CONFIG_FILE} needs a 'class_name' string and a 'config' object")
    registered = config.get("registered_name")
    cls = get_registered_object(class_name, custom_objects)
    if cls is None and isinstance(registered, str):
        cls = get_registered_object(registered, custom_objects)
    if not isinstance(cls, type) or not issubclass(cls, layers_base.Layer):
        raise LoadError(f"unknown model class {class_name!r}: pass it in custom_objects or "
                        "decorate it with tl.saving.register_keras_serializable()")
    try:
        if hasattr(cls, "_from_config_custom"):
            model = cls._from_config_custom(layer_config, custom_objects)
        else:
            model = cls.from_config(layer_config)
    except LoadError:
        raise
    except Exception as e:  # noqa: BLE001 -- reported with the class, the config and the cause
        hint = ""
        if "get_config" not in vars(cls):
            hint = (f" If {cls.__name__} takes constructor arguments, implement get_config() to "
                    "return them (and from_config(cls, config) if they need rebuilding).")
        raise LoadError(f"could not rebuild {class_name} from its config "
                        f"({type(e).__name__}: {e}).{hint}") from e
    if model._obj_type() not in ("Model", "Functional", "Sequential"):  # Model imports this
        raise LoadError(f"{class_name} is not a tl.Model")
    build = config.get("build_config")
    if build is not None:
        _apply_build_tree(model, build)
    return model


def _restore(model, config, arrays, custom_objects, compile):
    """Compiles `model` as saved and assigns the file's weights and optimizer state, all checked
    (count, shape, dtype) before any is assigned."""
    model_arrays = _saved_list(arrays, "model")
    _check_arrays("model", model.weights, model_arrays, _weight_paths(model))
    compiled = config.get("compile_config") if compile else None
    opt_arrays = _saved_list(arrays, "optimizer")
    if compiled is not None:
        compile_from_config(model, compiled, custom_objects)
        built = arrays.get("optimizer_built")
        if built is not None and built.shape == () and built.dtype == np.bool_ and bool(built) \
                and model.trainable_variables:
            model.optimizer.build(model.trainable_variables)
        _check_arrays("optimizer", model.optimizer.variables, opt_arrays)
    for v, a in zip(model.weights, model_arrays):
        v.assign(a)
    if compiled is not None:
        for v, a in zip(model.optimizer.variables, opt_arrays):
            v.assign(a)
    return model


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, max_bytes=None,
               max_member_bytes=None):
    """Loads a model saved as a `.keras` file: same class, weights, compile config, optimizer state.

    Training resumes exactly: the optimizer is rebuilt with its slots and
    `iterations`, so the next step gives the weights the original model would.

    Args:
        filepath: a `.keras` file written by `model.save` / `tl.saving.save_model`.
        custom_objects: {name: class or function} for classes and functions that are not
            registered (subclassed models, custom layers, losses, metrics).
        compile: if False, the model is returned uncompiled (no optimizer state).
        safe_mode: accepted for Keras compatibility; loading never runs code from the file.
        max_bytes: the most bytes the load may decompress, every member and nesting level
            together (default: `tl.saving.set_load_limits`'s, else eight times the rebuilt
            model's weights plus 64 MiB).
        max_member_bytes: the most bytes one member may hold (default: 64 MiB for the JSON
            configs, `max_bytes` for the weights).

    Returns:
        The `tl.Model`.

    Raises:
        LoadError: (a ValueError) naming the file, for a truncated, corrupted or edited
            file, an unknown class, weights that do not fit the rebuilt model, a pipe or
            device instead of a file, or a file past the limits.
        FileNotFoundError: if there is no such file.
    """
    path = os.fspath(filepath)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No .keras file at {path!r}")

    def work(archive):
        config, _ = archive.config()
        model = _rebuild(config, custom_objects)
        arrays = archive.arrays(_declared_bytes(model.weights))
        return _restore(model, config, arrays, custom_objects, compile)

    return _with_archive(path, LoadBudget(path, max_bytes, max_member_bytes), work)


def load_weights(model, filepath):
    """Assigns the model weights stored in a `.keras` file to a built `model` of that architecture.

    Raises:
        LoadError: for a defective file or weights that do not fit `model`.
        ValueError: for an `.h5` file (needs h5py).
    """
    path = os.fspath(filepath)
    if path.endswith((".h5", ".hdf5")):
        raise ValueError(f"Cannot load weights from {path!r}: {_H5_HINT}")
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No .keras file at {path!r}")

    def work(archive):
        archive.config()
        model_arrays = _saved_list(archive.arrays(_declared_bytes(model.weights)), "model")
        _check_arrays("model", model.weights, model_arrays, _weight_paths(model))
        return model_arrays

    for v, a in zip(model.weights, _with_archive(path, LoadBudget(path), work)):
        v.assign(a)


# ------------------------------------------------------------------ .weights.npz

WEIGHTS_NPZ_FORMAT = "trainlib.weights.v1"


def save_weights_npz(model, filepath):
    """Writes `model`'s weights, in `weights` order, to an `.npz` file, atomically."""
    weights = model.weights
    arrays = {f"w{i:05d}": np.asarray(v.numpy()) for i, v in enumerate(weights)}
    arrays["__names__"] = np.array([v.name for v in weights], dtype=np.str_)
    arrays["__format__"] = np.array(WEIGHTS_NPZ_FORMAT)
    write_file_atomically(filepath, lambda f: np.savez(f, **arrays), legacy_temps=_LEGACY_TEMPS)


def load_weights_npz(model, filepath):
    """Assigns the weights of an `.npz` file written by `save_weights` to the built `model`.

    The file is read within the load limits (sized to the model's weights), never
    unpickled, and checked entirely (count, shape, dtype) before any weight is assigned.

    Raises:
        LoadError: naming the file, for a truncated, corrupted or foreign file (any zip or
            npy defect), weights that do not fit, a pipe or device, or a file past the limits.
        ValueError: for an unbuilt model.
        FileNotFoundError: if there is no such file.
    """
    path = os.fspath(filepath)
    if not model.built:
        raise ValueError(f"Cannot load weights from {path!r} into an unbuilt model: call it "
                         "on data or build() it first")
    budget = LoadBudget(path)
    budget.size_to(_declared_bytes(model.weights))
    try:
        f, _ = open_regular(path, follow_symlinks=True)
    except LoadError as e:
        raise LoadError(f"Cannot load weights from {e}") from None
    with f:
        try:
            data = read_npz(f, budget)
        except LoadError as e:
            raise LoadError(f"Cannot load weights from {e}") from None
    try:
        fmt = data.get("__format__")
        if fmt is None or fmt.shape != () or fmt.dtype.kind != "U" or str(fmt) != WEIGHTS_NPZ_FORMAT:
            raise LoadError("it is not a trainlib weights file")
        keys = sorted(k for k in data if k.startswith("w"))
        model_arrays = [data[k] for k in keys]
        for i, k in enumerate(keys):
            if k != f"w{i:05d}":
                raise LoadError(f"the file lacks weight {i}")
        _check_arrays("model", model.weights, model_arrays, _weight_paths(model))
    except LoadError as e:
        raise LoadError(f"Cannot load weights from {path!r}: {e}") from None
    for v, a in zip(model.weights, model_arrays):
        v.assign(a)
