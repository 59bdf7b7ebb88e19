"""`tl.saved_model.save` / `load`: traced graphs and their variables, runnable without the Python code.

Owns: the saved-model directory (`saved_model.json`: format version, trainlib
version, functions with their traced concrete functions, signatures, graphs,
and the name and SHA-256 of the arrays file; `variables.<hash>.npz`, named by
its content (`variables.npz` in directories written before): variable values
and captured constants and Const arrays, no pickle), writing it atomically,
and the loaded object (`.signatures`, the saved Functions as attributes,
`.variables`). `export_model` builds Keras's `serve` endpoint and
`serving_default` signature for `Model.export` (and `save` for any Model
whose input shape is known).

Invariants: the directory is complete at every instant of a save: everything
is encoded first, the new arrays file is written beside the old one, and
replacing `saved_model.json` (one `os.replace`) switches versions; the old
arrays file is removed after, and the next save removes what a killed one left
(`file_io.update_directory`). A load reads only regular files within its
limits (`file_io.LoadBudget`), and re-reads `saved_model.json` if a save
replaced the arrays file it named meanwhile. Loading never runs code from the
files: op types come only from the registry, attrs only of the known kinds
(see `graph/serialization.py`), arrays through `file_io.read_npz` (no pickle).
A SHA-256 of the JSON payload and of the `.npz` file is checked first, so a
corrupted file fails with `LoadError` instead of giving different numbers;
every other defect raises `LoadError` too (naming the file and what is
wrong). Loaded functions read their Variables at run time, so assigning a
restored Variable changes every function that uses it.
"""
import hashlib
import inspect
import io
import json
import math
import os
import re
import sys

import numpy as np

from .file_io import (TEMP_PREFIX, LoadBudget, array_bytes, open_regular, read_json, read_npz,
                      remove_stale, update_directory)
from .graph import dtypes as _dt, nest
from .graph.backend import to_numpy
from .graph.context import eager_scope, state
from .graph.exec.interpret import Interpreter
from .graph.exec.program import CompiledFunction
from .graph.function import ConcreteFunction, Function, _OutputSlot, canonical_args
from .graph.op import convert_to_tensor
from .graph.serialization import (FORMAT_VERSION, LoadError, _Loader, _Saver, _short, decode_graph,
                                  decode_shape, decode_spec, decode_dtype, encode_graph, encode_shape,
                                  encode_spec)
from .graph.tensor import SymbolicTensor, Tensor, TensorShape, TensorSpec, is_tensor
from .graph.variables import Module, Variable
from .graph.properties import read_only

__all__ = ["save", "load", "LoadError", "export_model", "SaveOptions", "LoadOptions"]

FORMAT = "trainlib.saved_model"
JSON_FILE = "saved_model.json"
ARRAYS_FILE = "variables.npz"


# ------------------------------------------------------------------ options

_VARIABLE_POLICIES = (None, "none", "save_device_placement", "expand_distributed_variables")


class SaveOptions:
    """Options of `tl.saved_model.save`, as TensorFlow's `tf.saved_model.SaveOptions`.

    trainlib's saved model holds host arrays and graphs without device placements,
    debug information or sharding, so every option is accepted and recorded, and none
    changes what is written: `function_aliases` (names for functions, for tools),
    `experimental_variable_policy` (checked against TensorFlow's values),
    `namespace_whitelist`, `save_debug_info`, `experimental_io_device`,
    `experimental_custom_gradients`, `experimental_image_format`,
    `experimental_skip_saver`, `experimental_sharding_callback`, `extra_tags`.

    Raises:
        ValueError: for an `experimental_variable_policy` TensorFlow does not know.
        TypeError: for `function_aliases` that is not a dict.

    Example:
        >>> tl.saved_model.save(module, "/tmp/m", options=tl.saved_model.SaveOptions())
    """

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        policy = getattr(experimental_variable_policy, "value", experimental_variable_policy)
        if policy not in _VARIABLE_POLICIES:
            raise ValueError(f"experimental_variable_policy must be one of "
                             f"{_VARIABLE_POLICIES[1:]}, got {experimental_variable_policy!r}")
        if function_aliases is not None and not isinstance(function_aliases, dict):
            raise TypeError(f"function_aliases must be a dict of name -> function, got "
                            f"{type(function_aliases).__name__}")
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = save_debug_info
        self.function_aliases = dict(function_aliases or {})
        self.experimental_debug_stripper = experimental_debug_stripper
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = policy
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver
        self.experimental_sharding_callback = experimental_sharding_callback
        self.extra_tags = extra_tags


