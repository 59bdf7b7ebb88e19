"""Static analysis of a function's variables for the control-flow converter: liveness and definedness.

Owns: `annotate(fn_node)`, which marks every `if`/`while`/`for` statement of a
function (not those of nested functions: each def is analysed on its own) with
  - `live_in`:  variables whose value at the statement's entry may be read later;
                for a loop, at its head (the start of any iteration);
  - `live_out`: variables whose value after the statement may be read;
  - `state`:    the variables the statement rebinds whose values matter outside one
                run of its body: modified and (live_in or live_out), as TensorFlow's
                control-flow converter computes them. Only these become loop
                variables or branch outputs; the other variables a body binds are
                temporaries local to the generated body function;
  - `outputs`:  for an `if`, the state variables live after it (the others are
                only read and rebound inside the branches);
  - `composites`: the attributes and constant-key items (`self.n`, `d["a"]`) the statement
                assigns whose root variable is live at its entry or after it: as TensorFlow's
                composite symbols, they are state too (carried, never undefined);
  - `defined_before`: (possibly bound, definitely bound) variables at its entry;
  - `kinds`:    for a loop, how the dtypes its Python numbers take follow from the
                dtypes of other values (see _kinds), so the runtime knows them without
                a probe trace of the body;
Rules: reads inside nested defs, classes and lambdas count as live everywhere (they
may run at any later call, and must see the variable Python would show them);
comprehensions read where they are written; names declared `global` or `nonlocal` are
live everywhere (code outside the function sees them) and bound from the start, as
TensorFlow's AutoGraph treats them (a control-flow statement that rebinds one carries it).
Invariant: the analysed code is structured: earlier converters lowered break,
continue and return to flags (a `return` remains only as the last statement; it
and `raise` end a path); try/except is rejected before.
"""
import gast

from .pyct import _target_names, declared_names, modified_names, walk_scope

_SCOPES = (gast.FunctionDef, gast.ClassDef)


def annotate(fn):
    """Annotates the if/while/for statements of FunctionDef `fn` (see the module docstring)."""
    closure = set()
    for n in walk_scope(fn.body):
        if isinstance(n, _SCOPES + (gast.Lambda,)) and n is not fn:
            closure |= {m.id for m in gast.walk(n) if isinstance(m, gast.Name)
                        and isinstance(m.ctx, gast.Load)}
    globals_, nonlocals = declared_names(fn)
    closure |= globals_ | nonlocals
    _Liveness(frozenset(closure)).block(fn.body, set())
    a = fn.args
    params = {x.id for x in a.posonlyargs + a.args + a.kwonlyargs}
    params |= {x.id for x in (a.vararg, a.kwarg) if x is not None}
    params |= globals_ | nonlocals
    _Definedness().block(fn.body, set(params), set(params))


# ------------------------------------------------------------------ reads and writes

def _reads(node):
    """Names a statement or expression loads, not looking into nested def/class bodies
    (their decorators, defaults and bases are read here)."""
    if node is None:
        return set()
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            out.add(n.id)
        if isinstance(n, gast.FunctionDef):
            stack.extend(n.decorator_list)
            stack.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, gast.ClassDef):
            stack.extend(n.decorator_list + n.bases + [k.value for k in n.keywords])
            continue
        stack.extend(gast.iter_child_nodes(n))
    return out


