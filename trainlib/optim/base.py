"""`Optimizer`: the base class every optimizer builds on (Keras 3's design).

Owns: the learning rate (a float32 Variable, or a schedule evaluated at
`iterations`, so changing it never retraces a step), the `iterations`
counter, slot creation in `build(var_list)`, gradient clipping (`clipnorm`,
`global_clipnorm`, `clipvalue`), decoupled weight decay, and the order of one
update (`apply(grads, variables)`, as Keras 3, or `apply_gradients(pairs)`):
aggregate over replicas through the current distribution strategy (inside its
`run` only), clip, decay weights, `update_step` per variable, apply the variables'
constraints, count; and `scale_loss`, the train step's hook for loss scaling
(identity here).
Invariants: subclasses implement only `build` and `update_step`; all
Variables (slots, counters) exist after `build`, which runs eagerly before
(or, at the latest, on the first trace of) a train step.
"""
from .. import initializers
from ..distribute.strategy import current_strategy
from ..graph.autodiff import GradientTape
from ..graph.context import eager_scope
from ..graph.dtypes import float32, int64
from ..graph.ops.array import constant, ones_like
from ..graph.ops.math import (cast, clip_by_value, maximum, minimum, reduce_sum, sqrt, square,
                              where)
from ..graph.variables import Variable, children_changed
from ..naming import auto_name

from . import schedules
from .schedules import LearningRateSchedule

__all__ = ["Optimizer"]


def _warn_lr(what):
    import warnings  # noqa: PLC0415 -- only tf.keras 2 code reaches this
    warnings.warn(f"{what} is deprecated (tf.keras 2); use `learning_rate`.", DeprecationWarning,
                  stacklevel=3)


