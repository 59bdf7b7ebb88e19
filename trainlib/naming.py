"""Default names of Keras-level objects: `conv2d`, `conv2d_1`, `mean_squared_error`, `adam_2`.

Owns: the per-base-name counters and Keras 3's snake-case form of class names. Layers,
losses, metrics and optimizers all draw names here, so it sits below all of them and
imports nothing of the package. Invariant: a base name's first use is the bare name,
then `_1`, `_2`... for the life of the process, as Keras numbers them.
"""
import collections
import itertools
import re

__all__ = ["unique_name", "to_snake_case", "auto_name"]

_counters = collections.defaultdict(itertools.count)


def unique_name(base):
    """`base`, then `base_1`, `base_2`... for default layer names, as Keras numbers them."""
    n = next(_counters[base])
    return base if n == 0 else f"{base}_{n}"


def to_snake_case(name):
    """Keras 3's default-name form: "Conv2D" -> "conv2d", "MeanSquaredError" -> "mean_squared_error"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(class_name):
    """A fresh default name for an object of class `class_name` (conv2d, conv2d_1, ...)."""
    return unique_name(to_snake_case(class_name))
