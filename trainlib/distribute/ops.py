"""Collective ops: the fused all-reduce and broadcast that data-parallel training runs in its graphs.

Owns: the `CollectiveAllReduce` and `CollectiveBroadcast` OpDefs, the table
of communicator groups their kernels look up by `group_key` (a static int
attr, since a communicator is not a value a graph can hold), and the public
`all_reduce` / `broadcast` functions.
Invariants: both ops are stateful (never pruned, folded or merged, and run in
program order, so every rank issues the same collectives in the same order);
each call concatenates ALL its inputs into one flat buffer and makes ONE
collective call on it (gradients of a whole model cost one message, not one
per variable); inputs are never written, the outputs are views of the fresh
buffer. Host arrays go through mpi4py's buffer-based `Allreduce`/`Bcast`;
CuPy arrays through NCCL (`cupy.cuda.nccl`), whose unique id travels over MPI.
"""
from ..graph.autodiff import custom_gradient
from ..graph.context import state
from ..graph.op import apply, convert_to_tensor, defop, same_dtype, spec
from ..graph.ops.array import zeros_like

__all__ = ["all_reduce", "broadcast"]

REDUCTIONS = ("SUM", "MEAN")

_GROUPS = {}  # group_key -> Communicator


class Communicator:
    """An MPI communicator as the collective kernels use it (and its NCCL twin on GPUs)."""

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._nccl = None

    def all_reduce(self, xp, buffer):
        """Sums `buffer` over the ranks, in place."""
        if xp.__name__ == "numpy":
            from mpi4py import MPI  # noqa: PLC0415 -- only present where MPI is installed
            self.comm.Allreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)
        else:
            from cupy.cuda import nccl  # noqa: PLC0415
            self._nccl_comm().allReduce(buffer.data.ptr, buffer.data.ptr, buffer.size,
                                        _nccl_dtype(buffer.dtype), nccl.NCCL_SUM,
                                        xp.cuda.get_current_stream().ptr)

    def broadcast(self, xp, buffer, root):
        """Overwrites `buffer` on every rank with rank `root`'s, in place."""
        if xp.__name__ == "numpy":
            self.comm.Bcast(buffer, root=root)
        else:
            self._nccl_comm().bcast(buffer.data.ptr, buffer.size, _nccl_dtype(buffer.dtype), root,
                                    xp.cuda.get_current_stream().ptr)

    def _nccl_comm(self):
        # NCCL needs one unique id shared by all ranks: rank 0 makes it, MPI carries it
        if self._nccl is None:
            from cupy.cuda import nccl  # noqa: PLC0415
            uid = nccl.get_unique_id() if self.rank == 0 else None
            uid = self.comm.bcast(uid, root=0)
            self._nccl = nccl.NcclCommunicator(self.size, uid, self.rank)
        return self._nccl


def _nccl_dtype(dtype):
    from cupy.cuda import nccl  # noqa: PLC0415
    table = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32,
             "float64": nccl.NCCL_FLOAT64, "int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8,
             "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64}
    return table[dtype.name]


def register_group(comm):
    """Registers an mpi4py communicator; returns its `group_key` for the ops' attrs."""
    key = len(_GROUPS)
    _GROUPS[key] = Communicator(comm)
    return key


def get_group(group_key):
    """The Communicator of `group_key` (ValueError naming the known keys if none)."""
    try:
        return _GROUPS[group_key]
    except KeyError:
        raise ValueError(f"no communicator group {group_key} (known: {sorted(_GROUPS)}); create "
                         "a tl.distribute.MPIStrategy first") from None


# ------------------------------------------------------------------ kernels

def _fuse(xp, arrays):
    """One fresh flat buffer holding all `arrays`; host float16 widened (MPI has no half type)."""
    if arrays[0].dtype.kind not in "iuf":  # eager calls skip inference; it explains this one
        raise TypeError(f"collectives reduce numbers, got {arrays[0].dtype.name}")
    buffer = xp.concatenate([a.reshape(-1) for a in arrays])
    if xp.__name__ == "numpy" and buffer.dtype.name == "float16":
        buffer = buffer.astype("float32")
    return buffer


def _unfuse(buffer, arrays):
    outputs, offset = [], 0
    for a in arrays:
        part = buffer[offset:offset + a.size]
        outputs.append(part.reshape(a.shape).astype(a.dtype, copy=False))
        offset += a.size
    return tuple(outputs)


def _collective_infer(op_name):
    def infer(*inputs, **attrs):
        if not inputs:
            raise ValueError(f"{op_name} needs at least one tensor")
        dtype = same_dtype(op_name, *inputs)
        if dtype.name in ("bool", "resource", "string"):
            raise TypeError(f"{op_name} reduces numbers; got a {dtype.name} tensor")
        return tuple(spec(x.shape, dtype) for x in inputs)
    return infer


