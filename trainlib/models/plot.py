"""`keras.utils.model_to_dot` / `plot_model`: a model's layer graph drawn as Keras 3 draws it.

Owns: the DOT text of a model (`model_dot_text`): one node per layer (Keras's HTML-table
labels: name and class, activation, input/output shapes, dtype, trainable), one edge per
connection, nested Functional/Sequential models as dashed clusters with `expand_nested`,
with the graph attributes and node ids (`id(layer)`) Keras's pydot graph has, written in
pydot's text form. `model_to_dot` hands that text to pydot (Keras returns a `pydot.Dot`);
`plot_model` renders it through `graph/visualize.render_dot` (the renderer `plot_graph` uses).
Invariant: the text needs nothing optional; only `model_to_dot` needs pydot, and only
picture formats need Graphviz.
"""
import html
import importlib.util
import re
import sys

from ..graph.nest import flatten, map_structure
from ..graph.visualize import render_dot
from ..layers.base import KerasTensor
from .functional import Functional
from .sequential import Sequential

__all__ = ["model_to_dot", "plot_model", "model_dot_text"]

_NOT_BUILT = ("This model has not yet been built. Build the model first by calling `build()` "
              "or by calling the model on a batch of data.")


def _id(text):
    """A DOT id as pydot writes it: bare when it is a plain word or number, else quoted."""
    text = str(text)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|-?\d+", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _activation_name(layer):
    activation = layer.activation
    return getattr(activation, "name", None) or getattr(activation, "__name__", None) or \
        str(activation)


def _shape_text(shape):
    if shape is None:
        return "?"
    text = ", ".join(f"{k}: {v}" for k, v in shape.items()) if isinstance(shape, dict) \
        else f"{shape}"
    return text.replace("}", "").replace("{", "")


def _symbolic(layer, end, fact):
    """`fact` ("shape" or "dtype") of each KerasTensor of `layer.input` or `layer.output`
    (`end`), or None where the layer has none (never called on KerasTensors)."""
    try:
        return map_structure(lambda t: getattr(t, fact), getattr(layer, end))
    except (ValueError, AttributeError):
        return None


def _cell(text):
    return f'<td bgcolor="white"><font point-size="14">{text}</font></td>'


def _label(layer, show_shapes, show_dtype, show_layer_names, show_layer_activations,
           show_trainable):
    """Keras's HTML-table label of one layer."""
    class_name = type(layer).__name__
    colspan = max(1, int(show_dtype) + int(show_trainable) + (2 if show_shapes else 0))
    title = (f"<b>{html.escape(layer.name)}</b> ({class_name})" if show_layer_names
             else f"<b>{class_name}</b>")
    table = ('<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
             f'<tr><td colspan="{colspan}" bgcolor="black"><font point-size="16" color="white">'
             f"{title}</font></td></tr>")
    if show_layer_activations and getattr(layer, "activation", None) is not None:
        table += (f'<tr><td bgcolor="white" colspan="{colspan}"><font point-size="14">'
                  f"Activation: <b>{_activation_name(layer)}</b></font></td></tr>")
    cols = []
    if show_shapes:
        if class_name != "InputLayer":
            shape = _shape_text(_symbolic(layer, "input", "shape"))
            cols.append(_cell(f"Input shape: <b>{shape}</b>"))
        cols.append(_cell(f"Output shape: <b>{_shape_text(_symbolic(layer, 'output', 'shape'))}</b>"))
    if show_dtype:
        dtype = _symbolic(layer, "output", "dtype")
        cols.append(_cell(f"Output dtype: <b>{dtype or '?'}</b>"))
    if show_trainable and layer.weights:
        colour, word = ("forestgreen", "Trainable") if layer.trainable else \
            ("firebrick", "Non-trainable")
        cols.append(f'<td bgcolor="{colour}"><font point-size="14" color="white">'
                    f"<b>{word}</b></font></td>")
    if cols:
        table += f"<tr>{''.join(cols)}</tr>"
    return table + "</table>>"


def _producer(kt):
    """The layer that made KerasTensor `kt` (its InputLayer for an Input)."""
    return kt.node.layer if kt.node is not None else kt.layer


def _resolve_source(layer, index):
    """The innermost real layer producing output `index` of a (nested) model."""
    while isinstance(layer, (Functional, Sequential)):
        kt = layer.outputs[index]
        index = kt.index
        layer = _producer(kt)
    return layer


def _resolve_destination(layer, index):
    """The innermost real layer receiving input `index` of a (nested) model."""
    while isinstance(layer, (Functional, Sequential)):
        layer = layer.inputs[index].layer if isinstance(layer, Functional) else layer.layers[0]
        index = 0
    return layer


class _Dot:
    """pydot's text form of one graph or cluster: attribute lines, nodes, clusters, edges."""

    def __init__(self, head, attributes):
        self.lines = [head] + [f"{k}={v};" for k, v in attributes]
        self.edges = []

    def node(self, layer, label):
        self.lines.append(f"{id(layer)} [label={label}, fontname=Helvetica, border=0, "
                          "margin=0];")

    def edge(self, source, destination):
        key = (id(source), id(destination))
        if key not in self.edges:
            self.edges.append(key)

    def text(self):
        return "\n".join(self.lines + [f"{a} -> {b} [penwidth=2];" for a, b in self.edges]
                         + ["}"])


