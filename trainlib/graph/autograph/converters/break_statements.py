"""`break` becomes a `break_` flag: the loop stops when it is set, the rest of the body is guarded.

    while test:                 break_ = False
        a                       while not break_ and test:
        if c:           ->          a
            break                   if c:
        b                               break_ = True
    else:                           if not break_:
        d                               b
                                if not break_:
                                    d

A `for` gets the flag as its `extra_test` (checked before each iteration).
A loop `else` runs only when the loop did not break, as in Python.
Inner loops are rewritten first, so a loop only sees its own breaks.
"""
import gast

from ..pyct import Converter, and_not, has_loop_jump, lower_loop_jumps, set_location, template

class BreakConverter(Converter):
    """The converter: `break` becomes a `break_` flag: the loop stops when it is set, the rest of the body is guarded."""
    def _loop(self, node):
        node = self.generic_visit(node)
        orelse, node.orelse = node.orelse, []
        if not has_loop_jump(node.body, gast.Break):
            return [node] + orelse  # no break: the else clause always runs after the loop
        flag = self.ctx.namer.new("break_")
        node.body = lower_loop_jumps(node.body, gast.Break, flag) or [gast.Pass()]
        if isinstance(node, gast.While):
            node.test = and_not(flag, node.test)
        else:
            node.extra_test = and_not(flag, getattr(node, "extra_test", None))
        out = set_location(template(f"{flag} = False"), node) + [node]
        if orelse:
            out += set_location(template(f"if not {flag}:\n    body_", body_=orelse), node)
        return out

    visit_While = visit_For = _loop

def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return BreakConverter(ctx).visit(node)

