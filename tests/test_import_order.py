"""The package's imports point one way (read from the source with ast; nothing is imported).

Layers, lowest first: dtypes < backend < tensor < op < ir < tracing < function < autograph <
the Keras level. A module may import its own layer or lower ones, never a higher one, and no
set of modules may import each other in a circle (function-local imports count: a deferred
import is still a dependency). The engine (`trainlib.graph`) never imports the Keras level,
and no module inside the package imports the package face (`import trainlib`).
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "trainlib"

LAYERS = ["dtypes", "backend", "tensor", "op", "ir", "tracing", "function", "autograph", "keras"]
# the engine's modules by layer (a prefix names a package and everything below it; the
# longest matching prefix wins); every module outside trainlib.graph is at the Keras level
ENGINE = {
    "trainlib.graph.dtypes": "dtypes", "trainlib.graph.errors": "dtypes",
    "trainlib.graph.nest": "dtypes", "trainlib.graph.context": "dtypes",
    "trainlib.graph.optimizer_config": "dtypes", "trainlib.graph.threads": "dtypes",
    "trainlib.graph.backend": "backend",
    "trainlib.graph.tensor": "tensor",
    "trainlib.graph.op": "op", "trainlib.graph.ops": "op", "trainlib.graph.variables": "op",
    "trainlib.graph.autodiff": "op", "trainlib.graph.exec.interpret": "op",
    "trainlib.graph.exec.emit": "dtypes", "trainlib.graph.passes.memory": "dtypes",
    "trainlib.graph.exec": "ir", "trainlib.graph.ops.fused": "ir",
    "trainlib.graph.ir": "ir", "trainlib.graph.visualize": "ir", "trainlib.graph.passes": "ir",
    "trainlib.graph.tracing": "tracing", "trainlib.graph.calls": "tracing",
    "trainlib.graph.serialization": "tracing", "trainlib.graph.trace_key": "tracing",
    "trainlib.graph.ops.control_flow": "tracing",
    "trainlib.graph.ops.functional_ops": "tracing",   # map_fn/scan/foldl are While loops
    "trainlib.graph.function": "function",
    "trainlib.graph.autograph": "autograph", "trainlib.graph.ops.operators": "op",
}
# the circles and back-imports still to be removed (issue 17.4): this list may only shrink
KNOWN_CIRCLES = [
    {"trainlib.graph.ops.array", "trainlib.graph.ops.math", "trainlib.graph.ops.nn"},
    {"trainlib.checkpoint", "trainlib.models.sequential", "trainlib.optim.base",
     "trainlib.saving.keras_h5", "trainlib.layers.base", "trainlib.layers.operators", "trainlib.losses", "trainlib.metrics",
     "trainlib.models.functional", "trainlib.models.model", "trainlib.models.saving_keras",
     "trainlib.models.summary", "trainlib.saving.object_registration",
     "trainlib.saving.serialization_lib", "trainlib.trainers.compile_utils",
     "trainlib.trainers.trainer"},
]


def modules():
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


MODULES = modules()


def layer(module):
    if not module.startswith("trainlib.graph"):
        return "keras"
    best = max((p for p in ENGINE if module == p or module.startswith(p + ".")), key=len,
               default=None)
    assert best is not None, f"{module}: give it a layer in ENGINE"
    return ENGINE[best]


def imports(module):
    """(imported module, line) for each trainlib module `module` imports (packages' own
    __init__ modules excluded: importing a submodule runs them, but they only gather)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: None if is_package else -1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t == "trainlib" and module != "trainlib":
                out.append(("trainlib", node.lineno))
            while t not in MODULES and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in MODULES and t != module and MODULES[t].name != "__init__.py":
                out.append((t, node.lineno))
    return out


EDGES = {m: imports(m) for m in MODULES}


def circles():
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in EDGES[v]:
            if w == "trainlib":
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    found = circles()
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert not new, f"import circles: {new}"
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert not gone, f"circles removed: take them off KNOWN_CIRCLES: {gone}"


def test_no_module_imports_the_package_face():
    face = [f"{m}:{line}" for m, edges in EDGES.items() if m != "trainlib"
            and not m.startswith("trainlib.examples") for t, line in edges if t == "trainlib"]
    assert not face, f"`import trainlib` inside the package: {face}"


def test_imports_point_down_the_layers():
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for m, edges in EDGES.items():
        if m == "trainlib" or MODULES[m].name == "__init__.py":
            continue
        for t, line in edges:
            if t != "trainlib" and rank[layer(t)] > rank[layer(m)]:
                wrong.append(f"{m}:{line} ({layer(m)}) imports {t} ({layer(t)})")
    assert not wrong, "imports against the order " + " < ".join(LAYERS) + ":\n" + "\n".join(wrong)


def test_the_checker_sees_a_circle_and_a_back_import(monkeypatch):
    monkeypatch.setitem(EDGES, "trainlib.graph.dtypes", [("trainlib.graph.tensor", 1)])
    assert {"trainlib.graph.dtypes", "trainlib.graph.tensor"} in circles()
    assert layer("trainlib.graph.ops.math") == "op" and layer("trainlib.layers.core") == "keras"
    assert layer("trainlib.graph.ops.control_flow") == "tracing"
