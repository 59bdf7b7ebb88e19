"""Calls `f(a, *b, k=c, **d)` become `ag__.converted_call(f, (a, *b), {'k': c, **d})`.

At run time `converted_call` converts user functions recursively (once,
cached) and calls library code, builtins and `do_not_convert` functions as
they are. Runs after the converters that generate `ag__.` calls (those are
left alone) and before control flow, whose generated helper functions are
called by the runtime, never through `converted_call`.
Zero-argument `super()`, `locals()`, `globals()`, `vars()`, `eval` and `exec`
depend on the calling frame, so they stay direct calls.
"""
import gast

from ..pyct import Converter, constant, set_location

_FRAME_DEPENDENT = {"super", "locals", "globals", "vars", "eval", "exec"}


def _is_ag_call(func):
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
        and func.value.id == "ag__"


class CallConverter(Converter):
    """The converter: calls `f(a, *b, k=c, **d)` become `ag__.converted_call(f, (a, *b), {'k': c, **d})`."""
    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if _is_ag_call(func) or (isinstance(func, gast.Name) and func.id in _FRAME_DEPENDENT):
            return node
        args = gast.Tuple(elts=node.args, ctx=gast.Load())
        if node.keywords:
            kwargs = gast.Dict(keys=[None if k.arg is None else constant(k.arg) for k in node.keywords],
                               values=[k.value for k in node.keywords])
        else:
            kwargs = constant(None)
        new = gast.Call(func=gast.Attribute(value=gast.Name(id="ag__", ctx=gast.Load(), annotation=None,
                                                            type_comment=None),
                                            attr="converted_call", ctx=gast.Load()),
                        args=[func, args, kwargs], keywords=[])
        return set_location(gast.copy_location(new, node), node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return CallConverter(ctx).visit(node)
