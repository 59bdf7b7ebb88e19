"""Normalization layers: BatchNormalization (moving statistics), LayerNormalization,
GroupNormalization, UnitNormalization and RMSNormalization.

Owns: Keras 3's defaults (BatchNormalization momentum 0.99, epsilon 1e-3;
LayerNormalization epsilon 1e-3) and update rule
`moving = moving * momentum + batch_stat * (1 - momentum)`, written with
`assign` so that inside a traced train step it is part of the same graph.
"""
from .. import constraints, initializers, regularizers
from ..graph import dtypes as _dt
from ..graph.ops import array as _array, math as _math, normalization as _normalization

from .base import Layer, check_unsupported, register

__all__ = ["BatchNormalization", "LayerNormalization", "GroupNormalization", "UnitNormalization",
           "RMSNormalization"]


class _Normalization(Layer):
    """What BatchNormalization and LayerNormalization share: gamma and beta with their
    regularizers and constraints, and float32 math under mixed precision (as Keras 3,
    float16 inputs are normalized in float32 and the result cast back)."""

    _supports_masking = True   # as Keras: the input's mask passes through

    _promotes_integer_inputs = True   # Keras's mean/variance ops promote integer inputs

    def _scale_and_shift_options(self, center, scale, beta_initializer, gamma_initializer,
                                 beta_regularizer, gamma_regularizer, beta_constraint,
                                 gamma_constraint):
        self.center, self.scale = center, scale
        self._weight_options("beta", beta_initializer, beta_regularizer, beta_constraint)
        self._weight_options("gamma", gamma_initializer, gamma_regularizer, gamma_constraint)

    def _scale_and_shift_weights(self, shape):
        self.gamma = self.add_weight(name="gamma", shape=shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint,
                                     autocast=False) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint,
                                    autocast=False) if self.center else None

    def _scale_and_shift_config(self):
        return {"beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}

    def call(self, inputs, **kwargs):
        if inputs.dtype is _dt.float16:
            return _math.cast(self._normalize(_math.cast(inputs, _dt.float32), **kwargs), inputs.dtype)
        return self._normalize(inputs, **kwargs)


def _axes(axis, rank):
    axis = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a % rank for a in axis)


