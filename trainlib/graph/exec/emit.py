"""Generated Python source: identifiers, the emitter, and running a source with linecache.

Owns: turning any text (a Variable's or an op's name, from the user or from a file) into
an identifier of generated code, the emitter that collects a function's lines and the
values it binds as closure variables, and `exec_source`, which compiles a source under a
unique `<trainlib-...>` file name registered with `linecache` (so tracebacks, pdb and
`inspect` show it).
Invariants: every identifier is ASCII (so Python's NFKC folding of identifiers is the
identity on it), is no keyword and shadows no builtin, and a Namespace never hands out
one twice; each helper value is bound once per emitter, under one name.
"""
import builtins
import itertools
import keyword
import linecache
import weakref
import re
import unicodedata

_counter = itertools.count()

RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


def identifier(text, default="t"):
    """A lower-case ASCII identifier from any text: decomposed as Python's NFKC folding of
    names does (`ﬁ` is `fi`, `x²` is `x2`), accents dropped (`é` is `e`), other letters by
    their Unicode name (`σ` is `sigma`), anything else `_`; never starts with a digit."""
    parts = []
    for ch in unicodedata.normalize("NFKD", str(text)):
        if ch.isascii():
            parts.append(ch)
        elif not unicodedata.combining(ch):
            word = unicodedata.name(ch, "").rsplit(" ", 1)[-1]
            parts.append(f"_{word}_" if ch.isalpha() and word.isalpha() else "_")
    text = re.sub(r"[^0-9A-Za-z]+", "_", "".join(parts)).strip("_").lower()
    if not text:
        text = default
    if text[0].isdigit():
        text = f"{default}_{text}"
    return text


def snake_case(name):
    """`"BiasAdd"` -> `"bias_add"`, `"AddV2"` -> `"add_v2"` (an op type as a Python name)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class Namespace:
    """The names of one generated function: each `fresh` name is new, a valid ASCII
    identifier, and neither a keyword nor a builtin (`sum` becomes `sum_value`)."""

    def __init__(self, taken=()):
        self.used = set(taken)

    def fresh(self, base):
        base = identifier(base)
        if base in RESERVED:
            base += "_value"
        name, n = base, 1
        while name in self.used:
            name = f"{base}_{n}"
            n += 1
        self.used.add(name)
        return name


def exec_source(source, label):
    """Compiles and runs `source` (module-level code) under a unique file name registered
    with linecache; returns (its namespace, the file name)."""
    filename = f"<trainlib-{label}-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 -- our own generated code
    return namespace, filename


class Emitter:
    """The lines of one generated function and the values its code refers to.

    Values (kernels, xp functions, constants, attrs) are bound once each as closure
    variables of a factory function, so the generated code does no look-ups at run time.
    `line_ops` maps a line of the function (its `def` is line 1) to the Operation it runs.
    """

    def __init__(self, names=None):
        self.names = names or Namespace()
        self.lines = []
        self.line_ops = {}
        self.consts = {}   # closure name -> value
        self._bound = {}   # key -> closure name (one binding per helper)

    def fresh(self, base):
        return self.names.fresh(base)

    def bind(self, base, value, key=None):
        """A closure name for `value`; with a `key`, the same name for the same key."""
        if key is not None:
            name = self._bound.get(key)
            if name is not None:
                return name
        name = self.names.fresh(base)
        self.consts[name] = value
        if key is not None:
            self._bound[key] = name
        return name

    def emit(self, indent, text, op=None):
        self.lines.append("    " * indent + text)
        if op is not None:
            self.line_ops[len(self.lines) + 1] = op  # +1: the def line comes first

    def compile(self, fname, params, label=None):
        """Builds `def fname(*params)` over the emitted lines; returns (function, its source,
        the file name it is registered under, {line in that file: op})."""
        body = f"def {fname}({', '.join(params)}):\n" + "\n".join(self.lines) + "\n"
        closure = sorted(self.consts)
        source = (f"def make({', '.join(closure)}):\n"
                  + "".join("    " + line + "\n" for line in body.splitlines())
                  + f"    return {fname}\n")
        namespace, filename = exec_source(source, label or fname)
        fn = namespace["make"](*[self.consts[c] for c in closure])
        # the source stays in linecache (tracebacks, pdb) while the function lives, no longer
        weakref.finalize(fn, linecache.cache.pop, filename, None)
        # `make` adds one line before the function's def line
        line_ops = {line + 1: op for line, op in self.line_ops.items()}
        return fn, body, filename, line_ops
