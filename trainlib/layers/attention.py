"""Attention layers: EinsumDense, MultiHeadAttention, GroupedQueryAttention, Attention,
AdditiveAttention.

Owns: Keras 3's constructor arguments, weight layout and math for these layers
(MultiHeadAttention is four EinsumDense sublayers named query, key, value and
attention_output, so `set_weights` from a Keras model carries over). Their calls
take several tensors (`mha(query, value, key=None, attention_mask=None)`), which
`Layer.__call__` treats as inputs and whose masks it passes as `query_mask`,
`value_mask`, `key_mask` (MultiHeadAttention) or `mask=[query_mask, value_mask]`
(Attention), as Keras 3 does.
"""
import math as _pymath
import re
import string

from .. import activations, constraints, initializers, regularizers
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, nn as _nn

from .base import Layer, check_unsupported, get_keras_mask, register, set_keras_mask

__all__ = ["EinsumDense", "MultiHeadAttention", "GroupQueryAttention", "Attention",
           "AdditiveAttention"]


def _einsum_shapes(equation, bias_axes, input_shape, output_shape):
    """(kernel shape, bias shape or None, full output shape) of an EinsumDense, as Keras's
    analysis of `X,Y->Z` and `...X,Y->...Z` equations."""
    eq = equation.replace("...", "0")
    m = re.fullmatch(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", eq)
    left = False
    if m is None:
        m = re.fullmatch(r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", eq)
        left = True
    if m is None:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                         "[X],[Y]->[Z] or ...[X],[Y]->...[Z].")
    ins, ws, outs = m.groups()
    input_shape = list(input_shape)
    elided = len(input_shape) - len(ins)
    out_shape = [input_shape[0]] + list(output_shape)
    if left:
        for i in range(1, elided):
            out_shape.insert(1, input_shape[i])
        in_map = {d: i + elided for i, d in enumerate(ins)}
        out_map = {d: i + elided for i, d in enumerate(outs)}
    else:
        if elided != 0:
            raise ValueError(f"EinsumDense equation '{equation}' expects inputs of rank "
                             f"{len(ins)}, got input shape {tuple(input_shape)}")
        in_map = {d: i for i, d in enumerate(ins)}
        out_map = {d: i for i, d in enumerate(outs)}
    if len(out_shape) != len(outs) + (elided if left else 0):
        raise ValueError(f"EinsumDense equation '{equation}': output_shape {tuple(output_shape)} "
                         f"does not fit the output spec '{outs}'")
    for d in ins:
        if d in out_map:
            o = out_shape[out_map[d]]
            if o is not None and o != input_shape[in_map[d]]:
                raise ValueError("Input shape and output shape do not match at shared dimension "
                                 f"'{d}'. Input shape is {input_shape[in_map[d]]}, and output "
                                 f"shape is {o}.")
            out_shape[out_map[d]] = input_shape[in_map[d]]
    for d in outs:
        if d not in ins and d not in ws:
            raise ValueError(f"Dimension '{d}' was specified in the output '{outs}' but has no "
                             f"corresponding dim in the input spec '{ins}' or weight spec '{ws}'")
    kernel = []
    for d in ws:
        if d in out_map:
            kernel.append(out_shape[out_map[d]])
        elif d in in_map:
            kernel.append(input_shape[in_map[d]])
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input "
                             f"spec '{ins}' or the output spec '{outs}'.")
    bias = None
    if bias_axes is not None:
        for c in bias_axes:
            if c not in outs:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of the "
                                 f"output spec '{outs}'")
        first = min(outs.find(c) for c in bias_axes)
        bias = [out_shape[out_map[c]] if c in bias_axes else 1 for c in outs[first:]]
    return tuple(kernel), None if bias is None else tuple(bias), tuple(out_shape)