@register
class BatchNormalization(_Normalization):
    """Normalizes with batch statistics while training, moving statistics at inference.

    Args:
        axis: the feature axis (default -1).
        momentum: moving-average momentum (default 0.99).
        epsilon: added to the variance (default 1e-3).
        center, scale: learn beta / gamma.

    Example:
        >>> bn = tl.layers.BatchNormalization()
        >>> bn(tl.ones((4, 3)), training=True).shape
        TensorShape([4, 3])
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, **kwargs):
        super().__init__(**kwargs)
        check_unsupported(self, renorm=(renorm, False), renorm_clipping=(renorm_clipping, None))
        self.synchronized, self.renorm_momentum = bool(synchronized), renorm_momentum
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self._scale_and_shift_options(center, scale, beta_initializer, gamma_initializer,
                                      beta_regularizer, gamma_regularizer, beta_constraint,
                                      gamma_constraint)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape):
        rank = len(input_shape)
        self._feature_axes = _axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._feature_axes)
        if None in shape:
            raise ValueError(f"BatchNormalization '{self.name}' needs known feature dims, got "
                             f"input shape {input_shape}")
        self._reduction_axes = [a for a in range(rank) if a not in self._feature_axes]
        self._broadcast = [input_shape[a] if a in self._feature_axes else 1 for a in range(rank)]
        self._scale_and_shift_weights(shape)
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False, autocast=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False, autocast=False)

    def _shaped(self, v):
        return _array.reshape(v, self._broadcast) if len(self._feature_axes) != 1 or \
            self._feature_axes[0] != len(self._broadcast) - 1 else v

    def call(self, inputs, training=False, mask=None):
        if mask is not None and mask.shape.rank is not None and inputs.shape.rank is not None \
                and mask.shape.rank != inputs.shape.rank - 1:
            raise ValueError("The mask provided should be one dimension less than the inputs. "
                             f"Received: mask.shape={mask.shape}, inputs.shape={inputs.shape}")
        return super().call(inputs, training=training, mask=mask)

    def _moments(self, inputs, mask):
        """Batch mean and variance; with a mask (one dim less than the inputs), over the
        unmasked positions only (Keras's weighted moments)."""
        axes = self._reduction_axes
        if mask is None:
            mean = _math.reduce_mean(inputs, axis=axes)
            return mean, _math.reduce_mean(_math.square(inputs - self._shaped(mean)), axis=axes)
        keep = _array.broadcast_to(_array.expand_dims(_math.cast(mask, _dt.bool), -1),
                                   _array.shape(inputs))
        zeros = _array.zeros_like(inputs)
        weights = _math.reduce_sum(_math.cast(keep, inputs.dtype), axis=axes, keepdims=True)
        mean = _math.reduce_sum(_math.where(keep, inputs, zeros), axis=axes, keepdims=True) / \
            (weights + 1e-7)
        spread = _math.square(_math.where(keep, inputs - mean, zeros))
        variance = _math.reduce_sum(spread, axis=axes, keepdims=True) / (weights + 1e-7)
        shape = list(self.moving_mean.shape)
        return _array.reshape(mean, shape), _array.reshape(variance, shape)

    def _normalize(self, inputs, training=False, mask=None):
        # a frozen BatchNormalization runs in inference mode, as in Keras
        if training and self.trainable:
            mean, variance = self._moments(inputs, mask)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + variance * (1.0 - m))
        else:
            mean, variance = self.moving_mean.read_value(), self.moving_variance.read_value()
        inv = _math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self.gamma
        out = (inputs - self._shaped(mean)) * self._shaped(inv)
        if self.beta is not None:
            out = out + self._shaped(self.beta)
        return out

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
                "moving_variance_initializer":
                    initializers.serialize(self.moving_variance_initializer),
                **self._scale_and_shift_config(), "synchronized": self.synchronized,
                "renorm": False,
                "renorm_clipping": None, "renorm_momentum": self.renorm_momentum}


