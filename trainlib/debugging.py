"""`tl.debugging`: runtime assertions and numeric checks (graph ops, run on every call)."""
from .graph.ops.io import *  # noqa: F401,F403
from .graph.ops.io import Assert  # noqa: F401
