"""`a and b`, `a or b`, `not a` become `ag__.and_(lambda: a, lambda: b)`, `ag__.or_(...)`, `ag__.not_(a)`;
a chained comparison `a < b < c` becomes `a < b and b < c` first (as TensorFlow's AutoGraph:
the middle operands are evaluated again, so keep calls with side effects out of them).

The right operand is a lambda so that Python's short-circuit still holds
for Python values; on tensors the runtime uses `logical_and`/`logical_or`/
`logical_not`. Runs after control flow, so the tests that break/continue/
return lowering produced (`not break_ and test`) are converted too.
"""
import gast

from ..pyct import Converter, set_location, template


class LogicalExpressionConverter(Converter):
    """The converter: `a and b`, `a or b`, `not a` become `ag__.and_(lambda: a, lambda: b)`, `ag__.or_(...)`, `ag__.not_(a)`."""
    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        fn = "and_" if isinstance(node.op, gast.And) else "or_"
        values = node.values
        result = values[-1]
        for left in reversed(values[:-1]):  # a and b and c -> and_(a, and_(b, c))
            result = template(f"ag__.{fn}(lambda: left_, lambda: right_)", left_=left, right_=result)[0].value
        return set_location(gast.copy_location(result, node), node)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        pairs, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            pairs.append(set_location(gast.Compare(left=left, ops=[op], comparators=[right]), node))
            left = right
        return self.visit_BoolOp(set_location(gast.BoolOp(op=gast.And(), values=pairs), node))

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        new = template("ag__.not_(operand_)", operand_=node.operand)[0].value
        return set_location(gast.copy_location(new, node), node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return LogicalExpressionConverter(ctx).visit(node)
