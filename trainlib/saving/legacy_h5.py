"""tf.keras 2's whole-model HDF5 file (`model.save("m.h5")`, `save_format="h5"`): load and save,
and the translation of tf.keras 2's configs into Keras 3's.

Owns: the legacy layout (root attributes `model_config` and `training_config`,
JSON text; group `model_weights` with attribute `layer_names` and, per layer, a
group whose `weight_names` attribute lists its weights, trainable then
non-trainable, each a dataset at that name; group `optimizer_weights` likewise),
the same layout as written by `save_weights("w.h5")` in tf.keras 2 (the
`layer_names` on the root), and `keras2_config`, which rewrites a tf.keras 2
model config (no `module` keys, `batch_input_shape` on the first layer, `Model`
for functional models, `Policy` dtype dicts, `keras.src.engine.*` modules, the
list form of a functional model's calls) into the form trainlib's deserializers
read. Keras 3 reads these files with its legacy loader; trainlib writes them in
the form Keras 3's legacy writer does.

Invariants: files are opened only as regular files; JSON attributes are read
within the JSON limit and datasets only after their declared size was charged to
the load budget; only numeric datasets are read (no pickle, no code); every
layer's weights are checked (count, shape, dtype) before any is assigned, and
layers are matched in order as Keras does; an optimizer state that does not fit
is left out with a warning. Saves are atomic (`file_io.write_file_atomically`).
Every defect is `LoadError` naming the file.
"""
import json
import os
import warnings

import numpy as np

from ..file_io import LoadBudget, open_regular, write_file_atomically
from ..graph.serialization import LoadError
from .h5_arrays import check_arrays as _check, declared_bytes, h5py_module as _h5py, \
    open_plain, \
    read_dataset

__all__ = ["is_legacy_file", "load_model_h5", "load_weights_h5_legacy", "save_model_h5",
           "keras2_config"]

# tf.keras 2 config keys trainlib's layers do not take, dropped when they hold these values
_KERAS2_DEFAULTS = {"time_major": False, "implementation": (1, 2), "ragged": False,
                    "sparse": False}


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value.item())
    return value


def _names(attrs, key):
    """A list-of-strings attribute (bytes in tf.keras 2's files, str in Keras 3's)."""
    value = attrs.get(key)
    if value is None:
        return None
    values = np.asarray(value).reshape(-1)
    if values.dtype.kind not in "SUO":
        return []   # Keras 3 writes an empty float array for "no weights"
    return [_text(v) for v in values]


def _json_attr(attrs, key, budget):
    value = attrs.get(key)
    if value is None:
        return None
    text = _text(value)
    if not isinstance(text, str):
        raise LoadError(f"the attribute {key!r} is not JSON text")
    budget.take(len(text), repr(key), json=True)
    return json.loads(text)


# ------------------------------------------------------------------ configs

def _policy(value):
    if isinstance(value, dict) and value.get("class_name") in ("Policy", "DTypePolicy",
                                                               "FloatDTypePolicy"):
        return (value.get("config") or {}).get("name", "float32")
    return value


def _layer_config(entry):
    """A tf.keras 2 layer entry ({"class_name", "config", ...}) as Keras 3 writes it."""
    entry = dict(entry)
    config = dict(entry.get("config") or {})
    class_name = entry.get("class_name")
    if class_name in ("Functional", "Model", "Sequential") and "layers" in config:
        entry["config"] = _model_config(class_name, config)
        entry["class_name"] = "Functional" if class_name == "Model" else class_name
        return entry
    if "dtype" in config:
        config["dtype"] = _policy(config["dtype"])
    if class_name == "BatchNormalization" and isinstance(config.get("axis"), list) and \
            len(config["axis"]) == 1:
        config["axis"] = config["axis"][0]    # tf.keras 2 records the built axis as a list
    for key, default in _KERAS2_DEFAULTS.items():
        if key in config and (config[key] in default if isinstance(default, tuple)
                              else config[key] == default) and class_name != "InputLayer":
            del config[key]
    for key in ("layer", "backward_layer", "cell"):   # wrappers hold a layer entry
        if isinstance(config.get(key), dict) and "class_name" in config[key]:
            config[key] = _layer_config(config[key])
    if isinstance(config.get("cells"), list):
        config["cells"] = [_layer_config(c) if isinstance(c, dict) else c
                           for c in config["cells"]]
    entry["config"] = config
    return entry


