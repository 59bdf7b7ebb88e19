"""`if`, `while` and `for` become calls of the runtime operators with the body as functions.

    if test:                 def if_body():              def get_state():
        y = a                    nonlocal y                  return (y,)
    else:          ->            y = a                   def set_state(vars_):
        y = b                def else_body():                nonlocal y
                                 nonlocal y                  (y,) = vars_
                                 y = b
                             ag__.if_stmt(test, if_body, else_body, get_state, set_state, ('y',), ())

The statement's state is what static analysis (static_analysis.annotate, run on
each def before its statements are rewritten) finds it rebinds AND may be read
later (live): the body functions rebind these through `nonlocal`,
`get_state`/`set_state` let the runtime read and reset them, and their names go
along so that errors can name them. Variables a body binds that are not live
outside one run of it are locals of the body function: never carried. For `if`,
the state variables not live after it (only read and rebound inside the branches)
are listed last: the runtime does not carry them out. For loops the last argument
says how the dtypes of Python numbers follow from other values (static_analysis
`kinds`), so the runtime knows them without a probe trace.
`if_stmt`/`while_stmt`/`for_stmt` then decide per call: plain Python for
Python/eager values, graph `If`/`While` for symbolic tensors.
A state variable not bound before the statement starts as
`ag__.Undefined('y')` (`nonlocal` needs a binding, and the runtime needs to
know it was undefined).
Runs after break/continue/return lowering (whose flags become state) and
after call conversion (so the generated helpers are called directly).
Statements are rewritten innermost first, so an outer statement sees the
`nonlocal` names of the inner helpers as state it rebinds.
"""
import gast

from .. import static_analysis
from ..pyct import Converter, constant, modified_names, set_location, strings_tuple, template


class ControlFlowConverter(Converter):
    """The converter: `if`, `while` and `for` become calls of the runtime operators with the body as functions."""
    def visit_FunctionDef(self, node):
        if node.name not in self.ctx.generated:
            static_analysis.annotate(node)
        return self.generic_visit(node)

    # -- helpers
    def _state(self, node, stmts):
        state = getattr(node, "state", None)  # liveness (static_analysis); else all it rebinds
        return sorted(state if state is not None else modified_names(stmts, self.ctx.generated))

    @staticmethod
    def _kinds(node):
        """`(recipes, outer names, lambda: outer values, target names)` (static_analysis._kinds)."""
        recipes, outer, targets = getattr(node, "kinds", ((), (), ()))
        values = "".join(f"{name}, " for name in outer)
        return template(f"({recipes!r}, {outer!r}, lambda: ({values}), {targets!r})")[0].value

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

    def _lowered(self, node, mods, src, **subs):
        """`node` lowered: its state variables' initial values, then the `src` template (whose
        `names_` is the state's names), all at the user's line."""
        out = self._inits(node, mods) + template(src, names_=strings_tuple(mods), **subs)
        return set_location(out, node)

    def _loop_subs(self, node):
        return {"opts_": getattr(node, "loop_options", None) or constant(None),
                "kinds_": self._kinds(node)}

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
        mods = self._state(node, node.body + node.orelse)
        outputs = getattr(node, "outputs", mods)
        input_only = [v for v in mods if v not in outputs]
        body, orelse = self._new("if_body"), self._new("else_body")
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {body}():\n    {nonlocal_}\n    body_\n"
               f"def {orelse}():\n    {nonlocal_}\n    orelse_\n" + state_src +
               f"ag__.if_stmt(test_, {body}, {orelse}, {get_state}, {set_state}, names_, input_only_)")
        return self._lowered(node, mods, src, body_=node.body, orelse_=node.orelse or [gast.Pass()],
                             test_=node.test, input_only_=strings_tuple(input_only))

    def visit_While(self, node):
        node = self.generic_visit(node)
        mods = self._state(node, node.body)
        test, body = self._new("loop_test"), self._new("loop_body")
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {test}():\n    return test_\n"
               f"def {body}():\n    {nonlocal_}\n    body_\n" + state_src +
               f"ag__.while_stmt({test}, {body}, {get_state}, {set_state}, names_, opts_, kinds_)")
        return self._lowered(node, mods, src, test_=node.test, body_=node.body,
                             **self._loop_subs(node))

    def visit_For(self, node):
        node = self.generic_visit(node)
        mods = self._state(node, [node])  # the target counts as rebound by the loop
        body, itr = self._new("loop_body"), self.ctx.namer.new("itr")
        extra = getattr(node, "extra_test", None)
        extra_name = self._new("extra_test") if extra is not None else None
        state_src, get_state, set_state, nonlocal_ = self._state_functions(mods)
        src = (f"def {extra_name}():\n    return extra_\n" if extra is not None else "") + \
            (f"def {body}({itr}):\n    {nonlocal_}\n    target_ = {itr}\n    body_\n" + state_src +
             f"ag__.for_stmt(iter_, {extra_name}, {body}, {get_state}, {set_state}, names_, opts_, "
             "kinds_)")
        return self._lowered(node, mods, src, extra_=extra, target_=node.target, body_=node.body,
                             iter_=node.iter, **self._loop_subs(node))


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ControlFlowConverter(ctx).visit(node)
