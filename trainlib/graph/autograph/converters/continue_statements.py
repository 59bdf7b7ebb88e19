"""`continue` becomes a `continue_` flag, reset at the top of each iteration; the rest of the body is guarded.

    while test:                 while test:
        a                           continue_ = False
        if c:           ->          a
            continue                if c:
        b                               continue_ = True
                                    if not continue_:
                                        b

Runs after break conversion (whose guards it may nest inside) and before
return conversion. The flag is assigned first thing in the body, so in a
graph loop it is a per-iteration value, never a loop variable.
"""
import gast

from ..pyct import Converter, has_loop_jump, lower_loop_jumps, set_location, template

class ContinueConverter(Converter):
    """The converter: `continue` becomes a `continue_` flag, reset at the top of each iteration; the rest of the body is guarded."""
    def _loop(self, node):
        node = self.generic_visit(node)
        if not has_loop_jump(node.body, gast.Continue):
            return node
        flag = self.ctx.namer.new("continue_")
        node.body = set_location(template(f"{flag} = False"), node) + lower_loop_jumps(node.body, gast.Continue, flag)
        return node

    visit_While = visit_For = _loop

def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ContinueConverter(ctx).visit(node)
