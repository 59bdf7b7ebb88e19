"""Rejects what AutoGraph cannot turn into graph code: try/except, yield, async.

Runs first, so no later converter ever sees these constructs and nothing is
silently mis-converted: each gets a ConversionError naming the user's line and a fix.
"""
from ..pyct import Converter

_FIX = {
    "Try": ("try/except", "exception handling cannot become graph control flow. Move the try block "
            "into a helper decorated with tl.autograph.experimental.do_not_convert (it then runs as "
            "plain Python at trace time), or outside the tl.function"),
    "Yield": ("yield", "generators cannot be converted. Build a list or a tensor instead, or mark the "
              "function with tl.autograph.experimental.do_not_convert"),
    "Async": ("async code", "coroutines cannot be converted"),
}


class UnsupportedConverter(Converter):
    """Raises ConversionError on the first unsupported construct."""

    def _reject(self, node, key):
        construct, fix = _FIX[key]
        raise self.ctx.error(node, f"AutoGraph does not support {construct} inside converted code: {fix}")

    def visit_Try(self, node):
        self._reject(node, "Try")

    visit_TryStar = visit_Try

    def visit_Yield(self, node):
        self._reject(node, "Yield")

    visit_YieldFrom = visit_Yield

    def visit_AsyncFunctionDef(self, node):
        self._reject(node, "Async")

    visit_Await = visit_AsyncFor = visit_AsyncWith = visit_AsyncFunctionDef


def transform(node, ctx):
    """Applies this converter to a function's AST (in the pipeline's order)."""
    return UnsupportedConverter(ctx).visit(node)

