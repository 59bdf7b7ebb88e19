"""Python-code tools for AutoGraph: parsing, templates, names, scope analysis, locations.

Owns: everything the converters share about source code: `parse_entity`
(source -> gast tree + where it came from), `template` (code text with
placeholders -> gast statements), `Namer` (fresh names that never clash with
the user's), `modified_names` / `assigned_in_all_paths` (which variables a
block writes), `lower_jumps` / `lower_loop_jumps` (break, continue and return as flags), and
`set_location` (generated nodes take the user's line).
Invariants: generated nodes always carry the line of the user statement they
replace, so compiled converted code reports the user's file and lines.
"""
import copy
import inspect
import textwrap

import gast

LOCATION_ATTRS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class ConversionError(ValueError):
    """Source that AutoGraph cannot convert (try/except, yield, global...), with the user's line."""


class SourceUnavailableError(ConversionError):
    """The source of a function cannot be read, parsed or told apart (a lambda among others
    on its line): AutoGraph runs such a function as it is, with a warning."""


class Context:
    """What one conversion shares across converters: names, the user's file, generated helpers."""

    def __init__(self, namer, filename, line_offset, entity_name):
        self.namer = namer
        self.filename = filename
        self.line_offset = line_offset   # added to tree line numbers to get file line numbers
        self.entity_name = entity_name
        self.generated = set()           # names of generated helper functions (never state)
        self.state_getters = set()       # generated get_state functions (read raw values)

    def where(self, node):
        """`file:line` of `node` in the user's file."""
        return f"{self.filename}:{getattr(node, 'lineno', 1) + self.line_offset}"

    def error(self, node, message):
        return ConversionError(f"{message} (at {self.where(node)}, in {self.entity_name})")


class Converter(gast.NodeTransformer):
    """Base of every converter: class bodies stay Python; a `for`'s `extra_test` is visited too."""

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_ClassDef(self, node):
        return node

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if isinstance(node, gast.For) and getattr(node, "extra_test", None) is not None:
            node.extra_test = self.visit(node.extra_test)
        return node

    def visit_block(self, stmts):
        """Visits a statement list, splicing converters' list results."""
        out = []
        for s in stmts:
            r = self.visit(s)
            if r is None:
                continue
            out.extend(r if isinstance(r, list) else [r])
        return out


# ----------------------------------------------------------------- parsing

def parse_entity(fn):
    """(gast node of `fn`'s def or lambda, source text, filename, line offset).

    Raises ConversionError when the source is not available or not parseable.
    """
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as e:
        raise SourceUnavailableError(f"cannot read the source of {fn.__qualname__}: {e}") from None
    source = textwrap.dedent("".join(lines))
    offset = first - 1
    if fn.__name__ != "<lambda>":
        tree = gast.parse(source)
        node = tree.body[0]
        if not isinstance(node, gast.FunctionDef):
            raise ConversionError(f"cannot find the def of {fn.__qualname__} in its source")
        return node, source, filename, offset
    dedented = len(lines[0]) - len(source.splitlines(True)[0]) if source else 0
    return _parse_lambda(fn, source, filename, offset, dedented)


def _parse_lambda(fn, source, filename, offset, dedented=0):
    tree = None
    indent = len(source) - len(source.lstrip()) + dedented
    # (text, how many columns line 1 moved left of the file's columns)
    for text, moved in ((source, dedented), (source.strip().rstrip(",;"), indent),
                        ("(" + source.strip().rstrip(",;") + ")", indent - 1)):
        try:
            tree = gast.parse(text)
            source = text
            break
        except SyntaxError:
            continue
    if tree is None:
        raise SourceUnavailableError(f"cannot parse the source of lambda at {filename}:{offset + 1}")
    code = fn.__code__
    argnames = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    line = code.co_firstlineno - offset
    found = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda) and n.lineno == line
             and [a.id for a in n.args.args + n.args.kwonlyargs] == argnames]
    if len(found) > 1:  # several lambdas on one line: the one whose columns hold the code
        found = [n for n in found if _same_place(n, code, moved if line == 1 else 0)] or \
            [n for n in found if _same_code(n, code)]
    if len(found) != 1:
        raise SourceUnavailableError(f"cannot tell which lambda at {filename}:{code.co_firstlineno} to convert")
    return found[0], source, filename, offset


