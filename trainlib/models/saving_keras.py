"""The `.keras` whole-model file, in Keras 3's format: save, load, registration.

Owns: the archive Keras 3 writes and reads (a zip holding `config.json`: the
model as `serialize_keras_object` writes it, with `module`, `class_name`,
`registered_name`, `build_config` and Keras's `compile_config`;
`metadata.json`: the Keras version the layout follows, plus trainlib's format
marker; `model.weights.h5`: the model's and the optimizer's variables in Keras
3's HDF5 layout, trainlib/saving/keras_h5.py; `assets/<layer path>/`: the files
layers write with `save_assets`), the reading of trainlib's first `.keras`
format (metadata `format_version` 1, weights in `model.weights.npz`), the
`.weights.npz` file of `save_weights` / `load_weights`,
`register_keras_serializable`, and the whole-model half of
`tl.saving.save_model` / `load_model`. Files move both ways between Keras 3 and
trainlib for the layers trainlib has.

Invariants: a save writes a temporary file in the target's folder and renames
it into place, so an existing file is never left half-written (and removes the
temporaries of killed saves: `file_io.write_file_atomically`). A load reads
`config.json` first, rebuilds the model, and reads the weights within limits
sized to the rebuilt model's weights (`file_io.LoadBudget`). Loading never
runs code from the file: layer classes come only from the layer registry (or
the caller's `custom_objects`), optimizers, losses and metrics only from
trainlib's tables, arrays only through h5py's numeric datasets or
`file_io.read_npz` (no pickle). Every defect of the file (truncated, corrupted,
edited, unknown class, weights that do not fit the rebuilt model) raises
`LoadError` (a ValueError) naming the file and the problem; model weights are
assigned only after all of them were checked against the rebuilt model (count,
shape and dtype), never cast or skipped. An optimizer state that does not fit
the rebuilt optimizer is left out with a warning, as Keras 3 does.
"""
import datetime
import io
import json
import os
import re
import sys
import warnings
import zipfile

import numpy as np

from ..file_io import LoadBudget, open_regular, open_zip, read_npz, read_zip_member, \
    write_file_atomically
from ..graph.serialization import LoadError
from ..layers import base as layers_base
from ..saving import keras_h5, layer_assets, legacy_h5
from ..saving.object_registration import (get_registered_name, get_registered_object,  # noqa: F401
                                          register_keras_serializable)
from ..saving.serialization_lib import serialize_keras_object
from ..settings import safe_mode_scope
from ..trainers.compile_utils import compile_config, compile_from_config  # noqa: F401

__all__ = ["save_model", "load_model", "load_weights", "register_keras_serializable",
           "get_registered_name", "get_registered_object", "LoadError"]

