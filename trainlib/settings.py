"""Keras 3's process-wide settings (`keras.config`): the values every layer, loop and loader
consults, kept in one place below all of them.

Owns: floatx, epsilon and the image data format; the debugging caps `fit` honours
(`max_epochs`, `max_steps_per_epoch`, also read from the KERAS_MAX_EPOCHS and
KERAS_MAX_STEPS_PER_EPOCH environment variables, as Keras reads them); and the switches
Keras keeps in its global state: interactive logging (progress bars and `summary()` on stdout,
or through the `logging` module when off), unsafe deserialization (`Lambda` bytecode),
traceback filtering, flash attention and JAX's NNX (flags: trainlib has no other kernel or
backend to switch to). `reset_session_state()` is what `clear_session` forgets, as in Keras:
the switches return to their defaults, the explicitly set values (floatx...) stay.
Invariant: this module imports nothing from trainlib, so every level may read it.
"""
import logging
import os
import sys

__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "max_epochs", "set_max_epochs", "max_steps_per_epoch",
           "set_max_steps_per_epoch", "capped_epochs", "capped_steps",
           "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "print_msg",
           "enable_unsafe_deserialization", "in_safe_mode", "safe_mode_scope",
           "enable_traceback_filtering", "disable_traceback_filtering",
           "is_traceback_filtering_enabled", "enable_flash_attention", "disable_flash_attention",
           "is_flash_attention_enabled", "is_nnx_enabled", "set_nnx_enabled",
           "reset_session_state"]

_FLOAT_NAMES = ("bfloat16", "float16", "float32", "float64")
_SETTINGS = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last",
             "max_epochs": None, "max_steps_per_epoch": None, "nnx": False}
_STATE = {}      # what clear_session forgets: Keras's global_state attributes
_log = logging.getLogger("trainlib")

if "KERAS_MAX_EPOCHS" in os.environ:
    _SETTINGS["max_epochs"] = int(os.environ["KERAS_MAX_EPOCHS"])
if "KERAS_MAX_STEPS_PER_EPOCH" in os.environ:
    _SETTINGS["max_steps_per_epoch"] = int(os.environ["KERAS_MAX_STEPS_PER_EPOCH"])
if os.environ.get("KERAS_NNX_ENABLED", "").lower() in ("true", "1"):
    _SETTINGS["nnx"] = True


def floatx():
    """The default float dtype's name: what layers made without `dtype=` build their weights
    in (through the default dtype policy) ("float32" unless `set_floatx` changed it).

    Example:
        >>> keras.config.floatx()
        'float32'
    """
    return _SETTINGS["floatx"]


def set_floatx(value):
    """Sets the default float dtype ("bfloat16", "float16", "float32" or "float64").

    As in Keras, layers take it through the default dtype policy, which is fixed the first
    time a layer reads it; `keras.utils.clear_session()` lets a new value apply.

    Raises:
        ValueError: for any other value.
    """
    if value not in _FLOAT_NAMES:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of "
                         "{'bfloat16', 'float16', 'float32', 'float64'}")
    _SETTINGS["floatx"] = str(value)


def epsilon():
    """The fuzz factor Keras adds to denominators (1e-7 unless `set_epsilon` changed it)."""
    return _SETTINGS["epsilon"]


def set_epsilon(value):
    """Sets the fuzz factor `epsilon()` returns."""
    _SETTINGS["epsilon"] = float(value)


def image_data_format():
    """"channels_last" (the default) or "channels_first"."""
    return _SETTINGS["image_data_format"]


def set_image_data_format(data_format):
    """Sets the default image data format ("channels_last" or "channels_first").

    Raises:
        ValueError: for any other value.
    """
    data_format = str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _SETTINGS["image_data_format"] = data_format


def max_epochs():
    """The cap on `fit`'s epochs (None: no cap), set by `set_max_epochs` or KERAS_MAX_EPOCHS."""
    return _SETTINGS["max_epochs"]


def set_max_epochs(max_epochs):
    """Caps the epochs every `fit` runs (None removes the cap): for quick debugging runs of a
    script without editing it; `fit` warns "Limiting epochs to N" when it applies."""
    _SETTINGS["max_epochs"] = max_epochs