@register
class EinsumDense(Layer):
    """A dense layer whose contraction is an einsum: `activation(einsum(equation, x, kernel) + bias)`.

    Args:
        equation: `"ab,bc->ac"`-style, or with a leading `...` for free batch dims.
        output_shape: the output shape without the batch dim (None for dims taken
            from the input).
        activation: a function or Keras name.
        bias_axes: the output letters that get a bias (None: no bias).
        kernel_initializer, bias_initializer, *_regularizer, *_constraint: as Dense.

    Example:
        >>> tl.layers.EinsumDense("ab,bc->ac", output_shape=4)(tl.ones((2, 3))).shape
        TensorShape([2, 4])
    """

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None,
                 gptq_unpacked_column_size=None, quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        check_unsupported(self, lora_rank=(lora_rank, None), lora_alpha=(lora_alpha, None),
                          gptq_unpacked_column_size=(gptq_unpacked_column_size, None),
                          quantization_config=(quantization_config, None))
        self.equation = equation
        self.partial_output_shape = ((output_shape,) if isinstance(output_shape, int)
                                     else tuple(output_shape))
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self._weight_options("kernel", kernel_initializer, kernel_regularizer, kernel_constraint)
        self._weight_options("bias", bias_initializer, bias_regularizer, bias_constraint)

    _promotes_integer_inputs = True

    def build(self, input_shape):
        kernel, bias, self.full_output_shape = _einsum_shapes(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        self.kernel = self.add_weight(name="kernel", shape=kernel,
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=bias, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if bias is not None else None
        self._equation = _spell_out(self.equation, len(input_shape))

    def compute_output_shape(self, input_shape):
        return _einsum_shapes(self.equation, self.bias_axes, input_shape,
                              self.partial_output_shape)[2]

    def call(self, inputs, training=None):
        x = _math.einsum(self._equation, inputs, self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x)

    def get_config(self):
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "equation": self.equation, "activation": activations.serialize(self.activation),
                "bias_axes": self.bias_axes,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "quantization_config": None}


def _spell_out(equation, rank):
    """`equation` with a leading `...` replaced by letters for the elided dims (the einsum
    gradient then needs no ellipsis handling)."""
    if not equation.startswith("..."):
        return equation
    lhs, out = equation[3:].split("->")
    ins, ws = lhs.split(",")
    used = set(equation)
    spare = [c for c in string.ascii_letters if c not in used][:rank - len(ins)]
    free = "".join(spare)
    return f"{free}{ins},{ws}->{free}{out[3:]}"


def _proj_equation(free_dims, bound_dims, output_dims):
    """Keras's projection einsum inside MultiHeadAttention: (equation, bias axes, output rank)."""
    letters = string.ascii_lowercase
    free = letters[:free_dims]
    bound = letters[free_dims:free_dims + bound_dims]
    out = letters[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}", out, free_dims + output_dims


def _attention_equations(rank, attn_axes):
    """(dot-product equation, combine equation, scores rank) over projected tensors of `rank`
    dims (batch..., attention dims..., heads, channels), as Keras builds them."""
    letters = string.ascii_lowercase
    target = letters[:rank]
    batch_dims = [i for i in range(rank) if i not in attn_axes and i != rank - 1]
    source, nxt = "", rank
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += letters[nxt]
            nxt += 1
    product = ("".join(target[i] for i in batch_dims) + "".join(target[i] for i in attn_axes)
               + "".join(source[i] for i in attn_axes))
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)


def _causal_mask(q_len, v_len):
    """(1, T, S) boolean: query step t sees value steps s <= t (Keras's cumsum comparison)."""
    ones = _array.ones(_array.stack([1, q_len, v_len]), dtype=_dt.int32)
    return _math.greater_equal(_math.cumsum(ones, axis=-2), _math.cumsum(ones, axis=-1))


def _large_negative(dtype):
    return -65504.0 if dtype is _dt.float16 else -1e9


def _positive_int(value, what, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Received an invalid value for argument `{what}`, expected a positive "
                         f"integer{' or `None`' if allow_none else ''}. Received: {what}={value}")
    return value