def _model_config(class_name, config):
    config = dict(config)
    layers = [_layer_config(layer) for layer in config["layers"]]
    if class_name == "Sequential" and layers and layers[0].get("class_name") != "InputLayer":
        shape = layers[0]["config"].pop("batch_input_shape", None)
        if shape is not None:
            layers.insert(0, {"class_name": "InputLayer",
                              "config": {"batch_shape": shape,
                                         "dtype": layers[0]["config"].get("dtype", "float32"),
                                         "name": f"{layers[0]['config'].get('name')}_input"}})
    for layer in layers[1:] if class_name == "Sequential" else ():
        layer["config"].pop("batch_input_shape", None)
    config["layers"] = layers
    return config


def keras2_config(config):
    """A model config written by tf.keras 2 (or by Keras 2.13-2.15's `.keras` files, whose
    modules are `keras.src.engine.*`) in the form trainlib reads: functional models as
    `Functional`, the Sequential input as an `InputLayer`, dtype policies by name, and the
    tf.keras 2 arguments trainlib's layers do not take (at their defaults) left out.
    Configs already in Keras 3's form come back unchanged in meaning."""
    if not isinstance(config, dict):
        return config
    out = _layer_config(config)
    module = out.get("module")
    if isinstance(module, str) and (module.startswith("keras.src.engine") or
                                    module.startswith("keras.engine")):
        out["module"] = "keras"
    return out


# tf.keras 2 optimizer arguments Keras 3's optimizers do not take
_KERAS2_OPTIMIZER_KEYS = ("decay", "jit_compile", "is_legacy_optimizer")


def _optimizer_config(entry):
    """tf.keras 2's `optimizer_config` as Keras 3 names it: "Custom>Adam" as "Adam", `lr` as
    `learning_rate`, tf.keras 2's own arguments (`decay` 0, `jit_compile`...) left out."""
    config = dict(entry.get("config") or {})
    if "lr" in config and "learning_rate" not in config:
        config["learning_rate"] = config.pop("lr")
    for key in _KERAS2_OPTIMIZER_KEYS:
        if key in config and (key != "decay" or not config[key]):
            del config[key]
    class_name = str(entry.get("class_name", "")).split(">")[-1]
    return {"class_name": class_name, "config": config}


# ------------------------------------------------------------------ weights

def is_legacy_file(h5):
    """True for tf.keras 2's layouts: a whole model (`model_weights`) or `save_weights` output
    (`layer_names` on the root)."""
    return "layer_names" in h5.attrs or "model_weights" in h5


def _layers_with_weights(model):
    return [layer for layer in model.layers if layer.weights]


def _read(group, name, where, budget):
    return read_dataset(group, name, where, budget,
                        f"{where} lists the weight {name!r}, which it does not hold")


def read_legacy_weights(model, h5, budget):
    """[(variable, array)] of a legacy weights group (`model_weights`, or the root of a
    tf.keras 2 `save_weights` file), layers matched in order as Keras does; nothing assigned."""
    group = h5["model_weights"] if "model_weights" in h5 else h5
    names = _names(group.attrs, "layer_names")
    if names is None:
        raise LoadError("it has no 'layer_names' attribute (not a Keras weights file)")
    saved = []
    for name in names:
        layer_group = group.get(name)
        weight_names = _names(layer_group.attrs, "weight_names") if layer_group is not None \
            else None
        if weight_names is None:
            raise LoadError(f"it lists the layer {name!r} but holds no group for it")
        if weight_names:
            saved.append((name, layer_group, weight_names))
    layers = _layers_with_weights(model)
    if len(saved) != len(layers):
        raise LoadError(f"it holds weights for {len(saved)} layers ({[s[0] for s in saved]}), "
                        f"the model has {len(layers)} layers with weights "
                        f"({[layer.name for layer in layers]})")
    pairs = []
    top = group.get("top_level_model_weights")
    own = list(model._trainable_variables) + list(model._non_trainable_variables)
    if own:
        top_names = _names(top.attrs, "weight_names") if top is not None else []
        arrays = [_read(top, n, "top_level_model_weights", budget) for n in top_names]
        _check("top_level_model_weights", own, arrays, "the model")
        pairs.extend(zip(own, arrays))
    for layer, (name, layer_group, weight_names) in zip(layers, saved):
        variables = list(layer.trainable_weights) + list(layer.non_trainable_weights)
        arrays = [_read(layer_group, n, name, budget) for n in weight_names]
        _check(name, variables, arrays, f"layer '{layer.name}' ({type(layer).__name__})")
        pairs.extend(zip(variables, arrays))
    return pairs


