"""`a if c else b` becomes `ag__.if_exp(c, lambda: a, lambda: b, 'c')`.

The lambdas keep Python's laziness (only the chosen side runs eagerly);
for a symbolic `c` the runtime builds a graph `If` from both. The test's
source text goes along for error messages.
"""
import gast

from ..pyct import Converter, constant, set_location, source_of, template


class ConditionalExpressionConverter(Converter):
    """The converter: `a if c else b` becomes `ag__.if_exp(c, lambda: a, lambda: b, 'c')`."""
    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        text = constant(source_of(node.test))
        new = template("ag__.if_exp(test_, lambda: body_, lambda: orelse_, text_)",
                       test_=node.test, body_=node.body, orelse_=node.orelse, text_=text)[0].value
        return set_location(gast.copy_location(new, node), node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return ConditionalExpressionConverter(ctx).visit(node)