# trainlib's first `.keras` format recorded an attention call as ONE list of its tensors,
# None where absent (and the build shape as the same list of shapes); these name the slots
_FIRST_FORMAT_MHA = ("query", "value", "key", "attention_mask", "query_mask", "value_mask",
                     "key_mask")
_FIRST_FORMAT_DENSE = ("query", "value", "key", "query_mask", "value_mask")


def _first_format_slots(packed, slots):
    """The named entries of a first-format packed list, or None when `packed` is not one."""
    if not isinstance(packed, (list, tuple)) or len(packed) != len(slots):
        return None
    return {name: v for name, v in zip(slots, packed) if v is not None}


@register
class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al.), with Keras 3's weights and masks.

    `query`, `key`, `value` are projected per head by EinsumDense sublayers
    (`query`, `key`, `value`), scaled dot products over `attention_axes` are
    softmaxed (masked where `attention_mask` is False or, with
    `use_causal_mask=True`, above the diagonal), optionally dropped out, combine
    the values, and `attention_output` projects back to the query's last dim
    (or `output_shape`).

    Args:
        num_heads: number of heads.
        key_dim: size of each head for query and key.
        value_dim: size of each head for value (default key_dim).
        dropout: dropout rate on the attention probabilities.
        use_bias: biases in the projections.
        output_shape: the output's trailing shape (default: the query's last dim).
        attention_axes: the axes attention runs over (default: all but batch, heads, channels).
        kernel_initializer, bias_initializer, *_regularizer, *_constraint: for the projections.
        seed: seed of the dropout draws.

    Call args: `query`, `value`, `key=None`, `query_mask`/`value_mask`/`key_mask` (default:
    the inputs' own masks), `attention_mask=None` (boolean, (B, T, S)),
    `return_attention_scores=False`, `training`, `use_causal_mask=False`. The output
    carries the query's mask; the inputs' masks are consumed (removed), as Keras 3 does.

    Example:
        >>> mha = tl.layers.MultiHeadAttention(num_heads=2, key_dim=4)
        >>> mha(tl.ones((1, 5, 8)), tl.ones((1, 3, 8))).shape
        TensorShape([1, 5, 8])
    """

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, **kwargs):
        _positive_int(num_heads, "num_heads")
        _positive_int(key_dim, "key_dim")
        _positive_int(value_dim, "value_dim", allow_none=True)
        super().__init__(**kwargs)
        check_unsupported(self, sliding_window=(sliding_window, None),
                          flash_attention=(bool(flash_attention), False),
                          use_gate=(use_gate, False))
        self.supports_masking = True
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self.seed = float(dropout), use_bias, seed
        if output_shape:
            if isinstance(output_shape, int):
                output_shape = (output_shape,)
            try:
                output_shape = tuple(output_shape)
            except TypeError:
                raise ValueError(f"Invalid `output_shape`: {output_shape}. When specified, the "
                                 "`output_shape` should be of type tuple, list, or int.") from None
        self._mha_output_shape = output_shape or None
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError("`attention_axes` must be an int, list, or tuple."
                             f"Received: attention_axes={attention_axes}")
        self._attention_axes = tuple(attention_axes) if attention_axes else None
        # kept private, as Keras's MultiHeadAttention keeps them (its sublayers get them)
        self._weight_options("_kernel", kernel_initializer, kernel_regularizer, kernel_constraint)
        self._weight_options("_bias", bias_initializer, bias_regularizer, bias_constraint)
        self._sub_activity_regularizer = regularizers.get(activity_regularizer)
        self._inverse_sqrt_key_dim = 1.0 / _pymath.sqrt(float(key_dim))

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)

    def _sublayer(self, equation, output_shape, bias_axes, name):
        return EinsumDense(
            equation, output_shape=output_shape, bias_axes=bias_axes if self._use_bias else None,
            name=name, kernel_initializer=initializers.get(
                initializers.serialize(self._kernel_initializer)),
            bias_initializer=initializers.get(initializers.serialize(self._bias_initializer)),
            kernel_regularizer=self._kernel_regularizer, bias_regularizer=self._bias_regularizer,
            activity_regularizer=self._sub_activity_regularizer,
            kernel_constraint=self._kernel_constraint, bias_constraint=self._bias_constraint,
            dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        query_shape, value_shape, key_shape = self._build_shapes(query_shape, value_shape,
                                                                 key_shape)
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError("All dimensions of `value` and `key`, except the last one, must be "
                             f"equal. Received: value_shape={value_shape} and "
                             f"key_shape={key_shape}")

        def proj(shape, dims, name):
            eq, bias_axes, rank = _proj_equation(len(shape) - 1, 1, 2)
            layer = self._sublayer(eq, [None] * (rank - 3) + dims, bias_axes, name)
            layer.build(tuple(shape))
            return layer

        self._query_dense = proj(query_shape, [self._num_heads, self._key_dim], "query")
        self._key_dense = proj(key_shape, [self._num_heads, self._key_dim], "key")
        self._value_dense = proj(value_shape, [self._num_heads, self._value_dim], "value")
        rank = len(value_shape) + 1
        axes = self._attention_axes or tuple(range(1, rank - 2))
        self._attention_axes = tuple(a if a >= 0 else (rank - 1) + a for a in axes)
        self._dot_product_equation, self._combine_equation, scores_rank = \
            _attention_equations(rank, self._attention_axes)
        self._norm_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        out_shape = list(self._mha_output_shape) if self._mha_output_shape else [query_shape[-1]]
        eq, bias_axes, rank_out = _proj_equation(len(query_shape) - 1, 2, len(out_shape))
        self._output_dense = self._sublayer(eq, [None] * (rank_out - 1 - len(out_shape)) +
                                            out_shape, bias_axes, "attention_output")
        dense_in = list(self._query_dense.compute_output_shape(tuple(query_shape)))
        dense_in[-1] = self._value_dim
        self._output_dense.build(tuple(dense_in))

    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)

    def _build_shapes(self, query_shape, value_shape, key_shape):
        """(query, value, key) shapes; also from the first format's packed list of shapes.
        Kept for `_keras_build_config`."""
        if value_shape is None:
            named = _first_format_slots(query_shape, _FIRST_FORMAT_MHA)
            if named is None or "value" not in named:
                raise TypeError(f"{self.name}: MultiHeadAttention.build needs `query_shape` "
                                f"and `value_shape`, got {query_shape!r}")
            query_shape, value_shape = named["query"], named["value"]
            key_shape = named.get("key")
        self._keras_shapes = {"query_shape": query_shape, "value_shape": value_shape,
                              "key_shape": key_shape}
        return query_shape, value_shape, value_shape if key_shape is None else key_shape

    def _keras_build_config(self, shape):
        """Keras 3's build_config: the query, value and key shapes by name."""
        shapes = getattr(self, "_keras_shapes", None)
        if shapes is None:
            return None
        return {"shapes_dict": {k: list(v) if v is not None else None
                                for k, v in shapes.items()}}

    def _unpack_first_format_call(self, packed):
        """(args, kwargs) of a call trainlib's first format recorded as one packed list
        [query, value, key, attention_mask, query_mask, value_mask, key_mask]; None when
        `packed` is not such a list."""
        named = _first_format_slots(packed, _FIRST_FORMAT_MHA)
        if named is None or "query" not in named or "value" not in named:
            return None
        return (named.pop("query"), named.pop("value")), named
    output_dense = property(lambda self: self._output_dense)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        key = value if key is None else key
        # as Keras 3: the masks are handled here, at the level of the layer, so the inputs'
        # own masks go (the query's is the output's)
        query_mask = get_keras_mask(query)
        for x in (query, value, key):
            set_keras_mask(x, None)
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        q, k, v = self._project(query, key, value)
        out, scores = self._compute_attention(q, k, v, mask, training)
        out = self._output_dense(out)
        if query_mask is not None:
            set_keras_mask(out, query_mask)
        return (out, scores) if return_attention_scores else out

    def _project(self, query, key, value):
        return self._query_dense(query), self._key_dense(key), self._value_dense(value)

    @staticmethod
    def _attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                        use_causal_mask):
        """The (B, T, S) boolean mask: the query's mask as [B, T, 1], value's and key's as
        [B, 1, S], the causal mask, and `attention_mask`, combined with AND (Keras's
        `_compute_attention_mask`)."""
        mask = None
        for m, axis in ((query_mask, -1), (value_mask, -2), (key_mask, -2)):
            if m is not None:
                m = _array.expand_dims(_math.cast(m, _dt.bool), axis)
                mask = m if mask is None else _math.logical_and(mask, m)
        if use_causal_mask:
            m = _causal_mask(_array.shape(query)[1], _array.shape(value)[1])
            mask = m if mask is None else _math.logical_and(mask, m)
        if attention_mask is not None:
            m = _math.cast(attention_mask, _dt.bool)
            mask = m if mask is None else _math.logical_and(m, mask)
        return mask

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        """Scaled dot products, masked softmax, dropout and the value combination over the
        projected (batch..., attention dims..., heads, channels) tensors."""
        query = query * _array.constant(self._inverse_sqrt_key_dim, query.dtype)
        scores = _math.einsum(self._dot_product_equation, key, query)
        if attention_mask is not None:
            axis = -len(self._attention_axes) * 2 - 1
            for _ in range(scores.shape.rank - attention_mask.shape.rank):
                attention_mask = _array.expand_dims(attention_mask, axis)
            scores = _math.where(attention_mask, scores,
                                 _array.constant(_large_negative(scores.dtype), scores.dtype))
        scores = _softmax(scores, self._norm_axes)
        probs = scores
        if training and self._dropout > 0:
            probs = _nn.dropout(scores, rate=self._dropout, seed=self.seed)
        return _math.einsum(self._combine_equation, probs, value), scores

    def get_config(self):
        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout,
                "use_bias": self._use_bias, "use_gate": False,
                "output_shape": self._mha_output_shape, "attention_axes": self._attention_axes,
                "sliding_window": None,
                "kernel_initializer": initializers.serialize(self._kernel_initializer),
                "bias_initializer": initializers.serialize(self._bias_initializer),
                "kernel_regularizer": regularizers.serialize(self._kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self._bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._sub_activity_regularizer),
                "kernel_constraint": constraints.serialize(self._kernel_constraint),
                "bias_constraint": constraints.serialize(self._bias_constraint),
                "seed": self.seed}