def _read_optimizer(h5, budget):
    group = h5.get("optimizer_weights")
    if group is None:
        return None
    names = _names(group.attrs, "weight_names") or []
    return [_read(group, n, "optimizer_weights", budget) for n in names]


def _open(path, budget):
    h5py = _h5py()
    f, _ = open_regular(path, follow_symlinks=True)
    try:
        return f, open_plain(f)
    except LoadError:
        f.close()
        raise
    except OSError as e:
        f.close()
        raise LoadError(f"it is not an HDF5 file ({e})") from None


def _with_file(path, budget, work):
    """`work(h5)` on the open file; every defect a LoadError naming `path`."""
    try:
        f, h5 = _open(path, budget)
    except LoadError as e:
        text = str(e)
        raise LoadError(text if path in text else f"Cannot load {path!r}: {text}") from None
    try:
        with f, h5:
            return work(h5)
    except LoadError as e:
        raise LoadError(f"Cannot load {path!r}: {e}") from None
    except (OSError, KeyError, ValueError, TypeError, RuntimeError) as e:
        raise LoadError(f"Cannot load {path!r}: it is damaged or not a Keras HDF5 file "
                        f"({type(e).__name__}: {e})") from None


def load_weights_h5_legacy(model, path, h5=None, budget=None):
    """Assigns the weights of a tf.keras 2 HDF5 file (whole model or `save_weights`) to the
    built `model`, layers matched in order; all checked before any is assigned."""
    budget = budget or LoadBudget(path)
    budget.size_to(declared_bytes(model.weights))
    if h5 is not None:
        pairs = read_legacy_weights(model, h5, budget)
    else:
        pairs = _with_file(path, budget, lambda f: read_legacy_weights(model, f, budget))
    for v, a in pairs:
        v.assign(a)


def load_model_h5(path, rebuild, compile_from_config, custom_objects=None, compile=True,
                  max_bytes=None, max_member_bytes=None):
    """The model of a whole-model HDF5 file written by tf.keras 2 (or Keras 3's legacy writer,
    or `save_model_h5`): rebuilt from `model_config`, its weights assigned, compiled from
    `training_config` (its optimizer state restored when it fits this optimizer).

    `rebuild(config, custom_objects)` makes the built model of a Keras 3 config and
    `compile_from_config(model, config, custom_objects)` compiles it (saving_keras.py's).

    Raises:
        LoadError: naming the file, for a defective file, an unknown class or weights that
            do not fit.
    """
    budget = LoadBudget(path, max_bytes, max_member_bytes)

    def work(h5):
        config = _json_attr(h5.attrs, "model_config", budget)
        if not isinstance(config, dict):
            raise LoadError("it has no model_config (a weights-only file: build the model and "
                            "call model.load_weights)")
        model = rebuild(keras2_config(config), custom_objects)
        budget.size_to(declared_bytes(model.weights))
        pairs = read_legacy_weights(model, h5, budget)
        training = _json_attr(h5.attrs, "training_config", budget) if compile else None
        if isinstance(training, dict) and isinstance(training.get("optimizer_config"), dict):
            compiled = dict(training, optimizer=_optimizer_config(training["optimizer_config"]))
            compiled.pop("optimizer_config")
            compile_from_config(model, compiled, custom_objects)
            arrays = _read_optimizer(h5, budget)
            if arrays and model.trainable_variables:
                optimizer = model.optimizer
                optimizer.build(model.trainable_variables)
                try:
                    _check("optimizer_weights", optimizer.variables, arrays, "the optimizer",
                           same_kind=True)
                except LoadError as e:
                    warnings.warn(f"{path}: the optimizer's state was not restored (a tf.keras 2 "
                                  f"optimizer keeps other variables): {e}", stacklevel=4)
                else:
                    pairs.extend((v, np.asarray(a, dtype=v.dtype.np))
                                 for v, a in zip(optimizer.variables, arrays))
        for v, a in pairs:
            v.assign(a)
        return model

    return _with_file(path, budget, work)


