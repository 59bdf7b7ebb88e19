"""`trainlib.keras.config`: Keras 3's `keras.config` names, re-exported from where they live
(settings.py, backend.py, mixed_precision.py)."""
from ..backend import backend, set_backend  # noqa: F401
from ..mixed_precision import dtype_policy, set_dtype_policy  # noqa: F401
from ..settings import (disable_flash_attention, disable_interactive_logging,  # noqa: F401
                        disable_traceback_filtering, enable_flash_attention,
                        enable_interactive_logging, enable_traceback_filtering,
                        enable_unsafe_deserialization, epsilon, floatx, image_data_format,
                        is_flash_attention_enabled, is_interactive_logging_enabled,
                        is_nnx_enabled, is_traceback_filtering_enabled, max_epochs,
                        max_steps_per_epoch, set_epsilon, set_floatx, set_image_data_format,
                        set_max_epochs, set_max_steps_per_epoch)

__all__ = ["backend", "set_backend", "dtype_policy", "set_dtype_policy",
           "disable_flash_attention", "disable_interactive_logging",
           "disable_traceback_filtering", "enable_flash_attention", "enable_interactive_logging",
           "enable_traceback_filtering", "enable_unsafe_deserialization", "epsilon", "floatx",
           "image_data_format", "is_flash_attention_enabled", "is_interactive_logging_enabled",
           "is_nnx_enabled", "is_traceback_filtering_enabled", "max_epochs",
           "max_steps_per_epoch", "set_epsilon", "set_floatx", "set_image_data_format",
           "set_max_epochs", "set_max_steps_per_epoch"]
