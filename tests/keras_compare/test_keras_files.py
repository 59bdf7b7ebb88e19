"""Keras 3 vs trainlib: `.weights.h5` and `.keras` files interchange both ways (issue 21). A
model built and trained in Keras 3 and saved with `save_weights` or `save` loads in trainlib
with Keras's predictions and optimizer state, and one trained in trainlib loads in Keras 3
with trainlib's, for the Sequential, functional, registered subclassed and layer-family
models of tests/fixtures/keras3/architectures.py."""
import importlib.util
import os
import sys

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = []  # file formats: no op types of their own

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "keras3")
if "keras3_architectures" not in sys.modules:   # one module for every test file (registrations)
    _spec = importlib.util.spec_from_file_location("keras3_architectures",
                                                   os.path.join(FIXTURES, "architectures.py"))
    sys.modules["keras3_architectures"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["keras3_architectures"])
A = sys.modules["keras3_architectures"]


def _train(k, name):
    model = A.build(k, name)
    model.compile(optimizer="adam", loss="mse")
    model.fit(A.inputs(name), A.targets(name), epochs=2, batch_size=2, verbose=0)
    return model


@pytest.mark.parametrize("name", A.NAMES)
def test_keras_weights_load_in_trainlib(tmp_path, name):
    source = _train(keras, name)
    path = str(tmp_path / f"{name}.weights.h5")
    source.save_weights(path)
    target = _train(tl.keras, name)       # compiled and trained: its optimizer state loads too
    target.load_weights(path)
    x = A.inputs(name)
    np.testing.assert_allclose(target.predict(x, verbose=0),
                               np.asarray(source.predict(x, verbose=0)), rtol=1e-5, atol=1e-5)
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", A.NAMES)
def test_trainlib_weights_load_in_keras(tmp_path, name):
    source = _train(tl.keras, name)
    path = str(tmp_path / f"{name}.weights.h5")
    source.save_weights(path)
    target = _train(keras, name)
    target.load_weights(path)
    x = A.inputs(name)
    np.testing.assert_allclose(np.asarray(target.predict(x, verbose=0)),
                               source.predict(x, verbose=0), rtol=1e-5, atol=1e-5)
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-6)


def _same_predictions(a, b, x):
    np.testing.assert_allclose(np.asarray(a.predict(x, verbose=0)),
                               np.asarray(b.predict(x, verbose=0)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", A.NAMES)
def test_keras_model_file_loads_in_trainlib(tmp_path, name):
    source = _train(keras, name)
    path = str(tmp_path / f"{name}.keras")
    source.save(path)
    A.build(tl.keras, name)    # registers the subclassed model's classes with trainlib
    target = tl.keras.saving.load_model(path)
    _same_predictions(source, target, A.inputs(name))
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-6)
    assert int(target.optimizer.iterations.numpy()) == int(source.optimizer.iterations)


@pytest.mark.parametrize("name", A.NAMES)
def test_trainlib_model_file_loads_in_keras(tmp_path, name):
    source = _train(tl.keras, name)
    path = str(tmp_path / f"{name}.keras")
    source.save(path)
    A.build(keras, name)
    target = keras.saving.load_model(path)
    _same_predictions(source, target, A.inputs(name))
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-6)


LEGACY = ("sequential", "functional", "families")   # Keras 3 writes no subclassed model to .h5


@pytest.mark.parametrize("name", LEGACY)
def test_keras_legacy_h5_loads_in_trainlib(tmp_path, name):
    """tf.keras 2's whole-model `.h5` as Keras 3's legacy writer makes it (`model.save("m.h5")`)."""
    source = _train(keras, name)
    path = str(tmp_path / f"{name}.h5")
    source.save(path)
    target = tl.keras.saving.load_model(path)
    _same_predictions(source, target, A.inputs(name))
    assert int(target.optimizer.iterations.numpy()) == int(source.optimizer.iterations)
    fresh = A.build(tl.keras, name)
    fresh.load_weights(path)          # the weights alone, layers matched in order
    _same_predictions(source, fresh, A.inputs(name))


@pytest.mark.parametrize("name", LEGACY)
def test_trainlib_legacy_h5_loads_in_keras(tmp_path, name):
    source = _train(tl.keras, name)
    path = str(tmp_path / f"{name}.h5")
    source.save(path, save_format="h5")
    target = keras.saving.load_model(path)
    _same_predictions(source, target, A.inputs(name))
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-6)