@register
class GroupedQueryAttention(MultiHeadAttention):
    """Grouped-query attention (Ainslie et al.): `num_query_heads` query heads share
    `num_key_value_heads` key/value heads (each key/value head serves
    `num_query_heads // num_key_value_heads` consecutive query heads). Weights as Keras 3:
    EinsumDense `query` (bqm,muh->bquh), `key` and `value` (bkm,mvh->bkvh) and
    `attention_output` (bquh,uhm->bqm).

    Args:
        head_dim: size of each head.
        num_query_heads: number of query heads.
        num_key_value_heads: number of key/value heads (divides num_query_heads).
        dropout, use_bias, kernel_*/bias_* and seed: as MultiHeadAttention.

    Example:
        >>> gqa = tl.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2)
        >>> gqa(tl.ones((1, 3, 8)), tl.ones((1, 5, 8))).shape
        TensorShape([1, 3, 8])
    """

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        for value, what in ((head_dim, "head_dim"), (num_query_heads, "num_query_heads"),
                            (num_key_value_heads, "num_key_value_heads")):
            _positive_int(value, what)
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        super().__init__(num_query_heads, head_dim, dropout=dropout, use_bias=use_bias,
                         sliding_window=sliding_window, flash_attention=flash_attention,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         use_gate=use_gate, seed=seed, **kwargs)
        self.head_dim, self.num_query_heads = head_dim, num_query_heads
        self.num_key_value_heads = num_key_value_heads
        self.num_repeats = num_query_heads // num_key_value_heads

    def build(self, query_shape, value_shape=None, key_shape=None):
        query_shape, value_shape, key_shape = self._build_shapes(query_shape, value_shape,
                                                                 key_shape)
        self.feature_dim = query_shape[-1]
        kv_heads = (None, self.num_key_value_heads, self.head_dim)

        def dense(equation, output_shape, bias_axes, name, shape):
            layer = self._sublayer(equation, output_shape, bias_axes, name)
            layer.build(tuple(shape))
            return layer

        self._query_dense = dense("bqm,muh->bquh", (None, self.num_query_heads, self.head_dim),
                                  "uh", "query", query_shape)
        self._key_dense = dense("bkm,mvh->bkvh", kv_heads, "vh", "key", key_shape)
        self._value_dense = dense("bkm,mvh->bkvh", kv_heads, "vh", "value", value_shape)
        self._attention_axes, self._norm_axes = (1,), (3,)
        self._dot_product_equation = "bkuh,bquh->buqk"   # (key, query) as MHA
        self._combine_equation = "buqk,bkuh->bquh"
        self._output_dense = dense("bquh,uhm->bqm", (None, self.feature_dim), "m",
                                   "attention_output",
                                   (None, None, self.num_query_heads, self.head_dim))

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        # as Keras 3's GroupedQueryAttention: the masks come as arguments (the inputs keep
        # theirs), and the output takes the query's mask after the call
        key = value if key is None else key
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        q, k, v = self._project(query, key, value)
        out, scores = self._compute_attention(q, k, v, mask, training)
        out = self._output_dense(out)
        return (out, scores) if return_attention_scores else out

    def _project(self, query, key, value):
        q, k, v = super()._project(query, key, value)
        return (q, _array.repeat(k, self.num_repeats, axis=2),
                _array.repeat(v, self.num_repeats, axis=2))

    def get_config(self):
        config = Layer.get_config(self)
        mha = super().get_config()
        keep = ("use_bias", "use_gate", "sliding_window", "dropout", "kernel_initializer",
                "bias_initializer", "kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint", "seed")
        return {**config, "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads,
                **{k: mha[k] for k in keep}}


