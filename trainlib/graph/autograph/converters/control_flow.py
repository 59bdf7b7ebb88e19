"""`if`, `while` and `for` become calls of the runtime operators with the body as functions.

    if test:                 def if_body():              def get_state():
        y = a                    nonlocal y                  return (y,)
    else:          ->            y = a                   def set_state(vars_):
        y = b                def else_body():                nonlocal y
                                 nonlocal y                  (y,) = vars_
                                 y = b
                             ag__.if_stmt(test, if_body, else_body, get_state, set_state, ('y',), ())

The variables a statement rebinds are its state: the body functions rebind
them through `nonlocal`, `get_state`/`set_state` let the runtime read and
reset them, and their names go along so that errors can name them.
`if_stmt`/`while_stmt`/`for_stmt` then decide per call: plain Python for
Python/eager values, graph `If`/`While` for symbolic tensors.
A state variable not bound before the statement starts as
`ag__.Undefined('y')` (`nonlocal` needs a binding, and the runtime needs to
know it was undefined). For `if`, variables that only one branch can bind
are listed (the last argument): in a graph they stay undefined afterwards.
Runs after break/continue/return lowering (whose flags become state) and
after call conversion (so the generated helpers are called directly).
Statements are rewritten innermost first, so an outer statement sees the
`nonlocal` names of the inner helpers as state it rebinds.
"""
import gast

from ..pyct import (Converter, _target_names, constant, modified_names, set_location, strings_tuple,
                    template)


class _Defined:
    """Annotates each if/while/for with the names bound before it: (possibly, definitely)."""

    def run(self, fn):
        a = fn.args
        params = {x.id for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.id for x in (a.vararg, a.kwarg) if x is not None}
        self.block(fn.body, set(params), set(params))

    def block(self, stmts, possible, definite):
        for s in stmts:
            possible, definite = self.stmt(s, possible, definite)
        return possible, definite

    def stmt(self, s, possible, definite):
        if isinstance(s, (gast.If, gast.While, gast.For)):
            s.defined_before = (frozenset(possible), frozenset(definite))
            mods = modified_names([s])
            # inside the generated body functions every state variable is bound (nonlocal)
            for body in (s.body, s.orelse):
                self.block(body, possible | mods, definite | mods)
            return possible | mods, definite | mods
        if isinstance(s, gast.With):
            bound = {n for item in s.items if item.optional_vars is not None
                     for n in _target_names(item.optional_vars)}
            return self.block(s.body, possible | bound, definite | bound)
        mods = modified_names([s])
        return possible | mods, definite | mods


class ControlFlowConverter(Converter):
    """The converter: `if`, `while` and `for` become calls of the runtime operators with the body as functions."""
    def visit_FunctionDef(self, node):
        if node.name not in self.ctx.generated:
            _Defined().run(node)
        return self.generic_visit(node)

    # -- helpers
    def _state(self, stmts):
        return sorted(modified_names(stmts, self.ctx.generated))

    def _inits(self, node, mods):
        possible, definite = getattr(node, "defined_before", (frozenset(), frozenset()))
        lines = []
        for v in mods:
            if v not in possible:
                lines.append(f"{v} = ag__.Undefined({v!r})")
            elif v not in definite:
                lines.append(f"{v} = ag__.ld_or_undefined(lambda: {v}, {v!r})")
        return template("\n".join(lines)) if lines else []

    def _new(self, base):
        n = self.ctx.namer.new(base)
        self.ctx.generated.add(n)
        return n

    def _state_functions(self, mods):
        get_state, set_state, vars_ = self._new("get_state"), self._new("set_state"), self.ctx.namer.new("vars_")
        self.ctx.state_getters.add(get_state)
        nonlocal_ = f"nonlocal {', '.join(mods)}" if mods else "pass"
        as_tuple = "(" + "".join(f"{v}, " for v in mods) + ")"
        store = f"{as_tuple} = {vars_}" if mods else "pass"
        src = (f"def {get_state}():\n    return {as_tuple}\n"
               f"def {set_state}({vars_}):\n    {nonlocal_}\n    {store}\n")
        return src, get_state, set_state, nonlocal_

    # -- statements
    def visit_If(self, node):
        node = self.generic_visit(node)
        mods = self._state(node.body + node.orelse)
        possible = getattr(node, "defined_before", (frozenset(),))[0]
        in_body, in_else = modified_names(node.body, self.ctx.generated), \
            modified_names(node.orelse, self.ctx.generated)
        one_sided = [v for v in mods if v not in possible and (v not in in_body or v not in in_else)]
        body, orelse = self._new("if_body"), self._new("else_body")
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {body}():\n    {nonlocal_}\n    body_\n"
               f"def {orelse}():\n    {nonlocal_}\n    orelse_\n" + state_src +
               f"ag__.if_stmt(test_, {body}, {orelse}, {get_state}, {set_state}, names_, one_sided_)")
        out = self._inits(node, mods) + template(
            src, body_=node.body, orelse_=node.orelse or [gast.Pass()], test_=node.test,
            names_=strings_tuple(mods), one_sided_=strings_tuple(one_sided))
        return set_location(out, node)

    def visit_While(self, node):
        node = self.generic_visit(node)
        mods = self._state(node.body)
        test, body = self._new("loop_test"), self._new("loop_body")
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {test}():\n    return test_\n"
               f"def {body}():\n    {nonlocal_}\n    body_\n" + state_src +
               f"ag__.while_stmt({test}, {body}, {get_state}, {set_state}, names_, opts_)")
        out = self._inits(node, mods) + template(
            src, test_=node.test, body_=node.body, names_=strings_tuple(mods),
            opts_=getattr(node, "loop_options", None) or constant(None))
        return set_location(out, node)

    def visit_For(self, node):
        node = self.generic_visit(node)
        mods = self._state([node])  # the target is rebound each iteration: it is state too
        body, itr = self._new("loop_body"), self.ctx.namer.new("itr")
        extra = getattr(node, "extra_test", None)
        extra_name = self._new("extra_test") if extra is not None else None
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {extra_name}():\n    return extra_\n" if extra is not None else "") + \
            (f"def {body}({itr}):\n    {nonlocal_}\n    target_ = {itr}\n    body_\n" + state_src +
             f"ag__.for_stmt(iter_, {extra_name}, {body}, {get_state}, {set_state}, names_, opts_)")
        out = self._inits(node, mods) + template(
            src, extra_=extra, target_=node.target, body_=node.body, iter_=node.iter,
            names_=strings_tuple(mods), opts_=getattr(node, "loop_options", None) or constant(None))
        return set_location(out, node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ControlFlowConverter(ctx).visit(node)
