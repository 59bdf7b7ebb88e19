"""Keras 3's object serialization: `serialize_keras_object` / `deserialize_keras_object`.

Owns: the dict form of an object (`{"module", "class_name", "config",
"registered_name"}`, plus `build_config` for a built layer and
`compile_config` for a compiled model, as Keras 3 writes them; functions as
`{"class_name": "function", "config": name}`; plain values as themselves) and
the way back, resolving classes in this order: the caller's
`custom_objects`, active `custom_object_scope`s, the registered objects, then
trainlib's own tables by `module` (layers and models, optimizers, losses,
metrics, initializers, activations).
Invariant: deserialization only instantiates classes from those tables; it
never imports a module named in the config.
"""
import inspect

import numpy as np

from .. import activations, constraints, initializers, losses, metrics, optim, regularizers
from .. import settings
from ..graph.dtypes import DType
from ..graph.tensor import TensorShape
from ..layers import base as layers_base
from .object_registration import _REGISTERED_NAMES, CustomObjectScope, _custom, all_custom_objects

__all__ = ["serialize_keras_object", "deserialize_keras_object", "keras_module_of",
           "keras_registered_name"]

# trainlib module -> the `module` Keras 3 writes for its own objects of that kind
_KERAS_MODULES = {"trainlib.layers": "keras.layers", "trainlib.optim": "keras.optimizers",
                  "trainlib.losses": "keras.losses", "trainlib.metrics": "keras.metrics",
                  "trainlib.initializers": "keras.initializers",
                  "trainlib.regularizers": "keras.regularizers",
                  "trainlib.constraints": "keras.constraints",
                  "trainlib.models": "keras", "trainlib.trainers": "keras"}
_TABLES = {"keras.optimizers": optim, "keras.losses": losses, "keras.metrics": metrics,
           "keras.initializers": initializers, "keras.regularizers": regularizers,
           "keras.constraints": constraints}


def keras_module_of(cls):
    """The `module` Keras 3 writes for class `cls`: "keras.layers" for built-in layers, the
    class's own module for user classes (None for classes defined in `__main__`)."""
    own = getattr(cls, "_keras_module", None)
    if own is not None:
        return own
    module = cls.__module__
    for prefix, keras_module in _KERAS_MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return keras_module
    return None if module == "__main__" else module


def keras_registered_name(cls):
    """The `registered_name` Keras 3 writes: None for its own classes, else "package>Name" for
    a registered class and the class name for another."""
    if cls in _REGISTERED_NAMES:
        return _REGISTERED_NAMES[cls]
    if getattr(cls, "_is_operation", False):   # Keras names its ops' classes
        return cls.__name__
    if "_keras_registered_name" in cls.__dict__:
        return cls.__dict__["_keras_registered_name"]
    if cls.__module__.startswith("trainlib."):
        return None
    return cls.__name__


