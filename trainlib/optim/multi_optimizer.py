"""`MultiOptimizer` and `OptimizerMap`: different optimizers for different variables
(Keras 3.15's).

Owns: which optimizer trains which variable (an `OptimizerMap` from variable paths,
exact or as `re.fullmatch` patterns, to optimizers with a default, or any callable
`variable -> optimizer`), and the delegation: each update hands every inner optimizer
its own variables' gradients, then counts its own `iterations`.
Invariants: the inner optimizers are listed in a fixed order (the map's optimizers,
then the default, then any other the callable returns, first seen first), and
`variables` is the MultiOptimizer's own `iteration` and `learning_rate` followed by
each inner optimizer's variables in that order, as Keras saves them.
"""
import re
from collections.abc import MutableMapping

from .base import Optimizer, serialize
from .loss_scale_optimizer import LossScaleOptimizer

__all__ = ["MultiOptimizer", "OptimizerMap"]


def _deserialize(config, custom_objects=None):
    from . import deserialize  # noqa: PLC0415 -- the package's table knows every optimizer
    return deserialize(config, custom_objects)


class OptimizerMap(MutableMapping):
    """Variable paths (or `re.fullmatch` patterns of them) to optimizers, with a default.

    Args:
        default_optimizer: the optimizer of every variable no key matches.
        optimizer_map: {path or pattern: optimizer}.

    Raises:
        TypeError: for a default that is no optimizer, or a map that is no dict.

    Example:
        >>> m = tl.optim.OptimizerMap(tl.optim.SGD(), {"encoder/.*": tl.optim.Adam()})
        >>> type(m["encoder/dense/kernel"]).__name__
        'Adam'
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError("default_optimizer must be a Keras Optimizer instance. "
                            f"Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = dict(optimizer_map or {})

    @property
    def default_optimizer(self):
        """The optimizer of variables no key matches."""
        return self._default_optimizer

    def __getitem__(self, key):
        """The optimizer of path `key`: an exact key, else the one pattern that fully
        matches, else the default.

        Raises:
            ValueError: if several patterns match.
        """
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use "
                             "duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if isinstance(optimizer, (LossScaleOptimizer, MultiOptimizer)):
            raise ValueError(f"optimizer cannot be {type(optimizer).__name__}.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[getattr(variable, "path", None) or variable.name]

    def get_config(self):
        return {"default_optimizer": serialize(self._default_optimizer),
                "optimizer_map": {k: serialize(o) for k, o in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        default = _deserialize(config["default_optimizer"], custom_objects)
        table = {k: _deserialize(c, custom_objects)
                 for k, c in (config.get("optimizer_map") or {}).items()}
        return cls(default, table)


class MultiOptimizer(Optimizer):
    """Trains each variable with the optimizer `optimizer_map` gives it.

    Args:
        optimizer_map: an `OptimizerMap`, or a callable `variable -> optimizer`.
        loss_scale_factor: set on every inner optimizer (the loss is scaled once, here).
        name: the optimizer's name.

    `learning_rate` is the inner optimizers' own (reading or setting it here is an
    AttributeError); `optimizers` lists them.

    Example:
        >>> opt = tl.optim.MultiOptimizer(tl.optim.OptimizerMap(
        ...     tl.optim.SGD(0.1), {"sequential/encoder/.*": tl.optim.Adam()}))
        >>> model.compile(optimizer=opt, loss="mse")
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        self._inner_optimizers = []
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        for opt in list(getattr(optimizer_map, "values", lambda: [])()) + \
                [getattr(optimizer_map, "default_optimizer", None)]:
            if opt is not None and not any(opt is o for o in self._inner_optimizers):
                opt.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(opt)
        self._var_to_optimizer = {}

    @property
    def optimizers(self):
        """The inner optimizers, in `variables` order."""
        return self._inner_optimizers

    @property
    def loss_scale_factor(self):
        return getattr(self, "_loss_scale_factor", None)

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for opt in getattr(self, "_inner_optimizers", ()):
            opt.loss_scale_factor = value

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the "
                             "learning rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning "
                             "rate on the individual sub-optimizers instead.")

    def build(self, var_list):
        """Assigns each variable its optimizer and builds each on its own variables."""
        var_list = list(var_list)
        assigned = []
        for var in var_list:
            opt = self._optimizer_map(var)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {var.name} is not an Optimizer "
                                 "instance.")
            if isinstance(opt, (LossScaleOptimizer, MultiOptimizer)):
                raise ValueError(f"{type(opt).__name__} cannot be used inside an MultiOptimizer.")
            if not any(opt is o for o in self._inner_optimizers):
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
            self._var_to_optimizer[id(var)] = opt
            assigned.append(opt)
        for opt in self._inner_optimizers:
            own = [v for v, o in zip(var_list, assigned) if o is opt]
            if own and not opt.built:
                opt.build(own)
        super().build(var_list)

    @property
    def variables(self):
        """Its own `iteration` and `learning_rate`, then each inner optimizer's variables."""
        own = super().variables
        return own + [v for opt in self._inner_optimizers for v in opt.variables]

    def apply(self, grads, trainable_variables=None):
        """Hands each inner optimizer its variables' gradients, then counts the step."""
        if trainable_variables is None:
            if not self.built:
                raise ValueError("apply(grads) without trainable_variables needs a built "
                                 "optimizer; call optimizer.build(variables) first")
            trainable_variables = self._trainable_variables
        self._apply(list(zip(grads, trainable_variables)), aggregate=True)

    def apply_gradients(self, grads_and_vars, experimental_aggregate_gradients=True):
        self._apply(list(grads_and_vars), aggregate=experimental_aggregate_gradients)
        return self._iterations

    def _apply(self, pairs, aggregate, count=True):
        if not self.built:
            self.build([v for _, v in pairs])
        for v in (v for _, v in pairs):
            self._var_index(v)
        for opt in self._inner_optimizers:
            own = [(g, v) for g, v in pairs if self._var_to_optimizer.get(id(v)) is opt]
            if any(g is not None for g, _ in own):
                opt._apply(own, aggregate=aggregate, count=count)
        if count:
            self._iterations.assign_add(1)

    def _count_step(self):
        """The end of a step applied in parts (`compile(remat=...)`): each inner optimizer
        counts (and averages) its own, then this one counts."""
        for opt in self._inner_optimizers:
            if opt.built:
                opt._count_step()
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list):
        for opt in self._inner_optimizers:
            opt.finalize_variable_values([v for v in var_list
                                          if self._var_to_optimizer.get(id(v)) is opt])

    def scale_loss(self, loss):
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    def get_config(self):
        mapping = self._optimizer_map
        if isinstance(mapping, OptimizerMap):
            mapping = {"module": "keras.optimizers", "class_name": "OptimizerMap",
                       "config": mapping.get_config(), "registered_name": None}
        return {"optimizer_map": mapping, "loss_scale_factor": self.loss_scale_factor,
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        mapping = config["optimizer_map"]
        if isinstance(mapping, dict) and mapping.get("class_name") == "OptimizerMap":
            config["optimizer_map"] = OptimizerMap.from_config(mapping["config"], custom_objects)
        return cls(**config)