def _kills(stmt):
    """Names a simple statement binds on every path through it (a walrus may not run: not here)."""
    if isinstance(stmt, gast.Assign):
        return {x for t in stmt.targets for x in _target_names(t)}
    if isinstance(stmt, (gast.AugAssign, gast.AnnAssign)):
        return set(_target_names(stmt.target)) if getattr(stmt, "value", True) is not None else set()
    if isinstance(stmt, _SCOPES):
        return {stmt.name}
    if isinstance(stmt, (gast.Import, gast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, gast.Delete):
        return {x for t in stmt.targets for x in _target_names(t)}
    return set()


def _option_reads(loop):
    return _reads(getattr(loop, "loop_options", None))


def _invariant_names(loop):
    """Variables a loop's `shape_invariants` option names (they must stay loop variables)."""
    options = getattr(loop, "loop_options", None)
    if options is None:
        return set()
    out = set()
    for key, value in zip(options.keys, options.values):
        if isinstance(key, gast.Constant) and key.value == "shape_invariants":
            out |= {p.elts[0].value for p in value.elts}
    return out


# ------------------------------------------------------------------ liveness

class _Liveness:
    """Backward liveness over structured statements; annotates if/while/for on the way."""

    def __init__(self, always):
        self.always = always  # read by nested functions: live everywhere

    def block(self, stmts, live):
        """The variables live before `stmts`, given those live after them."""
        live = set(live)
        for s in reversed(stmts):
            live = self.stmt(s, live) | self.always
        return live

    def stmt(self, s, live):
        if isinstance(s, gast.If):
            before = _reads(s.test) | self.block(s.body, live) | self.block(s.orelse, live)
            mods = modified_names(s.body + s.orelse)
            self._mark(s, before, live, mods)
            s.outputs = frozenset(v for v in s.state if v in s.live_out)
            return before
        if isinstance(s, gast.While):
            head = set(live)
            while True:  # the head: exit (what follows), or the test and one more iteration
                new = set(live) | _reads(s.test) | self.block(s.body, head) | self.block(s.orelse, live)
                if new == head:
                    break
                head = new
            self._mark(s, head, live, modified_names(s.body) | _invariant_names(s))
            s.kinds = _kinds(s, s.body)
            return head | _option_reads(s)
        if isinstance(s, gast.For):
            target = set(_target_names(s.target))
            extra = _reads(getattr(s, "extra_test", None))
            head = set(live)
            while True:  # the head: exit, or bind the target and run the body once more
                body = self.block(s.body, head) - target
                new = set(live) | extra | body | _reads(s.target) | self.block(s.orelse, live)
                if new == head:
                    break
                head = new
            self._mark(s, head, live, modified_names([s]) | _invariant_names(s))
            s.kinds = _kinds(s, s.body)
            return head | _reads(s.iter) | _option_reads(s)
        if isinstance(s, gast.With):
            bound = {n for item in s.items if item.optional_vars is not None
                     for n in _target_names(item.optional_vars)}
            return (self.block(s.body, live) - bound) | _reads(gast.List(
                elts=[i.context_expr for i in s.items], ctx=gast.Load()))
        if isinstance(s, (gast.Return, gast.Raise)):
            return _reads(s)  # the path ends here
        if isinstance(s, (gast.stmt,)) and any(isinstance(c, gast.stmt) for c in gast.walk(s) if c is not s) \
                and not isinstance(s, _SCOPES):
            # a compound statement not listed above (match): reads everything, binds nothing surely
            return set(live) | _reads(s)
        return (set(live) - _kills(s)) | _reads(s) | \
            (set(_target_names(s.target)) if isinstance(s, gast.AugAssign) else set())

    def _mark(self, s, live_in, live_out, mods):
        s.live_in = frozenset(live_in | self.always)
        s.live_out = frozenset(live_out | self.always)
        s.state = frozenset(v for v in mods if v in s.live_in or v in s.live_out)
        s.composites = tuple(sorted(text for text, root in _composite_targets(s)
                                    if root in s.live_in or root in s.live_out))


def _composite_root(target):
    """The root variable of `a.b.c` / `a["k"]` / `a[0].b` (constant keys only), else None."""
    node = target
    while True:
        if isinstance(node, gast.Attribute):
            node = node.value
        elif isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) and \
                isinstance(node.slice.value, (str, int)) and not isinstance(node.slice.value, bool):
            node = node.value
        else:
            break
    return node.id if isinstance(node, gast.Name) and node is not target else None


def _composite_targets(s):
    """(source text, root) of the attributes and constant-key items statement `s`'s own
    blocks assign (not its test or iterable, not nested functions)."""
    body = s.body + s.orelse
    out = set()
    for n in walk_scope(body):
        if isinstance(n, gast.Assign):
            targets = [e for t in n.targets for e in (t.elts if isinstance(t, (gast.Tuple, gast.List))
                                                       else [t])]
        elif isinstance(n, (gast.AugAssign, gast.AnnAssign)):
            targets = [n.target]
        else:
            continue
        for t in targets:
            root = _composite_root(t)
            if root is not None:
                out.add((gast.unparse(t).strip(), root))
    return out


