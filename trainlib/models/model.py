"""`tl.Model`: a Layer that trains (the Trainer) and saves, as Keras 3's `keras.Model`.

Owns: what makes a model a model beyond training: how `Model(...)` is built
(`Model(inputs, outputs)`, also on a subclass of Model, makes a functional
model of that class, as Keras 3 does by putting `Functional` among the
subclass's bases), `get_layer`, `summary`, `to_json`, `export`, `save`, and
`save_weights` / `load_weights` (the formats are saving_keras.py's, saving/keras_h5.py's,
checkpoint.py's and saved_model.py's). Compile, the steps, the loops and their compilation
into graphs are the Trainer's (trainers/trainer.py).
Invariants: `Model(inputs, outputs)` returns a functional model; every Model
is a Layer (weights in Keras 3's order) and a Trainer. Imports point one way: the formats sit
below this module (they tell models apart by `_obj_type()`, as Keras 3's savers do), and
functional.py, whose Functional subclasses Model, sits above it and registers itself here.
"""
import inspect
import json
import os

from .. import saved_model
from ..checkpoint import load_weights_checkpoint, save_weights_checkpoint
from ..layers.base import Layer
from ..saving import keras_h5
from ..saving.serialization_lib import deserialize_keras_object, serialize_keras_object
from ..settings import print_msg
from ..trainers.trainer import Trainer
from . import saving_keras
from .summary import format_summary

__all__ = ["Model", "model_from_json"]


def model_from_json(json_string, custom_objects=None):
    """The model `Model.to_json` described (new weights), as `keras.models.model_from_json`.

    Args:
        json_string: what `to_json` returned.
        custom_objects: {name: class or function} for classes not registered.

    Example:
        >>> clone = tl.models.model_from_json(model.to_json())
    """
    return deserialize_keras_object(json.loads(json_string), custom_objects=custom_objects)


# functional.py's Functional and functional_from_config: Functional subclasses Model, so that
# module sits above this one and registers them here when imported (trainlib.models imports it)
_FUNCTIONAL = []


def register_functional_api(functional_class, from_config):
    """Makes `Model(inputs, outputs)` build `functional_class` and functional configs rebuild
    through `from_config(cls, config, custom_objects)` (functional.py calls it once)."""
    _FUNCTIONAL[:] = [functional_class, from_config]


def functional_init_arguments(args, kwargs):
    """True when a Model's constructor was given inputs and outputs (the functional API)."""
    return (len(args) == 2) or (len(args) == 1 and "outputs" in kwargs) or \
        ("inputs" in kwargs and "outputs" in kwargs)


def inject_functional_model_class(cls):
    """Puts `Functional` in place of `Model` among `cls`'s bases (and its parents'), so a
    subclass of Model built as `Sub(inputs, outputs)` is a functional model, as Keras 3 does."""
    Functional = _FUNCTIONAL[0]
    if cls is Model:
        return Functional
    if cls is object or issubclass(cls, Functional):
        return cls
    cls.__bases__ = tuple(inject_functional_model_class(base) for base in cls.__bases__)
    return cls


