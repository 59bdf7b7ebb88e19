"""Graph optimization passes: each takes a graph and returns an equivalent graph.

`optimize(graph)` runs the pipeline in a fixed order. Prune comes first:
it implements non-strict execution (only what the outputs and side effects
need runs), and every later pass then works on less.
"""
from .prune import prune

PIPELINE = (("prune", prune),)


def optimize(graph, options=None, report=None):
    """Runs every enabled pass on `graph` in pipeline order; returns the result.

    Args:
        graph: the FuncGraph to optimize (rewritten in place).
        options: {pass name: bool}; a pass set to False is skipped.
        report: if a list, (pass name, op count before, op count after) is appended per pass.
    """
    for name, run in PIPELINE:
        if options is not None and not options.get(name, True):
            continue
        before = len(graph.operations)
        graph = run(graph)
        if report is not None:
            report.append((name, before, len(graph.operations)))
    return graph
