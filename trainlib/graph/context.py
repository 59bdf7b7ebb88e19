"""The state `apply` consults: the graph being traced, the active tapes, the device.

Owns: one module-level `state` object. Tracing pushes graphs onto it, autodiff
pushes tapes, `tl.device` pushes devices. Invariant: this module imports
nothing from trainlib, so every layer of the pipeline can read it.
Tracing is single-threaded per process, like Python's own import machinery.
"""
import contextlib


class _State:
    __slots__ = ("graph", "tapes", "device", "xp", "run_eagerly", "graph_stack",
                 "recording_paused")

    def __init__(self):
        import numpy  # the default array module; backend.py owns the others
        self.graph = None        # the Graph ops are added to, or None when eager
        self.graph_stack = []
        self.tapes = []          # active GradientTapes, innermost last
        self.device = "cpu"
        self.xp = numpy
        self.run_eagerly = False
        self.recording_paused = 0


state = _State()


@contextlib.contextmanager
def graph_scope(graph):
    """Makes `graph` the one ops are added to, for the `with` block."""
    state.graph_stack.append(state.graph)
    state.graph = graph
    try:
        yield graph
    finally:
        state.graph = state.graph_stack.pop()


@contextlib.contextmanager
def eager_scope():
    """Runs ops eagerly inside the block, even while a graph is being traced."""
    with graph_scope(None):
        yield


def executing_eagerly():
    """True when ops run now rather than being added to a graph."""
    return state.graph is None
