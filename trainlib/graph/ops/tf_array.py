"""TensorFlow's top-level array functions built from other ops, and the partition ops.

Owns: `sequence_mask`, `unravel_index`, `shape_n`, `parallel_stack`,
`space_to_batch(_nd)` / `batch_to_space(_nd)` (pad, reshape, transpose),
`broadcast_static_shape` / `broadcast_dynamic_shape`, `histogram_fixed_width(_bins)`,
`get_static_value` (the value of a tensor when it is known without running the graph),
and the `DynamicPartition` / `DynamicStitch` ops with their gradients (each the other's
inverse, as TensorFlow defines them). The compositions get their gradients from the ops
they are made of.
"""
import numpy as np

from .. import dtypes as _dt
from ..context import state
from ..errors import InvalidArgumentError, op_error
from ..op import apply, broadcast_shapes, convert_to_tensor, defop, spec
from ..tensor import SymbolicTensor, Tensor, TensorShape, as_shape
from . import array as _array, io as _io, math as _math

__all__ = ["strided_slice", "sequence_mask", "unravel_index", "shape_n", "parallel_stack", "space_to_batch",
           "space_to_batch_nd", "batch_to_space", "broadcast_static_shape",
           "broadcast_dynamic_shape", "histogram_fixed_width", "histogram_fixed_width_bins",
           "get_static_value", "dynamic_partition", "dynamic_stitch"]


def _bits(mask, n):
    return [bool(int(mask) >> i & 1) for i in range(n)]


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """`input_[begin:end:strides]` spelled as TensorFlow's op: one (begin, end, stride) per
    sliced dim, with the bit masks saying which begins/ends to ignore (bit i of
    `begin_mask`: dim i starts at its start), where an ellipsis stands, which dims are new
    axes and which are taken by a single index. Same result and gradient as indexing.

    Example:
        >>> tl.strided_slice(tl.reshape(tl.range(12), [3, 4]), [0, 1], [2, 4], [1, 2]).numpy()
        array([[1, 3],
               [5, 7]], dtype=int32)
    """
    def values(v, what):
        if isinstance(v, SymbolicTensor):
            return v
        out = np.asarray(v.numpy() if isinstance(v, Tensor) else v).reshape(-1)
        if out.dtype.kind not in "iu":
            raise TypeError(f"strided_slice: {what} must be integers, got {out.dtype}")
        return [int(x) for x in out]
    begin, end = values(begin, "begin"), values(end, "end")
    if isinstance(begin, SymbolicTensor) or isinstance(end, SymbolicTensor) or \
            isinstance(strides, SymbolicTensor):
        raise ValueError("strided_slice: begin, end and strides must be known when the op is made "
                         "(lists or eager tensors); index the tensor with tensors instead")
    strides = [1] * len(begin) if strides is None else values(strides, "strides")
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"strided_slice: begin, end and strides must have one length, got "
                         f"{len(begin)}, {len(end)} and {len(strides)}")
    n = len(begin)
    masks = [_bits(m, n) for m in (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                   shrink_axis_mask)]
    key = []
    for i in range(n):
        b_off, e_off, ellipsis, new_axis, shrink = (m[i] for m in masks)
        if ellipsis:
            key.append(Ellipsis)
        elif new_axis:
            key.append(None)
        elif shrink:
            key.append(begin[i])
        else:
            if strides[i] == 0:
                raise ValueError("strided_slice: strides must be non-zero")
            key.append(slice(None if b_off else begin[i], None if e_off else end[i], strides[i]))
    return _array.getitem(convert_to_tensor(input_), tuple(key))