# ------------------------------------------------------------------ save

def _unique_names(variables, paths):
    out, used = [], set()
    for v in variables:
        name = paths.get(id(v), v.name.split(":")[0])
        base, i = name, 1
        while name in used:
            name, i = f"{base}_{i}", i + 1
        used.add(name)
        out.append(name)
    return out


def _write_group(group, variables, names):
    group.attrs["weight_names"] = np.array(names, dtype=_h5py().string_dtype()) if names \
        else np.array([], dtype=np.float64)
    for v, name in zip(variables, names):
        group.create_dataset(name, data=np.asarray(v.numpy()))


_FULL_NAMES = {"mse": "mean_squared_error", "mae": "mean_absolute_error",
               "mape": "mean_absolute_percentage_error",
               "msle": "mean_squared_logarithmic_error"}


def _full_names(value):
    if isinstance(value, str):
        return _FULL_NAMES.get(value, value)
    if isinstance(value, list):
        return [_full_names(v) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _full_names(v) for k, v in value.items()}
    return value


def save_model_h5(model, filepath, serialized, paths, keras_version, overwrite=True):
    """Writes `model` as a whole-model HDF5 file in tf.keras 2's layout (as Keras 3's legacy
    writer does: `model.save("m.h5")`), atomically; Keras 3's `load_model` reads it.

    Args:
        serialized: `serialize_keras_object(model)` (its config and compile config).
        paths: {id(variable): "model/layer/name"}, the weights' names in the file.
        keras_version: the Keras version the layout follows.

    Raises:
        FileExistsError: if the file exists and `overwrite` is False.
    """
    path = os.fspath(filepath)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it")
    model_config = json.dumps({"class_name": serialized["class_name"],
                               "config": serialized["config"]}, allow_nan=False)
    compiled = serialized.get("compile_config")
    training_config = None
    if compiled:
        # Keras 3's legacy reader resolves "mse" as a metric class and fails: full names
        training = {k: _full_names(v) for k, v in compiled.items() if k != "optimizer"}
        optimizer = compiled["optimizer"]
        training["optimizer_config"] = {"class_name": optimizer["class_name"],
                                        "config": optimizer["config"]}
        training_config = json.dumps(training, allow_nan=False)
    h5py = _h5py()

    def write(f):
        with h5py.File(f, "w") as h5:
            h5.attrs["backend"] = "trainlib"
            h5.attrs["keras_version"] = keras_version
            h5.attrs["model_config"] = model_config
            if training_config is not None:
                h5.attrs["training_config"] = training_config
            weights = h5.create_group("model_weights")
            weights.attrs["backend"] = "trainlib"
            weights.attrs["keras_version"] = keras_version
            layers = _layers_with_weights(model)
            weights.attrs["layer_names"] = np.array([layer.name for layer in model.layers],
                                                    dtype=h5py.string_dtype())
            for layer in model.layers:
                group = weights.create_group(layer.name)
                variables = list(layer.trainable_weights) + list(layer.non_trainable_weights) \
                    if layer in layers else []
                _write_group(group, variables, _unique_names(variables, paths))
            own = list(model._trainable_variables) + list(model._non_trainable_variables)
            _write_group(weights.create_group("top_level_model_weights"), own,
                         _unique_names(own, paths))
            optimizer = getattr(model, "optimizer", None) if getattr(model, "compiled", False) \
                else None
            if optimizer is not None and optimizer.variables:
                variables = list(optimizer.variables)
                names = [f"{optimizer.name}/{n.replace('/', '_')}" for n in
                         _unique_names(variables, {})]
                _write_group(h5.create_group("optimizer_weights"), variables, names)

    write_file_atomically(path, write)
