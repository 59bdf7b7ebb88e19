"""`.keras` whole-model files: round trips of every model kind and layer class, exact resume of
training, `save_model`/`load_model` dispatch, and clear errors for bad paths and edited files."""
import io
import json
import os
import sys
import zipfile

import h5py
import numpy as np
import pytest

import trainlib as tl
from trainlib.file_io import LoadBudget
from trainlib.layers.base import Layer
from trainlib.saving import keras_h5

from . import models as M

KINDS = [M.sequential, M.functional, M.subclassed, M.families, M.additions]


def _equal(a_list, b_list):
    a_list, b_list = list(a_list), list(b_list)
    assert len(a_list) == len(b_list)
    for a, b in zip(a_list, b_list):
        a = a.numpy() if hasattr(a, "numpy") else a
        b = b.numpy() if hasattr(b, "numpy") else b
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


FIRST_FORMAT = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures",
                            "trainlib_v1")


def _rewrite(src, dst, config=None, arrays=None, drop=(), h5=None):
    """Copies a .keras archive, replacing config.json / the npz weights arrays (first format) /
    the HDF5 weights (`h5(file)` edits them in place), dropping entries."""
    with zipfile.ZipFile(src) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    if config is not None:
        entries["config.json"] = json.dumps(config).encode()
    if arrays is not None:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        entries["model.weights.npz"] = buf.getvalue()
    if h5 is not None:
        buf = io.BytesIO(entries["model.weights.h5"])
        with h5py.File(buf, "a") as f:
            h5(f)
        entries["model.weights.h5"] = buf.getvalue()
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in entries.items():
            if n not in drop:
                z.writestr(n, data)


def _config(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("config.json"))


def _arrays(path, model=None):
    """{"model_00000": array, ..., "optimizer_00000": ...} of a `.keras` file: the first
    format's npz as it is, Keras 3's HDF5 weights in `model`'s weights order."""
    with zipfile.ZipFile(path) as z:
        if "model.weights.npz" in z.namelist():
            with np.load(io.BytesIO(z.read("model.weights.npz"))) as npz:
                return {k: npz[k] for k in npz.files}
        raw = z.read("model.weights.h5")
    pairs, opt = keras_h5.read_weights(model, io.BytesIO(raw), LoadBudget("t", 1 << 30))
    by_id = {id(v): a for v, a in pairs}
    out = {f"model_{i:05d}": by_id[id(v)] for i, v in enumerate(model.weights)}
    out.update({f"optimizer_{i:05d}": a for i, a in enumerate(opt or [])})
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """{kind: (trained model, path of its .keras file)}."""
    folder = tmp_path_factory.mktemp("keras")
    out = {}
    for kind in KINDS:
        model = M.compiled(kind)
        path = str(folder / f"{kind.__name__}.keras")
        model.save(path)
        out[kind] = (model, path)
    return out


def test_every_layer_class_is_covered(saved):
    used = set()
    for model, _ in saved.values():
        stack = [model]
        while stack:
            layer = stack.pop()
            used.add(type(layer))
            stack.extend(layer._sublayers())
    # by class: a public name may differ from the class's (GroupQueryAttention)
    public = {name: getattr(tl.layers, name) for name in tl.layers.__all__
              if isinstance(getattr(tl.layers, name), type)
              and issubclass(getattr(tl.layers, name), Layer) and name != "Layer"}
    # string-input layers: their .keras round trip is in tests/layers/test_text.py; Wrapper
    # is an abstract base (as Keras's: no call of its own)
    missing = sorted(name for name, cls in public.items() if cls not in used
                     and name not in ("StringLookup", "TextVectorization", "Hashing", "Wrapper"))
    assert not missing, f"layer classes without a round trip: {missing}"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_round_trip(saved, kind):
    model, path = saved[kind]
    loaded = tl.saving.load_model(path)
    assert type(loaded) is type(model) and loaded.name == model.name
    assert [type(l).__name__ for l in loaded.layers] == [type(l).__name__ for l in model.layers]
    assert [v.name for v in loaded.weights] == [v.name for v in model.weights]
    _equal(loaded.weights, model.weights)
    assert [v.trainable for v in loaded.weights] == [v.trainable for v in model.weights]
    _equal(loaded.optimizer.variables, model.optimizer.variables)
    assert type(loaded.optimizer) is type(model.optimizer)
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert int(loaded.optimizer.iterations.numpy()) == 2
    x, _ = M.data(kind, seed=7)
    out_a, out_b = model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    _equal(out_a if isinstance(out_a, list) else [out_a],
           out_b if isinstance(out_b, list) else [out_b])
    # the loaded model saves the same config and weights again
    again = path.replace(".keras", "-again.keras")
    loaded.save(again)
    assert _config(again) == _config(path)
    def numeric(arrays):
        return [v for k, v in sorted(arrays.items()) if k != "model_paths"]

    _equal(numeric(_arrays(again, loaded)), numeric(_arrays(path, model)))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_resumed_training_matches_continued_training(kind, tmp_path):
    model = M.compiled(kind)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = tl.saving.load_model(path)
    x, y = M.data(kind, seed=3)
    for m in (model, loaded):
        tl.random.set_seed(11)   # the same dropout draws for both
        m.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    _equal(loaded.weights, model.weights)
    _equal(loaded.optimizer.variables, model.optimizer.variables)
    assert int(loaded.optimizer.iterations.numpy()) == 4
    saved_arrays = _arrays(path, model)
    assert any(not np.array_equal(saved_arrays[f"model_{i:05d}"], v.numpy())
               for i, v in enumerate(model.weights))   # training did move on from the file