def sequence_mask(lengths, maxlen=None, dtype=_dt.bool, name=None):
    """A mask of shape `lengths.shape + [maxlen]`: `mask[..., j] = j < lengths[...]`.

    Args:
        lengths: an integer tensor of lengths.
        maxlen: the last dim (default: the largest length).
        dtype: the mask's dtype.

    Example:
        >>> tl.sequence_mask([1, 3], 4).numpy()
        array([[ True, False, False, False],
               [ True,  True,  True, False]])
    """
    lengths = convert_to_tensor(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}")
    if maxlen is None:
        maxlen = _math.maximum(_math.reduce_max(lengths), _math.cast(0, lengths.dtype))
    else:
        maxlen = _math.cast(convert_to_tensor(maxlen), lengths.dtype)
        if maxlen.shape.rank not in (0, None):
            raise ValueError(f"sequence_mask: maxlen must be a scalar, got shape {maxlen.shape}")
    row = _array.range(_math.cast(0, lengths.dtype), maxlen, _math.cast(1, lengths.dtype))
    mask = _math.less(row, _array.expand_dims(lengths, -1))
    return mask if _dt.as_dtype(dtype) is _dt.bool else _math.cast(mask, dtype)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat `indices` in an array of shape `dims`: shape `[len(dims)]` for a
    scalar index, `[len(dims), n]` for n indices (TensorFlow's layout).

    Example:
        >>> tl.unravel_index([1, 5], [2, 3]).numpy()
        array([[0, 1],
               [1, 2]], dtype=int32)
    """
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"unravel_index: indices must be integers, got {indices.dtype.name}")
    dims = _math.cast(convert_to_tensor(dims), indices.dtype)
    if isinstance(indices, Tensor) and isinstance(dims, Tensor):
        flat, shape = indices.numpy(), dims.numpy()
        if np.any(flat < 0) or np.any(flat >= np.prod(shape)):
            raise op_error(InvalidArgumentError, "UnravelIndex",
                           f"index out of bounds for dims {shape.tolist()}: {flat.tolist()}")
    else:
        size = _math.reduce_prod(dims)
        _io.Assert(_math.logical_and(_math.reduce_all(indices >= 0),
                                     _math.reduce_all(indices < size)),
                   ["index is out of bound as with dims"], message="UnravelIndex: ")
    strides = _math.cumprod(dims, exclusive=True, reverse=True)
    expanded = _array.expand_dims(indices, 0) if indices.shape.rank == 1 else indices
    if indices.shape.rank == 1:
        strides, dims = _array.expand_dims(strides, -1), _array.expand_dims(dims, -1)
    return _math.floormod(_math.floordiv(expanded, strides), dims)


def shape_n(input, out_type=_dt.int32, name=None):  # noqa: A002 -- TensorFlow's argument name
    """The shapes of the tensors in `input`, one `tl.shape` each."""
    return [_array.shape(t, out_type=out_type) for t in input]


def parallel_stack(values, name="parallel_stack"):
    """`tl.stack(values)` along a new first axis, inside a tl.function only (TensorFlow's
    variant; eagerly it raises, as there)."""
    if state.graph is None:
        raise RuntimeError("tl.parallel_stack() is not compatible with eager execution; use "
                           "tl.stack")
    return _array.stack(values, axis=0)


def _static_list(value, what, fn):
    if isinstance(value, SymbolicTensor):
        raise ValueError(f"{fn}: {what} must be known when the op is made (a list or an eager "
                         f"tensor), got the symbolic tensor {value.name}")
    return np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=np.int64)


def _blocks_and_pads(input, block_shape, pads, fn, what):
    block = _static_list(block_shape, "block_shape", fn).reshape(-1)
    pads = _static_list(pads, what, fn).reshape(-1, 2) if np.size(pads) else np.zeros((0, 2), int)
    m = len(block)
    if pads.shape != (m, 2):
        raise ValueError(f"{fn}: {what} must have shape [{m}, 2] (one pair per block dim), got "
                         f"{pads.shape}")
    if np.any(block < 1) or np.any(pads < 0):
        raise ValueError(f"{fn}: block_shape must be >= 1 and {what} >= 0, got "
                         f"{block.tolist()} and {pads.tolist()}")
    shape = input.shape
    if shape.rank is None or shape.rank < m + 1:
        raise ValueError(f"{fn}: the input needs a batch dim and {m} block dims, got shape {shape}")
    spatial = shape.as_list()[1:1 + m]
    if any(d is None for d in spatial):
        raise ValueError(f"{fn}: the block dims of the input must be known, got shape {shape}")
    return [int(b) for b in block], pads.tolist(), spatial, shape.as_list()[1 + m:]


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the M block dims after the batch, then moves each `block_shape` block's
    positions into the batch dim: shape `[b * prod(block), (d + pad) / block..., rest...]`."""
    input = convert_to_tensor(input)
    block, pads, spatial, rest = _blocks_and_pads(input, block_shape, paddings,
                                                  "space_to_batch_nd", "paddings")
    padded_dims = [d + p[0] + p[1] for d, p in zip(spatial, pads)]
    for d, b in zip(padded_dims, block):
        if d % b:
            raise ValueError(f"space_to_batch_nd: padded block dims {padded_dims} must be "
                             f"divisible by block_shape {block}")
    m = len(block)
    x = _array.pad(input, [[0, 0]] + pads + [[0, 0]] * len(rest))
    split = []
    for d, b in zip(padded_dims, block):
        split += [d // b, b]
    x = _array.reshape(x, [-1] + split + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        [1 + 2 * m + i for i in range(len(rest))]
    x = _array.transpose(x, perm)
    return _array.reshape(x, [-1] + [d // b for d, b in zip(padded_dims, block)] + rest)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of `space_to_batch_nd`: batch positions back into the M block dims, then
    `crops` cut from each block dim's start and end."""
    input = convert_to_tensor(input)
    block, crops, spatial, rest = _blocks_and_pads(input, block_shape, crops,
                                                   "batch_to_space", "crops")
    m = len(block)
    x = _array.reshape(input, block + [-1] + spatial + rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += [1 + 2 * m + i for i in range(len(rest))]
    x = _array.transpose(x, perm)
    full = [d * b for d, b in zip(spatial, block)]
    x = _array.reshape(x, [-1] + full + rest)
    for (lo, hi), d in zip(crops, full):
        if lo + hi > d:
            raise ValueError(f"batch_to_space: crops {crops} remove more than the block dims "
                             f"{full} hold")
    begin = [0] + [c[0] for c in crops] + [0] * len(rest)
    size = [-1] + [d - c[0] - c[1] for d, c in zip(full, crops)] + [-1] * len(rest)
    return _array.slice(x, begin, size)


space_to_batch = space_to_batch_nd    # TensorFlow 2's space_to_batch is the N-d one
batch_to_space = batch_to_space_nd


def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape two static shapes broadcast to (ValueError if they do not)."""
    x, y = as_shape(shape_x), as_shape(shape_y)
    if x.rank is None or y.rank is None:
        return TensorShape(None)
    try:
        return TensorShape(broadcast_shapes(tuple(x.as_list()), tuple(y.as_list())))
    except (ValueError, TypeError) as e:
        raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}") from e


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (an int tensor) two shapes, given as int tensors, broadcast to."""
    x, y = convert_to_tensor(shape_x), convert_to_tensor(shape_y)
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        try:
            out = np.broadcast_shapes(tuple(x.numpy().tolist()), tuple(y.numpy().tolist()))
        except ValueError:
            raise op_error(InvalidArgumentError, "BroadcastArgs",
                           f"Incompatible shapes: {x.numpy().tolist()} vs. {y.numpy().tolist()}") from None
        return convert_to_tensor(np.array(out, dtype=x.dtype.np))
    ones = _math.add(_array.zeros(x, _dt.int8), _array.zeros(y, _dt.int8))
    return _array.shape(ones, out_type=x.dtype)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """The bin of each value among `nbins` equal bins over `value_range` = [lo, hi]; values
    below lo go to bin 0, values at or above hi to the last."""
    values = convert_to_tensor(values)
    value_range = _math.cast(convert_to_tensor(value_range), values.dtype)
    lo, hi = value_range[0], value_range[1]
    nbins_f = _math.cast(nbins, values.dtype)
    scaled = _math.floor(_math.multiply(_math.divide(values - lo, hi - lo), nbins_f))
    clipped = _math.clip_by_value(scaled, _math.cast(0, values.dtype), nbins_f - 1)
    return _math.cast(clipped, dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """How many values fall in each of `nbins` equal bins over `value_range` (the out-of-range
    ones in the first and last bins).

    Example:
        >>> tl.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5).numpy()
        array([2, 1, 1, 0, 1], dtype=int32)
    """
    bins = histogram_fixed_width_bins(values, value_range, nbins, _dt.int32)
    return _math.bincount(_array.reshape(bins, [-1]), minlength=nbins, maxlength=nbins,
                          dtype=dtype)


_SHAPE_OPS = {"Shape": lambda op: op.inputs[0].shape,
              "Size": lambda op: op.inputs[0].shape, "Rank": lambda op: op.inputs[0].shape}


def get_static_value(tensor, partial=False):
    """The numpy value of `tensor` if it is known without running anything, else None.

    Eager tensors and Python/numpy values give their value; while tracing, a constant
    gives its value and the shape, size or rank of a tensor whose shape is known gives
    that. `partial=True` is accepted (TensorFlow's partial shapes are not returned).
    """
    if isinstance(tensor, Tensor):
        return tensor.numpy() if tensor.dtype is not _dt.resource else None
    if not isinstance(tensor, SymbolicTensor):
        if hasattr(tensor, "read_value"):
            return None      # a Variable can change: not a static value
        return np.asarray(tensor)
    op = tensor.op
    if op.type == "Const":
        value = op.attrs["value"]
        return np.asarray(value.get() if hasattr(value, "get") else value)
    if op.type in _SHAPE_OPS:
        shape = _SHAPE_OPS[op.type](op)
        if op.type == "Rank":
            return None if shape.rank is None else np.array(shape.rank, tensor.dtype.np)
        if not shape.is_fully_defined():
            return None
        dims = shape.as_list()
        if op.type == "Size":
            return np.array(int(np.prod(dims)), tensor.dtype.np)
        return np.array(dims, tensor.dtype.np)
    return None


# ------------------------------------------------------------------ DynamicPartition / Stitch

def _partition_infer(data, partitions, num_partitions):
    if not partitions.dtype.is_integer:
        raise TypeError(f"partitions must be integers, got {partitions.dtype.name}")
    if data.shape.rank is not None and partitions.shape.rank is not None:
        if not TensorShape(data.shape.as_list()[:partitions.shape.rank]).is_compatible_with(
                partitions.shape):
            raise ValueError(f"partitions shape {partitions.shape} must be a prefix of data shape "
                             f"{data.shape}")
        rest = data.shape.as_list()[partitions.shape.rank:]
    else:
        rest = None
    return tuple(spec(None if rest is None else [None] + rest, data.dtype)
                 for _ in range(num_partitions))


def _partition_grad(op, *dys):
    data, partitions = op.inputs
    n = op.attrs["num_partitions"]
    count = _array.size(partitions)
    positions = _array.reshape(_array.range(count), _array.shape(partitions))
    where = apply("DynamicPartition", positions, partitions, num_partitions=n)
    dys = [d if d is not None else _array.zeros_like(o) for d, o in zip(dys, op.outputs)]
    stitched = apply("DynamicStitch", *where, *dys, N=n)
    return _array.reshape(stitched, _array.shape(data)), None


@defop("DynamicPartition", infer=_partition_infer, grad=_partition_grad, num_outputs=None)
def _dynamic_partition(xp, data, partitions, num_partitions):
    if partitions.size and (partitions.min() < 0 or partitions.max() >= num_partitions):
        bad = partitions[(partitions < 0) | (partitions >= num_partitions)].reshape(-1)[0]
        raise op_error(InvalidArgumentError, "DynamicPartition",
                       f"partitions has the value {int(bad)}, not in [0, {num_partitions})")
    if data.shape[:partitions.ndim] != partitions.shape:
        raise op_error(InvalidArgumentError, "DynamicPartition",
                       f"partitions shape {partitions.shape} must be a prefix of data shape "
                       f"{data.shape}")
    return tuple(data[partitions == i] for i in range(num_partitions))


def _stitch_infer(*inputs, N):
    indices, data = inputs[:N], inputs[N:]
    for i in indices:
        if not i.dtype.is_integer:
            raise TypeError(f"indices must be integers, got {i.dtype.name}")
    dtype = data[0].dtype
    rest = None
    for i, d in zip(indices, data):
        if d.dtype is not dtype:
            raise TypeError(f"all data must have one dtype, got {dtype.name} and {d.dtype.name}")
        if d.shape.rank is not None and i.shape.rank is not None:
            rest = d.shape.as_list()[i.shape.rank:]
    return spec(None if rest is None else [None] + rest, dtype)


def _stitch_grad(op, dy):
    n = op.attrs["N"]
    indices = op.inputs[:n]
    return [None] * n + [_array.gather(dy, i) for i in indices]


@defop("DynamicStitch", infer=_stitch_infer, grad=_stitch_grad)
def _dynamic_stitch(xp, *inputs, N):
    indices, data = inputs[:N], inputs[N:]
    size = max((int(i.max()) + 1 for i in indices if i.size), default=0)
    rest = None
    for i, d in zip(indices, data):
        if d.shape[:i.ndim] != i.shape:
            raise op_error(InvalidArgumentError, "DynamicStitch",
                           f"data shape {d.shape} must start with its indices' shape {i.shape}")
        if rest is None or i.size:
            rest = d.shape[i.ndim:]
    out = xp.zeros((size,) + tuple(rest or ()), dtype=data[0].dtype)
    for i, d in zip(indices, data):
        if i.size:
            if i.min() < 0:
                raise op_error(InvalidArgumentError, "DynamicStitch",
                               f"indices must be >= 0, got {int(i.min())}")
            out[i.reshape(-1)] = d.reshape((-1,) + out.shape[1:])
    return out


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: output i holds the rows of `data` whose
    `partitions` entry is i, in order (`partitions`' shape is a prefix of `data`'s).

    Example:
        >>> [t.numpy().tolist() for t in tl.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 1], 2)]
        [[10, 30], [20, 40]]
    """
    data, partitions = convert_to_tensor(data), convert_to_tensor(partitions)
    out = apply("DynamicPartition", data, partitions, num_partitions=int(num_partitions))
    return list(out if isinstance(out, tuple) else (out,))


def dynamic_stitch(indices, data, name=None):
    """Interleaves the `data` tensors into one: `out[indices[m][i]] = data[m][i]` (later ones
    win where indices repeat).

    Example:
        >>> tl.dynamic_stitch([[0, 2], [1, 3]], [[10, 30], [20, 40]]).numpy().tolist()
        [10, 20, 30, 40]
    """
    indices = [convert_to_tensor(i) for i in indices]
    data = [convert_to_tensor(d) for d in data]
    if len(indices) != len(data) or not indices:
        raise ValueError(f"dynamic_stitch: needs as many index tensors as data tensors (at least "
                         f"one), got {len(indices)} and {len(data)}")
    return apply("DynamicStitch", *indices, *data, N=len(indices))