class LoadOptions:
    """Options of `tl.saved_model.load`, as TensorFlow's (accepted; trainlib loads host
    arrays, so `experimental_io_device` and the rest change nothing)."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device
        self.experimental_skip_checkpoint = experimental_skip_checkpoint
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_load_function_aliases = experimental_load_function_aliases


def _check_options(options, kind, where):
    if options is not None and not isinstance(options, kind):
        raise TypeError(f"{where}: options must be a tl.saved_model.{kind.__name__}, got "
                        f"{type(options).__name__}")


# ------------------------------------------------------------------ save

def save(obj, export_dir, signatures=None, options=None):
    """Saves `obj`'s traced functions and variables to the directory `export_dir`.

    Args:
        obj: a `tl.Module` (or Model): every attribute that is a `tl.function`
            with a trace or an `input_signature` is saved under its name; or a
            `tl.function` (the loaded object's `__call__`, and an attribute of its name).
        export_dir: the directory to write (replaced atomically if it holds a
            saved model; created if missing).
        signatures: a ConcreteFunction or a dict of name -> ConcreteFunction.
            Default: the Module's `__call__` if it has an input_signature (or
            the Function's first trace), as `"serving_default"`. A Model with
            known `inputs` also gets a `serve` endpoint (its inference call),
            and its `train_function`/`test_function`/`predict_function` are
            not saved.
        options: a `tl.saved_model.SaveOptions` (accepted; see there).

    Raises:
        ValueError: for something that cannot be saved (an op attr of an unknown
            kind, a stream in tl.print, arguments that are not tensors or
            Python literals), naming the function, op and attr.

    Example:
        >>> tl.saved_model.save(module, "/tmp/m")
        >>> tl.saved_model.load("/tmp/m").signatures["serving_default"](x=...)
    """
    _check_options(options, SaveOptions, "tl.saved_model.save")
    if isinstance(obj, Function):
        functions = {"__call__": obj}
        if obj._name.isidentifier() and not obj._name.startswith("_"):
            functions[obj._name] = obj  # also by its own name, as `loaded.<name>`
        variables = []
    elif isinstance(obj, Module):
        functions = _module_functions(obj)
        variables = list(obj.variables)
        if _is_layer(obj):
            for name in _KERAS_STEP_FUNCTIONS:  # training machinery, rebuilt by compile()
                functions.pop(name, None)
            if "__call__" not in functions:
                if _input_specs(obj) is not None:
                    functions["serve"] = _serving_function(obj, None)
                elif not functions and signatures is None:
                    raise ValueError(
                        f"Cannot save {type(obj).__name__} {obj.name!r}: its input shape is unknown, "
                        "so there is no function to save. Build the model (call it on data, "
                        "build(input_shape), or start it with tl.keras.Input), or pass "
                        "input_signature: model.export(path, input_signature=[tl.TensorSpec(shape, "
                        "dtype)]) or tl.saving.save_model(model, path, input_signature=[...]).")
    else:
        raise TypeError(f"tl.saved_model.save needs a tl.Module, a Model or a tl.function, got "
                        f"{type(obj).__name__}")
    concretes = {name: _concrete_functions(fn) for name, fn in functions.items()}
    if signatures is None:
        signatures = {}
        call = concretes.get("__call__") or concretes.get("serve")
        if call:
            signatures["serving_default"] = call[0]
    elif isinstance(signatures, (ConcreteFunction, Function)):
        signatures = {"serving_default": signatures}
    if not isinstance(signatures, dict):
        raise TypeError("signatures must be a ConcreteFunction or a dict of name -> ConcreteFunction")
    signatures = {k: (v.get_concrete_function() if isinstance(v, Function) else v)
                  for k, v in signatures.items()}
    for key, value in signatures.items():
        if not isinstance(key, str) or not isinstance(value, ConcreteFunction):
            raise TypeError(f"signature {key!r} must map a name to a ConcreteFunction, got "
                            f"{type(value).__name__}")
    _write(export_dir, functions, concretes, signatures, variables)


def export_model(model, filepath, input_signature=None):
    """Saves `model` for serving, as Keras 3's `Model.export`: a `serve` endpoint and a
    `serving_default` signature, both calling the model (with `training=False`) on its inputs.

    Args:
        model: a built Model/Layer (or any `tl.Module` that is callable).
        filepath: the directory to write.
        input_signature: TensorSpecs for the call's positional arguments; by
            default taken from the model's `inputs` (functional models).

    Raises:
        ValueError: if no input signature is given and the model has no known inputs.
    """
    endpoint = _serving_function(model, input_signature)
    concrete = endpoint.get_concrete_function()
    variables = list(getattr(model, "variables", ()))
    _write(filepath, {"serve": endpoint}, {"serve": [concrete]}, {"serving_default": concrete},
           variables)


_KERAS_STEP_FUNCTIONS = ("train_function", "test_function", "predict_function")


def _is_layer(obj):
    return hasattr(obj, "_call_takes_training")


def _serving_function(model, input_signature):
    """A tl.function `serve(inputs)` calling the model for inference on its input specs."""
    if input_signature is None:
        specs = _input_specs(model)
        if specs is None:
            raise ValueError(f"Model.export needs the model's input specs: {type(model).__name__} has "
                             "no `inputs` (build it first, or pass input_signature=[tl.TensorSpec(...)])")
        input_signature = [specs[0]] if len(specs) == 1 else [specs]
    takes_training = _accepts_training(model)

    def serve(*args):
        return model(*args, training=False) if takes_training else model(*args)

    serve.__signature__ = inspect.Signature(
        [inspect.Parameter("inputs" if i == 0 else f"inputs_{i}",
                           inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for i in range(len(input_signature))])
    return Function(serve, input_signature=input_signature, name="serve")


def _input_specs(model):
    """TensorSpecs of the model's inputs (functional `inputs`, or the shape a Sequential or
    subclassed model was built with, its first dim the batch), or None when unknown."""
    inputs = getattr(model, "inputs", None)
    if getattr(model, "_input_layer", True) is None:
        inputs = None   # a Sequential built by a call: its inputs have that call's batch size
    if inputs:
        return [TensorSpec(TensorShape(t.shape), t.dtype, getattr(t, "name", None)) for t in inputs]
    built = getattr(model, "_build_input_shape", None)
    if not (getattr(model, "built", False) and isinstance(built, tuple) and built and all(
            d is None or isinstance(d, int) for d in built)):
        return None
    input_layer = getattr(model, "_input_layer", None)   # a Sequential's leading Input
    dtype = getattr(input_layer, "dtype", None) or getattr(model, "dtype", None) or "float32"
    return [TensorSpec(TensorShape((None,) + tuple(built[1:])), dtype)]


def _accepts_training(model):
    if _is_layer(model):  # a Layer: its __call__ routes `training`
        return True
    try:
        params = inspect.signature(model.__call__).parameters
    except (TypeError, ValueError):
        return False
    return "training" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _module_functions(module):
    """name -> (bound) Function for the module's tl.function attributes worth saving."""
    names = []
    for klass in reversed(type(module).__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Function) and name not in names:
                names.append(name)
    for name, value in vars(module).items():
        if isinstance(value, Function) and name not in names:
            names.append(name)
    out = {}
    for name in names:
        if name.startswith("_") and name != "__call__":
            continue
        fn = getattr(module, name)
        if isinstance(fn, Function) and (fn._concrete_functions() or fn.input_signature is not None):
            out[name] = fn
    return out


