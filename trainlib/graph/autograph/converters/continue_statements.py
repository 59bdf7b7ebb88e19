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

from ..pyct import Converter, contains, lower_jumps, set_location, template

_LOOPS_AND_SCOPES = (gast.While, gast.For, gast.FunctionDef, gast.Lambda, gast.ClassDef)


def _has_continue(stmts):
    return contains(stmts, gast.Continue, stop=_LOOPS_AND_SCOPES)


class ContinueConverter(Converter):
    """The converter: `continue` becomes a `continue_` flag, reset at the top of each iteration; the rest of the body is guarded."""
    def _loop(self, node):
        node = self.generic_visit(node)
        if not _has_continue(node.body):
            return node
        flag = self.ctx.namer.new("continue_")
        node.body = set_location(template(f"{flag} = False"), node) + self._lower(node.body, flag)
        return node

    visit_While = visit_For = _loop

    def _lower(self, stmts, flag):
        def convert(s):
            s.body = self._lower(s.body, flag) or [gast.Pass()]
            if isinstance(s, gast.If):
                s.orelse = self._lower(s.orelse, flag)
            return [s]

        return lower_jumps(
            stmts,
            is_jump=lambda s: isinstance(s, gast.Continue),
            on_jump=lambda s: template(f"{flag} = True"),
            may_jump=lambda s: isinstance(s, (gast.If, gast.With)) and _has_continue([s]),
            convert_compound=convert,
            guard=lambda rest: template(f"if not {flag}:\n    body_", body_=rest))


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ContinueConverter(ctx).visit(node)
