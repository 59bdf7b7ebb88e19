"""Graph drawing: `Graph.to_dot()` (trainlib/graph/visualize.py) and `tl.utils.plot_graph`.

The DOT text is checked structurally (one node per op, one labelled edge per
input, dashed control edges, clusters for If/While graphs, nested as the ops
are, inputs and outputs marked, names escaped); rendering runs the real
Graphviz when it is installed and is otherwise checked for its error message.
"""
import importlib.machinery
import importlib.util
import re
import shutil
import sys
import types

import pytest

import trainlib as tl
from trainlib.graph.ir import Graph

QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
HAS_GRAPHVIZ = shutil.which("dot") is not None and \
    importlib.util.find_spec("graphviz") is not None


def all_ops(graph):
    for op in graph.operations:
        yield op
        for value in op.attrs.values():
            if isinstance(value, Graph):
                yield from all_ops(value)


def nodes(dot):
    """{node id: attribute text} for every node statement."""
    return dict(re.findall(r"^\s*(n\d+) \[(.*)\];$", dot, flags=re.M))


def edges(dot):
    """[(source, target, attribute text)] for every edge statement."""
    return re.findall(r"^\s*(n\d+) -> (n\d+) \[(.*)\];$", dot, flags=re.M)


def unquote(text):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[1:-1])


def label(attrs):
    return unquote(QUOTED.search(attrs.split("label=", 1)[1]).group(0))


def concrete(fn, *args):
    return tl.function(fn).get_concrete_function(*args)


def test_plain_graph_nodes_edges_inputs_outputs():
    def f(x, y):
        return tl.tanh(tl.matmul(x, y)) + 1.0, tl.reduce_sum(x)

    graph = concrete(f, tl.ones([2, 3]), tl.ones([3, 4])).graph
    dot = graph.to_dot()
    assert dot.startswith('digraph "f" {') and dot.rstrip().endswith("}")
    found = nodes(dot)
    ops = graph.get_operations()
    labels = [label(a) for a in found.values()]
    assert len(found) == len(ops) + len(graph.outputs)
    for op in ops:
        assert any(lbl.startswith(op.type) or lbl.startswith(op.name) for lbl in labels), op
    assert "x\ninput 0\n(2, 3) float32" in labels and "y\ninput 1\n(3, 4) float32" in labels
    assert "output 0" in labels and "output 1" in labels
    data_edges = [e for e in edges(dot) if "dashed" not in e[2]]
    assert len(data_edges) == sum(len(op.inputs) for op in ops) + len(graph.outputs)
    edge_labels = {label(e[2]) for e in data_edges}
    assert {"(2, 3) float32", "(3, 4) float32", "(2, 4) float32", "() float32"} <= edge_labels
    placeholder_ids = [i for i, a in found.items() if "ellipse" in a]
    assert len(placeholder_ids) == 2
    assert "subgraph" not in dot


def test_control_edges_are_dashed_and_variables_are_named():
    v = tl.Variable(1.0, name="counter")

    def f(x):
        v.assign_add(x)
        v.assign_add(x)
        return v.read_value()

    graph = concrete(f, tl.constant(2.0)).graph
    dot = graph.to_dot()
    control = [e for e in edges(dot) if "style=dashed" in e[2]]
    assert len(control) == sum(len(op.control_inputs) for op in graph.operations) >= 1
    labels = [label(a) for a in nodes(dot).values()]
    assert any("variable counter" in lbl for lbl in labels)
    assert any(lbl.startswith("AssignAddVariableOp") for lbl in labels)


def test_captured_eager_tensor_is_marked():
    c = tl.constant([1.0, 2.0])
    labels = [label(a) for a in nodes(concrete(lambda x: x * c, tl.ones([2])).graph.to_dot()).values()]
    assert "capture\ncaptured tensor\n(2,) float32" in labels


def test_if_and_while_graphs_are_nested_clusters():
    def f(x, n):
        s = tl.constant(0.0)
        i = tl.constant(0)
        while i < n:
            if tl.reduce_sum(x) > 0:
                s += tl.reduce_sum(x)
            else:
                s -= 1.0
            i += 1
        return s

    graph = concrete(f, tl.ones([2]), tl.constant(3)).graph
    dot = graph.to_dot()
    cluster_labels = re.findall(r"subgraph (cluster_\d+) \{\n\s*label=(\"[^\n]*\");", dot)
    titles = [unquote(t) for _, t in cluster_labels]
    assert sorted(t.split(": ")[1] for t in titles) == ["body", "cond", "else_branch", "then_branch"]
    # the If clusters sit inside the While body's cluster: track brace depth per cluster
    depth, depths = 0, {}
    for line in dot.splitlines():
        m = re.match(r"\s*subgraph (cluster_\d+) \{", line)
        if m:
            depth += 1
            depths[m.group(1)] = depth
        elif line.strip() == "}":
            depth -= 1
    by_title = {unquote(t).split(": ")[1]: depths[c] for c, t in cluster_labels}
    assert by_title == {"cond": 1, "body": 1, "then_branch": 2, "else_branch": 2}
    # every op of every graph is drawn once, and each cluster is joined to its op
    assert len(nodes(dot)) == sum(1 for _ in all_ops(graph)) + 1 + 1 + 2 + 1 + 1
    joins = [e for e in edges(dot) if "lhead=" in e[2]]
    assert sorted(label(e[2]) for e in joins) == ["body", "cond", "else_branch", "then_branch"]
    assert "compound=true" in dot
    # branch inputs say which outer tensor feeds them
    assert any(re.search(r"input \d+ = \S+:\d", label(a)) for a in nodes(dot).values())