FORMAT = "trainlib.keras"
FORMAT_VERSION = 2          # 1: weights as model.weights.npz (still read); 2: Keras 3's layout
KERAS_VERSION = "3.15.1"    # the Keras release whose `.keras` layout the files follow
CONFIG_FILE, METADATA_FILE = "config.json", "metadata.json"
WEIGHTS_FILE, WEIGHTS_H5_FILE = "model.weights.npz", "model.weights.h5"

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
    save_format = kwargs.pop("save_format", None)
    kwargs.pop("include_optimizer", None)
    if kwargs:
        raise TypeError(f"save got unexpected keyword arguments {sorted(kwargs)}")
    path = os.fspath(filepath)
    if save_format == "tf":   # tf.keras 2's SavedModel: Keras 3 calls it model.export
        warnings.warn("save_format='tf' is tf.keras 2's SavedModel: written with "
                      "model.export(filepath) (load it with tl.saved_model.load); save the "
                      "whole model as '.keras' to resume training", DeprecationWarning,
                      stacklevel=3)
        if not overwrite and os.path.exists(path):
            raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it")
        from ..saved_model import export_model  # noqa: PLC0415 -- saving sits above models
        export_model(model, path)
        return
    if save_format == "h5" or (save_format is None and path.endswith((".h5", ".hdf5"))):
        legacy_h5.save_model_h5(model, path, serialize_keras_object(model), _weight_paths(model),
                      KERAS_VERSION, overwrite=overwrite)
        return
    if save_format not in (None, "keras"):
        raise ValueError(f"save_format={save_format!r} is not supported: 'keras' (a '.keras' "
                         "file), 'h5' (tf.keras 2's HDF5 file) or 'tf' (a SavedModel, as "
                         "model.export)")
    path = _check_extension(filepath, zipped)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it")
    # everything is encoded before the file is touched: a failure leaves nothing behind
    config = serialize_keras_object(model)
    config.setdefault("build_config", None)
    config.setdefault("compile_config", None)
    if config["build_config"] is not None and \
            model._obj_type() not in ("Functional", "Sequential"):
        # Keras rebuilds a subclassed model by calling it; trainlib also records each
        # sublayer's build shape (Keras ignores the key)
        config["build_config"]["trainlib_build_tree"] = _build_tree(model)
    config_bytes = json.dumps(config, indent=1, allow_nan=False).encode("utf-8")
    metadata = {"keras_version": KERAS_VERSION, "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "trainlib_version": getattr(sys.modules.get("trainlib"), "__version__", "unknown"),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = io.BytesIO()
    keras_h5.write_weights(model, weights,
                           include_optimizer=bool(getattr(model, "compiled", False)))
    assets = layer_assets.collect(model)   # learned vocabularies, as Keras 3's assets/

    def write(f):
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(METADATA_FILE, json.dumps(metadata, indent=1))
            archive.writestr(CONFIG_FILE, config_bytes)
            archive.writestr(WEIGHTS_H5_FILE, weights.getvalue())
            for name, data in assets.items():
                archive.writestr(name, data)

    write_file_atomically(path, write, legacy_temps=_LEGACY_TEMPS)


# what saves of older versions named their temporaries (tempfile.mkstemp in the same folder)
_LEGACY_TEMPS = re.compile(r"\.tmp-[a-z0-9_]{8}\.(keras|npz)")


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
        self.names = set(self.zip.namelist())
        for needed in (METADATA_FILE, CONFIG_FILE):
            if needed not in self.names:
                raise LoadError(f"the archive has no {needed!r} (it holds "
                                f"{sorted(self.names)[:10]})")
        self.npz = False     # trainlib's first format (weights as model.weights.npz)

    def close(self):
        self.zip.close()
        self.file.close()

    def config(self):
        """(config, metadata), checked to describe a file this trainlib reads: one written by
        Keras 3, by this trainlib, or by an older one (weights in `.npz`)."""
        metadata = json.loads(read_zip_member(self.zip, METADATA_FILE, self.budget, json=True))
        config = json.loads(read_zip_member(self.zip, CONFIG_FILE, self.budget, json=True))
        if not isinstance(metadata, dict):
            raise LoadError(f"{METADATA_FILE} is not a JSON object")
        if metadata.get("format") == FORMAT:
            version = metadata.get("format_version")
            if not isinstance(version, int) or isinstance(version, bool) or \
                    version > FORMAT_VERSION or version < 1:
                raise LoadError(f"format version {version!r} is not supported (this trainlib "
                                f"reads version {FORMAT_VERSION} and older): upgrade trainlib")
            self.npz = version == 1
        elif not isinstance(metadata.get("keras_version"), str):
            raise LoadError(f"{METADATA_FILE} describes neither a Keras nor a {FORMAT} file")
        weights = WEIGHTS_FILE if self.npz else WEIGHTS_H5_FILE
        if weights not in self.names:
            raise LoadError(f"the archive has no {weights!r} (it holds "
                            f"{sorted(self.names)[:10]})")
        if not isinstance(config, dict):
            raise LoadError(f"{CONFIG_FILE} is not a JSON object")
        return config, metadata

    def arrays(self, declared_bytes):
        """The npz weights archive's arrays (the first format), the load limit sized to the
        model's declared weights."""
        self.budget.size_to(declared_bytes)
        data = read_zip_member(self.zip, WEIGHTS_FILE, self.budget)
        return read_npz(io.BytesIO(data), self.budget, WEIGHTS_FILE)

    def weights_h5(self, model, declared_bytes):
        """Keras 3's weights member read for `model`: ([(variable, array)], optimizer arrays
        or None), every array checked against the model, nothing assigned."""
        self.budget.size_to(declared_bytes)
        data = read_zip_member(self.zip, WEIGHTS_H5_FILE, self.budget)
        try:
            return keras_h5.read_weights(model, io.BytesIO(data), self.budget)
        except LoadError as e:
            raise LoadError(f"{WEIGHTS_H5_FILE}: {e}") from None


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


def _instantiate(config, custom_objects):
    """The model class `config.json` names, made from its config (not yet built)."""
    class_name, layer_config = config.get("class_name"), config.get("config")
    if not isinstance(class_name, str) or not isinstance(layer_config, dict):
        raise LoadError(f"{CONFIG_FILE} needs a 'class_name' string and a 'config' object")
    registered = config.get("registered_name")
    cls = get_registered_object(registered, custom_objects) if isinstance(registered, str) \
        else None
    cls = cls or get_registered_object(class_name, custom_objects)
    if not isinstance(cls, type) or not issubclass(cls, layers_base.Layer):
        raise LoadError(f"unknown model class {class_name!r} (module {config.get('module')!r}): "
                        "pass it in custom_objects or decorate it with "
                        "tl.saving.register_keras_serializable()")
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
    return model


def _rebuild(config, custom_objects):
    """The model a first-format `config.json` describes, built, with fresh weights."""
    model = _instantiate(config, custom_objects)
    build = config.get("build_config")
    if build is not None:
        _apply_build_tree(model, build)
    return model


def _unbuilt(layer):
    return not layer.built or any(_unbuilt(sub) for sub in layer._sublayers())


def _keras_shape(value):
    if isinstance(value, list) and value and all(isinstance(v, (list, type(None)))
                                                 for v in value) and \
            any(isinstance(v, list) for v in value):
        return [_keras_shape(v) for v in value]
    if isinstance(value, list):
        for d in value:
            if d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0):
                raise LoadError(f"a build shape holds {d!r}, expected a non-negative int or null")
        return tuple(value)
    raise LoadError(f"malformed build shape {value!r}")


