"""`del x` of a variable becomes `x = ag__.Undefined('x')`, as TensorFlow's AutoGraph does.

A deleted variable may be one an `if`/`while`/`for` carries: as an Undefined value it
stays a binding the generated helpers can rebind, and a later read raises AutoGraph's
unbound-variable error (an UnboundLocalError naming it) where Python would raise one.
`del` of attributes and items, and of names the function declares `global`/`nonlocal`,
stays as written. Runs early, so static analysis sees the rebinding.
"""
import gast

from ..pyct import Converter, constant, declared_names, set_location, template


class DeleteConverter(Converter):
    """The converter: `del x` becomes `x = ag__.Undefined('x')`."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self._declared = [set()]

    def visit_FunctionDef(self, node):
        globals_, nonlocals = declared_names(node)
        self._declared.append(globals_ | nonlocals)
        try:
            return self.generic_visit(node)
        finally:
            self._declared.pop()

    def visit_Delete(self, node):
        names = [t for t in node.targets
                 if isinstance(t, gast.Name) and t.id not in self._declared[-1]]
        if not names:
            return node
        out = []
        for t in names:
            out += template("name_ = ag__.Undefined(text_)",
                            name_=gast.Name(id=t.id, ctx=gast.Store(), annotation=None,
                                            type_comment=None),
                            text_=constant(t.id))
        rest = [t for t in node.targets if t not in names]
        if rest:
            out.append(gast.Delete(targets=rest))
        return set_location(out, node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return DeleteConverter(ctx).visit(node)
