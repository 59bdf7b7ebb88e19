"""`l.append(x)` as a statement becomes `l = ag__.list_append(l, x)`.

For a Python list this appends in place, exactly as before; the rewrite only
makes the mutation an assignment, so the control-flow converter sees `l` as
a variable the loop or branch changes. The runtime then raises a clear error
when a Python list grows inside a tensor-dependent loop or branch (it cannot
become graph state), instead of silently appending once at trace time.
Only the function's own variables are rewritten (globals and closure lists
keep `.append`). Runs before call conversion, which leaves `ag__.` calls alone.
"""
import gast

from ..pyct import Converter, modified_names, set_location, template


class ListConverter(Converter):
    """The converter: `l.append(x)` as a statement becomes `l = ag__.list_append(l, x)`."""
    def __init__(self, ctx):
        super().__init__(ctx)
        self.local_names = [set()]

    def visit_FunctionDef(self, node):
        # only the function's own variables: rebinding a global or closure list would make
        # it local (UnboundLocalError); those keep their plain `.append`
        a = node.args
        params = {x.id for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.id for x in (a.vararg, a.kwarg) if x is not None}
        self.local_names.append(params | modified_names(node.body))
        try:
            return self.generic_visit(node)
        finally:
            self.local_names.pop()

    def visit_Expr(self, node):
        call = node.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
                and call.func.value.id in self.local_names[-1]
                and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], gast.Starred)):
            target = call.func.value.id
            out = template(f"{target} = ag__.list_append({target}, item_)", item_=self.visit(call.args[0]))
            return set_location(out, node)
        return self.generic_visit(node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ListConverter(ctx).visit(node)
