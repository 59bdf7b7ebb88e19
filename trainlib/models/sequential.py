"""`tl.Sequential`: a linear stack of layers.

Owns: adding/popping layers, building the whole stack once the input shape is
known (from a leading `Input`, an `input_shape=` on the first layer, or the
first call), which records each layer's output shape for `summary`.
Building calls the layers on the symbolic output of an `InputLayer` (the
given `Input`, or one made from the input shape), so once built a Sequential
has `inputs` and `outputs`, and each layer its `output`, as in Keras 3: the
feature-extraction idiom `Model(m.inputs, [l.output for l in m.layers])` works.
Invariant: `layers` excludes the input layer; weights follow layer order.
"""
from ..layers.base import InputLayer, KerasTensor, Layer, deserialize, register
from ..saving.serialization_lib import serialize_keras_object as serialize

from .model import Model


def _warn_removed(name, instead):
    import warnings  # noqa: PLC0415 -- only tf.keras 2 code reaches this
    warnings.warn(f"`Sequential.{name}` is tf.keras 2's (removed in TensorFlow 2.6); use "
                  f"`{instead}`.", DeprecationWarning, stacklevel=3)

__all__ = ["Sequential"]


@register
class Sequential(Model):
    """A model that applies its layers one after another.

    Args:
        layers: a list of layers (may start with `tl.layers.Input(shape=...)`).
        name: the model's name.

    Example:
        >>> model = tl.Sequential([tl.layers.Input(shape=(4,)),
        ...                        tl.layers.Dense(8, activation="relu"),
        ...                        tl.layers.Dense(1)])
        >>> model.count_params()
        49
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._layers = []
        self._input_layer = None
        for layer in layers or ():
            self.add(layer, rebuild=False)
        self._maybe_build_from_input()

    def add(self, layer, rebuild=True):
        """Appends a layer (or an `Input`, as the first element)."""
        if isinstance(layer, KerasTensor) and isinstance(layer.layer, InputLayer):
            layer = layer.layer
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError("An Input can only be the first element of a Sequential model")
            self._input_layer = layer
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add needs a Layer, got {type(layer).__name__}")
        self._layers.append(layer)
        self.built = False
        self._reset_compiled_functions()
        if rebuild:
            self._maybe_build_from_input()

    def pop(self):
        """Removes and returns the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        self.built = False
        self._reset_compiled_functions()
        self._maybe_build_from_input()
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def _maybe_build_from_input(self):
        shape = None
        if self._input_layer is not None:
            shape = self._input_layer.batch_shape
        elif self._layers and self._layers[0]._input_shape_arg is not None:
            shape = (None,) + self._layers[0]._input_shape_arg
        if shape is not None and self._layers:
            self.build(shape)

    def build(self, input_shape=None):
        """Builds every layer by calling the stack on a symbolic input of `input_shape`."""
        if input_shape is None:
            raise ValueError("Sequential.build needs an input shape")
        input_shape = tuple(input_shape)
        input_layer = self._input_layer
        if input_layer is None or tuple(input_layer.batch_shape) != input_shape:
            dtype = input_layer.dtype if input_layer is not None else self.dtype
            # the batch dim as given, as Keras records it in the output shapes
            input_layer = InputLayer(batch_shape=input_shape, dtype=dtype)
        x = input_layer.output
        for layer in self._layers:
            x = layer(x)
        self._symbolic_input, self._symbolic_output = input_layer.output, x
        self._build_input_shape = input_shape
        self.built = True

    def _symbolic(self, attribute, what):
        """[the symbolic tensor at `attribute`] of the built model; AttributeError before."""
        value = getattr(self, attribute, None) if self.built else None
        if value is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined {what} yet: "
                                 "give it an Input first, or build or call it")
        return [value]

    @property
    def inputs(self):
        """The symbolic input (a one-element list), once the model is built."""
        return self._symbolic("_symbolic_input", "inputs")

    @property
    def outputs(self):
        """The symbolic output of the last layer (a one-element list), once built."""
        return self._symbolic("_symbolic_output", "outputs")

    @property
    def input(self):
        """The symbolic input, once built."""
        return self.inputs[0]

    @property
    def output(self):
        """The symbolic output of the last layer, once built."""
        return self.outputs[0]

    def predict_classes(self, x, batch_size=32, verbose=0):
        """tf.keras 2's `predict_classes` (removed in TF 2.6): the argmax of `predict`, or
        predictions > 0.5 for one output unit, as int32."""
        _warn_removed("predict_classes", "np.argmax(model.predict(x), axis=-1), or "
                      "(model.predict(x) > 0.5).astype('int32') for one sigmoid unit")
        proba = self.predict(x, batch_size=batch_size, verbose=verbose)
        if proba.shape[-1] > 1:
            return proba.argmax(axis=-1).astype("int32")
        return (proba > 0.5).astype("int32")

    def predict_proba(self, x, batch_size=32, verbose=0):
        """tf.keras 2's `predict_proba` (removed in TF 2.6): `predict`."""
        _warn_removed("predict_proba", "model.predict(x)")
        return self.predict(x, batch_size=batch_size, verbose=verbose)

    def call(self, inputs, training=False):
        x = inputs
        for layer in self._layers:
            x = layer(x, training=training)
        return x

    def _maybe_build(self, args, kwargs=None):
        if not self.built:
            self.build(tuple(args[0].shape))

    def _obj_type(self):
        return "Sequential"

    def get_config(self):
        # as Keras 3: the InputLayer first (it carries the input dtype), then the layers
        layers = ([self._input_layer] if self._input_layer is not None else []) + \
            list(self._layers)
        config = {"name": self.name, "trainable": self.trainable,
                  "layers": [serialize(layer) for layer in layers]}
        shape = self._input_layer.batch_shape if self._input_layer is not None else \
            self._build_input_shape
        if shape is not None:
            config["build_input_shape"] = [None if d is None else int(d) for d in shape]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = [deserialize(c, custom_objects) for c in config["layers"]]
        shape = config.get("build_input_shape")
        if shape is not None and not (layers and isinstance(layers[0], InputLayer)):
            layers = [InputLayer(batch_shape=tuple(shape))] + layers
        return cls(layers, trainable=config.get("trainable", True), name=config.get("name"))

    @classmethod
    def _from_config_custom(cls, config, custom_objects):
        return cls.from_config(config, custom_objects)
