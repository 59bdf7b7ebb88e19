"""`tl.saving`: whole-model saving for deployment, over `tl.saved_model`.

Owns: `save_model` / `load_model`, thin wrappers that write a model as a
saved-model directory (graph + variables, no pickle, no Python code) and
read it back as a loaded, callable object. Invariant: nothing here has its
own file format; `tl.saved_model` owns it.
"""
import os

from . import saved_model

__all__ = ["save_model", "load_model"]


def save_model(model, filepath, overwrite=True, input_signature=None):
    """Saves `model` for inference as a saved-model directory (a `serve` endpoint and a
    `serving_default` signature), as `Model.export` does.

    Args:
        model: a built Model (or a callable `tl.Module`).
        filepath: the directory to write.
        overwrite: if False, an existing `filepath` raises FileExistsError.
        input_signature: TensorSpecs of the call's arguments (default: the model's inputs).

    Raises:
        FileExistsError: if `filepath` exists and `overwrite` is False.

    Example:
        >>> tl.saving.save_model(model, "/tmp/digits")
        >>> tl.saving.load_model("/tmp/digits").serve(x)
    """
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{os.fspath(filepath)!r} exists; pass overwrite=True to replace it")
    saved_model.export_model(model, filepath, input_signature=input_signature)


def load_model(filepath):
    """Loads a model written by `save_model` (or `Model.export`, `tl.saved_model.save`).

    Returns:
        The loaded object: `serve(x)` and `signatures["serving_default"]` run the
        saved graph; `variables` are the restored weights. It has no `fit`: it is
        an inference artifact that runs without the model's Python code.

    Raises:
        tl.saved_model.LoadError: for a file that is not a valid saved model.
    """
    return saved_model.load(filepath)
