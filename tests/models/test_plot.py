"""keras.utils.plot_model / model_to_dot (trainlib/models/plot.py): the DOT text of a model's
layer graph (nodes, labels, edges, nested clusters), the files plot_model writes, and the errors
naming what is missing. tests/keras_compare/test_plot_model.py compares the text with Keras's."""
import importlib.util
import re
import shutil

import pytest

from trainlib import keras
from trainlib.models.plot import model_dot_text

HAS_PYDOT = importlib.util.find_spec("pydot") is not None
CAN_RENDER = shutil.which("dot") is not None and (
    HAS_PYDOT or importlib.util.find_spec("graphviz") is not None)


def _model():
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    h = keras.layers.Dense(2, activation="relu", name="d1")(a)
    inner = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, name="s1"),
                              keras.layers.Dense(2, name="s2")], name="inner")
    out = keras.layers.Concatenate(name="cat")([inner(h), b])
    return keras.Model([a, b], out), inner


def _graph(text):
    """({node id: layer name}, [(source name, destination name)]) of DOT text."""
    names = {i: name for i, name in re.findall(r"^(\d+) \[label=<.*?<b>([^<]+)</b>", text, re.M)}
    edges = [(names[a], names[b]) for a, b in re.findall(r"^(\d+) -> (\d+) ", text, re.M)]
    return names, edges


def test_the_text_has_a_node_per_layer_and_an_edge_per_connection():
    model, inner = _model()
    text = model_dot_text(model)
    assert text.startswith("digraph G {\nrankdir=TB;\nconcentrate=true;\ndpi=200;\n"
                           "splines=ortho;\nnode [shape=record];\n") and text.endswith("\n}")
    names, edges = _graph(text)
    assert sorted(names.values()) == ["a", "b", "cat", "d1", "inner"]
    assert sorted(edges) == [("a", "d1"), ("b", "cat"), ("d1", "inner"), ("inner", "cat")]
    assert f"{id(model.get_layer('d1'))} [label=<" in text      # Keras's ids: id(layer)
    names, edges = _graph(model_dot_text(inner))
    assert list(names.values()) == ["s1", "s2"] and edges == [("s1", "s2")]


def test_expand_nested_draws_the_inner_layers_in_a_cluster_and_connects_them():
    model, _ = _model()
    text = model_dot_text(model, expand_nested=True)
    cluster = re.search(r"subgraph cluster_inner \{\nstyle=dashed;\nlabel=inner;\nlabeljust=l;\n"
                        r"(.*?)\n\}", text, re.S)
    assert cluster and "<b>s1</b> (Dense)" in cluster.group(1)
    _, edges = _graph(text)
    assert sorted(edges) == [("a", "d1"), ("b", "cat"), ("d1", "s1"), ("s1", "s2"), ("s2", "cat")]


def test_labels_show_what_is_asked():
    model, _ = _model()
    model.get_layer("cat").trainable = False
    text = model_dot_text(model, show_shapes=True, show_dtype=True, show_layer_activations=True,
                          show_trainable=True, show_layer_names=False, rankdir="LR")
    assert "rankdir=LR;" in text and "<b>Dense</b>" in text and "<b>d1</b>" not in text
    d1 = next(line for line in text.splitlines() if "Activation: <b>relu</b>" in line)
    for part in ("Input shape: <b>(None, 4)</b>", "Output shape: <b>(None, 2)</b>",
                 "Output dtype: <b>float32</b>", "<b>Trainable</b>", 'colspan="4"'):
        assert part in d1, part
    cat = next(line for line in text.splitlines() if "<b>Concatenate</b>" in line)
    assert "Input shape: <b>[(None, 2), (None, 3)]</b>" in cat
    assert "Trainable" not in cat          # no weights: no trainable cell, as Keras
    inp = next(line for line in text.splitlines() if "<b>InputLayer</b>" in line)
    assert "Input shape" not in inp and "Output shape: <b>(None, 4)</b>" in inp


def test_plot_model_writes_dot_text_without_optional_packages(tmp_path):
    model, _ = _model()
    assert keras.utils.plot_model(model, tmp_path / "m.dot", show_shapes=True) is None
    assert (tmp_path / "m.dot").read_text() == model_dot_text(model, show_shapes=True,
                                                              show_layer_names=False)


def test_errors_name_what_is_missing(monkeypatch, tmp_path):
    model, _ = _model()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                        if name in ("graphviz", "pydot") else real(name, *a))
    with pytest.raises(ImportError, match="graphviz \\(or pydot\\).*apt-get install graphviz"):
        keras.utils.plot_model(model, tmp_path / "m.png")
    assert not (tmp_path / "m.png").exists()
    with pytest.raises(ImportError, match="pip install pydot"):
        keras.utils.model_to_dot(model)
    with pytest.raises(ValueError, match="layer_range"):
        keras.utils.plot_model(model, tmp_path / "m.dot", layer_range=["a", "b"])
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        keras.utils.plot_model(model, tmp_path / "m.dot", colour=True)
    unbuilt = keras.Sequential([keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="not yet been built"):
        keras.utils.plot_model(unbuilt, tmp_path / "u.dot")


@pytest.mark.skipif(not HAS_PYDOT, reason="needs pydot")
def test_model_to_dot_is_a_pydot_graph_of_the_text():
    model, _ = _model()
    dot = keras.utils.model_to_dot(model, show_shapes=True)
    assert dot.to_string().strip() == model_dot_text(model, show_shapes=True).strip()
    cluster = keras.utils.model_to_dot(model, subgraph=True)
    assert cluster.get_name() == "cluster_" + model.name


@pytest.mark.skipif(not CAN_RENDER, reason="needs pydot or graphviz, and the dot program")
def test_plot_model_renders_png(tmp_path):
    model, _ = _model()
    keras.utils.plot_model(model, tmp_path / "m.png", show_shapes=True)
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