class Model(Trainer, Layer):
    """A Layer that trains: `compile`, then `fit`, `evaluate`, `predict`.

    Build one by subclassing (layers in `__init__`, computation in `call`), with
    the functional API (`tl.Model(inputs, outputs)`, also on a subclass of Model,
    whose `train_step` etc. then apply), or with `tl.Sequential`.

    Example:
        >>> inputs = tl.layers.Input(shape=(4,))
        >>> outputs = tl.layers.Dense(3, activation="softmax")(inputs)
        >>> model = tl.Model(inputs, outputs)
        >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
        ...               metrics=["accuracy"])
        >>> history = model.fit(x, y, epochs=3, batch_size=32)
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and functional_init_arguments(args, kwargs):
            return _FUNCTIONAL[0].__new__(_FUNCTIONAL[0])
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        if functional_init_arguments(args, kwargs):
            inject_functional_model_class(type(self))
            _FUNCTIONAL[0].__init__(self, *args, **kwargs)
            return
        Layer.__init__(self, *args, **kwargs)
        Trainer.__init__(self)

    def get_layer(self, name=None, index=None):
        """The layer named `name`, or at position `index` of `layers`.

        Raises:
            ValueError: with both or neither given, an index past the end, or an unknown name.

        Example:
            >>> model.get_layer("dense_1") is model.get_layer(index=1)
        """
        if index is not None and name is not None:
            raise ValueError(f"Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(layers)} layers.")
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise ValueError(f"No such layer: {name}. Existing layers are: "
                             f"{[layer.name for layer in layers]}.")
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    # -- files
    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None):
        """Exports the model for inference as a SavedModel directory, as Keras 3's `export`.

        The directory has a `serving_default` signature and a `serve` endpoint taking
        the model's inputs; `tl.saved_model.load(filepath)` runs it without this code.

        Args:
            filepath: the directory to write (atomically).
            input_signature: TensorSpecs of the inputs, needed when the model has no
                known inputs (a subclassed model never called on an Input).

        Example:
            >>> model.export("exported")
            >>> tl.saved_model.load("exported").serve(x)
        """
        saved_model.export_model(self, filepath, input_signature=input_signature)
        if verbose:
            print(f"Saved the model for serving to '{filepath}' (endpoint 'serve', signature "
                  "'serving_default').")

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the whole model (architecture, weights, compile config, optimizer state) to a
        `.keras` file, as Keras 3; `tl.saving.load_model` restores it and training resumes.
        A ".h5" path (or `save_format="h5"`) writes tf.keras 2's HDF5 file instead, and
        `save_format="tf"` a SavedModel directory (as `export`).

        Raises:
            ValueError: for another extension (`export` writes a SavedModel).

        Example:
            >>> model.save("model.keras")
            >>> model = tl.saving.load_model("model.keras")
        """
        saving_keras.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Writes the weights to a `.weights.h5` file in Keras 3's HDF5 layout (Keras 3 loads
        it) or, in `weights` order, to an `.npz` file (atomically: a temporary file in the
        same folder, then a rename); a path without an extension ("my_checkpoint") writes a
        `tl.train.Checkpoint` of the model instead.

        Raises:
            ValueError: if the name has an extension other than ".npz".
        """
        filepath = os.fspath(filepath)
        if _is_checkpoint_prefix(filepath):   # tf.keras 2's TensorFlow-checkpoint form
            if not overwrite and os.path.exists(filepath + ".index"):
                raise FileExistsError(filepath + ".index")
            save_weights_checkpoint(self, filepath)
            return
        if not filepath.endswith((".npz", ".h5", ".hdf5")):
            raise ValueError(f"save_weights writes '.weights.h5' (Keras 3's layout) or '.npz' "
                             f"files (e.g. 'model.weights.h5') or, for a path without an "
                             f"extension, a checkpoint; got {filepath!r}")
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(filepath)
        if filepath.endswith((".h5", ".hdf5")):
            keras_h5.save_weights_h5(self, filepath)
            return
        saving_keras.save_weights_npz(self, filepath)

    def load_weights(self, filepath):
        """Reads weights written by `save_weights` or Keras 3 (`.weights.h5`), or a `.keras`
        file's (never unpickles
        anything), within the load limits (`tl.saving.set_load_limits`).

        Raises:
            LoadError: (a ValueError) naming the file, for a truncated, corrupted, foreign or
                mismatched file, or a pipe or device instead of a file.
            ValueError: for an unbuilt model.
        """
        filepath = os.fspath(filepath)
        if _is_checkpoint_prefix(filepath):
            return load_weights_checkpoint(self, filepath)
        if filepath.endswith((".h5", ".hdf5")):
            return keras_h5.load_weights_h5(self, filepath)
        if filepath.endswith(".keras"):  # Keras 3 reads a .keras file's weights
            return saving_keras.load_weights(self, filepath)
        return saving_keras.load_weights_npz(self, filepath)

    def to_json(self, **kwargs):
        """The model's architecture as a JSON string (`tl.models.model_from_json` rebuilds it).

        Args:
            **kwargs: passed to `json.dumps` (e.g. `indent=2`).
        """
        return json.dumps(serialize_keras_object(self), **kwargs)

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints a table of layers, output shapes and parameter counts, then the totals.

        The layout is Keras 3's: lines of `line_length` (default: 88, or 108 with a
        "Connected to" column for branching functional models, at most the
        terminal's width - 4), column `positions` as fractions of a line.
        """
        text = format_summary(self, line_length=line_length, positions=positions)
        (print_fn or print_msg)(text)   # the "trainlib" logger when interactive logging is off

    def _obj_type(self):
        return "Model"

    def get_config(self):
        """The config of a subclassed model: its name and trainable flag (as Keras 3's
        base Model; functional models and Sequential describe their layers)."""
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from `get_config`'s dict: a functional config rebuilds the layer graph as
        this class; another config is passed to the constructor."""
        Functional, functional_from_config = _FUNCTIONAL
        functional_config = all(k in config for k in ("layers", "input_layers", "output_layers"))
        # as Keras: a functional config rebuilds the graph as `cls` when `cls` is constructed
        # like a functional model (inputs, outputs, ...) or takes *args, **kwargs
        spec = inspect.getfullargspec(cls.__init__)
        revivable = cls in (Model, Functional) or \
            spec.args[1:] == inspect.getfullargspec(Functional.__init__).args[1:] or \
            (spec.varargs is not None and spec.varkw is not None)
        if functional_config and revivable:
            return functional_from_config(cls, config, custom_objects)
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError(f"Unable to revive model from config. When overriding the "
                            "`get_config()` method, make sure that the returned config contains "
                            f"all items used as arguments in the constructor to {cls}, which is "
                            "the default behavior. You can override this default behavior by "
                            "defining a `from_config(cls, config)` class method to specify how "
                            f"to create an instance of {cls.__name__} from its config.\n\n"
                            f"Received config={config}\n\nError encountered during "
                            f"deserialization: {e}") from e


def _is_checkpoint_prefix(filepath):
    """A weights path without an extension names a checkpoint prefix (`<path>.index` and
    `<path>.data-*.npz`), as tf.keras 2 wrote TensorFlow checkpoints for such paths."""
    return not os.path.splitext(os.path.basename(filepath))[1]
