"""tf.keras 2's whole-model `.h5` (trainlib/saving/legacy_h5.py): files in tf.keras 2's own
form (bytes attributes, `name:0` weights, Keras 2 configs: `batch_input_shape`, `Model`,
list-form calls, initializers without modules, a tf.keras 2 Adam) load with the predictions
their weights give; trainlib's `.h5` round-trips weights and optimizer state; tf.keras 2's
`save_weights` files load by layer order; `.keras` files of Keras 2.13-2.15 (configs naming
`keras.src.engine`) load; `save_format="tf"` exports; defects are LoadErrors naming the file."""
import json
import os
import zipfile

import h5py
import numpy as np
import pytest

import trainlib as tl

from . import models as M


def _init(name):
    return {"class_name": name, "config": {"seed": None} if name == "GlorotUniform" else {}}


def _dense(name, units, activation):
    return {"class_name": "Dense", "config": {
        "name": name, "trainable": True, "dtype": "float32", "units": units,
        "activation": activation, "use_bias": True, "kernel_initializer": _init("GlorotUniform"),
        "bias_initializer": _init("Zeros"), "kernel_regularizer": None, "bias_regularizer": None,
        "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}}


def _batch_norm(name):
    return {"class_name": "BatchNormalization", "config": {
        "name": name, "trainable": True, "dtype": "float32", "axis": [1], "momentum": 0.99,
        "epsilon": 0.001, "center": True, "scale": True, "beta_initializer": _init("Zeros"),
        "gamma_initializer": _init("Ones"), "moving_mean_initializer": _init("Zeros"),
        "moving_variance_initializer": _init("Ones"), "beta_regularizer": None,
        "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None}}


def _weights(rng):
    w = {"dense": [rng.normal(size=(4, 3)), rng.normal(size=3)],
         "batch_normalization": [rng.uniform(0.5, 2, 3), rng.normal(size=3),
                                 rng.normal(size=3), rng.uniform(0.5, 2, 3)],
         "dense_1": [rng.normal(size=(3, 2)), rng.normal(size=2)]}
    return {k: [np.asarray(a, np.float32) for a in v] for k, v in w.items()}


_NAMES = {"dense": ["kernel", "bias"], "dense_1": ["kernel", "bias"],
          "batch_normalization": ["gamma", "beta", "moving_mean", "moving_variance"]}


def _write_weights(group, weights):
    """tf.keras 2's weights layout: bytes names, `layer/weight:0` datasets."""
    group.attrs["layer_names"] = np.array([n.encode() for n in weights], dtype="S")
    for layer, arrays in weights.items():
        names = [f"{layer}/{n}:0".encode() for n in _NAMES[layer]]
        g = group.create_group(layer)
        g.attrs["weight_names"] = np.array(names, dtype="S")
        for name, array in zip(names, arrays):
            g.create_dataset(name.decode(), data=array)


def _expected(x, w):
    h = np.maximum(x @ w["dense"][0] + w["dense"][1], 0)
    gamma, beta, mean, var = w["batch_normalization"]
    h = (h - mean) / np.sqrt(var + 0.001) * gamma + beta
    return h @ w["dense_1"][0] + w["dense_1"][1]


_TRAINING = {"loss": "mse", "metrics": ["mae"], "weighted_metrics": None, "loss_weights": None,
             "optimizer_config": {"class_name": "Adam", "config": {
                 "name": "Adam", "learning_rate": 0.01, "decay": 0.0, "beta_1": 0.9,
                 "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False, "jit_compile": True,
                 "is_legacy_optimizer": False}}}


def _tf_keras2_file(path, config, weights):
    with h5py.File(path, "w") as f:
        f.attrs["keras_version"] = b"2.15.0"
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps(config).encode()
        f.attrs["training_config"] = json.dumps(_TRAINING).encode()
        _write_weights(f.create_group("model_weights"), weights)
        opt = f.create_group("optimizer_weights")   # tf.keras 2's Adam: iter, then m and v
        names = [b"Adam/iter:0"] + [f"Adam/{layer}/{n}/{s}:0".encode() for s in "mv"
                                    for layer in ("dense", "dense_1") for n in ("kernel", "bias")]
        opt.attrs["weight_names"] = np.array(names, dtype="S")
        opt.create_dataset("Adam/iter:0", data=np.int64(7))
        for name in names[1:]:
            layer, n = name.decode().split("/")[1:3]
            opt.create_dataset(name.decode(), data=np.zeros_like(
                weights[layer][_NAMES[layer].index(n)]))


SEQUENTIAL = {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 4], "dtype": "float32",
                                            "sparse": False, "ragged": False,
                                            "name": "dense_input"}},
    _dense("dense", 3, "relu"), _batch_norm("batch_normalization"),
    _dense("dense_1", 2, "linear")]}}


def _functional_config():
    def node(*sources):
        return [[[s, 0, 0, {}] for s in sources]]
    layers = [{"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
               "config": {"batch_input_shape": [None, 4], "dtype": "float32", "sparse": False,
                          "ragged": False, "name": "input_1"}}]
    for entry, source in ((_dense("dense", 3, "relu"), "input_1"),
                          (_batch_norm("batch_normalization"), "dense"),
                          (_dense("dense_1", 2, "linear"), "batch_normalization")):
        layers.append({**entry, "name": entry["config"]["name"], "inbound_nodes": node(source)})
    return {"class_name": "Model", "config": {"name": "model", "layers": layers,
                                              "input_layers": [["input_1", 0, 0]],
                                              "output_layers": [["dense_1", 0, 0]]}}