def _rebuild_keras(config, custom_objects):
    """The model a Keras 3 `config.json` describes, built as Keras builds it: Sequential and
    functional models by their configs, a subclassed model by `build(input_shape)` or, when
    that leaves layers unbuilt, by a call on a symbolic input of that shape."""
    # Keras 2.13-2.15 wrote `.keras` files too: their configs name keras.src.engine modules
    model = _instantiate(legacy_h5.keras2_config(config), custom_objects)
    build = config.get("build_config")
    if not isinstance(build, dict):
        return model
    if isinstance(build.get("trainlib_build_tree"), dict):
        _apply_build_tree(model, build["trainlib_build_tree"])
        return model
    shape = build.get("input_shape")
    if shape is None or not _unbuilt(model):
        return model
    shape = _keras_shape(shape)
    if type(model).build is not layers_base.Layer.build:
        model.build(shape)
        model._build_input_shape, model.built = shape, True
    if _unbuilt(model):
        make = layers_base.InputLayer
        inputs = [make(batch_shape=s).output for s in shape] if isinstance(shape, list) \
            else make(batch_shape=shape).output
        model(inputs)
        model._build_input_shape, model.built = shape, True
    return model


def _restore_keras(model, config, archive, custom_objects, compile):
    """Compiles `model` as saved and assigns the weights of Keras 3's `model.weights.h5` (and
    the optimizer's, when the file holds them and they fit), all checked before any is
    assigned; then the layers' assets."""
    compiled = config.get("compile_config") if compile else None
    if compiled:
        compile_from_config(model, compiled, custom_objects)
    pairs, opt_arrays = archive.weights_h5(model, _declared_bytes(model.weights))
    if compiled and opt_arrays is not None and model.trainable_variables:
        optimizer = model.optimizer
        optimizer.build(model.trainable_variables)
        try:
            keras_h5._check("optimizer/vars", optimizer.variables, opt_arrays, "the optimizer",
                            same_kind=True)
        except LoadError as e:   # as Keras: the model loads, its optimizer starts afresh
            warnings.warn(f"{archive.path}: the optimizer's state was not restored: {e}",
                          stacklevel=4)
        else:
            pairs.extend((v, a.astype(v.dtype.np)) for v, a in zip(optimizer.variables,
                                                                   opt_arrays))
    for v, a in pairs:
        v.assign(a)
    layer_assets.restore(model, archive.zip.namelist(),
                         lambda name: read_zip_member(archive.zip, name, archive.budget))
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
        filepath: a `.keras` file written by `model.save` / `tl.saving.save_model` or Keras
            (3, or 2.13-2.15), or a whole-model `.h5` file of tf.keras 2.
        custom_objects: {name: class or function} for classes and functions that are not
            registered (subclassed models, custom layers, losses, metrics).
        compile: if False, the model is returned uncompiled (no optimizer state).
        safe_mode: if True (default), refuse to run code the file names (a `Lambda`'s
            bytecode or a function of a module outside trainlib/keras that is neither
            registered nor in custom_objects); False only for files whose author you trust.
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
    with safe_mode_scope(safe_mode):   # every nested from_config sees the caller's safe_mode
        return _load_model(os.fspath(filepath), custom_objects, compile, max_bytes,
                           max_member_bytes)


def _load_model(path, custom_objects, compile, max_bytes, max_member_bytes):
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No .keras file at {path!r}")
    if path.endswith((".h5", ".hdf5")):   # tf.keras 2's whole-model file
        return legacy_h5.load_model_h5(path, _rebuild_keras, compile_from_config,
                             custom_objects=custom_objects, compile=compile,
                             max_bytes=max_bytes, max_member_bytes=max_member_bytes)

    def work(archive):
        config, _ = archive.config()
        if not archive.npz:
            model = _rebuild_keras(config, custom_objects)
            return _restore_keras(model, config, archive, custom_objects, compile)
        model = _rebuild(config, custom_objects)
        arrays = archive.arrays(_declared_bytes(model.weights))
        layer_assets.restore(model, archive.zip.namelist(),
                             lambda name: read_zip_member(archive.zip, name, archive.budget))
        return _restore(model, config, arrays, custom_objects, compile)

    return _with_archive(path, LoadBudget(path, max_bytes, max_member_bytes), work)


def load_weights(model, filepath):
    """Assigns the model weights stored in a `.keras` file (Keras 3's or trainlib's) to a built
    `model` of that architecture; the optimizer's state is not read.

    Raises:
        LoadError: for a defective file or weights that do not fit `model`.
        FileNotFoundError: if there is no such file.
    """
    path = os.fspath(filepath)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No .keras file at {path!r}")

    def work(archive):
        archive.config()
        if not archive.npz:
            return archive.weights_h5(model, _declared_bytes(model.weights))[0]
        model_arrays = _saved_list(archive.arrays(_declared_bytes(model.weights)), "model")
        _check_arrays("model", model.weights, model_arrays, _weight_paths(model))
        return list(zip(model.weights, model_arrays))

    for v, a in _with_archive(path, LoadBudget(path), work):
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