def _concrete_functions(fn):
    found = fn._concrete_functions()
    if not found and fn.input_signature is not None:
        found = [fn.get_concrete_function()]
    return found


def _write(export_dir, functions, concretes, signatures, variables):
    """Encodes everything, then writes the directory atomically."""
    arrays = {}
    var_index = {}
    var_list = []

    def add_variable(v):
        if id(v) not in var_index:
            var_index[id(v)] = len(var_list)
            var_list.append(v)
        return var_index[id(v)]

    for v in variables:
        add_variable(v)
    all_concretes = []
    seen = {}
    for fn_concretes in list(concretes.values()) + [[c] for c in signatures.values()]:
        for c in fn_concretes:
            if id(c) not in seen:
                seen[id(c)] = len(all_concretes)
                all_concretes.append(c)
    for c in all_concretes:  # every Variable a graph reads is saved, even if no attribute holds it
        for value, _ in c.graph.captures:
            if value.dtype is _dt.resource:
                add_variable(value._value)

    constants, const_index = [], {}
    saver = _Saver(arrays, lambda v: var_index.get(id(v)))
    encoded = []
    for c in all_concretes:
        captures = []
        for value, placeholder in c.graph.captures:
            if value.dtype is _dt.resource:
                captures.append({"variable": var_index[id(value._value)]})
            else:
                if id(value) not in const_index:
                    const_index[id(value)] = len(constants)
                    constants.append(value)
                captures.append({"constant": const_index[id(value)]})
        try:
            graph = encode_graph(c.optimized_graph, saver)
        except ValueError as e:
            raise ValueError(f"cannot save function {c.name!r}: {e}") from None
        encoded.append({
            "name": c.name, "graph": graph, "num_args": len(c.graph.arg_placeholders),
            "captures": captures,
            "params": _encode_params(c._function, c.name),
            "arg_structure": _encode_structure(list(c._arg_structure), c.name, "argument")["list"],
            "output_structure": _encode_structure(c._output_structure, c.name, "output"),
        })
    var_entries = []
    for i, v in enumerate(var_list):
        key = f"variable_{i}"
        arrays[key] = np.asarray(to_numpy(v._array))
        var_entries.append({"name": v._name, "key": key, "trainable": v.trainable,
                            "shape": encode_shape(v._shape), "dtype": v.dtype.name})
    const_entries = []
    for i, t in enumerate(constants):
        key = f"constant_{i}"
        arrays[key] = np.asarray(to_numpy(t._value))
        const_entries.append({"key": key, **encode_spec(TensorShape(arrays[key].shape), t.dtype)})
    sig_entries = {name: _encode_signature(name, c, seen[id(c)]) for name, c in signatures.items()}
    model = {
        "trainlib_version": getattr(sys.modules.get("trainlib"), "__version__", "unknown"),
        "variables": var_entries, "constants": const_entries,
        "concrete_functions": encoded,
        "functions": {name: [seen[id(c)] for c in cs] for name, cs in concretes.items()},
        "signatures": sig_entries,
    }
    npz = io.BytesIO()
    np.savez(npz, **arrays)
    npz_bytes = npz.getvalue()
    digest = hashlib.sha256(npz_bytes).hexdigest()
    arrays_name = _arrays_name(digest)
    model["files"] = {ARRAYS_FILE: {"sha256": digest, "file": arrays_name}}
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "checksum": _checksum(model),
                "model": model}
    text = json.dumps(document, allow_nan=False, separators=(",", ":"))
    _write_atomically(os.fspath(export_dir), {arrays_name: npz_bytes, JSON_FILE: text.encode("utf-8")})


