"""Graphviz DOT text of a Graph: `to_dot(graph)` (also `Graph.to_dot()`).

Owns: drawing the IR for people. One node per Operation (type and name; the
source line as tooltip), one edge per data input labelled with the tensor's
shape and dtype (`:k` when the producer has several outputs), control inputs
as dashed edges, graph inputs (placeholders; captures say what they capture)
as ellipses, graph outputs as `output i` nodes, and the graphs of `If`/`While`
(and any other op attribute holding a Graph) as clusters, nested as the ops
are, joined to their op by a dotted edge labelled with the attribute name.
Invariants: node ids are generated (`n0`, `n1`...), so op names of nested
graphs never collide and user-chosen names appear only inside quoted,
escaped labels; the text is deterministic for a given graph; nothing here
imports beyond the IR (it reads graphs, never changes them).
Also owns turning DOT text into a picture file (`render_dot`, shared by `tl.utils.plot_graph`
and `keras.utils.plot_model`): `.dot`/`.gv` are written as they are; other formats go through
the `graphviz` or `pydot` Python package and the Graphviz `dot` program, whose absence is an
ImportError naming what to install, raised before anything is written.
"""
import importlib.util
from pathlib import Path

from .ir import Graph

__all__ = ["to_dot", "render_dot"]

TEXT_FORMATS = ("dot", "gv")
_INSTALL = ("pip install graphviz (or pydot) and the Graphviz programs from your OS "
            "package manager (e.g. apt-get install graphviz, brew install graphviz, "
            "conda install graphviz)")

_STYLE = {  # fill colours by role
    "op": "#e8eef8", "stateful": "#fde2c8", "input": "#dff2df", "capture": "#eeeeee",
    "const": "#f5f5f5", "output": "#fff3b0", "control_flow": "#e6dcf5",
}


def _quote(text):
    """A DOT quoted string whose label shows `text` literally (line breaks become `\\n`)."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n") + '"'


def _label(*lines):
    return _quote("\n".join(str(line) for line in lines if line))


def _spec_text(tensor):
    return f"{tensor.shape} {tensor.dtype.name}"


def _edge_text(tensor):
    """`(2, 3) float32`, prefixed by `:k` when the producer has several outputs."""
    index = f":{tensor.value_index} " if len(tensor.op.outputs) > 1 else ""
    return _quote(index + _spec_text(tensor))


def _const_text(op):
    value = op.attrs.get("value")
    size = getattr(value, "size", None)
    if size == 1 and getattr(value, "ndim", 1) == 0:
        item = value.item()
        return f"= {float(f'{item:.6g}')!r}" if isinstance(item, float) else f"= {item!r}"[:24]
    return ""


def _capture_text(graph, op):
    """What a capture placeholder stands for: a Variable's name, or where the value comes from."""
    variable = op.attrs.get("_variable")
    if variable is not None:
        return f"variable {variable.name}"
    for value, placeholder in getattr(graph, "captures", ()):
        if placeholder.op is op:
            inner = getattr(value, "op", None)
            return f"captured {inner.name}" if inner is not None else "captured tensor"
    return None


class _Writer:
    """Accumulates the DOT lines of one drawing; node ids are unique across nested graphs."""

    def __init__(self):
        self.lines = []
        self.ids = {}       # id(Operation) -> node id
        self.count = 0
        self.clusters = 0

    def new_id(self):
        self.count += 1
        return f"n{self.count - 1}"

    def node(self, pad, attrs):
        node_id = self.new_id()
        self.lines.append(f"{pad}{node_id} [{', '.join(f'{k}={v}' for k, v in attrs.items())}];")
        return node_id

    def graph(self, graph, pad, fed_by=()):
        """Writes `graph`'s nodes and edges at indentation `pad` (clusters for nested graphs);
        `fed_by` are the enclosing op's input tensors that `graph.inputs` take, aligned at the end."""
        inputs = {id(t.op): i for i, t in enumerate(graph.inputs)}
        offset = len(fed_by) - len(graph.inputs)
        for op in graph.operations:
            i = inputs.get(id(op))
            outer = fed_by[offset + i] if i is not None and 0 <= offset + i < len(fed_by) else None
            attrs = self.op_attrs(graph, op, i, outer)
            self.ids[id(op)] = self.node(pad, attrs)
        for op in graph.operations:
            target = self.ids[id(op)]
            for t in op.inputs:
                source = self.ids.get(id(t.op))
                if source is None:  # produced outside this graph: not drawable here
                    continue
                self.lines.append(f"{pad}{source} -> {target} [label={_edge_text(t)}];")
            for c in op.control_inputs:
                if id(c) in self.ids:
                    self.lines.append(f"{pad}{self.ids[id(c)]} -> {target} "
                                      f"[style=dashed, color=gray40, arrowhead=odot];")
        for i, t in enumerate(graph.outputs):
            out = self.node(pad, {"label": _label(f"output {i}"), "shape": "cds",
                                  "fillcolor": _quote(_STYLE["output"])})
            if id(t.op) in self.ids:
                self.lines.append(f"{pad}{self.ids[id(t.op)]} -> {out} [label={_edge_text(t)}];")
        for op in graph.operations:
            for key, sub in op.attrs.items():
                if isinstance(sub, Graph):
                    self.cluster(op, key, sub, pad)

    def op_attrs(self, graph, op, input_index, outer):
        lines = [op.type, op.name if op.name != op.type else ""]
        shape, fill = "box", _STYLE["op"]
        if op.type == "Placeholder":
            role = f"input {input_index}" if input_index is not None else ""
            capture = None if outer is not None else _capture_text(graph, op)
            if outer is not None:
                role += f" = {outer.name}"
            shape, fill = "ellipse", _STYLE["capture" if capture else "input"]
            lines = [op.name, capture or role, _spec_text(op.outputs[0])]
        elif op.type == "Const":
            fill = _STYLE["const"]
            lines.append(_const_text(op))
        elif op.type in ("FusedElementwise", "FusedReduction"):
            steps = [step[0] for step in op.attrs.get("program", ())] + \
                [reduce[0] for reduce in [op.attrs.get("reduce")] if reduce]
            lines.append(" ".join(steps[:6]) + (" ..." if len(steps) > 6 else ""))
        elif any(isinstance(v, Graph) for v in op.attrs.values()):
            fill = _STYLE["control_flow"]
        if op.stateful and op.type != "Placeholder":
            fill = _STYLE["stateful"]
        attrs = {"label": _label(*lines), "shape": shape, "fillcolor": _quote(fill)}
        if op.location:
            attrs["tooltip"] = _quote(op.location)
        return attrs

    def cluster(self, op, key, sub, pad):
        self.clusters += 1
        name = f"cluster_{self.clusters - 1}"
        self.lines.append(f"{pad}subgraph {name} {{")
        inner = pad + "  "
        self.lines.append(f"{inner}label={_quote(f'{op.name}: {key}')};")
        self.lines.append(f'{inner}style="rounded,dashed"; color=gray50;')
        self.graph(sub, inner, op.inputs)
        entry = self.ids[id(sub.operations[0])] if sub.operations else None
        if entry is None:  # an empty graph still needs a node for the edge to point at
            entry = self.node(inner, {"shape": "point", "style": "invis"})
        self.lines.append(f"{pad}}}")
        self.lines.append(f"{pad}{self.ids[id(op)]} -> {entry} [lhead={name}, style=dotted, "
                          f"color=gray50, label={_quote(key)}];")


