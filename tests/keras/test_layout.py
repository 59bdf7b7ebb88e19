"""trainlib.keras has Keras 3's public layout: every submodule path imports, top-level
classes are there, and each public module's dir() holds public names only."""
import importlib
import types

import pytest

import trainlib.keras as keras

SUBMODULES = ["activations", "callbacks", "constraints", "initializers", "layers", "losses",
              "metrics", "mixed_precision", "models", "optimizers", "optimizers.schedules",
              "random", "regularizers", "saving", "utils"]
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
    leaked = LEAKS.intersection(names)
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


def test_keras_random_draws_with_keras_signatures():
    r = keras.random
    assert r.uniform((3,)).dtype == "float32" and r.randint((4,), 0, 5).dtype == "int32"
    values = r.randint((100,), 2, 5).numpy()
    assert values.min() >= 2 and values.max() < 5
    assert r.truncated_normal((50,), stddev=1.0).numpy().__abs__().max() <= 2.0
    gen = r.SeedGenerator(7)
    a, b = r.normal((5,), seed=gen).numpy(), r.normal((5,), seed=gen).numpy()
    assert (a != b).any()
    assert [r.SeedGenerator(7).next() for _ in range(2)] == [r.SeedGenerator(7).next()] * 2
    import numpy as np
    m = np.arange(12).reshape(3, 4)
    shuffled = r.shuffle(m, axis=1, seed=3).numpy()
    assert sorted(shuffled[0].tolist()) == [0, 1, 2, 3] and (shuffled[:, 0] % 4 ==
                                                               shuffled[0, 0]).all()
    dropped = r.dropout(np.ones((1000,), np.float32), 0.5, seed=1).numpy()
    assert set(np.unique(dropped).tolist()) <= {0.0, 2.0} and 300 < (dropped == 0).sum() < 700
    with pytest.raises(ValueError, match="floating point"):
        r.uniform((2,), dtype="int32")
    with pytest.raises(ValueError, match="SeedGenerator"):
        r.normal((2,), seed="x")
