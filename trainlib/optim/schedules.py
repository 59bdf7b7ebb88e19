"""`tl.optim.schedules`: learning rates as functions of the step (Keras 3's formulas).

Owns: LearningRateSchedule and ExponentialDecay, PiecewiseConstantDecay,
CosineDecay (with linear warmup). Invariant: `schedule(step)` is built from
ops on the step tensor, so inside a traced train step the rate is part of the
graph and changes with `optimizer.iterations` without retracing.
"""
import math

from ..graph.dtypes import float32
from ..graph.ops.array import constant
from ..graph.ops.math import cast, cos, floor, minimum, pow, where  # noqa: A004
from ..graph.tensor import is_tensor
from ..graph.variables import Variable

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay",
           "serialize", "deserialize"]


def _step(step):
    if isinstance(step, Variable):
        step = step.read_value()
    return cast(step, float32) if is_tensor(step) else constant(float(step))


class LearningRateSchedule:
    """Base class: `schedule(step)` returns the learning rate at `step` (a scalar tensor)."""

    def __call__(self, step):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)` (floored when `staircase`).

    Example:
        >>> s = tl.optim.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
        >>> float(s(10))
        0.05
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be > 0, got {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps, self.decay_rate, self.staircase = decay_steps, decay_rate, staircase
        self.name = name

    def __call__(self, step):
        p = _step(step) / float(self.decay_steps)
        if self.staircase:
            p = floor(p)
        return self.initial_learning_rate * pow(constant(float(self.decay_rate)), p)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[0]` while step <= boundaries[0], `values[i]` while step <= boundaries[i], then `values[-1]`.

    Raises:
        ValueError: unless len(values) == len(boundaries) + 1.
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseConstantDecay needs one more value than boundaries, got "
                             f"{len(boundaries)} boundaries and {len(values)} values")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = _step(step)
        out = constant(float(self.values[-1]))
        for b, v in zip(reversed(self.boundaries), reversed(self.values[:-1])):
            out = where(step <= float(b), constant(float(v)), out)
        return out

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the initial rate to `alpha * rate` over `decay_steps`, with optional warmup.

    With `warmup_target`, the rate first rises linearly from
    `initial_learning_rate` to `warmup_target` over `warmup_steps`, then decays
    from `warmup_target`.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be > 0, got {decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.alpha = initial_learning_rate, \
            decay_steps, alpha
        self.name, self.warmup_target, self.warmup_steps = name, warmup_target, warmup_steps

    def _decay(self, step, start):
        fraction = step / float(self.decay_steps)
        cosine = 0.5 * (1.0 + cos(math.pi * fraction))
        return start * ((1.0 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = _step(step)
        if self.warmup_target is None:
            return self._decay(minimum(step, float(self.decay_steps)),
                               float(self.initial_learning_rate))
        step = minimum(step, float(self.decay_steps + self.warmup_steps))
        warm = (self.warmup_target - self.initial_learning_rate) * \
            (step / float(max(self.warmup_steps, 1))) + self.initial_learning_rate
        decayed = self._decay(step - float(self.warmup_steps), float(self.warmup_target))
        return where(step < float(self.warmup_steps), warm, decayed)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


_CLASSES = {c.__name__: c for c in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay)}


def serialize(schedule):
    """A JSON-able description of a schedule: `{"class_name", "config"}`."""
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config):
    """The schedule described by `serialize`'s output."""
    cls = _CLASSES.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown learning-rate schedule {config['class_name']!r}")
    return cls.from_config(config["config"])
