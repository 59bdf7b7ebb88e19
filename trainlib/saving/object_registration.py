"""Custom objects: `register_keras_serializable`, `get_custom_objects`, `custom_object_scope`.

Owns: the global table of registered classes and functions ("package>name"
and the plain name -> object, which `get_custom_objects` returns, as Keras
3), the thread-local stack of `custom_object_scope`s, and the look-up every
deserializer uses (`get_registered_object`: the caller's custom_objects,
then the innermost scopes, then the global table, then the layer registry).
Invariant: registering a Layer class also puts it in the layer registry under
its class name (what layer configs record), refusing a second class of that name.
"""
import contextlib
import threading

from ..layers import base as layers_base

__all__ = ["register_keras_serializable", "get_registered_name", "get_registered_object",
           "all_custom_objects",
           "get_custom_objects", "custom_object_scope", "CustomObjectScope"]

_REGISTERED_NAMES = {}    # class or function -> "package>name"
_REGISTERED_OBJECTS = {}  # "package>name" and plain name -> class or function (the global table)
_scopes = threading.local()


def _scope_stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


def get_custom_objects():
    """The global dict of custom objects (`register_keras_serializable` fills it; entries added
    to it by hand are found by name when deserializing).

    Example:
        >>> tl.saving.get_custom_objects()["MyLayer"] = MyLayer
    """
    return _REGISTERED_OBJECTS


class CustomObjectScope:
    """Context in which deserialization also finds the given {name: object} (nestable).

    Example:
        >>> with tl.saving.custom_object_scope({"MyLayer": MyLayer}):
        ...     model = tl.models.model_from_json(text)
    """

    def __init__(self, *custom_objects):
        self.custom_objects = {}
        for objects in custom_objects:
            self.custom_objects.update(objects or {})

    def __enter__(self):
        _scope_stack().append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scope_stack().pop()


custom_object_scope = CustomObjectScope


def _custom(name, custom_objects):
    """A class or function the caller passed, a scope holds, or registered under `name`."""
    if not isinstance(name, str):
        return None
    found = (custom_objects or {}).get(name)
    for scope in reversed(_scope_stack()):
        if found is None:
            found = scope.get(name)
    if found is None:
        found = _REGISTERED_OBJECTS.get(name)
    return found if found is not None else _REGISTERED_OBJECTS.get(name.split(">")[-1])


def register_keras_serializable(package="Custom", name=None):
    """Decorator: makes a Layer/Model subclass (or a loss, metric or function) loadable by name.

    Layer classes join the layer registry that `tl.layers.deserialize` and
    `load_model` read (under the class's own name, which its saved config
    records); other objects are found by name when a loaded compile config
    names them.

    Args:
        package: the package part of the registered name ("Custom").
        name: the name part (default: the object's `__name__`).

    Returns:
        The decorator; it returns the object unchanged.

    Raises:
        ValueError: if `package` contains ">", or another layer class of the same name is
            registered (layer configs name classes by their `__name__`).

    Example:
        >>> @tl.saving.register_keras_serializable(package="demo")
        ... class Scale(tl.layers.Layer):
        ...     def call(self, x):
        ...         return 2 * x
        >>> tl.saving.get_registered_name(Scale)
        'demo>Scale'
    """
    if ">" in str(package):
        raise ValueError(f"package must not contain '>', got {package!r}")

    def decorator(obj):
        key = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and issubclass(obj, layers_base.Layer):
            # layer configs record the bare class name: a second class of that name would
            # silently replace the first in every file that names it
            taken = layers_base._REGISTRY.get(obj.__name__)
            if taken is not None and (taken.__module__, taken.__qualname__) != \
                    (obj.__module__, obj.__qualname__):
                raise ValueError(f"A layer class named {obj.__name__!r} is already registered "
                                 f"({taken.__module__}.{taken.__qualname__}); rename the class")
            layers_base.register(obj)
        elif not isinstance(obj, type) and not callable(obj):
            raise TypeError(f"register_keras_serializable needs a class or a function, got {obj!r}")
        _REGISTERED_NAMES[obj] = key
        _REGISTERED_OBJECTS[key] = obj
        _REGISTERED_OBJECTS[name or obj.__name__] = obj
        return obj

    return decorator


def get_registered_name(obj):
    """The "package>name" an object was registered under (else its `__name__`)."""
    return _REGISTERED_NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name, custom_objects=None):
    """The object passed in `custom_objects` or registered under `name` (a layer class included),
    else None."""
    return _custom(name, custom_objects) or layers_base._REGISTRY.get(name)




def all_custom_objects(custom_objects=None, extra=None):
    """{name: object} of the registered objects, the active scopes (inner ones win), then
    `custom_objects` and `extra`: what a deserializer that takes one dict is given."""
    merged = dict(_REGISTERED_OBJECTS)
    for scope in _scope_stack():
        merged.update(scope)
    merged.update(custom_objects or {})
    merged.update(extra or {})
    return merged