def _checksum(model):
    canonical = json.dumps(model, sort_keys=True, allow_nan=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _arrays_name(digest):
    """The arrays file of one version of a saved model: named by its content, so a new version
    is written beside the old one and `saved_model.json` switches between them."""
    return f"variables.{digest[:16]}.npz"


_ARRAYS_NAME = re.compile(r"variables(\.[0-9a-f]{16})?\.npz")   # variables.npz: the old layout
_LEGACY_TEMPS = re.compile(r"\.(tmp|old)-saved_model-[A-Za-z0-9_]{8}")  # older versions' folders


def _write_atomically(export_dir, files):
    """Writes a new version into `export_dir`; at every instant the directory holds a complete
    saved model (the old one until `saved_model.json` is replaced, the new one after)."""
    target = os.path.abspath(export_dir)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise FileExistsError(f"{export_dir!r} exists and is not a directory")
        foreign = [n for n in os.listdir(target) if n != JSON_FILE and not _ARRAYS_NAME.fullmatch(n)
                   and not n.startswith(TEMP_PREFIX)]
        if foreign and not os.path.exists(os.path.join(target, JSON_FILE)):
            raise FileExistsError(f"{export_dir!r} is a non-empty directory that holds no saved "
                                  "model; refusing to replace it. Choose an empty or new directory.")
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    remove_stale(parent, _LEGACY_TEMPS.fullmatch)  # what saves of older versions left when killed
    update_directory(target, files, JSON_FILE, keep=lambda name: name in files,
                     is_ours=lambda name: _ARRAYS_NAME.fullmatch(name) is not None)


def _encode_params(function, name):
    out = []
    for p in function._signature.parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not p.empty and _is_literal(p.default):
            entry["default"] = _literal(p.default)
        out.append(entry)
    return out


def _is_literal(value):
    return value is None or isinstance(value, (bool, int, float, str))


def _literal(value):
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    return value


def _encode_structure(value, fn_name, what):
    if isinstance(value, _OutputSlot):
        return {"output": value.index}
    if isinstance(value, TensorSpec):
        return {"spec": encode_spec(value.shape, value.dtype) | {"name": value.name}}
    if _is_literal(value):
        return {"value": _literal(value)}
    if isinstance(value, list):
        return {"list": [_encode_structure(v, fn_name, what) for v in value]}
    if isinstance(value, tuple):
        return {"tuple": [_encode_structure(v, fn_name, what) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": [[k, _encode_structure(value[k], fn_name, what)] for k in value]}
    raise ValueError(f"cannot save function {fn_name!r}: an {what} is a {type(value).__name__} "
                     f"({_short(value)}); saved functions take and return only tensors, Python "
                     "literals, and lists/tuples/dicts (with string keys) of them")


def _encode_signature(name, concrete, index):
    inputs = [{"name": p.op.name, **encode_spec(p.shape, p.dtype)}
              for p in concrete.graph.arg_placeholders]
    s = concrete._output_structure
    if isinstance(s, dict) and all(isinstance(k, str) and isinstance(v, _OutputSlot) for k, v in s.items()):
        outputs = [{"name": k, "index": v.index} for k, v in s.items()]
    else:
        slots = [x for x in _leaves(s) if isinstance(x, _OutputSlot)]
        outputs = [{"name": f"output_{i}", "index": x.index} for i, x in enumerate(slots)]
    return {"concrete_function": index, "inputs": inputs, "outputs": outputs}


def _leaves(s):
    if isinstance(s, dict):
        return [x for k in s for x in _leaves(s[k])]
    if isinstance(s, (list, tuple)):
        return [x for v in s for x in _leaves(v)]
    return [s]


# ------------------------------------------------------------------ load

def load(export_dir, tags=None, options=None, max_bytes=None, max_member_bytes=None):
    """Loads a saved model written by `tl.saved_model.save` (or `Model.export`).

    Args:
        export_dir: the saved model's directory.
        tags: accepted for TensorFlow compatibility; unused.
        options: a `tl.saved_model.LoadOptions` (accepted; changes nothing).
        max_bytes: the most bytes the load may read from the files (default: what
            `tl.saving.set_load_limits` set, else eight times the variables and arrays that
            `saved_model.json` declares, plus 64 MiB).
        max_member_bytes: the most bytes one file or array may hold (default: 64 MiB for
            `saved_model.json`, `max_bytes` for arrays).

    Returns:
        An object with `.signatures` (name -> callable on tensors or arrays,
        positional or by input name, returning a dict of outputs), each saved
        Function as an attribute of the same name, and `.variables`.

    Raises:
        LoadError: (a ValueError) naming the file, for a newer format, unknown op types,
            missing or mismatched variables, truncated, corrupted or hand-edited files, a
            file that is a symbolic link, a pipe or a device, or one past the limits.
        FileNotFoundError: if `export_dir` is not a directory.

    Example:
        >>> loaded = tl.saved_model.load("/tmp/m")
        >>> loaded.signatures["serving_default"](x=np.ones((1, 4), np.float32))["output_0"]
    """
    _check_options(options, LoadOptions, "tl.saved_model.load")
    export_dir = os.fspath(export_dir)
    if not os.path.isdir(export_dir):
        raise FileNotFoundError(f"No saved model directory at {export_dir!r}")
    json_path = os.path.join(export_dir, JSON_FILE)
    for attempt in range(4):
        budget = LoadBudget(json_path, max_bytes, max_member_bytes)
        model = _read_json(json_path, budget)
        try:
            _expect(model, "model", dict, _MODEL_FIELDS)
            budget.size_to(_declared_bytes(model))
            arrays = _read_arrays(export_dir, model, budget)
            break
        except _ArraysMissing as e:
            # a save replaced saved_model.json (and removed the arrays it named) after it was
            # read: read the new version; the same name missing again is a damaged model
            if attempt == 3 or _read_json(json_path, LoadBudget(json_path, max_bytes,
                                                                max_member_bytes)) == model:
                raise LoadError(f"{e}: missing (the variables file of this saved model)") from None
        except LoadError as e:
            raise LoadError(str(e) if str(e).startswith(export_dir) else f"{json_path}: {e}") \
                from None
    try:
        with eager_scope():
            return _build(model, arrays)
    except LoadError as e:
        raise LoadError(f"{json_path}: {e}") from None
    except Exception as e:  # noqa: BLE001 -- any other failure means the files are not a valid model
        raise LoadError(f"{json_path}: the saved model is malformed ({type(e).__name__}: {e})") from e


_MODEL_FIELDS = {"trainlib_version", "variables", "constants", "concrete_functions", "functions",
                 "signatures", "files"}


class _ArraysMissing(Exception):
    """The arrays file that saved_model.json names is not there (maybe replaced meanwhile)."""


def _read_json(path, budget):
    try:
        raw = read_json(path, budget)
    except FileNotFoundError:
        raise LoadError(f"{path}: missing; this directory holds no trainlib saved model") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise LoadError(f"{path}: not valid JSON (truncated or corrupted?): {e}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise LoadError(f"{path}: not a trainlib saved model (no \"format\": \"{FORMAT}\" field)")
    version = document.get("format_version")
    if type(version) is not int or version < 1:
        raise LoadError(f"{path}: bad format_version {_short(version)}")
    if version > FORMAT_VERSION:
        raise LoadError(f"{path}: format version {version} is newer than this trainlib supports "
                        f"({FORMAT_VERSION}); upgrade trainlib to load it")
    model = document.get("model")
    if set(document) != {"format", "format_version", "checksum", "model"} or not isinstance(model, dict):
        raise LoadError(f"{path}: expected the fields format, format_version, checksum and model")
    try:
        ok = document["checksum"] == _checksum(model)
    except (TypeError, ValueError, RecursionError):
        ok = False
    if not ok:
        raise LoadError(f"{path}: checksum mismatch: the file was changed after it was saved, or is "
                        "corrupt")
    return model


def _declared_bytes(model):
    """The bytes of the arrays saved_model.json declares (variables, constants, array attrs):
    what the default load limit is sized to. Shapes with unknown dims count as empty."""
    total = 0
    stack = [model.get("variables"), model.get("constants"), model.get("concrete_functions")]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if isinstance(item.get("shape"), list) and isinstance(item.get("dtype"), str) and \
                    ("key" in item or "array" in item):
                total += array_bytes(item["shape"], item["dtype"])
            stack.extend(item.values())
    return total


def _expect(data, where, kind, keys=None):
    if not isinstance(data, kind):
        raise LoadError(f"{where}: expected {'an object' if kind is dict else 'a list'}, got "
                        f"{_short(data)}")
    if keys is not None and set(data) != set(keys):
        raise LoadError(f"{where}: expected the fields {sorted(keys)}, got {sorted(data)}")
    return data


def _read_arrays(export_dir, model, budget):
    files = _expect(model.get("files"), "files", dict, {ARRAYS_FILE})
    entry = files[ARRAYS_FILE]
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) or \
            not set(entry) <= {"sha256", "file"}:
        raise LoadError(f"files.{ARRAYS_FILE}: expected {{\"sha256\": ..., \"file\": ...}}")
    name = entry.get("file", ARRAYS_FILE)   # the old layout: always variables.npz
    if not isinstance(name, str) or not _ARRAYS_NAME.fullmatch(name):   # never a path elsewhere
        raise LoadError(f"files.{ARRAYS_FILE}: bad file name {_short(name)}")
    path = os.path.join(export_dir, name)
    budget.label = path
    try:
        f, _ = open_regular(path)
    except FileNotFoundError:
        raise _ArraysMissing(path) from None
    with f:
        digest = hashlib.sha256()
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
        if digest.hexdigest() != entry["sha256"]:
            raise LoadError(f"{path}: checksum mismatch: the variables file was changed after "
                            "saving, or is corrupt")
        f.seek(0)
        return read_npz(f, budget)


def _build(model, arrays):
    xp = state.xp
    variables = []
    for i, entry in enumerate(_expect(model["variables"], "variables", list)):
        where = f"variables[{i}]"
        _expect(entry, where, dict, {"name", "key", "trainable", "shape", "dtype"})
        array = _saved_array(arrays, entry["key"], where)
        dtype = decode_dtype(entry["dtype"], where + ".dtype", allow_resource=False)
        shape = decode_shape(entry["shape"], where + ".shape")
        if array.dtype != dtype.np or not shape.is_compatible_with(array.shape):
            raise LoadError(f"{where}: Variable {entry['name']!r} is declared {dtype.name} {shape} but "
                            f"{ARRAYS_FILE} holds {array.dtype} {array.shape}")
        if not isinstance(entry["name"], str) or not isinstance(entry["trainable"], bool):
            raise LoadError(f"{where}: name must be a string and trainable a bool")
        variables.append(Variable(xp.asarray(array), trainable=entry["trainable"], name=entry["name"],
                                  shape=shape))
    constants = []
    for i, entry in enumerate(_expect(model["constants"], "constants", list)):
        where = f"constants[{i}]"
        _expect(entry, where, dict, {"key", "shape", "dtype"})
        array = _saved_array(arrays, entry["key"], where)
        spec = decode_spec({"shape": entry["shape"], "dtype": entry["dtype"]}, where, False)
        if array.dtype != spec.dtype.np or TensorShape(array.shape) != spec.shape:
            raise LoadError(f"{where}: declared {spec.dtype.name} {spec.shape}, {ARRAYS_FILE} holds "
                            f"{array.dtype} {array.shape}")
        constants.append(Tensor(xp.asarray(array), spec.dtype))
    loader = _Loader(arrays, variables, xp)
    concretes = [_build_concrete(entry, loader, variables, constants, f"concrete_functions[{i}]")
                 for i, entry in enumerate(_expect(model["concrete_functions"], "concrete_functions",
                                                   list))]
    functions = {}
    for name, indices in _expect(model["functions"], "functions", dict).items():
        if not name.isidentifier():
            raise LoadError(f"functions: bad function name {_short(name)}")
        picked = [_index(i, concretes, f"functions.{name}") for i in _expect(indices, name, list)]
        if not picked:
            raise LoadError(f"functions.{name}: no concrete functions")
        functions[name] = LoadedFunction(name, picked)
    signatures = {}
    for name, entry in _expect(model["signatures"], "signatures", dict).items():
        signatures[name] = _build_signature(name, entry, concretes)
    return LoadedModel(functions, signatures, variables, model["trainlib_version"])


def _saved_array(arrays, key, where):
    value = arrays.get(key) if isinstance(key, str) else None
    if value is None:
        raise LoadError(f"{where}: array {_short(key)} is missing from {ARRAYS_FILE}")
    return value


def _index(i, items, where):
    if type(i) is not int or not 0 <= i < len(items):
        raise LoadError(f"{where}: index {_short(i)} is out of range")
    return items[i]


def _build_concrete(entry, loader, variables, constants, where):
    _expect(entry, where, dict, {"name", "graph", "num_args", "captures", "params", "arg_structure",
                                 "output_structure"})
    name = entry["name"]
    if not isinstance(name, str) or not ("_" + re.sub(r"\W", "_", name)).isidentifier():
        raise LoadError(f"{where}: bad function name {_short(name)}")
    graph = decode_graph(entry["graph"], loader, f"{where}.graph")
    n_args = entry["num_args"]
    captures = _expect(entry["captures"], f"{where}.captures", list)
    if type(n_args) is not int or n_args < 0 or n_args + len(captures) != len(graph.inputs):
        raise LoadError(f"{where}: {len(graph.inputs)} graph inputs do not match num_args "
                        f"{_short(n_args)} plus {len(captures)} captures")
    graph.arg_placeholders = graph.inputs[:n_args]
    feeds = []
    for k, (cap, placeholder) in enumerate(zip(captures, graph.inputs[n_args:])):
        cw = f"{where}.captures[{k}]"
        _expect(cap, cw, dict)
        if set(cap) == {"variable"}:
            v = _index(cap["variable"], variables, cw)
            if placeholder.dtype is not _dt.resource or placeholder.op.attrs.get("_variable") is not v:
                raise LoadError(f"{cw}: placeholder {placeholder.name} is not the handle of variable "
                                f"{v.name!r}")
            graph.captures.append((v.handle, placeholder))
            feeds.append(v)
        elif set(cap) == {"constant"}:
            c = _index(cap["constant"], constants, cw)
            if placeholder.dtype is not c.dtype or not placeholder.shape.is_compatible_with(c.shape):
                raise LoadError(f"{cw}: placeholder {placeholder.name} ({placeholder.dtype.name} "
                                f"{placeholder.shape}) cannot take a {c.dtype.name} {c.shape} constant")
            graph.captures.append((c, placeholder))
            feeds.append(c._value)
        else:
            raise LoadError(f"{cw}: expected {{\"variable\": i}} or {{\"constant\": i}}")
    for p in graph.arg_placeholders:
        if p.dtype is _dt.resource:
            raise LoadError(f"{where}: argument {p.name} is a resource placeholder")
    params = _decode_params(entry["params"], f"{where}.params")
    arg_structure = _decode_structure({"tuple": entry["arg_structure"]}, f"{where}.arg_structure", "arg")
    specs = [s for s in _leaves(arg_structure) if isinstance(s, TensorSpec)]
    if len(specs) != n_args or any(s.dtype is not p.dtype or not s.shape.is_compatible_with(p.shape)
                                   for s, p in zip(specs, graph.arg_placeholders)):
        raise LoadError(f"{where}: arg_structure does not match the graph's {n_args} arguments")
    outputs = _decode_structure(entry["output_structure"], f"{where}.output_structure", "out")
    for slot in _leaves(outputs):
        if isinstance(slot, _OutputSlot) and not 0 <= slot.index < len(graph.outputs):
            raise LoadError(f"{where}.output_structure: output {slot.index} out of range")
    return LoadedConcreteFunction(name, graph, params, arg_structure, outputs, feeds)


def _decode_params(data, where):
    params = []
    for i, p in enumerate(_expect(data, where, list)):
        _expect(p, f"{where}[{i}]", dict)
        if not {"name", "kind"} <= set(p) <= {"name", "kind", "default"}:
            raise LoadError(f"{where}[{i}]: expected name, kind and an optional default")
        kind = getattr(inspect.Parameter, p["kind"], None) if isinstance(p["kind"], str) else None
        if not isinstance(kind, inspect._ParameterKind) or not isinstance(p["name"], str):
            raise LoadError(f"{where}[{i}]: bad parameter {_short(p)}")
        default = _decode_literal(p["default"], where) if "default" in p else inspect.Parameter.empty
        try:
            params.append(inspect.Parameter(p["name"], kind, default=default))
        except ValueError as e:
            raise LoadError(f"{where}[{i}]: {e}") from None
    try:
        return inspect.Signature(params)
    except ValueError as e:
        raise LoadError(f"{where}: {e}") from None


def _decode_literal(value, where):
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, dict) and set(value) == {"float"} and value["float"] in ("nan", "inf", "-inf"):
        return float(value["float"])
    raise LoadError(f"{where}: bad literal {_short(value)}")


def _decode_structure(data, where, mode, depth=0):
    if depth > 32 or not isinstance(data, dict) or len(data) != 1:
        raise LoadError(f"{where}: bad structure entry {_short(data)}")
    (kind, value), = data.items()
    if kind == "spec" and mode == "arg":
        return decode_spec(value, where, allow_resource=False)
    if kind == "output" and mode == "out":
        if type(value) is not int:
            raise LoadError(f"{where}: bad output index {_short(value)}")
        return _OutputSlot(value)
    if kind == "value":
        return _decode_literal(value, where)
    if kind in ("list", "tuple") and isinstance(value, list):
        items = [_decode_structure(v, f"{where}[{i}]", mode, depth + 1) for i, v in enumerate(value)]
        return items if kind == "list" else tuple(items)
    if kind == "dict" and isinstance(value, list) and all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) for x in value):
        return {k: _decode_structure(v, f"{where}[{k!r}]", mode, depth + 1) for k, v in value}
    raise LoadError(f"{where}: bad structure entry {_short(data)}")