def test_compile_config_restored(saved):
    model, path = saved[M.sequential]
    loaded = tl.saving.load_model(path)
    assert loaded.compiled and loaded.loss == "mse"
    assert loaded._metric_ids[0] == "mae"
    assert isinstance(loaded._metric_ids[1], tl.metrics.RootMeanSquaredError)
    assert isinstance(loaded.optimizer._schedule, tl.optim.schedules.ExponentialDecay)
    assert loaded.optimizer.nesterov and loaded.optimizer.momentum == 0.9
    x, y = M.data(M.sequential)
    assert loaded.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
    functional = tl.saving.load_model(saved[M.functional][1])
    losses = functional._loss_fns
    assert isinstance(losses[1], tl.losses.BinaryCrossentropy)
    assert isinstance(losses[2], tl.losses.Huber) and losses[2].get_config()["delta"] == 2.0
    assert functional._loss_weights == [1.0, 0.5, 1.0, 2.0]
    assert functional.optimizer.amsgrad


def test_compile_false_and_uncompiled(saved, tmp_path):
    loaded = tl.saving.load_model(saved[M.functional][1], compile=False)
    assert not loaded.compiled
    _equal(loaded.weights, saved[M.functional][0].weights)
    fresh = M.functional()
    fresh.save(tmp_path / "fresh.keras")
    again = tl.saving.load_model(tmp_path / "fresh.keras")
    assert not again.compiled
    _equal(again.weights, fresh.weights)


def test_sequential_built_by_a_call_and_unbuilt(tmp_path):
    model = tl.Sequential([tl.layers.Dense(3), tl.layers.Dense(1)])
    model(np.ones((2, 4), np.float32))
    model.save(tmp_path / "called.keras")
    _equal(tl.saving.load_model(tmp_path / "called.keras").weights, model.weights)
    unbuilt = tl.Sequential([tl.layers.Dense(3)])
    unbuilt.save(tmp_path / "unbuilt.keras")
    loaded = tl.saving.load_model(tmp_path / "unbuilt.keras")
    assert not loaded.built and loaded.weights == []


