"""Lambda: a layer around a Python function, saved as Keras 3 saves it.

Owns: the function's config form (a registered or importable function by name; a
lambda or local function as Keras's `__lambda__` record of marshalled bytecode) and the
refusal to rebuild a `__lambda__` record unless `safe_mode=False` or
`keras.config.enable_unsafe_deserialization()` (running bytecode from a file is running its
author's code).
"""
import base64
import inspect
import marshal
import types

from ..saving.object_registration import get_registered_name, get_registered_object
from ..settings import in_safe_mode
from .base import Layer, register

__all__ = ["Lambda"]

_UNSAFE = ("Requested the deserialization of a `Lambda` layer whose `function` is a Python "
           "lambda. This carries a potential risk of arbitrary code execution and thus it is "
           "disallowed by default. If you trust the source of the artifact, you can override "
           "this error by passing `safe_mode=False` to `Lambda.from_config` (or the loading "
           "function).")


def _dump(fn):
    if fn.__name__ != "<lambda>" and "<locals>" not in fn.__qualname__:
        return {"module": fn.__module__, "class_name": "function", "config": fn.__name__,
                "registered_name": get_registered_name(fn)}
    closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
    return {"class_name": "__lambda__",
            "config": {"code": base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii"),
                       "defaults": fn.__defaults__, "closure": closure}}


_UNSAFE_MODULE = ("Requested the deserialization of a `Lambda` layer whose `function` is "
                  "{name!r} from module {module!r}, which is neither registered nor in "
                  "custom_objects. Importing a module named by a file is running its author's "
                  "code, so it is disallowed by default. If you trust the source of the "
                  "artifact, pass `safe_mode=False` to the loading function (or "
                  "`Lambda.from_config`), or call `keras.config.enable_unsafe_deserialization()`"
                  "; or pass the function in custom_objects.")
_OWN_MODULES = ("trainlib", "keras")   # imported even in safe mode: this library's own code


def _unsafe_allowed(safe_mode):
    """True where code named by a file may run: `safe_mode=False` given, or (unset) the
    running load's `safe_mode_scope` / `enable_unsafe_deserialization()` says so."""
    return safe_mode is False or in_safe_mode() is False


def _load(record, custom_objects, safe_mode):
    if not isinstance(record, dict):
        return record
    if record.get("class_name") == "__lambda__":
        if not _unsafe_allowed(safe_mode):
            raise ValueError(_UNSAFE)
        cfg = record["config"]
        code = marshal.loads(base64.b64decode(cfg["code"]))
        closure = cfg.get("closure")
        cells = tuple(types.CellType(v) for v in closure) if closure else None
        defaults = tuple(cfg["defaults"]) if cfg.get("defaults") else None
        return types.FunctionType(code, globals(), code.co_name, defaults, cells)
    name, module = record.get("config"), record.get("module")
    found = get_registered_object(str(record.get("registered_name")), custom_objects) or \
        get_registered_object(str(name), custom_objects)
    if found is not None:
        return found
    own = isinstance(module, str) and module.split(".")[0] in _OWN_MODULES
    if not own and not _unsafe_allowed(safe_mode):
        raise ValueError(_UNSAFE_MODULE.format(name=name, module=module))
    import importlib  # noqa: PLC0415
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):
        raise ValueError(f"Lambda: could not find function {name!r} (module "
                         f"{module!r}); pass it in custom_objects") from None


@register
class Lambda(Layer):
    """Wraps `function(inputs, **arguments)` as a layer (no weights of its own).

    Args:
        function: the function; it may take `mask` and `training` keyword arguments.
        output_shape: accepted for Keras compatibility (shapes are inferred by tracing).
        mask: the output's mask: a function `mask(inputs, previous_mask)` or a fixed value;
            without it the layer does not support masking (an input's mask is dropped).
        arguments: extra keyword arguments passed to `function`.

    A lambda in a saved config is rebuilt only with `from_config(config, safe_mode=False)`.

    Example:
        >>> tl.layers.Lambda(lambda x: x * 2)(tl.ones((1, 2))).numpy().tolist()
        [[2.0, 2.0]]
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda: `function` must be callable, got {function!r}")
        self.function, self.arguments = function, arguments or {}
        self._output_shape_arg, self._mask_arg = output_shape, mask
        params = inspect.signature(function).parameters
        self._fn_training = "training" in params
        self._fn_mask = "mask" in params
        self.supports_masking = mask is not None

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_mask:
            kwargs["mask"] = mask
        if self._fn_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        if callable(self._mask_arg):
            return self._mask_arg(inputs, mask)
        return self._mask_arg

    def get_config(self):
        return {**super().get_config(), "function": _dump(self.function),
                "arguments": self.arguments, "output_shape": self._output_shape_arg,
                "mask": self._mask_arg}

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """A Lambda from `get_config`'s dict; a `__lambda__` function needs `safe_mode=False`."""
        config = dict(config)
        config["function"] = _load(config["function"], custom_objects, safe_mode)
        return super().from_config(config)
