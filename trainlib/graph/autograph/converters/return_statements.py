"""Functions: `return` anywhere becomes a `do_return` flag and a `retval_` variable.

    def f(x):                       def f(x):
        if c:                           do_return = False
            return a         ->         retval_ = ag__.UndefinedReturnValue()
        return b                        if c:
                                            do_return = True
                                            retval_ = a
                                        if not do_return:
                                            do_return = True
                                            retval_ = b
                                        else:
                                            do_return = True
                                        return ag__.return_value(retval_, do_return)

Loops that contain a return stop when `do_return` is set (it joins the
`while` test or the `for`'s extra test), so a return inside a tensor loop
works: the flag and value are loop variables. The `else: do_return = True`
of a guard restates what the guard already knows; it keeps the flag a
Python constant when every path returns, so no graph op decides it.
A function whose only return is its last statement is left as it is.
Each def (nested ones too) gets its own flag; lambdas have no statements.
"""
import gast

from ..pyct import Converter, and_not, constant, contains, lower_jumps, set_location, template, walk_scope


class ReturnConverter(Converter):
    """The converter: functions: `return` anywhere becomes a `do_return` flag and a `retval_` variable."""
    def visit_FunctionDef(self, node):
        node = self.generic_visit(node)  # nested defs first: each has its own flag
        returns = [n for n in walk_scope(node.body) if isinstance(n, gast.Return)]
        if not returns or (len(returns) == 1 and node.body[-1] is returns[0]):
            return node
        flag = self.ctx.namer.new("do_return")
        value = self.ctx.namer.new("retval_")
        body = self._lower(node.body, flag, value)
        prologue = template(f"{flag} = False\n{value} = ag__.UndefinedReturnValue()")
        epilogue = template(f"return ag__.return_value({value}, {flag}, {node.name!r})")
        last = max((getattr(n, "lineno", None) or 0 for n in gast.walk(node)), default=node.lineno)
        node.body = set_location(prologue, node) + body + set_location(epilogue, last)
        return node

    def _lower(self, stmts, flag, value):
        stmts = _else_after_return(stmts)
        def on_return(s):
            return template(f"{flag} = True\n{value} = value_",
                            value_=s.value if s.value is not None else constant(None))

        def convert(s):
            s.body = self._lower(s.body, flag, value) or [gast.Pass()]
            if isinstance(s, gast.If):
                s.orelse = self._lower(s.orelse, flag, value)
            elif isinstance(s, gast.While):
                s.test = and_not(flag, s.test)
            elif isinstance(s, gast.For):
                s.extra_test = and_not(flag, getattr(s, "extra_test", None))
            return [s]

        return lower_jumps(
            stmts,
            is_jump=lambda s: isinstance(s, gast.Return),
            on_jump=on_return,
            may_jump=lambda s: isinstance(s, (gast.If, gast.With, gast.While, gast.For))
            and contains([s], gast.Return),
            convert_compound=convert,
            guard=lambda rest: template(f"if not {flag}:\n    body_\nelse:\n    {flag} = True",
                                        body_=rest))


def always_returns(stmts):
    """True if every path through `stmts` ends in a return."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, gast.Return):
        return True
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def _else_after_return(stmts):
    """`if c: ...return` followed by more code: the code moves into the `else`.

    Same meaning; but then both branches return, so the return flag stays a
    Python constant and no second graph `If` is needed for the rest.
    """
    for i, s in enumerate(stmts):
        if isinstance(s, gast.If) and stmts[i + 1:] and always_returns(s.body) and not s.orelse:
            s.orelse = _else_after_return(stmts[i + 1:])
            return stmts[:i + 1]
    return stmts


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ReturnConverter(ctx).visit(node)
