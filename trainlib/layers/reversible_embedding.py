"""`ReversibleEmbedding`: an Embedding that can also project hidden states back onto the
vocabulary (`reverse=True`), as Keras 3's (language-model output heads with tied weights).

Owns: the reverse projection `inputs @ embeddings^T` (or a separate `reverse_embeddings`
(output_dim, input_dim) weight when `tie_weights=False`, initialized like the table), the
optional `reverse_dtype` cast and the logit soft cap `tanh(logits / cap) * cap`. The forward
lookup and its mask are Embedding's.
"""
from ..graph import dtypes as _dt
from ..graph.ops import math as _math

from .base import register
from .core import Embedding

__all__ = ["ReversibleEmbedding"]


@register
class ReversibleEmbedding(Embedding):
    """An Embedding whose table also maps `output_dim` vectors back to `input_dim` logits.

    Args:
        input_dim, output_dim, embeddings_initializer, embeddings_regularizer,
            embeddings_constraint, mask_zero: as Embedding.
        tie_weights: reverse with the transposed table (default) or a weight of its own.
        reverse_dtype: the dtype the reverse matmul runs in (default: the compute dtype).
        logit_soft_cap: if set, logits become `tanh(logits / cap) * cap`.

    Example:
        >>> layer = tl.keras.layers.ReversibleEmbedding(10, 4)
        >>> hidden = layer(tl.constant([[1, 2, 3]]))
        >>> layer(hidden, reverse=True).shape
        TensorShape([1, 3, 10])
    """

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 reverse_dtype=None, logit_soft_cap=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer,
                         embeddings_constraint=embeddings_constraint, mask_zero=mask_zero,
                         **kwargs)
        self.tie_weights = tie_weights
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                shape=(self.output_dim, self.input_dim), initializer=self.embeddings_initializer,
                name="reverse_embeddings", trainable=True)

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        if self.tie_weights:
            kernel, transpose = self.embeddings, True
        else:
            kernel, transpose = self.reverse_embeddings, False
        kernel = kernel.value()
        if self.reverse_dtype is not None:
            dtype = _dt.as_dtype(self.reverse_dtype)
            kernel = _math.cast(kernel, dtype) if kernel.dtype is not dtype else kernel
        if inputs.dtype is not kernel.dtype:
            inputs = _math.cast(inputs, kernel.dtype)
        logits = _math.matmul(inputs, kernel, transpose_b=transpose)
        if self.logit_soft_cap is not None:
            cap = _math.cast(self.logit_soft_cap, logits.dtype)
            logits = _math.tanh(logits / cap) * cap
        return logits

    def compute_mask(self, inputs, mask=None):
        """Embedding's padding mask for index inputs; none for the reverse projection (whose
        inputs are floating hidden states)."""
        if inputs.dtype.is_floating:
            return None
        return super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape, reverse=False):
        shape = list(input_shape)
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape += [self.output_dim]
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "tie_weights": self.tie_weights,
                "reverse_dtype": self.reverse_dtype, "logit_soft_cap": self.logit_soft_cap}
