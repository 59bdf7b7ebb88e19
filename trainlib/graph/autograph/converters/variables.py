"""Reads of variables that may hold `ag__.Undefined` become `ag__.ld(x)`.

`ld` raises a clear error naming the variable and why it is undefined (for
instance: bound in only one branch of a tensor `if`), where Python would
raise an UnboundLocalError. Only variables that control-flow conversion gave
an Undefined start are wrapped; the generated `get_state` functions read raw
values, since carrying an Undefined around is not an error. Runs last, so it
sees every read the other converters produced.
"""
import gast

from ..pyct import Converter, set_location, template


class VariablesConverter(Converter):
    """The converter: reads of variables that may hold `ag__.Undefined` become `ag__.ld(x)`."""
    def __init__(self, ctx, maybe_undefined):
        super().__init__(ctx)
        self.maybe_undefined = maybe_undefined

    def visit_FunctionDef(self, node):
        if node.name in self.ctx.state_getters:
            return node
        return self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id == "ag__" \
                and f.attr == "ld_or_undefined":
            return node  # its lambda reads the raw binding on purpose
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.maybe_undefined:
            new = template("ag__.ld(name_)", name_=node)[0].value
            return set_location(gast.copy_location(new, node), node)
        return node


def _maybe_undefined(node):
    names = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and isinstance(n.func.value, gast.Name) and n.func.value.id == "ag__" \
                and n.func.attr in ("Undefined", "ld_or_undefined"):
            names.add(n.args[-1].value)
    return names


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return VariablesConverter(ctx, _maybe_undefined(node)).visit(node)
