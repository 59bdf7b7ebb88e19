"""Core layers: Dense, Activation, Flatten, Dropout, Embedding.

Owns: their weights, defaults and argument names (Keras 3's). Invariant: each
`call` is plain public ops, so it runs eagerly and traces alike.
"""
import warnings
import numbers

from .. import activations, constraints, initializers, regularizers
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, check_unsupported, register
from .input_spec import InputSpec

__all__ = ["Dense", "Activation", "Flatten", "Dropout", "Embedding"]


@register
class Dense(Layer):
    """`activation(inputs @ kernel + bias)` on the last axis.

    Args:
        units: output size.
        activation: a function or Keras name ("relu", "softmax", ...); None is linear.
        use_bias: add a bias.
        kernel_initializer: default "glorot_uniform".
        bias_initializer: default "zeros".
        kernel_regularizer, bias_regularizer: penalties on the weights (`tl.regularizers`).
        activity_regularizer: a penalty on the outputs.
        kernel_constraint, bias_constraint: projections after each update (`tl.constraints`).

    Example:
        >>> tl.layers.Dense(3, activation="relu")(tl.ones((2, 4))).shape
        TensorShape([2, 3])
    """

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 lora_rank=None, quantization_config=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_unsupported(self, lora_rank=(lora_rank, None),
                          quantization_config=(quantization_config, None))
        if isinstance(units, bool) or not isinstance(units, numbers.Integral) or units <= 0:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self._weight_options("kernel", kernel_initializer, kernel_regularizer, kernel_constraint)
        self._weight_options("bias", bias_initializer, bias_regularizer, bias_constraint)

    def build(self, input_shape):
        last = input_shape[-1]
        if last is None:
            raise ValueError(f"Dense layer '{self.name}' needs a known last input dim, got "
                             f"input shape {input_shape}")
        # as Keras: once built, the last axis of every input must be the kernel's
        self.input_spec = InputSpec(min_ndim=2, axes={-1: int(last)})
        self.kernel = self.add_weight(name="kernel", shape=(last, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.units,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    _promotes_integer_inputs = True   # Keras's matmul promotes uint8/int inputs

    def call(self, inputs):
        lead = inputs.shape[:-1].as_list() if inputs.shape.rank is not None else None
        if lead is not None and len(lead) > 1 and lead.count(None) <= 1:
            # one product over the flattened leading dims, not one per batch slice (and a
            # kernel gradient that is one product too, not a batch of them summed)
            flat = _array.reshape(inputs, [-1, self.kernel.shape[0]])
            x = _array.reshape(_math.matmul(flat, self.kernel),
                               [-1 if d is None else d for d in lead] + [self.units])
        else:
            x = _math.matmul(inputs, self.kernel)
        if self.bias is not None:
            x = _nn.bias_add(x, self.bias)
        return self.activation(x)

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "quantization_config": None}


@register
class Activation(Layer):
    """Applies an activation function (a function or a Keras name)."""

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


@register
class Flatten(Layer):
    """Flattens all dims but the batch dim: (batch, ...) -> (batch, prod(...))."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format

    def call(self, inputs):
        rest = inputs.shape[1:]
        if rest.is_fully_defined():
            n = rest.num_elements()
            return _array.reshape(inputs, [-1, n])
        return _array.reshape(inputs, _array.stack([_array.shape(inputs)[0], -1]))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format or "channels_last"}


@register
class Dropout(Layer):
    """Zeroes a `rate` fraction of inputs while training, scaling the rest by 1/(1-rate).

    Args:
        rate: the fraction dropped, in [0, 1).
        noise_shape: shape of the keep mask (broadcast over the input).
        seed: a seed for the draws.
    """

    _supports_masking = True   # as Keras: the input's mask passes through

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Dropout rate must be in [0, 1], got {rate}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            return _nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


@register
class Embedding(Layer):
    """Looks up rows of an (input_dim, output_dim) table for integer indices.

    Args:
        input_dim: vocabulary size.
        output_dim: embedding size.
        embeddings_initializer: default "uniform" (Keras's RandomUniform(-0.05, 0.05)).
        mask_zero: index 0 is padding: the output's mask (`_keras_mask`, read by the RNN,
            pooling and attention layers downstream) is False there.
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, quantization_config=None,
                 activity_regularizer=None, **kwargs):
        input_length = kwargs.pop("input_length", None)
        if input_length is not None:  # tf.keras 2's argument: the sequence length of the input
            warnings.warn("Embedding(input_length=...) is tf.keras 2's argument; Keras 3 takes "
                          "the length from the input: use keras.Input(shape=(input_length,))",
                          DeprecationWarning, stacklevel=2)
            kwargs.setdefault("input_shape", (input_length,))
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_unsupported(self, weights=(weights, None), lora_rank=(lora_rank, None),
                          quantization_config=(quantization_config, None))
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if self.input_dim <= 0 or self.output_dim <= 0:
            raise ValueError("Both `input_dim` and `output_dim` should be positive, received "
                             f"input_dim={input_dim} and output_dim={output_dim}")
        self._weight_options("embeddings", embeddings_initializer, embeddings_regularizer,
                             embeddings_constraint)
        self.autocast = False   # indices, not values: never cast to the compute dtype
        self.mask_zero = bool(mask_zero)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(name="embeddings",
                                          shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, inputs):
        if not inputs.dtype.is_integer:
            inputs = _math.cast(inputs, _dt.int32)
        return _array.gather(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        """With `mask_zero=True`, False where the index is 0 (padding); else None."""
        if not self.mask_zero:
            return None
        return _math.not_equal(inputs, _math.cast(0, inputs.dtype))

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
                "mask_zero": self.mask_zero, "quantization_config": None}
