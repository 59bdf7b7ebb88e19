"""Keras 3's `.weights.h5` layout (trainlib/saving/keras_h5.py): files written by Keras 3
(tests/fixtures/keras3, made by the script there) load into the same trainlib models with
Keras's predictions; trainlib's own files round-trip weights and optimizer state; defective,
mismatched or oversized files raise LoadError naming the file and assign nothing."""
import importlib.util
import os
import sys

import h5py
import numpy as np
import pytest

import trainlib as tl
from trainlib.saving.keras_h5 import weight_groups

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "keras3")


def _architectures():
    # one module object for every test file: the subclassed model registers its classes
    if "keras3_architectures" in sys.modules:
        return sys.modules["keras3_architectures"]
    spec = importlib.util.spec_from_file_location(
        "keras3_architectures", os.path.join(FIXTURES, "architectures.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["keras3_architectures"] = module
    spec.loader.exec_module(module)
    return module


A = _architectures()


@pytest.mark.parametrize("name", A.NAMES)
def test_keras3_weights_file_loads_with_keras_predictions(name):
    model = A.build(tl.keras, name)
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    expected = np.load(os.path.join(FIXTURES, f"{name}.expected.npz"))["prediction"]
    got = model.predict(A.inputs(name), verbose=0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_subclassed_paths_follow_keras_nesting():
    paths = [p for p, _ in weight_groups(A.build(tl.keras, "subclassed"))]
    # attributes in name order, public first; list items by class; a layer reached twice
    # (`head` again through `layers`) keeps its first path and still takes a name
    assert paths == ["", "head", "layers/block", "layers/block/a", "layers/block/b",
                     "layers/block/parts/dense", "layers/block/parts/dropout",
                     "layers/block/parts/dense_1", "layers/dense_1"]


def _trained(name, seed):
    tl.keras.utils.set_random_seed(seed)
    model = A.build(tl.keras, name)
    model.compile(optimizer="adam", loss="mse")
    model.fit(A.inputs(name), A.targets(name), epochs=1, batch_size=2, verbose=0)
    return model


@pytest.mark.parametrize("name", A.NAMES)
def test_round_trip_weights_and_optimizer_state(tmp_path, name):
    source = _trained(name, 0)
    path = str(tmp_path / "m.weights.h5")
    source.save_weights(path)
    with h5py.File(path, "r") as f:
        assert f["vars"].attrs["name"] == source.name
        assert len(f["optimizer/vars"]) == len(source.optimizer.variables)
    target = _trained(name, 1)
    target.load_weights(path)
    for a, b in zip(source.weights, target.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(source.optimizer.variables, target.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = A.inputs(name)
    np.testing.assert_array_equal(source.predict(x, verbose=0), target.predict(x, verbose=0))


def test_mismatched_model_assigns_nothing(tmp_path):
    path = str(tmp_path / "seq.weights.h5")
    A.build(tl.keras, "sequential").save_weights(path)
    other = tl.keras.Sequential([tl.keras.Input((8, 8, 1)), tl.keras.layers.Conv2D(4, 3),
                                 tl.keras.layers.Flatten(), tl.keras.layers.Dense(5)])
    before = [w.numpy().copy() for w in other.weights]
    with pytest.raises(tl.saving.LoadError, match="seq.weights.h5"):
        other.load_weights(path)
    for b, w in zip(before, other.weights):
        np.testing.assert_array_equal(b, w.numpy())


def test_defective_files_raise_load_error(tmp_path):
    model = A.build(tl.keras, "sequential")
    junk = tmp_path / "junk.weights.h5"
    junk.write_bytes(b"not an hdf5 file at all" * 10)
    with pytest.raises(tl.saving.LoadError, match="junk.weights.h5.*not an HDF5"):
        model.load_weights(str(junk))
    text = str(tmp_path / "text.weights.h5")
    model.save_weights(text)
    with h5py.File(text, "a") as f:
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", data=np.array([b"x"] * 3))
    with pytest.raises(tl.saving.LoadError, match="numeric"):
        model.load_weights(text)


def test_oversized_dataset_is_refused_before_reading(tmp_path):
    model = tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(2)])
    path = str(tmp_path / "big.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "a") as f:
        del f["layers/dense/vars/0"]
        # declared huge, stored sparse: the budget refuses it from the declared shape
        f["layers/dense/vars"].create_dataset("0", shape=(1 << 16, 1 << 12), dtype="float32")
    with pytest.raises(tl.saving.LoadError, match="more than"):
        model.load_weights(path)


def test_unbuilt_model_and_missing_file():
    model = tl.keras.Sequential([tl.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="unbuilt"):
        model.load_weights(os.path.join(FIXTURES, "sequential.weights.h5"))
    with pytest.raises(FileNotFoundError):
        A.build(tl.keras, "sequential").load_weights("/nonexistent/m.weights.h5")
