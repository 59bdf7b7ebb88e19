"""`tl.saving`: whole-model saving, dispatched on the path.

Owns: `save_model` / `load_model` and the weight-file helpers, which pick the
format from the path: a `.keras` file is Keras 3's whole-model archive
(`trainlib/models/saving_keras.py`: architecture, weights, compile config and
optimizer state, for resuming training); any other path is a saved-model
directory for deployment (`tl.saved_model`: graph + variables, loaded as a
callable object without the model's Python code), and the load limits
(`set_load_limits`, from `trainlib/file_io.py`). The package also holds Keras
3's object serialization (`serialize_keras_object` / `deserialize_keras_object`,
serialization_lib.py) and the custom-object registry (object_registration.py).
Invariant: nothing here has its own file format; the modules named own them.
"""
import os

from .. import saved_model
from ..file_io import get_load_limits, set_load_limits  # noqa: F401
from ..graph.serialization import LoadError  # noqa: F401
from .object_registration import (CustomObjectScope, custom_object_scope,  # noqa: F401
                                  get_custom_objects, get_registered_name, get_registered_object,
                                  register_keras_serializable)
from .serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "LoadError",
           "set_load_limits", "get_load_limits",
           "register_keras_serializable", "get_registered_name", "get_registered_object",
           "get_custom_objects", "custom_object_scope", "CustomObjectScope",
           "serialize_keras_object", "deserialize_keras_object"]


def _keras_format():
    # the .keras format module sits beside the models it rebuilds, which import this package
    from ..models import saving_keras  # noqa: PLC0415
    return saving_keras


def save_model(model, filepath, overwrite=True, input_signature=None, **kwargs):
    """Saves `model`: a `.keras` path writes the whole model (Keras 3's format), any other
    path a saved-model directory for inference (as `Model.export`).

    Args:
        model: a built Model (or, for a directory, a callable `tl.Module`).
        filepath: "name.keras", or the directory to write.
        overwrite: if False, an existing `filepath` raises FileExistsError.
        input_signature: for a directory: TensorSpecs of the call's arguments (default:
            the model's inputs). Unused for `.keras`: the file stores the model itself.
        **kwargs: for `.keras`: `zipped` (True or None).

    Raises:
        FileExistsError: if `filepath` exists and `overwrite` is False.
        ValueError: for an unknown `save_format`.

    Example:
        >>> tl.saving.save_model(model, "digits.keras")   # resumable: tl.saving.load_model
        >>> tl.saving.save_model(model, "/tmp/digits")    # for serving
        >>> tl.saving.load_model("/tmp/digits").serve(x)
    """
    path = os.fspath(filepath)
    if path.endswith((".keras", ".h5", ".hdf5")) or kwargs.get("save_format") in ("h5", "tf"):
        _keras_format().save_model(model, path, overwrite=overwrite, **kwargs)
        return
    if kwargs:
        raise TypeError(f"save_model got unexpected keyword arguments {sorted(kwargs)}")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it")
    saved_model.export_model(model, path, input_signature=input_signature)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, max_bytes=None,
               max_member_bytes=None):
    """Loads what `save_model` wrote: a `.keras` file as a Model, a directory as a loaded object.

    Args:
        filepath: a `.keras` file, or a saved-model directory.
        custom_objects: for `.keras`: {name: class or function} not registered with
            `register_keras_serializable` (subclassed models, custom layers, losses...).
        compile: for `.keras`: restore the compile config and optimizer state (default).
        safe_mode: if True (default), refuse to run code the file names (a `Lambda`'s
            bytecode or an unregistered function of a module outside trainlib/keras).
        max_bytes: the most bytes the load may read after decompression, all files and
            members together (default: `set_load_limits`'s, else eight times the model's
            declared weights plus 64 MiB).
        max_member_bytes: the most bytes one member may hold (default: 64 MiB for JSON
            files, `max_bytes` for arrays).

    Returns:
        For a `.keras` file, the `tl.Model` (same class, weights, compile config and
        optimizer state: training resumes exactly). For a directory, the loaded object:
        `serve(x)` and `signatures["serving_default"]` run the saved graph; `variables`
        are the restored weights; it has no `fit`.

    Raises:
        LoadError: (a ValueError) naming the file, for a truncated, corrupted or edited
            file, an unknown class, mismatched weights, a symbolic link inside a saved-model
            directory, a pipe or device instead of a file, or a file past the limits.
        ValueError: for a file of another kind.
        FileNotFoundError: if nothing is at `filepath`.
    """
    path = os.fspath(filepath)
    if os.path.isdir(path):
        return saved_model.load(path, max_bytes=max_bytes, max_member_bytes=max_member_bytes)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"No .keras file or saved-model directory at {path!r}")
    if not path.endswith((".keras", ".h5", ".hdf5")):
        raise ValueError(f"Cannot load {path!r}: expected a '.keras' file (model.save), an "
                         "'.h5' file (tf.keras 2) or a saved-model directory (model.export / "
                         "tl.saved_model.save)")
    return _keras_format().load_model(path, custom_objects=custom_objects, compile=compile,
                                      safe_mode=safe_mode, max_bytes=max_bytes,
                                      max_member_bytes=max_member_bytes)


def save_weights(model, filepath, overwrite=True):
    """Writes `model`'s weights to a `.weights.h5` (Keras 3's layout) or `.npz` file (as
    `model.save_weights`).

    Raises:
        ValueError: for any other extension.
    """
    model.save_weights(os.fspath(filepath), overwrite=overwrite)


def load_weights(model, filepath):
    """Reads weights into a built `model` from a `.weights.h5` file (Keras 3's or
    `save_weights`'s), an `.npz` file (`save_weights`) or a `.keras` file.

    Raises:
        LoadError / ValueError: for a defective or mismatched file (naming it).
    """
    model.load_weights(os.fspath(filepath))