class Optimizer:
    """Base class: applies gradients to Variables.

    Args:
        learning_rate: a float or a `tl.optim.schedules.LearningRateSchedule`.
        weight_decay: decoupled weight decay: before each update,
            `var -= var * weight_decay * learning_rate`.
        clipnorm: clip each gradient to this L2 norm.
        clipvalue: clip each gradient elementwise to [-clipvalue, clipvalue].
        global_clipnorm: clip all gradients together to this global L2 norm.
        name: the optimizer's name.

    Example:
        >>> opt = tl.optim.SGD(learning_rate=0.1)
        >>> v = tl.Variable(1.0)
        >>> opt.apply_gradients([(tl.constant(2.0), v)])
        >>> float(v)
        0.8
    """

    def __init__(self, learning_rate=0.001, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if "lr" in kwargs:  # tf.keras 2's name of learning_rate
            _warn_lr("the `lr` argument")
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {sorted(kwargs)}")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of clipnorm, clipvalue and global_clipnorm can be set.")
        for option, value, default in (("use_ema", use_ema, False),
                                       ("ema_overwrite_frequency", ema_overwrite_frequency, None),
                                       ("loss_scale_factor", loss_scale_factor, None),
                                       ("gradient_accumulation_steps",
                                        gradient_accumulation_steps, None)):
            if value != default:
                raise NotImplementedError(f"{type(self).__name__}: {option}={value!r} is not "
                                          f"supported by trainlib (only {default!r})")
        self.ema_momentum = ema_momentum
        # numbered per class as Keras 3 names optimizers: adam, adam_1, ...
        self.name = name or auto_name(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        with eager_scope():
            self.iterations = Variable(constant(0, dtype=int64), trainable=False,
                                       name="iteration")
            if isinstance(learning_rate, LearningRateSchedule):
                self._schedule = learning_rate
                self._learning_rate = None
            elif callable(learning_rate):
                raise TypeError("learning_rate must be a number or a LearningRateSchedule")
            else:
                self._schedule = None
                self._learning_rate = Variable(constant(float(learning_rate)), trainable=False,
                                               name="learning_rate")
        self.built = False
        self._variables = []
        self._index = {}

    # -- learning rate
    @property
    def learning_rate(self):
        """The current learning rate (a scalar tensor)."""
        if self._schedule is not None:
            return self._schedule(self.iterations)
        return self._learning_rate.read_value()

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, LearningRateSchedule):
            self._schedule = value
            return
        if self._schedule is not None:
            raise TypeError("This optimizer was created with a learning-rate schedule; its "
                            "learning rate cannot be set to a number.")
        self._learning_rate.assign(float(value))

    @property
    def lr(self):
        """tf.keras 2's name of `learning_rate` (deprecated): the rate's Variable, as tf.keras 2
        gave it (so `K.set_value(optimizer.lr, v)` works), or a schedule's current value."""
        _warn_lr("`optimizer.lr`")
        return self._learning_rate if self._schedule is None else self.learning_rate

    @lr.setter
    def lr(self, value):
        _warn_lr("`optimizer.lr`")
        self.learning_rate = value

    # -- variables
    def build(self, var_list):
        """Creates the slots for `var_list` (subclasses call super().build first)."""
        self._trainable_variables = list(var_list)
        self._index = {id(v): i for i, v in enumerate(self._trainable_variables)}
        self.built = True

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A slot Variable shaped and typed like `reference_variable`."""
        init = initializers.get(initializer)
        shape, dtype = tuple(reference_variable.shape), reference_variable.dtype
        base = reference_variable.name.split(":")[0]
        v = Variable(lambda: init(shape, dtype=dtype), trainable=False, name=f"{base}_{name}",
                     dtype=dtype)
        self._variables.append(v)
        children_changed(self)   # a restored checkpoint may hold this slot's value
        return v

    @property
    def variables(self):
        """iterations, the learning-rate Variable, then the slots."""
        head = [self.iterations] + ([self._learning_rate] if self._learning_rate is not None else [])
        return head + list(self._variables)

    def _var_index(self, variable):
        i = self._index.get(id(variable))
        if i is None:
            raise KeyError(f"Variable {variable.name} was not part of the var_list this optimizer "
                           "was built with. Build a new optimizer for a different set of variables.")
        return i

    # -- applying
    def scale_loss(self, loss):
        """The loss the train step differentiates (Keras 3's hook for loss scaling: a
        LossScaleOptimizer multiplies it by its scale; the base returns it unchanged)."""
        return loss

    def apply(self, grads, trainable_variables=None):
        """Applies `grads` to `trainable_variables`: clip, weight decay, update, `iterations += 1`.

        As Keras 3's `Optimizer.apply`: without `trainable_variables`, the variables
        the optimizer was built with. Inside `run` of a distribution strategy the
        gradients are first summed over the replicas (`strategy.aggregate_gradients`).
        Gradients that are None are skipped.

        Args:
            grads: a list of gradients (tensors or None).
            trainable_variables: the Variables, in the same order.

        Raises:
            ValueError: if every gradient is None, or the two lists differ in length.

        Example:
            >>> opt = tl.optim.SGD(0.1)
            >>> v = tl.Variable([1.0, 2.0])
            >>> opt.apply([tl.constant([1.0, 1.0])], [v])
        """
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("apply(grads) without trainable_variables needs a built optimizer; "
                                 "call optimizer.build(variables) first or pass the variables")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"apply got {len(grads)} gradients for {len(trainable_variables)} "
                             "variables; pass one gradient (or None) per variable")
        self._apply(list(zip(grads, trainable_variables)), aggregate=True)

    def apply_gradients(self, grads_and_vars, experimental_aggregate_gradients=True):
        """Applies (gradient, variable) pairs: clip, weight decay, update, `iterations += 1`.

        Pairs whose gradient is None are skipped. Inside `strategy.run` of a
        distribution strategy the gradients are first summed over the replicas
        (one fused all-reduce), as TensorFlow's optimizers do, unless
        `experimental_aggregate_gradients=False`.

        Returns:
            The `iterations` Variable.

        Raises:
            ValueError: if every gradient is None.
        """
        self._apply(list(grads_and_vars), aggregate=experimental_aggregate_gradients)
        return self.iterations

    def _apply(self, pairs, aggregate):
        pairs_kept = [(g, v) for g, v in pairs if g is not None]
        if not pairs_kept:
            names = [v.name for _, v in pairs]
            raise ValueError(f"No gradients provided for any variable: {names}. Check that the loss "
                             "depends on them and is computed inside the GradientTape.")
        if not self.built:
            self.build([v for _, v in pairs])
        grads = [g for g, _ in pairs_kept]
        variables = [v for _, v in pairs_kept]
        if aggregate:
            grads = current_strategy().aggregate_gradients(grads)
        for v in variables:
            self._var_index(v)
        grads = self._clip_gradients(grads)
        lr = self.learning_rate
        self._apply_weight_decay(variables, lr)
        for g, v in zip(grads, variables):
            if g.dtype is not v.dtype:
                g = cast(g, v.dtype)
            self.update_step(g, v, lr if lr.dtype is v.dtype else cast(lr, v.dtype))
        # as Keras: each variable's constraint (add_weight(constraint=...)) projects it after
        # the updates, in the same graph as the step
        for v in variables:
            constraint = getattr(v, "constraint", None)
            if constraint is not None:
                v.assign(constraint(v))
        self.iterations.assign_add(constant(1, dtype=int64))

    def minimize(self, loss, var_list, tape=None):
        """Computes the gradients of `loss` with `tape` and applies them.

        Args:
            loss: a tensor (with `tape`) or a zero-argument callable returning the loss.
            var_list: the Variables to update.
            tape: the GradientTape that recorded `loss`.
        """
        var_list = list(var_list)
        if tape is None:
            if not callable(loss):
                raise ValueError("minimize needs a tape when loss is a tensor")
            with GradientTape() as tape:
                loss = loss()
        grads = tape.gradient(loss, var_list)
        self.apply_gradients(zip(grads, var_list))

    def update_step(self, gradient, variable, learning_rate):
        """Updates one variable from its gradient (each optimizer implements this)."""
        raise NotImplementedError

    # -- clipping and weight decay
    def _clip_gradients(self, grads):
        if self.clipnorm is not None and self.clipnorm > 0:
            return [_clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue is not None and self.clipvalue > 0:
            return [clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _apply_weight_decay(self, variables, lr):
        if not self.weight_decay:
            return
        for v in variables:
            if getattr(v, "_exclude_from_weight_decay", False):
                continue
            rate = lr if lr.dtype is v.dtype else cast(lr, v.dtype)
            v.assign(v - v * self.weight_decay * rate)

    def exclude_from_weight_decay(self, var_list=None):
        """Marks Variables (e.g. biases) that weight decay must not touch."""
        for v in var_list or ():
            v._exclude_from_weight_decay = True

    # -- config
    def get_config(self):
        lr = self._schedule if self._schedule is not None else float(self._learning_rate.numpy())
        if self._schedule is not None:
            lr = schedules.serialize(lr)
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, "use_ema": False, "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": None, "loss_scale_factor": None,
                "gradient_accumulation_steps": None}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"])
        return cls(**config)


def _clip_by_norm(g, clip_norm):
    # Keras's safe form: no NaN gradient at zero, unchanged below the norm
    l2sum = reduce_sum(square(g))
    positive = l2sum > 0
    norm = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
    return g * clip_norm / maximum(norm, cast(clip_norm, g.dtype))


def _clip_by_global_norm(grads, clip_norm):
    total = None
    for g in grads:
        s = reduce_sum(square(cast(g, float32) if g.dtype is not float32 else g))
        total = s if total is None else total + s
    norm = sqrt(total)
    scale = clip_norm * minimum(1.0 / norm, 1.0 / clip_norm)
    return [g * (scale if g.dtype is float32 else cast(scale, g.dtype)) for g in grads]
