"""Normalization layers: BatchNormalization (moving statistics) and LayerNormalization.

Owns: Keras 3's defaults (BatchNormalization momentum 0.99, epsilon 1e-3;
LayerNormalization epsilon 1e-3) and update rule
`moving = moving * momentum + batch_stat * (1 - momentum)`, written with
`assign` so that inside a traced train step it is part of the same graph.
"""
import trainlib as tl
from trainlib import initializers

from .base import Layer, check_unsupported, register

__all__ = ["BatchNormalization", "LayerNormalization"]


def _axes(axis, rank):
    axis = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a % rank for a in axis)


@register
class BatchNormalization(Layer):
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
        check_unsupported(self, beta_regularizer=(beta_regularizer, None),
                          gamma_regularizer=(gamma_regularizer, None),
                          beta_constraint=(beta_constraint, None),
                          gamma_constraint=(gamma_constraint, None), renorm=(renorm, False),
                          renorm_clipping=(renorm_clipping, None))
        self.synchronized, self.renorm_momentum = bool(synchronized), renorm_momentum
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
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
        self.gamma = self.add_weight("gamma", shape, self.gamma_initializer) if self.scale else None
        self.beta = self.add_weight("beta", shape, self.beta_initializer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", shape, self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               self.moving_variance_initializer, trainable=False)

    def _shaped(self, v):
        return tl.reshape(v, self._broadcast) if len(self._feature_axes) != 1 or \
            self._feature_axes[0] != len(self._broadcast) - 1 else v

    def call(self, inputs, training=False):
        # a frozen BatchNormalization runs in inference mode, as in Keras
        if training and self.trainable:
            mean = tl.reduce_mean(inputs, axis=self._reduction_axes)
            variance = tl.reduce_mean(tl.square(inputs - self._shaped(mean)),
                                      axis=self._reduction_axes)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + variance * (1.0 - m))
        else:
            mean, variance = self.moving_mean.read_value(), self.moving_variance.read_value()
        inv = tl.math.rsqrt(variance + self.epsilon)
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
                "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                "gamma_constraint": None, "synchronized": self.synchronized, "renorm": False,
                "renorm_clipping": None, "renorm_momentum": self.renorm_momentum}


@register
class LayerNormalization(Layer):
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
        check_unsupported(self, rms_scaling=(rms_scaling, False),
                          beta_regularizer=(beta_regularizer, None),
                          gamma_regularizer=(gamma_regularizer, None),
                          beta_constraint=(beta_constraint, None),
                          gamma_constraint=(gamma_constraint, None))
        self.axis, self.epsilon, self.center, self.scale = axis, float(epsilon), center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)

    def build(self, input_shape):
        rank = len(input_shape)
        self._norm_axes = _axes(self.axis, rank)
        shape = tuple(input_shape[a] for a in self._norm_axes)
        self._broadcast = [input_shape[a] if a in self._norm_axes else 1 for a in range(rank)]
        self.gamma = self.add_weight("gamma", shape, self.gamma_initializer) if self.scale else None
        self.beta = self.add_weight("beta", shape, self.beta_initializer) if self.center else None

    def call(self, inputs):
        mean = tl.reduce_mean(inputs, axis=self._norm_axes, keepdims=True)
        variance = tl.reduce_mean(tl.square(inputs - mean), axis=self._norm_axes, keepdims=True)
        out = (inputs - mean) * tl.math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            out = out * tl.reshape(self.gamma, self._broadcast)
        if self.beta is not None:
            out = out + tl.reshape(self.beta, self._broadcast)
        return out

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "rms_scaling": False,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                "gamma_constraint": None}