def serialize_keras_object(obj):
    """The JSON-able dict form of `obj`, as Keras 3's `keras.saving.serialize_keras_object`.

    Args:
        obj: a layer, model, optimizer, loss, metric, initializer, a function, or a plain
            value (None, bool, number, string, list, tuple, dict, dtype, shape).

    Returns:
        For objects `{"module", "class_name", "config", "registered_name"}` (layers add
        `build_config`, compiled models `compile_config`); plain values as JSON values.

    Raises:
        TypeError: for an object with no `get_config`.

    Example:
        >>> tl.saving.serialize_keras_object(tl.layers.Dense(2))["class_name"]
        'Dense'
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, DType):
        return obj.name
    if isinstance(obj, TensorShape):
        return obj.as_list() if obj.rank is not None else None
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(o) for o in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return {"module": "builtins", "class_name": "function",
                "config": _REGISTERED_NAMES.get(obj, obj.__name__), "registered_name": "function"}
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r}: it has no get_config() (implement one, or "
                        "pass a layer, optimizer, loss, metric, initializer or function)")
    cls = type(obj)
    out = {"module": keras_module_of(cls), "class_name": cls.__name__,
           "config": serialize_keras_object(obj.get_config()),
           "registered_name": keras_registered_name(cls)}
    if isinstance(obj, layers_base.Layer) and obj.built:
        # a functional model rebuilds from its layers: Keras writes no input shape for it
        shape = None if hasattr(obj, "_flat_inputs") else getattr(obj, "_build_input_shape", None)
        out["build_config"] = _build_config(obj, shape)
        if getattr(obj, "compiled", False):
            out["compile_config"] = obj.get_compile_config()
    return out


def _build_config(layer, shape):
    """A built layer's `build_config` as Keras 3 writes it: `{"input_shape": shape}`, or the
    layer's own form where its Keras `build` takes several shapes (attention's
    `{"shapes_dict": {"query_shape": ..., "value_shape": ...}}`)."""
    own = getattr(layer, "_keras_build_config", None)
    config = own(shape) if own is not None else None
    return config if config is not None else {"input_shape": serialize_keras_object(shape)}


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object a `serialize_keras_object` dict describes.

    Args:
        config: what `serialize_keras_object` returned (or a plain value, returned as is;
            a string naming a custom object returns that object).
        custom_objects: {name: class or function} for classes not registered.
        safe_mode: if True (default), refuse to run code the config names (a `Lambda`'s
            bytecode or an unregistered function of a module outside trainlib/keras).

    Raises:
        ValueError: when a class or function cannot be found (saying how to register it).

    Example:
        >>> layer = tl.saving.deserialize_keras_object(
        ...     tl.saving.serialize_keras_object(tl.layers.Dense(2)))
    """
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if settings.in_safe_mode() is None:   # no scope and no global opt-in: this call decides
        with settings.safe_mode_scope(safe_mode):
            return deserialize_keras_object(config, custom_objects, safe_mode, **kwargs)
    if isinstance(config, str):
        found = _custom(config, custom_objects)
        return config if found is None else found
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(c, custom_objects) for c in config]
    if not isinstance(config, dict):
        raise TypeError(f"Cannot deserialize {config!r}: expected a dict from "
                        "serialize_keras_object")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects) for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    module, registered = config.get("module"), config.get("registered_name")
    hint = ("Make sure custom classes and functions are decorated with "
            "`@keras.saving.register_keras_serializable()` or passed in custom_objects.")
    if class_name == "function":
        fn = _custom(inner, custom_objects)
        for table in (activations, losses, metrics):
            if fn is None:
                candidate = getattr(table, str(inner), None)
                fn = candidate if inspect.isfunction(candidate) else None
        if fn is None:
            raise ValueError(f"Could not locate function '{inner}'. {hint} Full object config: "
                             f"{config}")
        return fn
    cls = _custom(registered, custom_objects) if registered else None
    cls = cls or _custom(class_name, custom_objects)
    if cls is None and module in _TABLES:
        candidate = getattr(_TABLES[module], class_name, None)
        cls = candidate if isinstance(candidate, type) else None
    if cls is None:
        cls = layers_base._REGISTRY.get(f"{module}>{class_name}") or \
            layers_base._REGISTRY.get(class_name)
    if cls is None:
        raise ValueError(f"Could not locate class '{class_name}'. {hint} Full object config: "
                         f"{config}")
    if isinstance(cls, type) and issubclass(cls, layers_base.Layer):
        obj = layers_base.deserialize({"module": module, "class_name": class_name,
                                       "config": inner},
                                      all_custom_objects(custom_objects, {class_name: cls}))
        shape = (config.get("build_config") or {}).get("input_shape")
        if shape is not None and not obj.built:
            obj.build(_shape(shape))
            obj._build_input_shape, obj.built = _shape(shape), True
        compile_config = config.get("compile_config")
        if compile_config and hasattr(obj, "compile"):
            with CustomObjectScope(custom_objects):  # compile_from_config finds them there
                obj.compile_from_config(compile_config)
        return obj
    if inner is None:
        return cls()
    return cls.from_config(deserialize_keras_object(inner, custom_objects)
                           if not isinstance(inner, dict) else inner)


def _shape(value):
    if isinstance(value, list) and value and isinstance(value[0], list):
        return [tuple(v) for v in value]
    return tuple(value) if isinstance(value, list) else value
