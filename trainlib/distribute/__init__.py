"""`tl.distribute`: data-parallel training over MPI (mpi4py), with TensorFlow's strategy API.

Owns nothing itself: re-exports the strategies (strategy.py) and the
collective ops (ops.py). Importing it never imports mpi4py; creating an
`MPIStrategy` does, and says how to install it when it is missing.
"""
from .ops import all_reduce, broadcast  # noqa: F401
from .strategy import (MPIStrategy, ReduceOp, ReplicaContext, Strategy, barrier,  # noqa: F401
                       chief_print, compute_average_loss, get_replica_context, get_strategy,
                       has_strategy, in_cross_replica_context, is_chief, maybe_strategy)

__all__ = ["MPIStrategy", "Strategy", "ReduceOp", "ReplicaContext", "get_strategy", "has_strategy",
           "get_replica_context", "in_cross_replica_context", "maybe_strategy", "is_chief",
           "chief_print", "barrier", "compute_average_loss", "all_reduce", "broadcast"]