def to_dot(graph):
    """Returns Graphviz DOT text drawing `graph` (ops, tensors' shapes and dtypes, If/While graphs).

    Args:
        graph: a `Graph` (e.g. `concrete_function.graph`).

    Returns:
        The DOT source as a string; render it with the `dot` program
        (`dot -Tsvg graph.dot -o graph.svg`) or `tl.utils.plot_graph`.

    Raises:
        TypeError: if `graph` is not a Graph.

    Example:
        >>> f = tl.function(lambda x: tl.tanh(x) * 2.0)
        >>> text = f.get_concrete_function(tl.constant([1.0])).graph.to_dot()
        >>> text.splitlines()[0]
        'digraph "<lambda>" {'
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"to_dot expects a Graph (e.g. concrete_function.graph), got "
                        f"{type(graph).__name__}")
    writer = _Writer()
    writer.lines = [
        f"digraph {_quote(graph.name)} {{",
        "  compound=true; rankdir=TB; newrank=true;",
        f"  label={_quote(graph.name)}; labelloc=t; fontname=Helvetica;",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10];',
        "  edge [fontname=Helvetica, fontsize=8, color=gray30];",
    ]
    writer.graph(graph, "  ")
    writer.lines.append("}")
    return "\n".join(writer.lines) + "\n"


def _graph_to_dot(self):
    """Graphviz DOT text of this graph (see `trainlib.graph.visualize.to_dot`)."""
    return to_dot(self)


Graph.to_dot = _graph_to_dot  # installed from here: the IR does not import its readers


def render_dot(text, path, caller, default_format="png"):
    """Writes DOT `text` to `path`, as a picture when its extension asks for one.

    Args:
        text: DOT source.
        path: the file; `.dot`/`.gv` get the text itself, any other extension (`.png`, `.svg`,
            `.pdf`...) the picture Graphviz renders; none: `default_format`.
        caller: the public function's name, for error messages.

    Returns:
        The path written, as a `pathlib.Path`.

    Raises:
        ImportError: neither the `graphviz` nor the `pydot` package is installed, or the
            Graphviz `dot` program is not on PATH (the message says what to install).
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".") or default_format
    if fmt in TEXT_FORMATS:
        path.write_text(text)
        return path
    if importlib.util.find_spec("graphviz") is not None:
        import graphviz  # noqa: PLC0415 -- optional dependency
        try:
            image = graphviz.Source(text).pipe(format=fmt)
        except graphviz.ExecutableNotFound:
            image = None
    elif importlib.util.find_spec("pydot") is not None:
        import pydot  # noqa: PLC0415 -- optional dependency
        try:
            image = pydot.graph_from_dot_data(text)[0].create(format=fmt)
        except (OSError, pydot.PydotException if hasattr(pydot, "PydotException") else OSError):
            image = None
    else:
        raise ImportError(f"{caller} needs the graphviz (or pydot) Python package to write "
                          f"{fmt.upper()}, and neither is installed: {_INSTALL}. Or write the "
                          f"DOT text: {caller}(..., 'graph.dot').")
    if image is None:
        raise ImportError(f"{caller} needs the Graphviz `dot` program to write {fmt.upper()}, "
                          f"which was not found on PATH: {_INSTALL}.")
    path.write_bytes(image)
    return path
