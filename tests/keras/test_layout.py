"""trainlib.keras has Keras 3's public layout: every submodule path imports, top-level
classes are there, and each public module's dir() holds public names only."""
import importlib
import types

import pytest

import trainlib.keras as keras

SUBMODULES = ["activations", "callbacks", "constraints", "initializers", "layers", "losses",
              "metrics", "mixed_precision", "models", "optimizers", "optimizers.schedules",
              "regularizers", "saving", "utils", "ops", "ops.numpy", "ops.nn", "ops.linalg",
              "ops.image", "random", "datasets", "datasets.mnist", "datasets.fashion_mnist",
              "datasets.cifar10", "datasets.cifar100", "datasets.imdb", "datasets.reuters",
              "datasets.boston_housing"]
TOP_LEVEL = ["Input", "Layer", "Model", "Sequential", "Variable", "KerasTensor", "Loss", "Metric",
             "Optimizer", "Regularizer", "Initializer", "DTypePolicy", "FloatDTypePolicy"]
# module imports and engine helpers that must never leak into a public module
LEAKS = {"np", "numpy", "os", "sys", "math", "re", "tl", "trainlib", "apply", "defop",
         "warnings", "inspect", "functools", "itertools", "collections", "contextlib"}


@pytest.mark.parametrize("path", SUBMODULES)
def test_every_submodule_path_imports(path):
    module = importlib.import_module(f"trainlib.keras.{path}")
    parent, _, leaf = f"trainlib.keras.{path}".rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


@pytest.mark.parametrize("path", [""] + SUBMODULES)
def test_public_modules_hold_public_names_only(path):
    module = importlib.import_module("trainlib.keras" + (f".{path}" if path else ""))
    names = [n for n in dir(module) if not n.startswith("_")]
    leaked = {n for n in LEAKS.intersection(names)  # keras.ops.numpy is Keras's own module
              if not (isinstance(getattr(module, n), types.ModuleType) and
                      getattr(module, n).__name__ == f"{module.__name__}.{n}")}
    assert not leaked, f"trainlib.keras.{path} exposes {sorted(leaked)}"
    public = set(getattr(module, "__all__", names))
    for name in names:
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):  # only its own public submodules
            assert value.__name__.startswith(module.__name__ + "."), (path, name)
        else:
            assert name in public, f"trainlib.keras.{path}.{name} is not in its __all__"


def test_top_level_names_are_keras_3s():
    for name in TOP_LEVEL:
        assert isinstance(getattr(keras, name), type) or callable(getattr(keras, name)), name
    from trainlib.keras.layers import Dense
    from trainlib.keras.regularizers import L2
    from trainlib.keras.mixed_precision import LossScaleOptimizer, Policy
    assert Dense is keras.layers.Dense and L2 is keras.regularizers.l2
    assert Policy is keras.DTypePolicy and LossScaleOptimizer is keras.optimizers.LossScaleOptimizer

