"""The engine: tensors, ops, tracing, AutoGraph, autodiff, passes and execution (exec/).

Knows nothing of layers or models. Importing it registers every op.
"""
from . import ops  # noqa: F401 -- registers every OpDef
from . import visualize  # noqa: F401 -- installs Graph.to_dot