def _kinds(loop, body):
    """What the runtime needs to know the dtype a Python number takes in the loop without
    tracing the body: (recipes, outer names, target names).

    A recipe `(name, deps, uses_float)` is given for each variable the body binds only
    with arithmetic (+ - * // % and unary -, on names and number literals): under
    trainlib's weak typing its dtype is the one of the tensors among `deps` (the names
    those assignments read) or, with none, int or float by the Python numbers. Outer
    names are the deps bound outside the loop and not by it (the runtime reads their
    values); target names are bound by a `for` to the elements it iterates.
    """
    exprs, seen = {}, set()  # seen: target names already accounted for
    for n in walk_scope(body):
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            seen |= {id(m) for t in targets for m in gast.walk(t)}
        if isinstance(n, gast.Assign):
            for t in n.targets:
                pairs = zip(t.elts, n.value.elts) if isinstance(t, (gast.Tuple, gast.List)) and \
                    isinstance(n.value, (gast.Tuple, gast.List)) and len(t.elts) == len(n.value.elts) \
                    else [(t, n.value)]
                for target, value in pairs:
                    for name in _target_names(target):
                        exprs.setdefault(name, []).append(value if isinstance(target, gast.Name) else None)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            exprs.setdefault(n.target.id, []).append(
                gast.BinOp(left=gast.Name(id=n.target.id, ctx=gast.Load(), annotation=None,
                                          type_comment=None), op=n.op, right=n.value))
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in seen:
            exprs.setdefault(n.id, []).append(None)  # bound another way (for target, with ...)
    recipes = []
    for name in sorted(exprs):
        deps, floats = set(), [False]
        if all(e is not None and _arithmetic(e, deps, floats) for e in exprs[name]):
            recipes.append((name, tuple(sorted(deps)), floats[0]))
    targets = tuple(sorted(_target_names(loop.target))) if isinstance(loop, gast.For) else ()
    bound = set(exprs) | set(targets)
    outer = sorted({d for _, deps, _ in recipes for d in deps} - bound)
    return tuple(recipes), tuple(outer), targets


def _arithmetic(e, deps, floats):
    """True if `e` is arithmetic on names and number literals; collects the names it reads
    into `deps` and notes a float literal in `floats[0]`."""
    if isinstance(e, gast.Constant):
        if isinstance(e.value, float):
            floats[0] = True
        return isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
    if isinstance(e, gast.Name):
        deps.add(e.id)
        return True
    if isinstance(e, gast.UnaryOp):
        return isinstance(e.op, (gast.USub, gast.UAdd)) and _arithmetic(e.operand, deps, floats)
    if isinstance(e, gast.BinOp):
        return isinstance(e.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)) and \
            _arithmetic(e.left, deps, floats) and _arithmetic(e.right, deps, floats)
    return False


# ------------------------------------------------------------------ definedness

class _Definedness:
    """Forward pass: which variables are possibly / definitely bound at each if/while/for.

    Inside the generated body functions the state variables are bound (nonlocal, given a
    start value before the statement); the other variables the body binds are its own
    locals, unbound when it starts. After the statement, its state variables are bound.
    """

    def block(self, stmts, possible, definite):
        for s in stmts:
            possible, definite = self.stmt(s, possible, definite)
        return possible, definite

    def stmt(self, s, possible, definite):
        if isinstance(s, (gast.If, gast.While, gast.For)):
            s.defined_before = (frozenset(possible), frozenset(definite))
            state = getattr(s, "state", None)
            mods = modified_names([s])
            if state is None:  # not analysed (inside a construct liveness does not model)
                state = mods
            if isinstance(s, gast.For):  # the body function binds the target first
                state = state | set(_target_names(s.target))
            inner_possible, inner_definite = (possible - mods) | state, (definite - mods) | state
            for body in (s.body, s.orelse):
                self.block(body, inner_possible, inner_definite)
            after = getattr(s, "state", mods)
            return possible | after, definite | after
        if isinstance(s, gast.With):
            bound = {n for item in s.items if item.optional_vars is not None
                     for n in _target_names(item.optional_vars)}
            return self.block(s.body, possible | bound, definite | bound)
        mods = modified_names([s])
        return possible | mods, definite | mods
