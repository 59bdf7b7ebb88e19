"""`tl.Model`, `tl.Sequential` and functional models (see model.py for the training loop)."""
from .model import Model  # noqa: F401
from .sequential import Sequential  # noqa: F401
from .functional import Functional  # noqa: F401
from .saving_keras import load_model, save_model  # noqa: F401

__all__ = ["Model", "Sequential", "Functional", "load_model", "save_model"]