def _all_reduce_infer(*inputs, reduction, group_key):
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return _collective_infer("CollectiveAllReduce")(*inputs)


@defop("CollectiveAllReduce", infer=_all_reduce_infer, stateful=True, differentiable=False,
       num_outputs=None)
def _all_reduce_kernel(xp, *arrays, reduction, group_key):
    group = get_group(group_key)
    if group.size == 1 and arrays[0].dtype.kind in "iuf":
        return tuple(a.copy() for a in arrays)  # one rank: the sum and the mean are the values
    buffer = _fuse(xp, arrays)
    group.all_reduce(xp, buffer)
    if reduction == "MEAN":
        if buffer.dtype.kind == "f":
            xp.divide(buffer, buffer.dtype.type(group.size), out=buffer)
        else:
            xp.floor_divide(buffer, group.size, out=buffer)
    return _unfuse(buffer, arrays)


def _broadcast_infer(*inputs, root, group_key):
    return _collective_infer("CollectiveBroadcast")(*inputs)


@defop("CollectiveBroadcast", infer=_broadcast_infer, stateful=True, differentiable=False,
       num_outputs=None)
def _broadcast_kernel(xp, *arrays, root, group_key):
    buffer = _fuse(xp, arrays)
    get_group(group_key).broadcast(xp, buffer, root)
    return _unfuse(buffer, arrays)


# ------------------------------------------------------------------ public functions

def _group_by_dtype(tensors):
    groups = {}
    for i, t in enumerate(tensors):
        groups.setdefault(t.dtype, []).append(i)
    return groups.values()


def _collective(op_name, values, **attrs):
    """Applies `op_name` once per dtype present in `values` (a list); results in input order."""
    tensors = [convert_to_tensor(v) for v in values]
    results = [None] * len(tensors)
    for indices in _group_by_dtype(tensors):
        outputs = apply(op_name, *[tensors[i] for i in indices], **attrs)
        for i, out in zip(indices, outputs):
            results[i] = out
    return results


def all_reduce(values, reduction="SUM", group_key=0):
    """Sums (or averages) tensors over all ranks with one fused collective per dtype.

    Every rank must call it with the same number, shapes and dtypes of tensors,
    in the same order (the op is stateful, so graphs keep that order).
    The result has a gradient: the all-reduce of the output gradient (the
    gradient of each rank's input is the reduction of every rank's upstream).

    Args:
        values: a tensor or a list of tensors (any numeric dtypes; tensors of
            one dtype travel in one buffer).
        reduction: "SUM" or "MEAN" (the sum divided by the number of ranks;
            integer means round down).
        group_key: the communicator group (a strategy's `group_key`).

    Returns:
        A tensor, or a list in the order of `values`.

    Raises:
        ValueError: for an unknown reduction or group.

    Example:
        >>> strategy = tl.distribute.MPIStrategy()      # under `mpirun -n 2`
        >>> tl.distribute.all_reduce(tl.constant(1.0), "SUM", strategy.group_key)
        <tl.Tensor: shape=(), dtype=float32, numpy=2.0>
    """
    single = not isinstance(values, (list, tuple))
    values = [values] if single else list(values)
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if not values:
        return values
    if state.tapes:
        results = list(_differentiable_all_reduce(*values, reduction=reduction,
                                                  group_key=group_key))
    else:
        results = _collective("CollectiveAllReduce", values, reduction=reduction,
                              group_key=group_key)
    return results[0] if single else results


@custom_gradient
def _differentiable_all_reduce(*values, reduction, group_key):
    outputs = _collective("CollectiveAllReduce", values, reduction=reduction, group_key=group_key)

    def grad(*dys):
        dys = [zeros_like(v) if d is None else d for d, v in zip(dys, values)]
        return _collective("CollectiveAllReduce", dys, reduction=reduction, group_key=group_key)
    return tuple(outputs), grad


def broadcast(values, root=0, group_key=0):
    """Every rank's copy of `values` becomes rank `root`'s (one fused collective per dtype).

    Args:
        values: a tensor or a list of tensors.
        root: the rank whose values win.
        group_key: the communicator group (a strategy's `group_key`).

    Returns:
        A tensor, or a list in the order of `values`.

    Example:
        >>> w = tl.distribute.broadcast(tl.random.normal([3]), root=0)  # equal on all ranks
    """
    single = not isinstance(values, (list, tuple))
    values = [values] if single else list(values)
    results = _collective("CollectiveBroadcast", values, root=int(root), group_key=group_key)
    return results[0] if single else results