def _build_signature(name, entry, concretes):
    where = f"signatures.{name}"
    _expect(entry, where, dict, {"concrete_function", "inputs", "outputs"})
    concrete = _index(entry["concrete_function"], concretes, where + ".concrete_function")
    inputs = _expect(entry["inputs"], where + ".inputs", list)
    if len(inputs) != len(concrete.graph.arg_placeholders):
        raise LoadError(f"{where}: {len(inputs)} inputs for a function of "
                        f"{len(concrete.graph.arg_placeholders)} tensor arguments")
    specs = []
    for i, (spec_data, p) in enumerate(zip(inputs, concrete.graph.arg_placeholders)):
        _expect(spec_data, f"{where}.inputs[{i}]", dict, {"name", "shape", "dtype"})
        s = decode_spec(spec_data, f"{where}.inputs[{i}]", allow_resource=False)
        if s.dtype is not p.dtype or s.shape != p.shape or not s.name:
            raise LoadError(f"{where}.inputs[{i}]: {s} does not match the graph's argument {p.name}")
        specs.append(s)
    if len({s.name for s in specs}) != len(specs):
        raise LoadError(f"{where}: input names repeat")
    outputs = []
    for i, out in enumerate(_expect(entry["outputs"], where + ".outputs", list)):
        _expect(out, f"{where}.outputs[{i}]", dict, {"name", "index"})
        if not isinstance(out["name"], str):
            raise LoadError(f"{where}.outputs[{i}]: name must be a string")
        _index(out["index"], concrete.graph.outputs, f"{where}.outputs[{i}]")
        outputs.append((out["name"], out["index"]))
    return Signature(name, concrete, specs, outputs)


