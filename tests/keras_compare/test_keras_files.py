"""Keras 3 vs trainlib: `.weights.h5` files interchange both ways (issue 21). A model built
and trained in Keras 3 and saved with `save_weights` loads into the same trainlib model with
Keras's predictions, and one trained in trainlib loads into Keras 3 with trainlib's, for the
Sequential, functional and subclassed models of tests/fixtures/keras3/architectures.py."""
import importlib.util
import os

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

CASES = []  # file formats: no op types of their own

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "keras3")
_spec = importlib.util.spec_from_file_location("keras3_architectures_live",
                                               os.path.join(FIXTURES, "architectures.py"))
A = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(A)


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
