"""`Wrapper`: the base class of layers that wrap one other layer (TimeDistributed,
Bidirectional, SpectralNormalization), as Keras 3's `keras.layers.Wrapper`.

Owns: the wrapped layer's tracking (its weights follow the wrapper's own), building it on
the wrapper's first build, and the config form `{"layer": <serialized layer>, ...}` with
its inverse (custom objects passed down to the wrapped layer's deserialization).
"""
from ..saving.serialization_lib import serialize_keras_object as serialize
from .base import Layer, deserialize, register

__all__ = ["Wrapper"]


@register
class Wrapper(Layer):
    """Base class of layers that augment another layer; not a layer to use by itself.

    Args:
        layer: the wrapped `Layer`.

    Example:
        >>> class Doubled(tl.keras.layers.Wrapper):
        ...     def call(self, x):
        ...         return 2.0 * self.layer(x)
        >>> Doubled(tl.layers.Dense(3))(tl.ones((2, 4))).shape
        TensorShape([2, 3])
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True

    def get_config(self):
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def _from_config_custom(cls, config, custom_objects=None):
        config = dict(config)
        return cls(deserialize(config.pop("layer"), custom_objects), **config)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new wrapper (and wrapped layer) from `get_config`'s dict."""
        return cls._from_config_custom(config, custom_objects)