def test_names_are_escaped():
    name = 'we"ird\\name\nx {a}'
    v = tl.Variable(tl.ones([2]), name=name)

    def f(x):
        return x * v

    f.__name__ = 'quote"fn\\'
    dot = concrete(f, tl.ones([2])).graph.to_dot()
    stripped = QUOTED.sub("S", dot)
    assert '"' not in stripped and "\\" not in stripped
    assert stripped.count("{") == stripped.count("}")
    assert dot.splitlines()[0] == 'digraph "quote\\"fn\\\\" {'
    labels = [label(a) for a in nodes(dot).values()]
    assert any(name in lbl for lbl in labels)


def test_fused_ops_list_their_steps_and_to_dot_rejects_non_graphs():
    def f(x):
        return tl.tanh(x * 2.0 + 1.0) * tl.sigmoid(x)

    dot = tl.function(f, jit_compile=True).get_concrete_function(tl.ones([8])).optimized_graph.to_dot()
    if "FusedElementwise" in dot:
        assert re.search(r"FusedElementwise\\n.*Tanh", dot)
    from trainlib.graph.visualize import to_dot
    with pytest.raises(TypeError, match="Graph"):
        to_dot("not a graph")


# -- plot_graph

def traced():
    @tl.function
    def step(x):
        return tl.square(x) + 1.0

    step(tl.ones([3]))
    return step


def test_plot_graph_accepts_function_concrete_graph_and_writes_dot(tmp_path):
    step = traced()
    concrete_fn = step.get_concrete_function(tl.ones([3]))
    for i, what in enumerate((step, concrete_fn, concrete_fn.graph)):
        path = tl.utils.plot_graph(what, tmp_path / f"g{i}.dot")
        assert path.read_text() == concrete_fn.graph.to_dot()


def test_plot_graph_misuse():
    step = traced()
    with pytest.raises(ValueError, match=r"\.svg"):
        tl.utils.plot_graph(step, "graph.jpeg")
    with pytest.raises(TypeError, match="Function"):
        tl.utils.plot_graph(42, "graph.svg")
    step(tl.ones([4]))  # a second trace: which one to draw is ambiguous
    with pytest.raises(ValueError, match="2 traced concrete functions.*get_concrete_function"):
        tl.utils.plot_graph(step, "graph.dot")
    with pytest.raises(ValueError, match="not been traced"):
        tl.utils.plot_graph(tl.function(lambda x: x), "graph.dot")


def test_plot_graph_without_the_graphviz_package_says_what_to_install(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "graphviz" else real(name, *a))
    with pytest.raises(ImportError) as e:
        tl.utils.plot_graph(traced(), tmp_path / "g.svg")
    assert "pip install graphviz" in str(e.value) and "apt-get install graphviz" in str(e.value)
    assert not (tmp_path / "g.svg").exists()


def test_plot_graph_without_the_dot_program_says_what_to_install(monkeypatch, tmp_path):
    fake = types.ModuleType("graphviz")
    fake.__spec__ = importlib.machinery.ModuleSpec("graphviz", None)

    class ExecutableNotFound(RuntimeError):
        pass

    class Source:
        def __init__(self, text):
            pass

        def pipe(self, format):  # noqa: A002 -- graphviz's argument name
            raise ExecutableNotFound("failed to execute 'dot'")

    fake.ExecutableNotFound, fake.Source = ExecutableNotFound, Source
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    with pytest.raises(ImportError, match="`dot` program.*apt-get install graphviz"):
        tl.utils.plot_graph(traced(), tmp_path / "g.png")


@pytest.mark.skipif(not HAS_GRAPHVIZ, reason="needs the graphviz package and the dot program")
@pytest.mark.parametrize("suffix,magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_plot_graph_renders(tmp_path, suffix, magic):
    def f(x):
        if tl.reduce_sum(x) > 0:
            x = x * 2.0
        return x

    path = tl.utils.plot_graph(concrete(f, tl.ones([2])), tmp_path / f"graph{suffix}")
    data = path.read_bytes()
    assert magic in data[:400] and len(data) > 1000
    if suffix == ".svg":
        assert b"then_branch" in data and b"(2,) float32" in data
