"""Keras 3 vs trainlib on nested models in `.keras` files: the functional config (a nested
Functional model's calls counted from 1 in input/output references, `mask: None` on model
calls, a single output as one reference) is Keras's, learned vocabularies (Keras assets) sit
at the archive paths Keras writes (the layer's weights path: `assets/layers/...`) with the same
bytes, and files move both ways with equal outputs."""
import json
import zipfile

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from trainlib import keras as tk  # noqa: E402

def _model(k):
    inner_lookup = k.layers.StringLookup(name="inner_lookup")
    inner_lookup.adapt(np.array([["x"], ["y"], ["y"]]))
    ia = k.Input((1,), dtype="string", name="ia")
    inner = k.Model(ia, inner_lookup(ia), name="inner")
    lookup = k.layers.StringLookup(name="lookup")
    lookup.adapt(np.array([["a"], ["b"], ["c"], ["a"]]))
    a = k.Input((1,), dtype="string", name="a")
    seq_lookup = k.layers.StringLookup(name="seq_lookup", output_mode="multi_hot")
    seq_lookup.adapt(np.array([["p"], ["q"], ["q"], ["r"]]))
    seq = k.Sequential([k.Input((1,), dtype="string"), seq_lookup], name="seq")
    return k.Model(a, [lookup(a), inner(a), seq(a)], name="outer")


def _assets(path):
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.startswith("assets/")}


DATA = [["a"], ["x"], ["q"], ["zz"]]


def _outputs(model, is_keras):
    """The model's outputs on DATA as numpy (called directly: string inputs as tensors)."""
    if is_keras:
        import tensorflow as tf  # noqa: PLC0415
        inputs = tf.constant(DATA)
    else:
        import trainlib as tl  # noqa: PLC0415
        inputs = tl.constant(DATA)
    return [np.asarray(o) for o in model(inputs)]


def test_assets_at_keras_paths_and_both_ways(tmp_path):
    theirs, ours = _model(keras), _model(tk)
    keras_path, our_path = tmp_path / "keras.keras", tmp_path / "ours.keras"
    theirs.save(keras_path)
    ours.save(our_path)
    expected = _assets(keras_path)
    assert set(expected) == {"assets/layers/string_lookup/vocabulary.txt",
                             "assets/layers/functional/layers/string_lookup/vocabulary.txt",
                             "assets/layers/sequential/layers/string_lookup/vocabulary.txt"}
    assert _assets(our_path) == expected
    reference = _outputs(theirs, True)
    for got in (_outputs(ours, False), _outputs(tk.saving.load_model(keras_path), False),
                _outputs(keras.saving.load_model(our_path), True)):
        for a, b in zip(got, reference):
            np.testing.assert_array_equal(a, b)


def _nested(k):
    ia = k.Input((3,), name="ia")
    inner = k.Model(ia, k.layers.Dense(4, activation="tanh", name="f1")(ia), name="inner")
    seq = k.Sequential([k.Input((4,)), k.layers.Dense(2, name="s1")], name="seq")
    a = k.Input((3,), name="a")
    h = inner(a)
    twice = inner(k.layers.Dense(3, name="back")(h))
    return k.Model(a, [seq(twice), inner(a)], name="outer"), k.Model(a, twice, name="single")


def _config(path):
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("config.json"))["config"]


def _strip(config):
    """The functional config without what differs by design (the layers' own configs)."""
    return {"input_layers": config["input_layers"], "output_layers": config["output_layers"],
            "nodes": [(layer["name"], layer["inbound_nodes"]) for layer in config["layers"]]}


@pytest.mark.parametrize("which", [0, 1], ids=["two_outputs", "single_output"])
def test_nested_functional_files_both_ways(tmp_path, which):
    theirs, ours = _nested(keras)[which], _nested(tk)[which]
    ours.set_weights(theirs.get_weights())
    keras_path, our_path = tmp_path / "keras.keras", tmp_path / "ours.keras"
    theirs.save(keras_path)
    ours.save(our_path)
    assert _strip(_config(our_path)) == _strip(_config(keras_path))
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    reference = theirs.predict(x, verbose=0)
    for got in (ours.predict(x, verbose=0), tk.saving.load_model(keras_path).predict(x, verbose=0),
                keras.saving.load_model(our_path).predict(x, verbose=0)):
        assert isinstance(got, list) == isinstance(reference, list)
        for a, b in zip(got if isinstance(got, list) else [got],
                        reference if isinstance(reference, list) else [reference]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