def model_dot_text(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                   rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                   show_layer_activations=False, show_trainable=False, splines="ortho"):
    """The DOT text of `model`'s layer graph (what `model_to_dot(...).to_string()` gives with
    pydot), needing no optional package. Arguments as `model_to_dot`."""
    if not model.built:
        raise ValueError(_NOT_BUILT)
    label_options = dict(show_shapes=show_shapes, show_dtype=show_dtype,
                         show_layer_names=show_layer_names,
                         show_layer_activations=show_layer_activations,
                         show_trainable=show_trainable)
    if subgraph:
        dot = _Dot(f"subgraph {_id('cluster_' + model.name)} {{",
                   [("style", "dashed"), ("label", _id(model.name)), ("labeljust", "l")])
    else:
        dot = _Dot("digraph G {", [("rankdir", rankdir), ("concentrate", "true"),
                                   ("dpi", dpi), ("splines", splines)])
        dot.lines.append("node [shape=record];")
    if isinstance(model, Sequential):
        layers = model.layers
    elif isinstance(model, Functional):
        layers = model._layers
    else:        # a subclassed model is one box, as in Keras
        dot.node(model, _label(model, **label_options))
        return dot.text()
    for layer in layers:
        if expand_nested and isinstance(layer, (Functional, Sequential)):
            dot.lines.append(model_dot_text(layer, show_shapes, show_dtype, show_layer_names,
                                            rankdir, expand_nested, subgraph=True,
                                            show_layer_activations=show_layer_activations,
                                            show_trainable=show_trainable))
        else:
            dot.node(layer, _label(layer, **label_options))
    if isinstance(model, Sequential):
        for source, destination in zip(layers, layers[1:]):
            if expand_nested:
                source = _resolve_source(source, 0)
                destination = _resolve_destination(destination, 0)
            dot.edge(source, destination)
        return dot.text()
    for node in model._nodes:
        inputs = [x for x in flatten((node.args, node.kwargs)) if isinstance(x, KerasTensor)]
        for input_index, kt in enumerate(inputs):
            source, destination = _producer(kt), node.layer
            if expand_nested:
                source = _resolve_source(source, kt.index)
                destination = _resolve_destination(destination, input_index)
            dot.edge(source, destination)
    return dot.text()


def _check_kwargs(kwargs):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                 show_layer_activations=False, show_trainable=False, splines="ortho", **kwargs):
    """The model's layer graph as a `pydot.Dot` (a `pydot.Cluster` with `subgraph=True`), as
    Keras's `keras.utils.model_to_dot`.

    Args:
        model: a built model (Sequential, functional; a subclassed model is one box).
        show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable:
            what each layer's box shows.
        rankdir: "TB" (top to bottom) or "LR".
        expand_nested: draw nested models' layers inside dashed clusters.
        dpi: the picture's resolution.
        subgraph: return a cluster (for nesting in another graph).
        splines: how edges are drawn ("ortho", "curved", "polyline", "spline", "line").

    Raises:
        ImportError: pydot is not installed (`plot_model(model, "model.dot")` needs nothing).
        ValueError: the model is not built, or an unknown keyword argument.

    Example:
        >>> dot = keras.utils.model_to_dot(model, show_shapes=True)
        >>> dot.write("model.dot")
    """
    _check_kwargs(kwargs)
    if not model.built:
        raise ValueError(_NOT_BUILT)
    if importlib.util.find_spec("pydot") is None:
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to "
                          "work. (plot_model(model, 'model.dot') writes the DOT text without it.)")
    import pydot  # noqa: PLC0415 -- optional dependency
    text = model_dot_text(model, show_shapes, show_dtype, show_layer_names, rankdir,
                          expand_nested, dpi, False, show_layer_activations, show_trainable,
                          splines)
    dot = pydot.graph_from_dot_data(text)[0]
    if subgraph:
        cluster = pydot.Cluster(style="dashed", graph_name=model.name)
        cluster.set("label", model.name)
        cluster.set("labeljust", "l")
        for node in dot.get_nodes():
            if node.get_name() != "node":
                cluster.add_node(node)
        for edge in dot.get_edges():
            cluster.add_edge(edge)
        for sub in dot.get_subgraphs():
            cluster.add_subgraph(sub)
        return cluster
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=False, rankdir="TB", expand_nested=False, dpi=200,
               show_layer_activations=False, show_trainable=False, splines="ortho", **kwargs):
    """Draws the model's layer graph to `to_file`, as Keras's `keras.utils.plot_model`.

    Args:
        model: a built model.
        to_file: the picture (`.png`, `.svg`, `.pdf`...; no extension: PNG), or `.dot`/`.gv`
            for the DOT text, which needs no optional package.
        Others: as `model_to_dot`.

    Returns:
        An `IPython.display.Image` of the picture inside IPython, else None (as Keras).

    Raises:
        ImportError: a picture needs the graphviz or pydot package and the Graphviz `dot`
            program; the message names what is missing and how to install it.
        ValueError: the model is not built, or an unknown keyword argument.

    Example:
        >>> keras.utils.plot_model(model, "model.dot", show_shapes=True)
        >>> keras.utils.plot_model(model, "model.png")   # with Graphviz installed
    """
    _check_kwargs(kwargs)
    text = model_dot_text(model, show_shapes, show_dtype, show_layer_names, rankdir,
                          expand_nested, dpi, False, show_layer_activations, show_trainable,
                          splines)
    path = render_dot(text, to_file, "plot_model")
    if "IPython" in sys.modules and path.suffix.lower() not in (".pdf", ".dot", ".gv"):
        from IPython import display  # noqa: PLC0415 -- only inside IPython
        return display.Image(filename=str(path))
    return None
