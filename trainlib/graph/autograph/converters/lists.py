"""`l.append(x)` as a statement becomes `l = ag__.list_append(l, x)`.

For a Python list this appends in place, exactly as before; the rewrite only
makes the mutation an assignment, so the control-flow converter sees `l` as
a variable the loop or branch changes. The runtime then raises a clear error
when a Python list grows inside a tensor-dependent loop or branch (it cannot
become graph state), instead of silently appending once at trace time.
Runs before call conversion, which leaves `ag__.` calls alone.
"""
import gast

from ..pyct import Converter, set_location, template


class ListConverter(Converter):
    def visit_Expr(self, node):
        call = node.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
                and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], gast.Starred)):
            target = call.func.value.id
            out = template(f"{target} = ag__.list_append({target}, item_)", item_=self.visit(call.args[0]))
            return set_location(out, node)
        return self.generic_visit(node)


def transform(node, ctx):
    return ListConverter(ctx).visit(node)