# ------------------------------------------------------------------ the loaded objects

class LoadedConcreteFunction(CompiledFunction):
    """One restored graph, compiled; callable like the ConcreteFunction it was saved from.

    Attributes:
        graph: the rebuilt FuncGraph (`inputs`, `outputs`, `captures`).
        structured_input_signature: the arguments, tensors as TensorSpecs.
    """

    def __init__(self, name, graph, params, arg_structure, output_structure, capture_feeds):
        self.name = name
        self.graph = graph
        self._params = params
        self.structured_input_signature = arg_structure
        self._output_structure = output_structure
        self._compile(graph, name, capture_feeds, state.xp)

    def __call__(self, *args, **kwargs):
        feeds = self._match_call(args, kwargs, convert=True)
        if feeds is None:
            raise TypeError(f"{self.name}: the arguments do not match its input signature "
                            f"{self.structured_input_signature}")
        return self._call_feeds(feeds)

    def _match_call(self, args, kwargs, convert):
        canonical = canonical_args(self._params, args, kwargs, self.name)
        feeds = []
        if not _match(self.structured_input_signature, canonical, feeds, convert):
            return None
        return feeds

    def _call_feeds(self, feeds):
        """Runs the graph on flat argument tensors/arrays; returns the structured outputs."""
        results = self._call_flat(feeds)
        return _fill(self._output_structure, results)

    def _call_flat(self, feeds):
        if state.graph is not None or any(isinstance(f, SymbolicTensor) for f in feeds):
            return self._inline(feeds)
        return self._run_tensors([f._value if isinstance(f, Tensor) else f for f in feeds])

    def _inline(self, feeds):
        """Called while a tl.function traces: the graph's ops are added to that trace."""
        values = [f if is_tensor(f) else convert_to_tensor(f) for f in feeds]
        return Interpreter().run(self.graph, values + [c for c, _ in self.graph.captures])

    def __repr__(self):
        return f"<LoadedConcreteFunction {self.name}>"


