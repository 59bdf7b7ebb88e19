"""Keras 3's seed rules, shared by `keras.random` and the random `keras.ops` (elastic_transform).

Owns `SeedGenerator` (its state a non-trainable int64 Variable [seed, counter], advanced by every
draw, in graphs too) and `draw_seed`, which turns a `seed` argument into the [2] seed tensor of
a stateless random op: an int's [seed, 0], a generator's next state, or for None a pair drawn by
a stateful random op (fresh per call).
"""
import random as _python_random

from ..graph import dtypes as _dt
from ..graph.ops import array as _a
from ..graph.ops import random as _random
from ..graph.variables import Variable as _Variable
from ..object_registry import Configurable

__all__ = ["SeedGenerator", "draw_seed"]

_COUNTER = 0


class SeedGenerator(Configurable):
    """The state of a random stream: seeded draws advance it, so repeated calls differ.

    Args:
        seed: the initial seed (an int; default: a random one).
        name: the generator's name.

    Example:
        >>> gen = keras.random.SeedGenerator(seed=42)
        >>> a = keras.random.normal((2,), seed=gen); b = keras.random.normal((2,), seed=gen)
        >>> bool(tl.reduce_all(a == b))
        False
    """

    def __init__(self, seed=None, name=None, **kwargs):
        global _COUNTER
        if kwargs.pop("backend", None) is not None or kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        if name is None:
            _COUNTER += 1
            name = "seed_generator" if _COUNTER == 1 else f"seed_generator_{_COUNTER - 1}"
        self.name = name
        self._initial_seed = seed
        if seed is None:
            seed = _python_random.randint(1, int(1e9))
        if not isinstance(seed, int):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self.state = _Variable([seed, 0], dtype=_dt.int64, trainable=False,
                               name="seed_generator_state")

    def next(self, ordered=True):
        """The current seed [2] (a tensor); advances the state."""
        value = self.state.read_value() * 1  # a copy: the state changes next
        if ordered:
            self.state.assign_add(_a.constant([0, 1], dtype=_dt.int64))
        else:
            self.state.assign((self.state.read_value() + 1) * 5387 % 933199)
        return value

    def get_config(self):
        return {"seed": self._initial_seed, "name": self.name}


def draw_seed(seed):
    """The seed tensor [2] for `seed`: an int's [seed, 0], a SeedGenerator's next state, or
    (None) a fresh random pair."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, int) and not isinstance(seed, bool):
        return _a.constant([seed, 0], dtype=_dt.int64)
    if seed is None:
        return _random.uniform([2], 0, 2 ** 62, dtype=_dt.int64)
    raise ValueError("Argument `seed` must be either an integer or an instance of "
                     f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})")
