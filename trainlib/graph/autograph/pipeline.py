"""The conversion pipeline: source -> ordered converters -> compiled function, cached.

Owns: `CONVERTERS` (the one ordered list), `convert_entity` (gast tree of a
function or lambda -> converted function object bound to the original's
globals and closure cells), the caches, and the set of code objects it
generated (so converted code is never converted again).
Invariants: converted code is compiled with the user's file name and the
user's line numbers (every generated node takes the line of the statement
it replaces), so tracebacks, `user_location()` and op errors point at the
user's source; each code object is converted once.
"""
import ast
import types
import weakref

import gast

from . import pyct
from .converters import (asserts, break_statements, call_trees, conditional_expressions,
                         continue_statements, control_flow, deletes, directives, lists,
                         logical_expressions, return_statements, unsupported, variables)

# The order matters; each line says why a converter sits where it does.
CONVERTERS = (
    unsupported,              # first: no later converter may see try/yield/async
    deletes,                  # before static analysis (control_flow), which must see `del x` rebind x
    directives,               # loop options must attach to while/for nodes before loops are rewritten
    asserts,                  # before call conversion, so calls inside the assert test are converted
    lists,                    # before call conversion, which would turn l.append(x) into an opaque call
    break_statements,         # moves loop `else` out of loops, so later lowering sees else-free loops
    continue_statements,      # before return: its per-iteration flag is reset at the top of the body
    return_statements,        # after break/continue: adds `not do_return` to tests they already built
    call_trees,               # after every converter that emits user-level calls, before the helpers
    control_flow,             # after all lowering: the break/continue/return flags become state
    conditional_expressions,  # after control flow: tests it moved into helper functions are final
    logical_expressions,      # after control flow, so lowered tests (`not break_ and t`) are converted
    variables,                # last: must see every read of a possibly-undefined variable
)

# held weakly: a user's code object (and what was made from it) goes when the user's function goes
_CODE_CACHE = weakref.WeakKeyDictionary()       # original code object -> (converted code, source)
# original function -> weak reference to its converted twin (whose __wrapped__ is the original: a
# strong value would keep its own key alive for ever)
_FUNCTION_CACHE = weakref.WeakKeyDictionary()
GENERATED_CODES = weakref.WeakSet()             # every code object compiled here, nested ones too


def transform(fn):
    """(converted gast node, context) for `fn`; raises ConversionError."""
    node, source, filename, offset = pyct.parse_entity(fn)
    ctx = pyct.Context(pyct.Namer(node), filename, offset, fn.__qualname__)
    if isinstance(node, gast.FunctionDef):
        node.decorator_list = []  # the decorators (tl.function...) wrap the original, not this
    for converter in CONVERTERS:
        node = converter.transform(node, ctx)
    return node, ctx


def _entity_module(node, freevars):
    """`def ag__factory(ag__, <freevars>): <entity>; return <entity name>` as a gast module."""
    if isinstance(node, gast.Lambda):
        body = [gast.Assign(targets=[pyct.name("lambda_", store=True)], value=node, type_comment=None)]
        result = "lambda_"
    else:
        # compiled under a private name: the user's own name inside the factory would shadow
        # the global it refers to (recursion); the code object gets the user's name back
        node = pyct.deepcopy(node)
        node.name = result = "ag__entity"
        body = [node]
    params = ", ".join(("ag__",) + tuple(freevars))
    # the factory's own nodes get line 1 from _fix_locations; the entity keeps its lines
    stmts = pyct.template(f"def ag__factory({params}):\n    body_\n    return {result}", body_=body)
    return gast.Module(body=stmts, type_ignores=[])


def source_text(node):
    """Readable source of a converted entity (what `to_code` returns)."""
    if isinstance(node, gast.Lambda):
        node = pyct.set_location(gast.Assign(targets=[pyct.name("lambda_", store=True)], value=node,
                                             type_comment=None), node)
    return gast.unparse(node) + "\n"


def _fix_locations(tree):
    """Missing positions take the parent's line; ranges are made valid for compile()."""
    def fix(n, line):
        if "lineno" in n._attributes:
            if getattr(n, "lineno", None) is None:
                n.lineno, n.col_offset = line, 0
            if getattr(n, "end_lineno", None) is None or n.end_lineno < n.lineno:
                n.end_lineno = n.lineno
            if getattr(n, "col_offset", None) is None:
                n.col_offset = 0
            if getattr(n, "end_col_offset", None) is None or \
                    (n.end_lineno == n.lineno and n.end_col_offset < n.col_offset):
                n.end_col_offset = n.col_offset
            line = n.lineno
        for child in ast.iter_child_nodes(n):
            fix(child, line)
    fix(tree, 1)
    return tree


def _compile(fn, node, ctx):
    freevars = fn.__code__.co_freevars
    module = gast.gast_to_ast(_entity_module(node, freevars))
    module = _fix_locations(module)
    ast.increment_lineno(module, ctx.line_offset)
    code = compile(module, ctx.filename, "exec")
    factory = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == "ag__factory")
    name = "<lambda>" if isinstance(node, gast.Lambda) else "ag__entity"
    entity = next(c for c in factory.co_consts if isinstance(c, types.CodeType) and c.co_name == name)
    if name == "ag__entity":
        names = {"co_name": fn.__name__}
        if hasattr(entity, "co_qualname"):  # Python 3.11+
            names["co_qualname"] = fn.__qualname__
        entity = entity.replace(**names)
    _register(entity)
    return entity


def _register(code):
    GENERATED_CODES.add(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _register(c)


def convert_entity(fn, operators):
    """The converted twin of plain function `fn` (same globals, closure, defaults, name)."""
    ref = _FUNCTION_CACHE.get(fn)
    converted = ref() if ref is not None else None
    if converted is not None:
        return converted
    cached = _CODE_CACHE.get(fn.__code__)
    if cached is None:
        node, ctx = transform(fn)
        text = source_text(node)
        cached = (_compile(fn, node, ctx), text)
        _CODE_CACHE[fn.__code__] = cached
    code, _ = cached
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells["ag__"] = types.CellType(operators)
    closure = tuple(cells[n] for n in code.co_freevars)
    converted = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    converted.__kwdefaults__ = fn.__kwdefaults__
    converted.__qualname__ = fn.__qualname__
    converted.__module__ = fn.__module__
    converted.__doc__ = fn.__doc__
    converted.__dict__.update(fn.__dict__)
    converted.__wrapped__ = fn
    converted.ag_source = cached[1]
    _FUNCTION_CACHE[fn] = weakref.ref(converted)
    return converted


def converted_source(fn):
    """The converted source of plain function `fn` (converting it if needed)."""
    cached = _CODE_CACHE.get(fn.__code__)
    if cached is None:
        node, _ = transform(fn)
        return source_text(node)
    return cached[1]