class LoadedFunction:
    """A restored `tl.function`: its saved traces, called by matching the arguments to one."""

    def __init__(self, name, concretes):
        self.name = name
        self._concretes = concretes

    @property
    def concrete_functions(self):
        return list(self._concretes)

    def get_concrete_function(self, *args, **kwargs):
        """The saved trace that these arguments (values or TensorSpecs) would call."""
        for convert in (False, True):
            for c in self._concretes:
                try:
                    if c._match_call(args, kwargs, convert) is not None:
                        return c
                except TypeError:
                    continue
        raise ValueError(self._no_match(args, kwargs))

    def __call__(self, *args, **kwargs):
        errors = []
        for convert in (False, True):  # exact matches first, then with tensor conversion
            for c in self._concretes:
                try:
                    feeds = c._match_call(args, kwargs, convert)
                except TypeError as e:
                    errors.append(str(e))
                    continue
                if feeds is not None:
                    return c._call_feeds(feeds)
        raise ValueError(self._no_match(args, kwargs) + (f" ({errors[0]})" if errors else ""))

    def _no_match(self, args, kwargs):
        got = ", ".join([_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()])
        options = "\n".join(f"  Option {i + 1}: {c.structured_input_signature}"
                            for i, c in enumerate(self._concretes))
        return (f"Could not find a saved trace of {self.name!r} matching the arguments ({got}). "
                f"The saved traces take:\n{options}")

    def __repr__(self):
        return f"<LoadedFunction {self.name}: {len(self._concretes)} trace(s)>"