@register
class LayerNormalization(_Normalization):
    """Normalizes each sample over `axis` (default -1), then scales by gamma and shifts by beta.

    Args:
        axis: the axis or axes normalized.
        epsilon: added to the variance (default 1e-3).
        center, scale: learn beta / gamma.
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        check_unsupported(self, rms_scaling=(rms_scaling, False))
        self.axis, self.epsilon = axis, float(epsilon)
        self._scale_and_shift_options(center, scale, beta_initializer, gamma_initializer,
                                      beta_regularizer, gamma_regularizer, beta_constraint,
                                      gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        self._norm_axes = _axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._norm_axes)
        self._broadcast = [input_shape[a] if a in self._norm_axes else 1 for a in range(rank)]
        self._scale_and_shift_weights(shape)

    def call(self, inputs):
        return super().call(inputs)

    def _normalize(self, inputs):
        rank = len(self._broadcast)
        if (self.gamma is not None and self.beta is not None
                and self._norm_axes == list(range(rank - len(self._norm_axes), rank))):
            return _normalization.layer_norm(inputs, self.gamma, self.beta, self.epsilon,
                                             len(self._norm_axes))
        mean = _math.reduce_mean(inputs, axis=self._norm_axes, keepdims=True)
        variance = _math.reduce_mean(_math.square(inputs - mean), axis=self._norm_axes, keepdims=True)
        out = (inputs - mean) * _math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            out = out * _array.reshape(self.gamma, self._broadcast)
        if self.beta is not None:
            out = out + _array.reshape(self.beta, self._broadcast)
        return out

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "rms_scaling": False,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                **self._scale_and_shift_config()}


@register
class GroupNormalization(_Normalization):
    """Splits the channels on `axis` into `groups` and normalizes each sample over each
    group (all non-batch dims but the group), then scales by gamma and shifts by beta
    (per channel). `groups=-1` is instance normalization.

    Args:
        groups: number of groups (default 32); must divide the channels.
        axis: the channel axis (default -1).
        epsilon: added to the variance (default 1e-3).
        center, scale: learn beta / gamma.

    Example:
        >>> tl.layers.GroupNormalization(groups=2)(tl.ones((1, 3, 4))).shape
        TensorShape([1, 3, 4])
    """

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        if isinstance(groups, bool) or not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a positive "
                             "integer (or `-1` for instance normalization). "
                             f"Received: groups={groups}")
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self._scale_and_shift_options(center, scale, beta_initializer, gamma_initializer,
                                      beta_regularizer, gamma_regularizer, beta_constraint,
                                      gamma_constraint)

    def build(self, input_shape):
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension "
                             f"but the layer received an input with shape {input_shape}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of "
                             f"channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number "
                             f"of channels ({dim}).")
        self._scale_and_shift_weights((dim,))

    def _normalize(self, inputs):
        rank = inputs.shape.rank
        axis = self.axis % rank
        channels = inputs.shape[axis]
        dims = inputs.shape.as_list()
        dynamic = _array.shape(inputs)
        grouped = [-1] + [d if d is not None else dynamic[i] for i, d in enumerate(dims)][1:]
        grouped[axis] = channels // self.groups
        grouped.insert(axis, self.groups)
        x = _array.reshape(inputs, _array.stack(grouped) if any(
            not isinstance(d, int) for d in grouped) else grouped)
        axes = [i for i in range(1, rank + 1) if i != axis]
        mean = _math.reduce_mean(x, axis=axes, keepdims=True)
        variance = _math.reduce_mean(_math.square(x - mean), axis=axes, keepdims=True)
        inv = _math.rsqrt(variance + self.epsilon)
        broadcast = [1] * (rank + 1)
        broadcast[axis], broadcast[axis + 1] = self.groups, channels // self.groups
        if self.gamma is not None:
            inv = inv * _array.reshape(self.gamma, broadcast)
        out = x * inv - mean * inv
        if self.beta is not None:
            out = out + _array.reshape(self.beta, broadcast)
        if None not in dims[1:]:   # keep the static shape for the functional API
            return _array.reshape(out, [-1] + dims[1:])
        return _array.ensure_shape(_array.reshape(out, dynamic), dims)

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                **self._scale_and_shift_config()}


@register
class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over `axis`: `x * min(rsqrt(sum(x**2)), 1e12)`.

    Example:
        >>> tl.layers.UnitNormalization()(tl.constant([[3.0, 4.0]])).numpy().tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a list/tuple "
                            f"of ints. Received: axis={axis}")
        self.supports_masking = True

    _promotes_integer_inputs = True

    def call(self, inputs):
        inv = _math.rsqrt(_math.reduce_sum(_math.square(inputs), axis=self.axis, keepdims=True))
        return inputs * _math.minimum(inv, _array.constant(1e12, inv.dtype))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


@register
class RMSNormalization(Layer):
    """Root-mean-square normalization (Zhang & Sennrich 2019), as Keras 3's:
    `x * rsqrt(mean(x**2 over axis) + epsilon) * scale`, computed in at least float32 and
    cast back; `scale` (ones) has the shape of the normalized axes.

    Args:
        axis: the axis or axes normalized (default -1); a list is sorted, an int becomes
            `[axis]` once built (as Keras's config shows).
        epsilon: added to the mean square (default 1e-6).

    Example:
        >>> tl.keras.layers.RMSNormalization()(tl.constant([[3.0, 4.0]])).shape
        TensorShape([1, 2])
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon

    def build(self, input_shape):
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[dim] for dim in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, x):
        source = x.dtype
        if source.is_floating and source.size < 4 or not source.is_floating:
            x = _math.cast(x, _dt.float32)
        rank = x.shape.rank
        if rank == 0:
            x = _array.expand_dims(x, 0)
        mean_square = _math.reduce_mean(_math.square(x), axis=self.axis, keepdims=True)
        out = x * _math.rsqrt(mean_square + _array.constant(self.epsilon, x.dtype))
        out = out * _math.cast(self.scale, x.dtype)
        return _math.cast(out, source) if out.dtype is not source else out

    def compute_output_shape(self, input_shape):
        for axis in (self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]):
            if axis >= len(input_shape) or axis < -len(input_shape):
                raise ValueError(f"Axis {axis} is out of bounds for input shape {input_shape}. "
                                 f"Received: axis={self.axis}")
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
