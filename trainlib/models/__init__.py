"""`tl.Model`, `tl.Sequential`, functional models, `clone_model` and `model_from_json`
(see model.py for the Model, trainers/ for the training loop)."""
from .model import Model, model_from_json  # noqa: F401
from .sequential import Sequential  # noqa: F401
from .functional import Functional  # noqa: F401
from .cloning import clone_model  # noqa: F401
from .saving_keras import load_model, save_model  # noqa: F401

__all__ = ["Model", "Sequential", "Functional", "clone_model", "model_from_json", "load_model",
           "save_model"]