def _same_place(node, code, moved):
    """True if the lambda's instructions lie within `node`'s body columns (file columns)."""
    body = node.body
    start, end = body.col_offset + moved, body.end_col_offset + moved
    if not hasattr(code, "co_positions"):  # Python 3.10 keeps no columns: compare bytecode
        return False
    cols = [(c, e) for ln, _, c, e in code.co_positions()
            if ln == code.co_firstlineno and c is not None and e is not None and e > c
            and body.lineno == body.end_lineno]  # (0, 0) spans are the frame's set-up
    return bool(cols) and all(start <= c and e <= end for c, e in cols)


def _same_code(node, code):
    try:
        compiled = compile("(" + gast.unparse(node) + ")", "<lambda>", "eval")
    except SyntaxError:
        return False
    inner = next((c for c in compiled.co_consts if hasattr(c, "co_code")), None)
    return inner is not None and inner.co_code == code.co_code and inner.co_names == code.co_names \
        and inner.co_consts == code.co_consts


# ----------------------------------------------------------------- templates

def template(src, **subs):
    """Parses `src` and replaces placeholder names: an `Expr` statement that is just a
    placeholder takes a statement list; any other use takes an expression node.

    The template's own locations are dropped so that `set_location` gives
    generated code the user's line.
    """
    tree = gast.parse(textwrap.dedent(src))
    for n in gast.walk(tree):
        for a in LOCATION_ATTRS:
            if hasattr(n, a):
                setattr(n, a, None)
    return _Substitute(subs).visit_block(tree.body)


class _Substitute(gast.NodeTransformer):
    def __init__(self, subs):
        self.subs = subs

    def visit_block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def generic_visit(self, node):
        # each template node is visited once; substituted user code is never entered
        for field, old in gast.iter_fields(node):
            if isinstance(old, list):
                if old and isinstance(old[0], gast.stmt):
                    new = self.visit_block(old)
                else:
                    new = [self.visit(x) if isinstance(x, gast.AST) else x for x in old]
                setattr(node, field, new)
            elif isinstance(old, gast.AST):
                setattr(node, field, self.visit(old))
        return node

    def visit_Expr(self, node):
        if isinstance(node.value, gast.Name) and node.value.id in self.subs:
            value = self.subs[node.value.id]
            if isinstance(value, list):
                return value
        return self.generic_visit(node)

    def visit_Name(self, node):
        value = self.subs.get(node.id)
        if value is None or isinstance(value, list):
            return node
        return value


def name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def names_tuple(ids, store=False):
    """`(a, b)` as a tuple expression (Load or Store)."""
    return gast.Tuple(elts=[name(i, store) for i in ids], ctx=gast.Store() if store else gast.Load())


def constant(value):
    return gast.Constant(value=value, kind=None)


def strings_tuple(ids):
    return gast.Tuple(elts=[constant(i) for i in ids], ctx=gast.Load())


def set_location(nodes, reference):
    """Gives every node in `nodes` without a line the line of `reference` (a node or int)."""
    line = reference if isinstance(reference, int) else getattr(reference, "lineno", None)
    if line is None:
        return nodes
    for root in nodes if isinstance(nodes, list) else [nodes]:
        for n in gast.walk(root):
            if "lineno" in getattr(n, "_attributes", ()) and getattr(n, "lineno", None) is None:
                n.lineno = n.end_lineno = line
                n.col_offset = n.end_col_offset = 0
    return nodes


def source_of(node):
    """The (unparsed) source text of an expression node, for messages."""
    try:
        return gast.unparse(node).strip()
    except Exception:  # a partly built node: messages just lose the text
        return "<expression>"


# ----------------------------------------------------------------- names

class Namer:
    """Fresh names: `new("if_body")` never clashes with a name the user wrote."""

    def __init__(self, tree):
        self.used = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        self.used |= {n.name for n in gast.walk(tree) if isinstance(n, gast.FunctionDef)}

    def new(self, base):
        candidate, i = base, 0
        while candidate in self.used:
            i += 1
            candidate = f"{base}_{i}"
        self.used.add(candidate)
        return candidate


# ----------------------------------------------------------------- scope analysis

_SCOPES = (gast.Lambda, gast.ClassDef, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def walk_scope(nodes):
    """Nodes of `nodes` in the same function scope: nested defs, lambdas, classes
    and comprehensions are yielded but not entered."""
    stack = list(reversed(nodes if isinstance(nodes, list) else [nodes]))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (gast.FunctionDef,) + _SCOPES):
            continue
        children = list(gast.iter_child_nodes(n))
        if isinstance(n, gast.For) and getattr(n, "extra_test", None) is not None:
            children.append(n.extra_test)
        stack.extend(reversed(children))


