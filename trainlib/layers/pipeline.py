"""`Pipeline`: a sequence of preprocessing layers applied in order, as Keras 3's
`keras.layers.Pipeline` (usable as a layer of a model and in `Dataset.map`).

Owns: the chaining (each layer gets `training`, default True as Keras's, where its `call`
takes it, and the previous output's mask where it takes one), the `layers` list and the
config `{"layers": [serialized layers], "name": ...}`.
"""
from ..graph.nest import map_structure
from ..saving.serialization_lib import serialize_keras_object as serialize
from .base import Layer, deserialize, get_keras_mask, register

__all__ = ["Pipeline"]


@register
class Pipeline(Layer):
    """Applies `layers` one after the other (a lighter Sequential for preprocessing).

    Args:
        layers: the layers, in order.
        name: the pipeline's name.

    Example:
        >>> pipe = tl.keras.layers.Pipeline([tl.keras.layers.Rescaling(2.0),
        ...                                  tl.keras.layers.Rescaling(0.5, offset=1.0)])
        >>> pipe(tl.constant([1.0, 3.0])).numpy().tolist()
        [2.0, 4.0]
    """

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        self._pipeline_layers = list(layers)
        self.autocast = False   # as Keras's: the inputs reach the first layer as they come

    @property
    def layers(self):
        return self._pipeline_layers

    def call(self, inputs, training=True, mask=None):
        for layer in self._pipeline_layers:
            kwargs = {}
            if "mask" in layer._call_mask_params:
                kwargs["mask"] = mask
            if layer._call_takes_training and training is not None:
                kwargs["training"] = training
            inputs = layer(inputs, **kwargs)
            mask = map_structure(get_keras_mask, inputs)
        return inputs

    @classmethod
    def from_config(cls, config):
        """A new Pipeline (and its layers) from `get_config`'s dict."""
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list "
                             f"of serialized layers. Received config with layers={layers}.")
        return cls(**{**config, "layers": [deserialize(x) for x in layers]})

    def get_config(self):
        return {"layers": [serialize(layer) for layer in self._pipeline_layers],
                "name": self.name}
