"""`assert test, msg` becomes `ag__.assert_stmt(test, lambda: msg)`.

The runtime raises AssertionError for Python/eager values and adds a graph
`Assert` op for a symbolic test. The message is a lambda so that, as in
Python, it is only built when needed. Runs before call conversion so that
calls inside the test are converted too.
"""
from ..pyct import Converter, constant, set_location, template


class AssertConverter(Converter):
    """The converter: `assert test, msg` becomes `ag__.assert_stmt(test, lambda: msg)`."""
    def visit_Assert(self, node):
        node = self.generic_visit(node)
        msg = node.msg if node.msg is not None else constant(None)
        out = template("ag__.assert_stmt(test_, lambda: msg_)", test_=node.test, msg_=msg)
        return set_location(out, node)


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return AssertConverter(ctx).visit(node)

