"""Keras 3 vs trainlib: model_to_dot's text for the same models (ids mapped to their order),
with every label option and with nested models expanded. Keras's model_to_dot needs pydot:
skipped without it (run with pydot on PYTHONPATH, e.g. `pip install --target /tmp/pydeps
pydot` and PYTHONPATH=$PWD:/tmp/pydeps)."""
import re

import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("pydot")

from trainlib import keras as tk  # noqa: E402
from trainlib.models.plot import model_dot_text  # noqa: E402


def _models(k):
    a, b = k.Input((4,), name="a"), k.Input((3,), name="b")
    h = k.layers.Dense(2, activation="relu", name="d1")(a)
    inner = k.Sequential([k.Input((2,)), k.layers.Dense(2, name="s1"),
                          k.layers.Dense(2, name="s2")], name="inner")
    ia = k.Input((2,), name="fa")
    nested = k.Model(ia, k.layers.Dense(2, name="f1")(ia), name="fn")
    out = k.layers.Concatenate(name="cat")([nested(inner(h)), b])
    head = k.layers.Dense(1, name="head", trainable=False)(out)
    seq = k.Sequential([k.Input((2,)), k.layers.Dense(2, name="q1"),
                        k.layers.Dropout(0.1, name="q2")], name="seq")
    return {"functional": k.Model([a, b], [out, head]), "sequential": seq}


def _canonical(text):
    ids = {}
    for node_id in re.findall(r"^(\d+) \[", text, re.M):
        ids.setdefault(node_id, f"N{len(ids)}")
    return re.sub(r"\b\d{6,}\b", lambda m: ids.get(m.group(0), "?"), text).strip()


@pytest.mark.parametrize("which", ["functional", "sequential"])
@pytest.mark.parametrize("options", [
    {}, {"show_shapes": True, "show_dtype": True, "show_layer_activations": True,
         "show_trainable": True},
    {"expand_nested": True, "show_shapes": True, "rankdir": "LR", "dpi": 96},
    {"show_layer_names": False, "splines": "curved"}], ids=["plain", "labels", "nested", "names"])
def test_model_to_dot_text_matches_keras(which, options):
    expected = keras.utils.model_to_dot(_models(keras)[which], **options).to_string()
    model = _models(tk)[which]
    assert _canonical(model_dot_text(model, **options)) == _canonical(expected)
    assert _canonical(tk.utils.model_to_dot(model, **options).to_string()) == \
        _canonical(expected)