def test_custom_objects_for_unregistered_classes_and_functions(tmp_path):
    class Local(tl.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = tl.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    def my_loss(y_true, y_pred):
        return tl.reduce_mean(tl.abs(y_true - y_pred), axis=-1)

    model = Local()
    model.compile("sgd", loss=my_loss)
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    model.fit(x, y, verbose=0)
    path = tmp_path / "local.keras"
    model.save(path)
    with pytest.raises(tl.saving.LoadError, match=r"local\.keras.*unknown model class 'Local'"):
        tl.saving.load_model(path)
    with pytest.raises(ValueError, match="unknown loss function 'my_loss'"):
        tl.saving.load_model(path, custom_objects={"Local": Local})
    loaded = tl.saving.load_model(path, custom_objects={"Local": Local, "my_loss": my_loss})
    _equal(loaded.weights, model.weights)
    assert loaded.loss is my_loss


def test_registered_names():
    assert tl.saving.get_registered_name(M.Tower) == "tests>Tower"
    assert tl.saving.get_registered_object("tests>Scale") is M.Scale
    assert tl.layers.deserialize(tl.layers.serialize(M.Scale(3.0))).init == 3.0
    with pytest.raises(ValueError, match="must not contain"):
        tl.saving.register_keras_serializable(package="a>b")

    class Dense(tl.layers.Layer):
        pass

    with pytest.raises(ValueError, match="'Dense' is already registered"):
        tl.saving.register_keras_serializable(package="mine")(Dense)
    assert tl.layers.deserialize({"class_name": "Dense", "config": {"units": 1}}).units == 1


def test_subclass_without_get_config_names_the_fix(tmp_path):
    @tl.saving.register_keras_serializable(package="tests")
    class NoConfig(tl.Model):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.dense = tl.layers.Dense(units)

        def call(self, x):
            return self.dense(x)

    model = NoConfig(2)
    model(np.ones((1, 3), np.float32))
    model.save(tmp_path / "m.keras")
    with pytest.raises(tl.saving.LoadError, match="could not rebuild NoConfig.*get_config"):
        tl.saving.load_model(tmp_path / "m.keras")


# ------------------------------------------------------------------ paths and dispatch

def test_save_rejects_other_extensions(saved, tmp_path):
    model = saved[M.sequential][0]
    with pytest.raises(ValueError, match=r"model\.export"):
        model.save(tmp_path / "model")
    with pytest.raises(ValueError, match="zipped=False"):
        model.save(tmp_path / "model.keras", zipped=False)
    with pytest.raises(ValueError, match="save_format"):
        model.save(tmp_path / "model.keras", save_format="pickle")
    with pytest.raises(ValueError, match=r"\.weights\.h5.*\.npz"):
        model.save_weights(tmp_path / "model.weights.txt")
    with pytest.raises(ValueError, match=r"\.weights\.h5.*\.npz"):
        tl.saving.save_weights(model, tmp_path / "model.pkl")
    assert os.listdir(tmp_path) == []


def test_save_model_dispatches_on_the_path(saved, tmp_path):
    model = saved[M.sequential][0]
    tl.saving.save_model(model, tmp_path / "m.keras")
    assert isinstance(tl.saving.load_model(tmp_path / "m.keras"), tl.Sequential)
    tl.saving.save_model(model, tmp_path / "served")
    served = tl.saving.load_model(tmp_path / "served")
    assert not isinstance(served, tl.Model)
    x, _ = M.data(M.sequential)
    np.testing.assert_allclose(np.asarray(served.serve(x)), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(FileExistsError):
        tl.saving.save_model(model, tmp_path / "m.keras", overwrite=False)
    with pytest.raises(FileNotFoundError):
        tl.saving.load_model(tmp_path / "missing.keras")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(ValueError, match="expected a '.keras' file"):
        tl.saving.load_model(tmp_path / "notes.txt")


def test_weights_from_a_keras_file_and_npz(saved, tmp_path):
    model, path = saved[M.functional]
    fresh = M.functional()
    fresh.load_weights(path)
    _equal(fresh.weights, model.weights)
    other = M.functional()
    tl.saving.load_weights(other, path)
    _equal(other.weights, model.weights)
    tl.saving.save_weights(model, tmp_path / "w.weights.npz")
    third = M.functional()
    tl.saving.load_weights(third, tmp_path / "w.weights.npz")
    _equal(third.weights, model.weights)
    with pytest.raises(tl.saving.LoadError, match="weights"):
        M.sequential().load_weights(path)


def test_failed_save_leaves_the_existing_file(saved, tmp_path, monkeypatch):
    model, src = saved[M.sequential]
    path = tmp_path / "m.keras"
    model.save(path)
    before = path.read_bytes()

    class Broken(tl.layers.Layer):
        def get_config(self):
            raise RuntimeError("no config")

    bad = tl.Sequential([Broken()])
    with pytest.raises(RuntimeError, match="no config"):
        bad.save(path)
    from trainlib.models import saving_keras

    def fail(fd):
        raise OSError("disk full")

    monkeypatch.setattr(saving_keras.os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        model.save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.keras"]


# ------------------------------------------------------------------ defective files

def _check_load_error(src, tmp_path, name, pattern, **edit):
    path = str(tmp_path / f"{name}.keras")
    _rewrite(src, path, **edit)
    with pytest.raises(tl.saving.LoadError, match=pattern) as info:
        tl.saving.load_model(path)
    assert path in str(info.value)


def test_first_format_files_load_and_their_defects_are_clear(tmp_path):
    """trainlib's first `.keras` files (weights in `model.weights.npz`) still load, with
    their saved weights, and their defects are LoadErrors naming the file."""
    for kind in (M.sequential, M.functional, M.subclassed):
        path = os.path.join(FIRST_FORMAT, f"{kind.__name__}.keras")
        loaded = tl.saving.load_model(path)
        arrays = _arrays(path)
        _equal(loaded.weights, [arrays[f"model_{i:05d}"] for i in range(len(loaded.weights))])
        _equal(loaded.optimizer.variables, [arrays[f"optimizer_{i:05d}"]
                                            for i in range(len(loaded.optimizer.variables))])
        # the fixtures predate layers added to `M.functional`: the model they were made from
        fresh = (M.functional_v1 if kind is M.functional else kind)()
        if not fresh.built:
            fresh(M.data(kind)[0])
        fresh.load_weights(path)    # the weights alone, from the same file
        x, _ = M.data(kind)
        out_a, out_b = loaded.predict(x, verbose=0), fresh.predict(x, verbose=0)
        _equal(out_a if isinstance(out_a, list) else [out_a],
               out_b if isinstance(out_b, list) else [out_b])
    src = os.path.join(FIRST_FORMAT, "sequential.keras")
    config, arrays = _config(src), _arrays(src)

    def check(name, pattern, **edit):
        _check_load_error(src, tmp_path, name, pattern, **edit)

    wider = json.loads(json.dumps(config))
    wider["config"]["layers"][-1]["config"]["units"] = 3
    check("wider", r"model weight 9 \('seq/dense_\d+/kernel'\) has shape \(4, 2\) in the file, "
          r"the model expects \(4, 3\)", config=wider)
    check("no_weights", "has no 'model.weights.npz'", drop=("model.weights.npz",))
    cast = dict(arrays, model_00000=arrays["model_00000"].astype(np.float64))
    check("dtype", "dtype float64 in the file", arrays=cast)
    fewer = {k: v for k, v in arrays.items() if k != "model_00010"}
    check("fewer", "holds 10 model weights, the model has 11", arrays=fewer)
    gap = {k: v for k, v in arrays.items() if k != "model_00003"}
    check("gap", "lacks model array 3", arrays=gap)
    opt = dict(arrays, optimizer_00003=np.zeros((5, 5), np.float32))
    check("optimizer", "optimizer weight 3", arrays=opt)
    obj = dict(arrays, model_00000=np.array([{"a": 1}], dtype=object))
    check("pickled", "corrupted|pickle", arrays=obj)


def test_defective_files_raise_clear_errors(saved, tmp_path):
    model, src = saved[M.sequential]
    config = _config(src)

    def check(name, pattern, **edit):
        _check_load_error(src, tmp_path, name, pattern, **edit)

    unknown = json.loads(json.dumps(config))
    unknown["config"]["layers"][1]["class_name"] = "NoSuchLayer"
    check("unknown_layer", "Unknown layer class 'NoSuchLayer'", config=unknown)
    unknown_model = dict(config, class_name="os.system", registered_name="x>y")
    check("unknown_model", "unknown model class", config=unknown_model)
    wider = json.loads(json.dumps(config))
    wider["config"]["layers"][-1]["config"]["units"] = 3
    check("wider", r"layers/dense_1/vars/0 \('kernel' of layer 'dense(_\d+)?'\) has shape \(4, 2\) "
          r"in the file, the model expects \(4, 3\)", config=wider)
    check("no_weights", "has no 'model.weights.h5'", drop=("model.weights.h5",))

    def retype(f):
        data = f["layers/dense/vars/0"][()]
        del f["layers/dense/vars/0"]
        f["layers/dense/vars/0"] = data.astype(np.float64)

    check("dtype", "dense/vars/0.*dtype float64 in the file", h5=retype)
    check("fewer", r"holds 1 weights, layer 'dense(_\d+)?' has 2",
          h5=lambda f: f.__delitem__("layers/dense/vars/1"))
    check("no_group", "no group 'layers/conv2d/vars'",
          h5=lambda f: f.__delitem__("layers/conv2d"))

    def pickled(f):
        del f["layers/dense/vars/0"]
        f.create_dataset("layers/dense/vars/0", data=np.array([b"x"], dtype=object),
                         dtype=h5py.string_dtype())

    check("object", "dtype object, expected a numeric array", h5=pickled)
    # an optimizer state that does not fit: the model loads (as Keras), with a warning
    path = str(tmp_path / "optimizer.keras")

    def reshape(f):
        del f["optimizer/vars/3"]
        f["optimizer/vars/3"] = np.zeros((5, 5), np.float32)

    _rewrite(src, path, h5=reshape)
    with pytest.warns(UserWarning, match="optimizer's state was not restored"):
        loaded = tl.saving.load_model(path)
    _equal(loaded.weights, model.weights)
    bad_opt = json.loads(json.dumps(config))
    bad_opt["compile_config"]["optimizer"]["class_name"] = "Evil"
    bad_opt["compile_config"]["optimizer"]["registered_name"] = None
    check("optimizer_class", "Unknown optimizer class 'Evil'", config=bad_opt)
    newer = str(tmp_path / "newer.keras")
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(newer, "w") as out:
        for n in z.namelist():
            data = z.read(n)
            if n == "metadata.json":
                data = json.dumps(dict(json.loads(data), format_version=99)).encode()
            out.writestr(n, data)
    with pytest.raises(tl.saving.LoadError, match="format version 99"):
        tl.saving.load_model(newer)
    raw = open(src, "rb").read()
    for name, data in [("truncated", raw[: len(raw) // 2]), ("empty", b""),
                       ("text", b"not a zip at all")]:
        path = tmp_path / f"{name}.keras"
        path.write_bytes(data)
        with pytest.raises(tl.saving.LoadError, match="truncated, corrupted or not a .keras"):
            tl.saving.load_model(path)


# ------------------------------------------------------------------ Keras 3's own files

from .test_keras_h5 import A as A3, FIXTURES as KERAS3  # noqa: E402 -- Keras 3's fixtures


@pytest.mark.parametrize("name", A3.NAMES)
def test_keras3_model_file_loads_with_keras_predictions(name):
    """`.keras` files written by Keras 3 (tests/fixtures/keras3/make_fixtures.py) load with
    their class, compile config and optimizer state, and predict as Keras did."""
    A3.build(tl.keras, name)     # registers the subclassed model's classes
    model = tl.saving.load_model(os.path.join(KERAS3, f"{name}.keras"))
    expected = np.load(os.path.join(KERAS3, f"{name}.expected.npz"))["prediction"]
    np.testing.assert_allclose(model.predict(A3.inputs(name), verbose=0), expected,
                               rtol=1e-5, atol=1e-5)
    assert model.compiled and model.loss == "mse"
    assert isinstance(model.optimizer, tl.optim.Adam)
    assert int(model.optimizer.iterations.numpy()) == 4    # two epochs of two batches
    model.fit(A3.inputs(name), A3.targets(name), epochs=1, batch_size=2, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 6


def test_saved_file_follows_keras3_layout(saved):
    """What `save` writes is Keras 3's archive: config.json as `serialize_keras_object` writes
    it (module, class_name, registered_name, build_config, compile_config), metadata.json
    with the Keras version, the weights as `model.weights.h5` in Keras's layout."""
    model, path = saved[M.sequential]
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        meta = json.loads(z.read("metadata.json"))
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
            groups = sorted(f["layers"].keys())
    assert meta["keras_version"].startswith("3.")
    config = _config(path)
    assert (config["module"], config["class_name"], config["registered_name"]) == \
        ("keras", "Sequential", None)
    assert config["config"]["layers"][0]["class_name"] == "InputLayer"
    assert config["build_config"] == {"input_shape": [None, 8, 8, 2]}
    compiled = config["compile_config"]
    assert compiled["optimizer"]["module"] == "keras.optimizers"
    assert compiled["optimizer"]["class_name"] == "SGD"
    assert compiled["loss"] == "mse"
    assert compiled["metrics"][1]["class_name"] == "RootMeanSquaredError"
    assert "conv2d" in groups and "dense" in groups
    functional = _config(saved[M.functional][1])["config"]
    node = functional["layers"][1]["inbound_nodes"][0]
    assert node["args"][0]["class_name"] == "__keras_tensor__"
    assert node["args"][0]["config"]["keras_history"] == ["image", 0, 0]