def max_steps_per_epoch():
    """The cap on steps per epoch (None: no cap), set by `set_max_steps_per_epoch` or
    KERAS_MAX_STEPS_PER_EPOCH."""
    return _SETTINGS["max_steps_per_epoch"]


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Caps the steps of every epoch of `fit`, `evaluate` and `predict` (None removes the cap);
    they warn "Limiting steps_per_epoch to N" when it applies."""
    _SETTINGS["max_steps_per_epoch"] = max_steps_per_epoch


def capped_epochs(epochs):
    """`epochs`, lowered to `max_epochs()` (with Keras's warning) when that is smaller."""
    cap = max_epochs()
    if cap and cap < epochs:
        import warnings  # noqa: PLC0415
        warnings.warn(f"Limiting epochs to {cap}", stacklevel=3)
        return cap
    return epochs


def capped_steps(steps):
    """`steps` per epoch, lowered to `max_steps_per_epoch()` (with Keras's warning) when that
    is set and smaller, or when `steps` is None (one pass over the data)."""
    cap = max_steps_per_epoch()
    if cap and (not steps or cap < steps):
        import warnings  # noqa: PLC0415
        warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=3)
        return cap
    return steps


# ------------------------------------------------------------------ clear_session's state

def enable_interactive_logging():
    """Progress bars and `summary()` write to stdout (the default)."""
    _STATE["interactive_logging"] = True


def disable_interactive_logging():
    """Progress output and `summary()` go to the `logging` module (logger "trainlib", level
    INFO) instead of stdout, one line per update, as Keras sends them to absl logging."""
    _STATE["interactive_logging"] = False


def is_interactive_logging_enabled():
    """Whether progress output goes to stdout (True unless `disable_interactive_logging`)."""
    return _STATE.get("interactive_logging", True)


def print_msg(message, line_break=True):
    """Writes a progress message: to stdout when interactive logging is on, else to the
    "trainlib" logger at INFO."""
    message = str(message)
    if is_interactive_logging_enabled():
        sys.stdout.write(f"{message}\n" if line_break else message)
        sys.stdout.flush()
    else:
        _log.info(message)


def enable_unsafe_deserialization():
    """Lets every loader rebuild `Lambda` layers saved as Python bytecode (`safe_mode=False`
    everywhere), until `clear_session`. Only for files whose author you trust."""
    _STATE["safe_mode"] = False


def in_safe_mode():
    """False after `enable_unsafe_deserialization()`; else the innermost `safe_mode_scope`'s
    value (the running load's `safe_mode`), else None."""
    if _STATE.get("safe_mode") is False:
        return False
    return _STATE.get("safe_mode_scope")


class safe_mode_scope:   # noqa: N801 -- a context manager, named as Keras's SafeModeScope
    """Within it, `in_safe_mode()` is `safe_mode`: a loader passes its `safe_mode` to every
    nested `from_config` this way.

    Example:
        >>> with tl.settings.safe_mode_scope(False):
        ...     pass
    """

    def __init__(self, safe_mode=True):
        self.safe_mode = safe_mode

    def __enter__(self):
        self._previous = _STATE.get("safe_mode_scope")
        _STATE["safe_mode_scope"] = self.safe_mode
        return self

    def __exit__(self, *exc):
        _STATE["safe_mode_scope"] = self._previous


def enable_traceback_filtering():
    """Turns Keras's traceback filtering on (the default). trainlib keeps the flag for
    programs that set it; its errors already name the user's file and line."""
    _STATE["traceback_filtering"] = True


def disable_traceback_filtering():
    """Turns the traceback filtering flag off (see `enable_traceback_filtering`)."""
    _STATE["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    """Whether traceback filtering is on (True unless disabled)."""
    return _STATE.get("traceback_filtering", True)


def enable_flash_attention():
    """Lets attention layers use flash attention where available: Keras's "auto" (the flag
    reads None). trainlib has no flash-attention kernel, so attention computes as before."""
    _STATE["flash_attention"] = None


def disable_flash_attention():
    """Forbids flash attention (the flag reads False)."""
    _STATE["flash_attention"] = False


def is_flash_attention_enabled():
    """None ("auto", the default, or after `enable_flash_attention`) or False (disabled)."""
    return _STATE.get("flash_attention")


def is_nnx_enabled():
    """Whether JAX's NNX integration is on: a JAX-backend flag, False unless set by
    `set_nnx_enabled` or KERAS_NNX_ENABLED (trainlib has no JAX backend to switch)."""
    return _SETTINGS["nnx"]


def set_nnx_enabled(value):
    """Sets the NNX flag `is_nnx_enabled` reports."""
    _SETTINGS["nnx"] = bool(value)


def reset_session_state():
    """Forgets the switches above (`clear_session` calls it): each returns to its default."""
    _STATE.clear()