def _target_names(target):
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, (gast.Tuple, gast.List)):
        return [x for e in target.elts for x in _target_names(e)]
    if isinstance(target, gast.Starred):
        return _target_names(target.value)
    return []  # attribute / subscript stores do not rebind a variable


def modified_names(stmts, generated=frozenset()):
    """Variables that `stmts` (re)bind in their own scope, plus those that the
    generated helper functions inside them rebind through `nonlocal`."""
    out = set()
    for n in walk_scope(stmts):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.ClassDef)):
            if n.name in generated:
                for m in gast.walk(n):
                    if isinstance(m, gast.Nonlocal):
                        out.update(m.names)
            else:
                out.add(n.name)
        elif isinstance(n, (gast.Import, gast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
    return out - set(generated)


def assigned_in_all_paths(stmts):
    """Variables that `stmts` bind on every path (loops may run zero times)."""
    out = set()
    for s in stmts:
        if isinstance(s, (gast.Assign, gast.AnnAssign, gast.AugAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            for t in targets:
                out.update(_target_names(t))
        elif isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            out.add(s.name)
        elif isinstance(s, (gast.Import, gast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in s.names)
        elif isinstance(s, gast.If):
            out |= assigned_in_all_paths(s.body) & assigned_in_all_paths(s.orelse)
        elif isinstance(s, gast.With):
            for item in s.items:
                if item.optional_vars is not None:
                    out.update(_target_names(item.optional_vars))
            out |= assigned_in_all_paths(s.body)
    return out


def contains(stmts, types, stop=(gast.FunctionDef,) + _SCOPES):
    """True if a node of `types` is in `stmts`, not looking inside `stop` nodes."""
    stack = list(stmts if isinstance(stmts, list) else [stmts])
    while stack:
        n = stack.pop()
        if isinstance(n, types):
            return True
        if isinstance(n, stop):
            continue
        stack.extend(gast.iter_child_nodes(n))
    return False


def deepcopy(node):
    return copy.deepcopy(node)


# ----------------------------------------------------------------- jumps

def lower_jumps(stmts, is_jump, on_jump, may_jump, convert_compound, guard):
    """Rewrites a block without jump statements (break/continue/return).

    A jump becomes `on_jump(stmt)` (setting a flag) and ends the block; a
    compound statement that `may_jump` is rewritten by `convert_compound`, and
    the statements after it run under `guard(rest)` (`if not flag: rest`).
    """
    out = []
    for i, s in enumerate(stmts):
        if is_jump(s):
            out.extend(set_location(on_jump(s), s))
            return out
        if may_jump(s):
            out.extend(convert_compound(s))
            rest = stmts[i + 1:]
            if rest:
                lowered = lower_jumps(rest, is_jump, on_jump, may_jump, convert_compound, guard)
                out.extend(set_location(guard(lowered), s))
            return out
        out.append(s)
    return out


_LOOPS_AND_SCOPES = (gast.While, gast.For, gast.FunctionDef, gast.Lambda, gast.ClassDef)


def has_loop_jump(stmts, jump):
    """True if `stmts` hold a `jump` (gast.Break or gast.Continue) of their own loop, not
    one inside a nested loop or function."""
    return contains(stmts, jump, stop=_LOOPS_AND_SCOPES)


def lower_loop_jumps(stmts, jump, flag):
    """A loop body's `stmts` without their `jump` statements (gast.Break or gast.Continue):
    each sets `flag` instead, and what follows runs under `if not flag:` (inside if and with
    blocks too)."""
    def convert(s):
        s.body = lower_loop_jumps(s.body, jump, flag) or [gast.Pass()]
        if isinstance(s, gast.If):
            s.orelse = lower_loop_jumps(s.orelse, jump, flag)
        return [s]

    return lower_jumps(
        stmts,
        is_jump=lambda s: isinstance(s, jump),
        on_jump=lambda s: template(f"{flag} = True"),
        may_jump=lambda s: isinstance(s, (gast.If, gast.With)) and has_loop_jump([s], jump),
        convert_compound=convert,
        guard=lambda rest: template(f"if not {flag}:\n    body_", body_=rest))


def and_not(flag, test):
    """`not flag and test` (or just `not flag` when test is None)."""
    negated = gast.UnaryOp(op=gast.Not(), operand=name(flag))
    if test is None:
        return negated
    return gast.BoolOp(op=gast.And(), values=[negated, test])
