"""`LossScaleOptimizer`: dynamic loss scaling around another optimizer (mixed precision).

Owns: the scale (a float32 Variable, initially 2**15) and the count of finite steps
since it last changed; `scale_loss` multiplies the loss by the scale, and one
`apply_gradients` does, as Keras 3's: if every gradient is finite, divide them by the
scale, let the inner optimizer apply them, and double the scale after
`dynamic_growth_steps` finite steps in a row; otherwise skip the update (the inner
optimizer's `iterations` does not move), halve the scale and restart the count.
Invariant: both branches are one `tl.cond`, so inside a train step the decision is
part of the graph.
"""
from ..graph.context import eager_scope
from ..graph.properties import read_only
from ..graph.ops import array as _array, control_flow as _control_flow, math as _math
from ..graph.variables import Variable
from ..graph import dtypes as _dt

from .base import Optimizer

__all__ = ["LossScaleOptimizer"]


class LossScaleOptimizer(Optimizer):
    """Scales the loss up before the gradients are taken, and the gradients down before
    `inner_optimizer` applies them, so float16 gradients do not underflow.

    Args:
        inner_optimizer: the optimizer that applies the unscaled gradients.
        initial_scale: the first loss scale (default 2**15).
        dynamic_growth_steps: finite steps after which the scale doubles (default 2000).
        name: the optimizer's name.

    `Model.compile` wraps the optimizer in one automatically when the model's dtype
    policy is "mixed_float16" (unless `auto_scale_loss=False`).

    Example:
        >>> opt = tl.keras.mixed_precision.LossScaleOptimizer(tl.optim.SGD(0.1))
        >>> with tl.GradientTape() as tape:
        ...     scaled = opt.scale_loss(loss)
        >>> opt.apply_gradients(zip(tape.gradient(scaled, vars), vars))
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                 name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, "
                             "simply set `loss_scale_factor` directly on the `inner_optimizer`.")
        defaults = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None,
                    "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                    "ema_overwrite_frequency": None, "loss_scale_factor": None,
                    "gradient_accumulation_steps": None}
        for key, default in defaults.items():
            if key in kwargs and kwargs.pop(key) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{key}`. Instead, set "
                                 f"`{key}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError("LossScaleOptimizer does not support arguments: "
                             f"`{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError("LossScaleOptimizer wraps an optimizer instance, got "
                            f"{type(inner_optimizer).__name__}")
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.step_counter = self.dynamic_scale = None

    def build(self, var_list):
        """Creates the scale and counter, then builds the inner optimizer."""
        with eager_scope():
            self.step_counter = Variable(_array.constant(0, dtype=_dt.int32), trainable=False,
                                         name="step_counter")
            self.dynamic_scale = Variable(_array.constant(self.initial_scale, dtype=_dt.float32),
                                          trainable=False, name="dynamic_scale")
        if not self.inner_optimizer.built:
            # as Keras 3, whose build runs under no_automatic_dependency_tracking: the inner
            # optimizer's attribute Variables (Nadam's product) stay out of `variables`
            self.inner_optimizer._attribute_tracking = False
            try:
                self.inner_optimizer.build(var_list)
            finally:
                del self.inner_optimizer._attribute_tracking
        super().build(var_list)

    @property
    def variables(self):
        """Keras 3's order: its own (unused) iteration and learning-rate Variables, the step
        counter and the scale, then the inner optimizer's variables."""
        own = [self._iterations, self._learning_rate] + \
            [v for v in (self.step_counter, self.dynamic_scale) if v is not None]
        return own + list(self.inner_optimizer.variables)

    iterations = read_only("inner_optimizer.iterations", "The inner optimizer's count (its own "
                           "`iteration` Variable stays unused, as Keras's).")
    _iteration_counter = read_only("inner_optimizer._iteration_counter",
                                   "The inner optimizer's step counter.")

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if hasattr(self, "inner_optimizer"):
            self.inner_optimizer.learning_rate = value

    def scale_loss(self, loss):
        """`loss` times the current scale (the initial scale before the first build)."""
        if self.dynamic_scale is None:
            return loss * self.initial_scale
        scale = self.dynamic_scale.read_value()
        return loss * (scale if loss.dtype is _dt.float32 else _math.cast(scale, loss.dtype))

    def check_finite(self, grads):
        """A boolean scalar: every element of every gradient is finite."""
        flags = [_math.reduce_all(_math.is_finite(g)) for g in grads if g is not None]
        return _math.reduce_all(_array.stack(flags))

    def apply_gradients(self, grads_and_vars, experimental_aggregate_gradients=True):
        """Unscales and applies the gradients if all are finite, else skips the step;
        then updates the scale (see the module docstring)."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not self.built:
            self.build([v for _, v in pairs])
        finite = self.check_finite([g for g, _ in pairs])

        def apply_finite():
            scale = self.dynamic_scale.read_value()
            unscaled = [(None if g is None else
                         g / (scale if g.dtype is _dt.float32 else _math.cast(scale, g.dtype)), v)
                        for g, v in pairs]
            self.inner_optimizer.apply_gradients(unscaled, experimental_aggregate_gradients)
            grow = _math.equal(self.step_counter.read_value(), self.dynamic_growth_steps - 1)
            self.step_counter.assign(_math.where(grow, 0, self.step_counter + 1))
            self.dynamic_scale.assign(_math.where(grow, scale * 2.0, scale))
            return _array.constant(True)

        def skip():
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 0.5)
            return _array.constant(False)

        return _control_flow.cond(finite, apply_finite, skip)

    def apply(self, grads, trainable_variables=None):
        """Keras 3's form: `apply(grads, trainable_variables)`."""
        variables = trainable_variables if trainable_variables is not None else \
            self._trainable_variables
        return self.apply_gradients(zip(grads, variables))

    def get_config(self):
        return {"name": self.name,
                "inner_optimizer": {"module": "keras.optimizers",
                                    "class_name": type(self.inner_optimizer).__name__,
                                    "config": self.inner_optimizer.get_config(),
                                    "registered_name": None},
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config):
        from . import get  # noqa: PLC0415 -- the package's get knows every optimizer
        config = dict(config)
        inner = config.pop("inner_optimizer")
        return cls(get(inner), **config)
