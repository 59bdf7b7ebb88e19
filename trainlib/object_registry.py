"""Keras 3's `get` / `serialize` / `deserialize` for a family of small named objects
(regularizers, constraints, initializers, losses, metrics): one table of names per family,
one form of config.

Owns: resolving an identifier (None, a name, a config dict, a class, an instance or a
plain function) against a family's name table, the config Keras 3 writes for such
an object (`{"module", "class_name", "config", "registered_name"}`), and `Configurable`,
the config round trip the families' base classes share.
"""
import functools
import inspect

__all__ = ["Family", "Configurable"]


@functools.lru_cache(maxsize=None)
def _init_arguments(cls):
    """The names `cls.__init__` takes by name, in order (not self, *args or **kwargs)."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(name for name, p in inspect.signature(cls.__init__).parameters.items()
                 if name != "self" and p.kind in named)


class Configurable:
    """The config round trip of a family's objects: `get_config()` holds the `__init__`
    arguments, read back from the attributes of the same names; `from_config(config)` calls
    the class with them. A class that keeps an argument in another form overrides
    `get_config`; a user's subclass that keeps one under another name and does not, gets a
    config without it (Keras's base classes return an empty config).

    Example:
        >>> tl.constraints.MaxNorm(3.0).get_config()
        {'max_value': 3.0, 'axis': 0}
    """

    def get_config(self):
        """The arguments that rebuild this object (`type(self)(**config)`)."""
        return {name: getattr(self, name) for name in _init_arguments(type(self))
                if hasattr(self, name)}

    @classmethod
    def from_config(cls, config):
        """The object `config` (from `get_config`) describes."""
        return cls(**config)


class Family:
    """The names and config form of one family of objects.

    Args:
        what: the family's noun in errors ("regularizer").
        module: the Keras module written in configs ("keras.regularizers").
        base: the family's base class.
        by_name: name -> class (class names and Keras's snake-case names).
    """

    def __init__(self, what, module, base, by_name):
        self.what, self.module, self.base, self.by_name = what, module, base, by_name

    def serialize(self, obj):
        """`obj` as Keras 3 writes it in a layer config; None stays None, a function its name."""
        if obj is None:
            return None
        if not isinstance(obj, self.base):
            return getattr(obj, "__name__", None)
        return {"module": self.module, "class_name": type(obj).__name__,
                "config": obj.get_config(), "registered_name": None}

    def deserialize(self, config, custom_objects=None):
        """The object a `serialize` dict (or a name) describes.

        Raises:
            ValueError: for a class name neither in the family nor in `custom_objects`.
        """
        if isinstance(config, str):
            return self.get(config)
        name = config["class_name"]
        cls = (custom_objects or {}).get(name) or self.by_name.get(name)
        if cls is None:
            raise ValueError(f"Unknown {self.what} class {name!r}: pass it in custom_objects")
        return cls.from_config(config.get("config") or {})

    def get(self, identifier):
        """An object from None, a name, a config dict, a class or a callable.

        Raises:
            ValueError: for an identifier that is none of these.
        """
        if identifier is None:
            return None
        if isinstance(identifier, dict):
            return self.deserialize(identifier)
        obj = self.by_name.get(identifier) if isinstance(identifier, str) else identifier
        if isinstance(obj, type):
            return obj()
        if callable(obj):
            return obj
        raise ValueError(f"Could not interpret {self.what} identifier: {identifier}")
