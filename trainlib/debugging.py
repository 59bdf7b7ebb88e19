"""`tl.debugging`: runtime assertions and numeric checks (graph ops, run on every call).

Re-exports only; the ops live in `graph/ops/io.py` and `graph/ops/checks.py`.
"""
from .graph.ops.io import *  # noqa: F401,F403
from .graph.ops.checks import *  # noqa: F401,F403
