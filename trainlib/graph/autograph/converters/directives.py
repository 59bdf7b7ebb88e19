"""`tl.autograph.experimental.set_loop_options(...)` calls become options of their loop.

The call must be a statement directly in a `while`/`for` body; it is removed
and stored on the loop node as `loop_options` (a dict expression the
control-flow converter passes to `while_stmt`/`for_stmt`). Runs before the
loops are rewritten, so the loop is still a `while`/`for` node here.
`shape_invariants=[(var, shape), ...]` is turned into `[("var", shape), ...]`
so the runtime knows variables by name.
"""
import gast

from ..pyct import Converter, constant

_KNOWN = ("shape_invariants", "maximum_iterations", "parallel_iterations", "swap_memory")


def _is_directive(stmt):
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    f = stmt.value.func
    return (isinstance(f, gast.Attribute) and f.attr == "set_loop_options") or \
        (isinstance(f, gast.Name) and f.id == "set_loop_options")


class DirectivesConverter(Converter):
    """Moves set_loop_options calls onto their loop; rejects them anywhere else."""

    def _loop(self, node):
        options = {}
        body = []
        for s in node.body:
            if _is_directive(s):
                options.update(self._options(s.value))
            else:
                body.append(s)
        node.body = body or [gast.Pass()]
        node = self.generic_visit(node)
        if options:
            node.loop_options = gast.Dict(keys=[constant(k) for k in options],
                                          values=list(options.values()))
        return node

    visit_While = visit_For = _loop

    def visit_Expr(self, node):
        if _is_directive(node):
            raise self.ctx.error(node, "set_loop_options must be called directly inside the body of "
                                       "the while/for loop it configures")
        return self.generic_visit(node)

    def _options(self, call):
        if call.args:
            raise self.ctx.error(call, "set_loop_options takes keyword arguments only")
        out = {}
        for kw in call.keywords:
            if kw.arg not in _KNOWN:
                raise self.ctx.error(call, f"set_loop_options got an unknown option {kw.arg!r}; "
                                           f"expected one of {', '.join(_KNOWN)}")
            if kw.arg == "shape_invariants":
                out[kw.arg] = self._invariants(kw.value)
            elif kw.arg == "maximum_iterations":
                out[kw.arg] = kw.value
        return out

    def _invariants(self, value):
        if not isinstance(value, (gast.List, gast.Tuple)):
            raise self.ctx.error(value, "shape_invariants must be a literal list of (variable, shape) pairs")
        pairs = []
        for pair in value.elts:
            if not (isinstance(pair, gast.Tuple) and len(pair.elts) == 2
                    and isinstance(pair.elts[0], gast.Name)):
                raise self.ctx.error(value, "each shape invariant must be a (variable, shape) pair "
                                            "naming the loop variable, e.g. (x, tl.TensorShape([None]))")
            pairs.append(gast.Tuple(elts=[constant(pair.elts[0].id), pair.elts[1]], ctx=gast.Load()))
        return gast.List(elts=pairs, ctx=gast.Load())


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return DirectivesConverter(ctx).visit(node)
