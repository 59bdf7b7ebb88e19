"""Keras 3's `get` / `serialize` / `deserialize` for a family of small named objects
(regularizers, constraints, losses, metrics): one table of names per family, one form of
config; `Configurable`, the `from_config` they share.

Owns: resolving an identifier (None, a name, a config dict, a class, an instance or a
plain function) against a family's name table, and the config Keras 3 writes for such
an object (`{"module", "class_name", "config", "registered_name"}`).
"""

__all__ = ["Family", "Configurable"]


class Configurable:
    """An object rebuilt from its config: `from_config(c)` is `cls(**c)`, c from `get_config()`."""

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_config()")

    @classmethod
    def from_config(cls, config):
        """The object `config` (a `get_config()` dict) describes."""
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