@pytest.mark.parametrize("config", [SEQUENTIAL, _functional_config()],
                         ids=["sequential", "functional"])
def test_tf_keras2_file_loads_with_its_weights_predictions(tmp_path, config):
    weights = _weights(np.random.default_rng(0))
    path = str(tmp_path / "m.h5")
    _tf_keras2_file(path, config, weights)
    with pytest.warns(UserWarning, match="optimizer's state was not restored"):
        model = tl.keras.models.load_model(path)
    x = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), _expected(x, weights), rtol=1e-5,
                               atol=1e-5)
    assert model.compiled and model.loss == "mse"
    assert isinstance(model.optimizer, tl.optim.Adam)
    assert model.optimizer.learning_rate.numpy() == pytest.approx(0.01)
    model.fit(x, np.zeros((5, 2), np.float32), verbose=0)   # compiled as saved: it trains
    # tf.keras 2's save_weights("w.h5") layout (layer_names on the root), by layer order
    weights_path = str(tmp_path / "w.h5")
    with h5py.File(weights_path, "w") as f:
        _write_weights(f, weights)
    fresh = tl.keras.models.model_from_json(model.to_json())
    fresh.load_weights(weights_path)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), _expected(x, weights), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("kind", [M.sequential, M.functional, M.families],
                         ids=lambda k: k.__name__)
def test_h5_round_trip_keeps_weights_and_optimizer_state(tmp_path, kind):
    model = M.compiled(kind)
    path = tmp_path / "m.h5"
    model.save(path)
    loaded = tl.saving.load_model(path)
    assert type(loaded) is type(model)
    for a, b in zip(loaded.weights, model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x, _ = M.data(kind, seed=5)
    out_a, out_b = model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    for a, b in zip(out_a if isinstance(out_a, list) else [out_a],
                    out_b if isinstance(out_b, list) else [out_b]):
        np.testing.assert_array_equal(a, b)
    model.save(tmp_path / "other", save_format="h5")   # the format named, any path
    assert h5py.is_hdf5(tmp_path / "other")


def test_keras2_dot_keras_file_with_engine_modules(tmp_path):
    """Keras 2.13-2.15 wrote `.keras` files whose configs name `keras.src.engine.*` modules,
    with tf.keras 2 layer configs (`batch_input_shape`, initializers without modules)."""
    model = M.compiled(M.sequential)
    src = tmp_path / "m.keras"
    model.save(src)
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    config = json.loads(members["config.json"])
    config["module"] = "keras.src.engine.sequential"
    config["registered_name"] = None
    layers = config["config"]["layers"]
    first = layers.pop(0)                        # tf.keras 2: the input shape on the first layer
    layers[0]["config"]["batch_input_shape"] = first["config"]["batch_shape"]
    for layer in layers:
        for key, value in layer["config"].items():
            if isinstance(value, dict) and "module" in value:   # no modules inside configs
                value.pop("module")
                value.pop("registered_name", None)
    members["config.json"] = json.dumps(config).encode()
    members["metadata.json"] = json.dumps({"keras_version": "2.15.0",
                                           "date_saved": "2024-01-01@00:00:00"}).encode()
    path = tmp_path / "keras2.keras"
    with zipfile.ZipFile(path, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    loaded = tl.saving.load_model(path)
    x, _ = M.data(M.sequential, seed=2)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_save_format_tf_exports_a_saved_model(tmp_path):
    model = M.compiled(M.sequential)
    with pytest.warns(DeprecationWarning, match="model.export"):
        model.save(tmp_path / "served", save_format="tf")
    served = tl.saved_model.load(tmp_path / "served")
    x, _ = M.data(M.sequential)
    np.testing.assert_allclose(np.asarray(served.serve(x)), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_defective_h5_files_raise_load_errors(tmp_path):
    weights = _weights(np.random.default_rng(0))
    path = str(tmp_path / "m.h5")
    _tf_keras2_file(path, SEQUENTIAL, weights)
    raw = open(path, "rb").read()
    for name, data in (("truncated", raw[: len(raw) // 3]), ("text", b"not hdf5")):
        bad = tmp_path / f"{name}.h5"
        bad.write_bytes(data)
        with pytest.raises(tl.saving.LoadError, match=name):
            tl.saving.load_model(bad)
    wider = json.loads(json.dumps(SEQUENTIAL))
    wider["config"]["layers"][-1]["config"]["units"] = 5
    _tf_keras2_file(str(tmp_path / "wider.h5"), wider, weights)
    with pytest.raises(tl.saving.LoadError, match=r"wider\.h5.*'dense_1'.*shape \(3, 2\) in the "
                                                  r"file, the model expects \(3, 5\)"):
        tl.saving.load_model(tmp_path / "wider.h5")
    with h5py.File(tmp_path / "weights_only.h5", "w") as f:
        _write_weights(f, weights)
    with pytest.raises(tl.saving.LoadError, match="no model_config"):
        tl.saving.load_model(tmp_path / "weights_only.h5")
    model = M.sequential()
    with pytest.raises(tl.saving.LoadError, match="weights for 3 layers"):
        model.load_weights(tmp_path / "weights_only.h5")
