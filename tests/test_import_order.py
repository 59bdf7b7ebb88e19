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
    "trainlib.graph.scopes": "dtypes",
    "trainlib.graph.optimizer_config": "dtypes", "trainlib.graph.threads": "dtypes",
    "trainlib.graph.properties": "dtypes", "trainlib.graph.allocator": "dtypes",
    "trainlib.graph.example_proto": "dtypes",
    "trainlib.graph.backend": "backend",
    "trainlib.graph.tensor": "tensor",
    "trainlib.graph.op": "op", "trainlib.graph.ops": "op", "trainlib.graph.variables": "op",
    "trainlib.graph.autodiff": "op", "trainlib.graph.exec.interpret": "op",
    "trainlib.graph.exec.emit": "dtypes", "trainlib.graph.passes.memory": "dtypes",
    "trainlib.graph.exec": "ir", "trainlib.graph.ops.fused": "ir",
    "trainlib.graph.ir": "ir", "trainlib.graph.visualize": "ir", "trainlib.graph.passes": "ir",
    "trainlib.graph.tracing": "tracing", "trainlib.graph.calls": "tracing",
    "trainlib.graph.serialization": "tracing", "trainlib.graph.trace_key": "tracing",
    "trainlib.graph.ops.control_flow": "tracing", "trainlib.graph.ops.case": "tracing",
    "trainlib.graph.ops.functional_ops": "tracing",   # map_fn/scan/foldl are While loops
    "trainlib.graph.function": "function",
    "trainlib.graph.autograph": "autograph", "trainlib.graph.ops.operators": "op",
    "trainlib.graph.profiler": "function", "trainlib.graph.xplane": "dtypes",
}

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
    found = [sorted(c) for c in circles()]
    assert not found, f"import circles: {found}"


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


def _defined_names(module):
    """Names a module binds itself at top level (defs, classes, assignments), not imports."""
    names = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def test_names_are_imported_from_where_they_live():
    """`from trainlib.x import name` names the module that defines `name`, not one that only
    re-exports it (packages' __init__ modules and trainlib.keras, which only gather, excepted)."""
    defined, wrong = {}, []
    for m, path in MODULES.items():
        if m.startswith("trainlib.keras") or path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parts = m.split(".")[:-1]
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([base] if base else []))
            if base not in MODULES or MODULES[base].name == "__init__.py":
                continue
            if base not in defined:
                defined[base] = _defined_names(base)
            wrong += [f"{m}:{node.lineno} imports {a.name} from {base}" for a in node.names
                      if a.name != "*" and f"{base}.{a.name}" not in MODULES
                      and a.name not in defined[base]]
    assert not wrong, "\n".join(wrong)