GroupQueryAttention = GroupedQueryAttention   # Keras 3's public name (the class keeps its own)


def _softmax(x, axes):
    """Softmax over several trailing axes (Keras's Softmax layer with a tuple axis)."""
    if len(axes) == 1:
        return _nn.softmax(x, axis=axes[0])
    m = _math.reduce_max(x, axis=list(axes), keepdims=True)
    e = _math.exp(x - _array.stop_gradient(m))
    return e / _math.reduce_sum(e, axis=list(axes), keepdims=True)


class _BaseDenseAttention(Layer):
    """What Attention and AdditiveAttention share: inputs `[query, value]` or
    `[query, value, key]`, `mask=[query_mask, value_mask]`, the masked softmax, dropout
    on the weights and the query mask on the output."""

    def __init__(self, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.dropout, self.seed = float(dropout), seed

    def _validate(self, inputs, mask=None):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} layer must be called on a list of inputs, "
                             "namely [query, value] or [query, value, key]. "
                             f"Received: inputs={inputs}.")
        if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3)):
            raise ValueError(f"{type(self).__name__} layer mask must be a list of length 2, "
                             f"namely [query_mask, value_mask]. Received: mask={mask}.")

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        self._validate(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask, v_mask = (mask[0], mask[1]) if mask else (None, None)
        scores = self._calculate_scores(q, k)
        if v_mask is not None:
            v_mask = _math.cast(v_mask, _dt.bool)
        if use_causal_mask:
            causal = _causal_mask(_array.shape(scores)[-2], _array.shape(scores)[-1])
            v_mask = causal if v_mask is None else _math.logical_and(
                _array.expand_dims(v_mask, -2), causal)
        if v_mask is not None:
            if v_mask.shape.rank == 2:
                v_mask = _array.expand_dims(v_mask, -2)
            big = 65504.0 if scores.dtype is _dt.float16 else 1.0e9
            scores = _math.where(v_mask, scores, scores - _array.constant(big, scores.dtype))
        weights = _nn.softmax(scores, axis=-1)
        used = weights
        if training and self.dropout > 0:
            used = _nn.dropout(weights, rate=self.dropout, seed=self.seed)
        out = _math.matmul(used, v)
        if q_mask is not None:
            q_mask = _array.expand_dims(_math.cast(q_mask, _dt.bool), -1)
            out = _math.where(q_mask, out, _array.zeros_like(out))
        return (out, weights) if return_attention_scores else out

    def _unpack_first_format_call(self, packed):
        """(args, kwargs) of a call trainlib's first format recorded as one packed list
        [query, value, key, query_mask, value_mask]; None when `packed` is not such a list."""
        named = _first_format_slots(packed, _FIRST_FORMAT_DENSE)
        if named is None or "query" not in named or "value" not in named:
            return None
        inputs = [named[k] for k in ("query", "value", "key") if k in named]
        masks = [named.get("query_mask"), named.get("value_mask")]
        return (inputs,), ({"mask": masks} if any(m is not None for m in masks) else {})

    def compute_mask(self, inputs, mask=None):
        """The query's mask, as Keras."""
        self._validate(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def get_config(self):
        return {**super().get_config(), "dropout": self.dropout, "seed": self.seed}


@register
class Attention(_BaseDenseAttention):
    """Dot-product (Luong) attention over `[query, value]` or `[query, value, key]`.

    Scores are `query @ key^T` (times a learned `scale` with `use_scale=True`) or, with
    `score_mode="concat"`, `concat_score_weight * sum(tanh(scale * (q + k)))`; positions
    where `value_mask` is False get -1e9 before the softmax over keys.

    Args:
        use_scale: learn a scalar `scale` (initialized to 1).
        score_mode: "dot" or "concat".
        dropout: dropout rate on the attention weights.
        seed: seed of the dropout draws.

    Example:
        >>> tl.layers.Attention()([tl.ones((1, 2, 3)), tl.ones((1, 4, 3))]).shape
        TensorShape([1, 2, 3])
    """

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.use_scale, self.score_mode = use_scale, score_mode

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones") \
            if self.use_scale else None
        self.concat_score_weight = self.add_weight(
            name="concat_score_weight", shape=(), initializer="ones") \
            if self.score_mode == "concat" else None

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = _math.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        s = _array.expand_dims(query, -2) + _array.expand_dims(key, -3)
        if self.scale is not None:
            s = self.scale * s
        return self.concat_score_weight * _math.reduce_sum(_math.tanh(s), axis=-1)

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode}


@register
class AdditiveAttention(_BaseDenseAttention):
    """Additive (Bahdanau) attention: scores `sum(scale * tanh(q + k), -1)` over
    `[query, value]` or `[query, value, key]`, softmax over keys, weights @ value.

    Args:
        use_scale: learn a per-feature `scale` (glorot_uniform, default True).
        dropout: dropout rate on the attention weights.

    Example:
        >>> tl.layers.AdditiveAttention()([tl.ones((1, 2, 3)), tl.ones((1, 4, 3))]).shape
        TensorShape([1, 2, 3])
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.use_scale = use_scale

    def build(self, input_shape):
        dim = input_shape[0][-1]
        self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform") \
            if self.use_scale else None

    def _calculate_scores(self, query, key):
        t = _math.tanh(_array.expand_dims(query, -2) + _array.expand_dims(key, -3))
        if self.scale is not None:
            t = self.scale * t
        return _math.reduce_sum(t, axis=-1)

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale}