class Signature:
    """A serving signature: flat tensor inputs by name (or position) -> dict of named outputs.

    Attributes:
        structured_input_signature: `((), {name: TensorSpec})`, as TensorFlow's.
        structured_outputs: `{name: TensorSpec}`.
    """

    def __init__(self, name, concrete, specs, outputs):
        self.name = name
        self._concrete = concrete
        self._specs = specs
        self._outputs = outputs
        self.structured_input_signature = ((), {s.name: s for s in specs})
        graph_outputs = concrete.graph.outputs
        self.structured_outputs = {n: TensorSpec(graph_outputs[i].shape, graph_outputs[i].dtype, n)
                                   for n, i in outputs}

    def __call__(self, *args, **kwargs):
        if len(args) > len(self._specs):
            raise TypeError(f"signature {self.name!r} takes {len(self._specs)} inputs "
                            f"({', '.join(s.name for s in self._specs)}), got {len(args)} positional")
        values = list(args)
        for s in self._specs[len(args):]:
            if s.name not in kwargs:
                raise TypeError(f"signature {self.name!r} is missing input {s.name!r}; it takes "
                                f"{', '.join(s.name for s in self._specs)}")
            values.append(kwargs.pop(s.name))
        if kwargs:
            raise TypeError(f"signature {self.name!r} got unexpected inputs {sorted(kwargs)}; it "
                            f"takes {', '.join(s.name for s in self._specs)}")
        feeds = []
        for s, v in zip(self._specs, values):
            t = _as_tensor(v, s)
            if t is None:
                raise TypeError(f"signature {self.name!r}: input {s.name!r} must be a {s.dtype.name} "
                                f"tensor of shape {s.shape}, got {_describe(v)}")
            feeds.append(t)
        results = self._concrete._call_flat(feeds)
        return {n: results[i] for n, i in self._outputs}

    def __repr__(self):
        return f"<Signature {self.name}({', '.join(repr(s) for s in self._specs)})>"


class LoadedModel(Module):
    """What `tl.saved_model.load` returns: `.signatures`, `.variables`, the saved Functions (as
    attributes of their names, and in the dict `.functions`)."""

    def __init__(self, functions, signatures, variables, trainlib_version):
        super().__init__(name="loaded")
        self._functions = functions
        self.signatures = signatures
        self._variable_list = tuple(variables)
        self.trainlib_version = trainlib_version
        for name, fn in functions.items():
            if name != "__call__" and not hasattr(LoadedModel, name) and name not in vars(self):
                setattr(self, name, fn)  # names of LoadedModel's own fields stay in .functions
        self.functions = dict(functions)

    variables = read_only("_variable_list", "The loaded Variables.")

    @property
    def trainable_variables(self):
        return tuple(v for v in self._variable_list if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self._variable_list if not v.trainable)

    def __call__(self, *args, **kwargs):
        fn = self._functions.get("__call__")
        if fn is None:
            raise TypeError("this saved model has no __call__ function; use its signatures "
                            f"{sorted(self.signatures)} or functions {sorted(self._functions)}")
        return fn(*args, **kwargs)

    def __repr__(self):
        return f"<tl.saved_model loaded: functions {sorted(self._functions)}, signatures " \
               f"{sorted(self.signatures)}>"


# ------------------------------------------------------------------ calling helpers

def _match(structure, value, feeds, convert):
    """Walks `value` along the saved `structure`, appending tensor feeds; False on a mismatch."""
    matched = [True]

    def leaf(spec, v):
        if not matched[0]:
            return
        if isinstance(spec, TensorSpec):
            t = _as_tensor(v, spec, convert)
            if t is None:
                matched[0] = False
            else:
                feeds.append(t)
        elif not (type(v) is type(spec) and (v == spec or v != v and spec != spec)):
            matched[0] = False

    def mismatch(spec, v):
        matched[0] = False

    nest.map_structure_up_to(structure, leaf, value, on_mismatch=mismatch)
    return matched[0]


def _as_tensor(value, spec, convert=True):
    """`value` as a tensor (or array) matching `spec`, or None."""
    if isinstance(value, Variable):
        value = value.read_value()
    if is_tensor(value):
        t = value
    elif isinstance(value, np.ndarray) and not convert:
        t = Tensor(state.xp.asarray(value)) if _dt._BY_NP.get(value.dtype) is not None else None
    elif convert and not isinstance(value, (str, bytes, dict)) and value is not None:
        try:
            t = convert_to_tensor(value, dtype=spec.dtype)
        except Exception:  # noqa: BLE001 -- anything that cannot become this tensor is no match
            return None
    else:
        return None
    if t is None or t.dtype is not spec.dtype or not spec.shape.is_compatible_with(t.shape):
        return None
    return t


def _fill(structure, results):
    if isinstance(structure, _OutputSlot):
        return results[structure.index]
    if isinstance(structure, list):
        return [_fill(s, results) for s in structure]
    if isinstance(structure, tuple):
        return tuple(_fill(s, results) for s in structure)
    if isinstance(structure, dict):
        return {k: _fill(v, results) for k, v in structure.items()}
    return structure


def _describe(value):
    if is_tensor(value) or isinstance(value, (np.ndarray, Variable)):
        return f"{type(value).__name__}(shape={tuple(value.shape)}, dtype={value.dtype})"
    return _short(value)
