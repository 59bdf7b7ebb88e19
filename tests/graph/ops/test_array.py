"""Array ops: numpy references, inference == eager, graphs with unknown dims, gradients, errors.

One table (`CASES`) drives the reference, inference and gradient checks; hypothesis
drives shapes for reshape, transpose, concat/stack and slicing keys.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import trainlib as tl
from trainlib.graph.context import graph_scope
from trainlib.graph.ir import Graph
from trainlib.graph.op import REGISTRY, apply
from trainlib.graph.ops.array import broadcast_to_shape_of, sum_to_shape_of
from trainlib.graph.tensor import TensorSpec

from .harness import OpCase, check_against_numpy, check_gradient, make_inputs

FLOATS = ("float32", "float64")
ALL = ("float32", "float64", "int32", "int64", "bool")
NUMERIC = ("float32", "float64", "int32")
IDX = np.array([2, 0, 2], dtype=np.int32)          # indices into a dim of size 3
IDX2 = np.array([[1, 0], [2, 1], [0, 0]], dtype=np.int32)
MASK = np.array([True, False, True])


def _c(a):
    return tl.constant(a)


def _one_hot_ref(i, depth, axis=-1):
    out = (np.arange(depth) == i[..., None]).astype(np.float32)
    return np.moveaxis(out, -1, axis)


def _linspace_ref(a, b, num):
    out = np.linspace(a, b, num, axis=-1 if np.ndim(a) else 0)
    return out.astype(np.asarray(a).dtype)


def _gather_batch_ref(p, i):
    return np.stack([p[b][:, i[b]] for b in range(p.shape[0])])


def _mirror_fold_ref(dy, paddings, mode):
    """Gradient of np.pad(x, paddings, mode) w.r.t. x, by pushing ones through a Jacobian."""
    shape = tuple(d - lo - hi for d, (lo, hi) in zip(dy.shape, paddings))
    out = np.zeros(shape, dy.dtype)
    for flat in range(int(np.prod(shape))):
        e = np.zeros(shape)
        e.reshape(-1)[flat] = 1
        out.reshape(-1)[flat] = np.sum(np.pad(e, paddings, mode) * dy)
    return out


def _unique_ref(x, idx_dtype=np.int32, counts=False):
    values, first, inverse, count = np.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
    order = np.argsort(first)
    rank = np.argsort(order)
    out = (values[order], rank[inverse.reshape(-1)].astype(idx_dtype))
    return out + (count[order].astype(idx_dtype),) if counts else out


def _scatter_nd_ref(t, indices, u, fn):
    out = np.array(t, copy=True)
    for i, v in zip(np.asarray(indices), u):
        out[tuple(i)] = fn(out[tuple(i)], v)
    return out


def _reverse_sequence_ref(x, lengths, seq_axis, batch_axis):
    out = np.array(x, copy=True)
    for b, n in enumerate(lengths):
        src = np.take(x, b, axis=batch_axis)
        rev = np.concatenate([np.flip(np.take(src, range(n), axis=seq_axis - 1), seq_axis - 1),
                              np.take(src, range(n, src.shape[seq_axis - 1]), axis=seq_axis - 1)],
                             axis=seq_axis - 1)
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        out[tuple(index)] = rev
    return out


SORTED = np.array([0, 1, 1, 3])
DUP = np.array([[0, 1], [2, 2], [0, 1]], np.int32)   # one position twice: contributions add
UNIQ = np.array([[0, 1], [2, 0]], np.int64)

CASES = [
    # creation
    OpCase("zeros", ["Fill", "Const"], lambda: tl.zeros([2, 3]), lambda: np.zeros((2, 3), np.float32),
           [], grad=False),
    OpCase("ones_int", ["Fill"], lambda: tl.ones((0, 2), tl.int32), lambda: np.ones((0, 2), np.int32),
           [], grad=False),
    OpCase("fill", ["Fill"], lambda v: tl.fill([2, 2], v), lambda v: np.full((2, 2), v), [()],
           dtypes=ALL),
    OpCase("fill_scalar", ["Fill"], lambda v: tl.fill([], v), lambda v: np.asarray(v), [()]),
    OpCase("zeros_like", ["ZerosLike"], tl.zeros_like, np.zeros_like, [(2, 3)], dtypes=ALL, grad=False),
    OpCase("ones_like", ["OnesLike"], tl.ones_like, np.ones_like, [(0, 3)], dtypes=ALL, grad=False),
    OpCase("eye", ["Eye"], lambda: tl.eye(2, 3, batch_shape=[2]),
           lambda: np.broadcast_to(np.eye(2, 3, dtype=np.float32), (2, 2, 3)), [], grad=False),
    OpCase("eye_int", ["Eye"], lambda: tl.eye(3, dtype=tl.int32), lambda: np.eye(3, dtype=np.int32),
           [], grad=False),
    OpCase("range", ["Range"], lambda: tl.range(3, 18, 3),
           lambda: np.arange(3, 18, 3, dtype=np.int32), [], grad=False),
    OpCase("range_float", ["Range"], lambda: tl.range(3, 1, -0.5),
           lambda: np.array([3, 2.5, 2, 1.5], np.float32), [], grad=False),
    OpCase("range_empty", ["Range"], lambda: tl.range(0), lambda: np.zeros(0, np.int32), [], grad=False),
    OpCase("linspace", ["LinSpace"], lambda a, b: tl.linspace(a, b, 5), lambda a, b: _linspace_ref(a, b, 5),
           [(), ()]),
    OpCase("linspace_batch", ["LinSpace"], lambda a, b: tl.linspace(a, b, 4, axis=-1),
           lambda a, b: _linspace_ref(a, b, 4), [(2,), (2,)]),
    OpCase("identity", ["Identity"], tl.identity, lambda x: x, [(2, 3)], dtypes=ALL),
    OpCase("stop_gradient", ["StopGradient"], tl.stop_gradient, lambda x: x, [(3,)], dtypes=ALL,
           grad=False),
    # shapes
    OpCase("shape", ["Shape"], tl.shape, lambda x: np.array(x.shape, np.int32), [(2, 0, 3)],
           dtypes=ALL, grad=False),
    OpCase("shape_scalar_int64", ["Shape"], lambda x: tl.shape(x, out_type=tl.int64),
           lambda x: np.zeros(0, np.int64), [()], grad=False),
    OpCase("size", ["Size"], tl.size, lambda x: np.int32(x.size), [(2, 3)], dtypes=ALL, grad=False),
    OpCase("rank", ["Rank"], tl.rank, lambda x: np.int32(x.ndim), [(2, 3, 1)], grad=False),
    OpCase("reshape", ["Reshape"], lambda x: tl.reshape(x, [3, -1]), lambda x: x.reshape(3, -1),
           [(2, 3)], dtypes=ALL),
    OpCase("reshape_scalar", ["Reshape"], lambda x: tl.reshape(x, [1, 1]), lambda x: x.reshape(1, 1),
           [()]),
    OpCase("reshape_empty", ["Reshape"], lambda x: tl.reshape(x, [3, 0]), lambda x: x.reshape(3, 0),
           [(0, 2)]),
    OpCase("reshape_tensor", ["Reshape", "Shape", "ReverseV2"],
           lambda x: tl.reshape(x, tl.reverse(tl.shape(x), [0])), lambda x: x.reshape(x.shape[::-1]),
           [(2, 3, 4)]),
    OpCase("reshape_listed_dims", ["Reshape", "Pack", "StridedSlice"],
           lambda x: tl.reshape(x, [tl.shape(x)[0], -1]), lambda x: x.reshape(x.shape[0], -1),
           [(2, 3, 2)]),
    OpCase("transpose", ["Transpose"], lambda x: tl.transpose(x, [2, 0, 1]),
           lambda x: x.transpose(2, 0, 1), [(2, 3, 4)], dtypes=ALL),
    OpCase("transpose_default", ["Transpose"], tl.transpose, lambda x: x.T, [(2, 3)]),
    OpCase("expand_dims", ["ExpandDims"], lambda x: tl.expand_dims(x, -1),
           lambda x: x[..., None], [(2, 3)], dtypes=ALL),
    OpCase("expand_dims_scalar", ["ExpandDims"], lambda x: tl.expand_dims(x, 0), lambda x: x[None], [()]),
    OpCase("squeeze_all", ["Squeeze"], tl.squeeze, np.squeeze, [(1, 3, 1)], dtypes=ALL),
    OpCase("squeeze_axis", ["Squeeze"], lambda x: tl.squeeze(x, axis=[-1]),
           lambda x: np.squeeze(x, -1), [(1, 3, 1)]),
    # the autodiff driver's broadcasting undone when shapes are known only at run time
    OpCase("sum_to_shape_of", ["SumToShapeOf"], sum_to_shape_of,
           lambda g, x: g.sum(axis=(0, 2), keepdims=True)[0], [(2, 3, 4), (3, 1)]),
    OpCase("broadcast_to_shape_of", ["BroadcastToShapeOf"], broadcast_to_shape_of,
           lambda x, like: np.broadcast_to(x, like.shape), [(3, 1), (2, 3, 4)]),
    OpCase("broadcast_to", ["BroadcastTo"], lambda x: tl.broadcast_to(x, [2, 3, 4]),
           lambda x: np.broadcast_to(x, (2, 3, 4)), [(3, 1)], dtypes=ALL),
    OpCase("broadcast_to_tensor", ["BroadcastTo", "Shape"], lambda x, y: tl.broadcast_to(x, tl.shape(y)),
           lambda x, y: np.broadcast_to(x, y.shape), [(3,), (2, 3)]),
    OpCase("tile", ["Tile"], lambda x: tl.tile(x, [2, 1, 3]), lambda x: np.tile(x, (2, 1, 3)),
           [(2, 3, 1)], dtypes=ALL),
    OpCase("tile_tensor", ["Tile", "Shape"], lambda x: tl.tile(x, tl.shape(x)),
           lambda x: np.tile(x, x.shape), [(2, 3)]),
    OpCase("reverse", ["ReverseV2"], lambda x: tl.reverse(x, [0, -1]), lambda x: x[::-1, :, ::-1],
           [(2, 3, 2)], dtypes=ALL),
    # joining and splitting
    OpCase("concat", ["ConcatV2"], lambda a, b: tl.concat([a, b], 1),
           lambda a, b: np.concatenate([a, b], 1), [(2, 3), (2, 1)], dtypes=ALL),
    OpCase("concat3_neg_axis", ["ConcatV2"], lambda a, b, c: tl.concat([a, b, c], -1),
           lambda a, b, c: np.concatenate([a, b, c], -1), [(2, 1), (2, 0), (2, 2)]),
    OpCase("stack", ["Pack"], lambda a, b: tl.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1),
           [(2, 3), (2, 3)], dtypes=ALL),
    OpCase("stack_scalars", ["Pack"], lambda a, b, c: tl.stack([a, b, c]),
           lambda a, b, c: np.stack([a, b, c]), [(), (), ()]),
    OpCase("unstack", ["Unpack"], lambda x: tl.unstack(x, num=3, axis=1), lambda x: list(np.moveaxis(x, 1, 0)),
           [(2, 3)], dtypes=ALL),
    OpCase("split", ["Split"], lambda x: tl.split(x, 2, axis=-1), lambda x: np.split(x, 2, axis=-1),
           [(3, 4)], dtypes=ALL),
    OpCase("split_sizes", ["SplitV"], lambda x: tl.split(x, [1, -1, 2], axis=0),
           lambda x: np.split(x, [1, 3], axis=0), [(5, 2)]),
    OpCase("split_sizes_tensor", ["SplitV", "Shape", "Pack"],
           lambda x: tl.split(x, tl.stack([tl.shape(x)[0] - 1, 1])),
           lambda x: np.split(x, [x.shape[0] - 1]), [(4, 2)]),
    # gathering
    OpCase("gather", ["GatherV2"], lambda p: tl.gather(p, _c(IDX)), lambda p: p[IDX], [(3, 2)], dtypes=ALL),
    OpCase("gather_axis1", ["GatherV2"], lambda p: tl.gather(p, _c(IDX2), axis=1),
           lambda p: p[:, IDX2], [(2, 3, 2)]),
    OpCase("gather_batch", ["GatherV2"], lambda p, i: tl.gather(p, i, axis=2, batch_dims=1),
           _gather_batch_ref, [(2, 2, 3), (2, 4)], low=0, high=3, ints=[1]),
    OpCase("gather_scalar_index", ["GatherV2"], lambda p: tl.gather(p, 1), lambda p: p[1], [(3, 2)]),
    OpCase("gather_empty", ["GatherV2"], lambda p: tl.gather(p, _c(np.zeros(0, np.int32))),
           lambda p: p[np.zeros(0, int)], [(3, 2)]),
    OpCase("gather_nd", ["GatherNd"], lambda p: tl.gather_nd(p, _c(IDX2)),
           lambda p: p[IDX2[:, 0], IDX2[:, 1]], [(3, 3, 2)], dtypes=ALL),
    OpCase("gather_nd_batch", ["GatherNd"], lambda p: tl.gather_nd(p, _c(IDX2[:2, :1]), batch_dims=1),
           lambda p: np.stack([p[0][IDX2[0, 0]], p[1][IDX2[1, 0]]]), [(2, 3, 2)]),
    OpCase("one_hot", ["OneHot"], lambda i: tl.one_hot(i, 4), lambda i: _one_hot_ref(i, 4),
           [(2, 3)], low=-1, high=5, ints=[0], grad=False),
    OpCase("one_hot_axis0", ["OneHot"], lambda i: tl.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
           lambda i: np.where(_one_hot_ref(i, 3, 0) > 0, 5, -1).astype(np.int32),
           [(2,)], low=0, high=3, ints=[0], grad=False),
    OpCase("boolean_mask", ["BooleanMask"], lambda x: tl.boolean_mask(x, _c(MASK), axis=1),
           lambda x: x[:, MASK], [(2, 3)], dtypes=ALL),
    # padding and slicing
    OpCase("pad", ["PadV2"], lambda x: tl.pad(x, [[1, 0], [2, 1]]),
           lambda x: np.pad(x, [[1, 0], [2, 1]]), [(2, 3)], dtypes=NUMERIC),
    OpCase("pad_value", ["PadV2"], lambda x: tl.pad(x, [[0, 2]], constant_values=7),
           lambda x: np.pad(x, [[0, 2]], constant_values=7), [(0,)], dtypes=NUMERIC),
    OpCase("pad_tensor", ["PadV2", "Shape", "Pack"],
           lambda x: tl.pad(x, tl.stack([tl.shape(x) - tl.shape(x) + 1, [0, 1]], axis=1)),
           lambda x: np.pad(x, [[1, 0], [1, 1]]), [(2, 2)]),
    OpCase("pad_reflect", ["MirrorPad"], lambda x: tl.pad(x, [[1, 1], [2, 0]], "REFLECT"),
           lambda x: np.pad(x, [[1, 1], [2, 0]], "reflect"), [(3, 3)], dtypes=NUMERIC),
    OpCase("pad_symmetric", ["MirrorPad"], lambda x: tl.pad(x, [[2, 1]], "symmetric"),
           lambda x: np.pad(x, [[2, 1]], "symmetric"), [(3,)], dtypes=NUMERIC),
    OpCase("slice", ["Slice"], lambda x: tl.slice(x, [1, 0], [2, -1]), lambda x: x[1:3, :],
           [(3, 4)], dtypes=ALL),
    OpCase("slice_tensor", ["Slice", "Shape"], lambda x: tl.slice(x, [0, 1], tl.shape(x) - [0, 1]),
           lambda x: x[:, 1:], [(2, 3)]),
    OpCase("getitem", ["StridedSlice"], lambda x: x[1, ::-1, None, 1:], lambda x: x[1, ::-1, None, 1:],
           [(2, 3, 4)], dtypes=ALL),
    OpCase("getitem_ellipsis", ["StridedSlice"], lambda x: x[..., -1, ::2], lambda x: x[..., -1, ::2],
           [(2, 3, 4)]),
    OpCase("getitem_tensor_index", ["StridedSlice", "Shape"], lambda x: x[tl.shape(x)[0] - 1, 1:],
           lambda x: x[-1, 1:], [(3, 3)]),
    OpCase("getitem_empty", ["StridedSlice"], lambda x: x[2:1], lambda x: x[2:1], [(3, 2)]),
    # the gradient ops are differentiable themselves (second order)
    OpCase("gather_grad", ["GatherV2Grad"],
           lambda dy, p: apply("GatherV2Grad", dy, _c(IDX), p, axis=0, batch_dims=0),
           lambda dy, p: np.stack([dy[1], 0 * dy[0], dy[0] + dy[2]]), [(3, 2), (3, 2)]),
    OpCase("gather_nd_grad", ["GatherNdGrad"],
           lambda dy, p: apply("GatherNdGrad", dy, _c(IDX2[:, :1]), p, batch_dims=0),
           lambda dy, p: _scatter_ref(dy, IDX2[:, 0], 3), [(3, 2), (3, 2)]),
    OpCase("strided_slice_grad", ["StridedSliceGrad"],
           lambda dy, x: apply("StridedSliceGrad", dy, x, key=(("int", 1), ("slice", None, None, -2))),
           lambda dy, x: _set_ref(x.shape, (1, slice(None, None, -2)), dy), [(2,), (2, 3)]),
    OpCase("mirror_pad_grad", ["MirrorPadGrad"],
           lambda dy: apply("MirrorPadGrad", dy, paddings=((1, 2), (2, 0)), mode="REFLECT"),
           lambda dy: _mirror_fold_ref(dy, ((1, 2), (2, 0)), "reflect"), [(6, 5)]),
    OpCase("mirror_pad_grad_symmetric", ["MirrorPadGrad"],
           lambda dy: apply("MirrorPadGrad", dy, paddings=((2, 2),), mode="SYMMETRIC"),
           lambda dy: _mirror_fold_ref(dy, ((2, 2),), "symmetric"), [(6,)]),
    OpCase("boolean_mask_grad", ["BooleanMaskGrad"],
           lambda dy, x: apply("BooleanMaskGrad", dy, _c(MASK), x, axis=0),
           lambda dy, x: _set_ref(x.shape, MASK, dy), [(2, 2), (3, 2)]),
] + [
    # sorting, searching, unique
    OpCase("sort", ["ArgSort", "GatherV2"], tl.sort, lambda x: np.sort(x, axis=-1), [(2, 4)],
           dtypes=NUMERIC),
    OpCase("sort_descending_axis0", ["ArgSort", "GatherV2", "Transpose"],
           lambda x: tl.sort(x, axis=0, direction="DESCENDING"),
           lambda x: -np.sort(-x, axis=0), [(3, 2, 2)], dtypes=NUMERIC),
    OpCase("argsort_ties", ["ArgSort"], lambda x: tl.argsort(x, direction="DESCENDING"),
           lambda x: np.argsort(-x, axis=-1, kind="stable").astype(np.int32), [(3, 5)],
           dtypes=("int32", "int64"), low=0, high=2, grad=False),
    OpCase("argsort_axis0", ["ArgSort"], lambda x: tl.argsort(x, axis=0),
           lambda x: np.argsort(x, axis=0, kind="stable").astype(np.int32), [(4, 2)],
           dtypes=NUMERIC, low=0, high=2, grad=False),
    OpCase("unique", ["Unique"], lambda x: tuple(tl.unique(x)), _unique_ref, [(7,)],
           dtypes=("int32", "int64", "float32"), low=0, high=3, grad=False),
    OpCase("unique_with_counts", ["Unique"], lambda x: tuple(tl.unique_with_counts(x, tl.int64)),
           lambda x: _unique_ref(x, np.int64, counts=True), [(6,)], dtypes=("int32",), low=0,
           high=3, grad=False),
    OpCase("searchsorted", ["SearchSorted"],
           lambda s, v: tl.searchsorted(tl.sort(s), v, side="right"),
           lambda s, v: np.stack([np.searchsorted(np.sort(r), q, side="right") for r, q in
                                  zip(s, v)]).astype(np.int32), [(2, 4), (2, 3)],
           dtypes=("float32", "int32"), low=0, high=3, grad=False),
    OpCase("searchsorted_left_int64", ["SearchSorted"],
           lambda v: tl.searchsorted(tl.constant(SORTED, v.dtype), v, out_type=tl.int64),
           lambda v: np.searchsorted(SORTED, v).astype(np.int64), [(5,)],
           dtypes=("float64", "int32"), low=0, high=4, grad=False),
    # roll, repeat, meshgrid
    OpCase("roll", ["Roll"], lambda x: tl.roll(x, [1, -2, 1], [0, 1, 0]),
           lambda x: np.roll(x, (1, -2, 1), (0, 1, 0)), [(3, 4)], dtypes=ALL),
    OpCase("repeat_flat", ["Repeat", "Reshape"], lambda x: tl.repeat(x, 2),
           lambda x: np.repeat(x, 2), [(2, 3)], dtypes=ALL),
    OpCase("repeat_list_axis", ["Repeat", "RepeatGrad"], lambda x: tl.repeat(x, [2, 0, 1], axis=1),
           lambda x: np.repeat(x, [2, 0, 1], axis=1), [(2, 3)]),
    OpCase("repeat_grad", ["RepeatGrad", "Repeat"],
           lambda dy, x: apply("RepeatGrad", dy, x, repeats=2, axis=0),
           lambda dy, x: dy.reshape(2, 2, 3).sum(1), [(4, 3), (2, 3)]),
    OpCase("meshgrid_xy", ["BroadcastTo", "Reshape"], lambda a, b, c: tl.meshgrid(a, b, c),
           lambda a, b, c: np.meshgrid(a, b, c), [(2,), (3,), (2,)], dtypes=NUMERIC),
    OpCase("meshgrid_ij", ["BroadcastTo"], lambda a, b: tl.meshgrid(a, b, indexing="ij"),
           lambda a, b: np.meshgrid(a, b, indexing="ij"), [(2,), (3,)]),
    # scatter_nd and tensor_scatter_nd_*
    OpCase("scatter_nd", ["ScatterNd", "GatherNd"], lambda u: tl.scatter_nd(_c(IDX2[:, :1]), u, [4, 2]),
           lambda u: _scatter_ref(u, IDX2[:, 0], 4), [(3, 2)], dtypes=NUMERIC),
    OpCase("scatter_nd_duplicates", ["ScatterNd"], lambda u: tl.scatter_nd(_c(DUP), u, [3, 3]),
           lambda u: _scatter_nd_ref(np.zeros((3, 3), u.dtype), DUP, u, np.add), [(3,)]),
    OpCase("tensor_scatter_nd_update", ["TensorScatterUpdate", "GatherNd"],
           lambda t, u: tl.tensor_scatter_nd_update(t, _c(UNIQ), u),
           lambda t, u: _scatter_nd_ref(t, UNIQ, u, lambda a, b: b), [(3, 3), (2,)], dtypes=ALL),
    OpCase("tensor_scatter_nd_update_rows", ["TensorScatterUpdate"],
           lambda t, u: tl.tensor_scatter_nd_update(t, _c([[2], [0]]), u),
           lambda t, u: _scatter_nd_ref(t, np.array([[2], [0]]), u, lambda a, b: b),
           [(3, 2), (2, 2)]),
    OpCase("tensor_scatter_nd_add", ["TensorScatterAdd"],
           lambda t, u: tl.tensor_scatter_nd_add(t, _c(DUP), u),
           lambda t, u: _scatter_nd_ref(t, DUP, u, np.add), [(3, 3), (3,)], dtypes=NUMERIC),
    OpCase("tensor_scatter_nd_sub", ["TensorScatterSub"],
           lambda t, u: tl.tensor_scatter_nd_sub(t, _c(DUP), u),
           lambda t, u: _scatter_nd_ref(t, DUP, u, np.subtract), [(3, 3), (3,)], dtypes=NUMERIC),
    OpCase("tensor_scatter_nd_max", ["TensorScatterMax", "TensorScatterAdd"],
           lambda t, u: tl.tensor_scatter_nd_max(t, _c(UNIQ), u),
           lambda t, u: _scatter_nd_ref(t, UNIQ, u, np.maximum), [(3, 3), (2,)], dtypes=NUMERIC),
    OpCase("tensor_scatter_nd_min", ["TensorScatterMin"],
           lambda t, u: tl.tensor_scatter_nd_min(t, _c(UNIQ), u),
           lambda t, u: _scatter_nd_ref(t, UNIQ, u, np.minimum), [(3, 3), (2,)], dtypes=NUMERIC),
    # reverse_sequence, ensure_shape
    OpCase("reverse_sequence", ["ReverseSequence"],
           lambda x: tl.reverse_sequence(x, [2, 0, 4], seq_axis=2, batch_axis=0),
           lambda x: _reverse_sequence_ref(x, [2, 0, 4], 2, 0), [(3, 2, 4)], dtypes=ALL),
    OpCase("ensure_shape", ["EnsureShape"], lambda x: tl.ensure_shape(x, [None, 3]) * 2,
           lambda x: x * x.dtype.type(2), [(2, 3)], dtypes=NUMERIC),
]


def _scatter_ref(dy, idx, n):
    out = np.zeros((n,) + dy.shape[1:], dy.dtype)
    np.add.at(out, idx, dy)
    return out


def _set_ref(shape, key, dy):
    out = np.zeros(shape, dy.dtype)
    out[key] = dy
    return out


def _arrays(case, dtype, seed=0):
    return make_inputs(case, dtype, np.random.default_rng(seed))


PARAMS = [(c, d) for c in CASES for d in c.dtypes]


@pytest.mark.parametrize("case,dtype", PARAMS, ids=[f"{c}-{d}" for c, d in PARAMS])
def test_against_numpy(case, dtype):
    check_against_numpy(case, _arrays(case, dtype))


GRAD_CASES = [c for c in CASES if c.grad]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradient(case):
    check_gradient(case, _arrays(case, "float64"))


# ------------------------------------------------------------------ inference == eager, graphs

# ops whose shape-like arguments may come as tensor inputs: how many inputs they have
# when those arguments are static attrs (then inference must predict exact shapes)
STATIC_FORM_INPUTS = {"Reshape": 1, "BroadcastTo": 1, "Tile": 1, "Fill": 1, "SplitV": 1, "PadV2": 2,
                      "MirrorPad": 1, "MirrorPadGrad": 1, "Slice": 1, "Range": 0,
                      "StridedSlice": 1, "StridedSliceGrad": 2}


def _run_graph(graph, feeds):
    """Executes `graph` op by op with the kernels, checking each op's inference rule on the
    actual input specs against what its kernel returned. Returns the values by tensor id."""
    values = dict(feeds)
    for op in graph.operations:
        if op.type == "Placeholder":
            continue
        arrays = [values[id(t)] for t in op.inputs]
        out = op.opdef.kernel(np, *arrays, **op.attrs)
        outs = (out,) if op.opdef.num_outputs == 1 else tuple(out or ())
        predicted = REGISTRY[op.type].infer(
            *[TensorSpec(a.shape, tl.as_dtype(a.dtype)) for a in arrays], **op.attrs)
        predicted = (predicted,) if isinstance(predicted, TensorSpec) else tuple(predicted or ())
        assert len(predicted) == len(outs), op
        for p, o, sym in zip(predicted, outs, op.outputs):
            o = np.asarray(o)
            if len(op.inputs) > STATIC_FORM_INPUTS.get(op.type, len(op.inputs)) or \
                    op.type in ("BooleanMask", "Unique"):  # output dims depend on input values
                assert p.shape.is_compatible_with(o.shape), f"{op.type}: {p.shape} vs {o.shape}"
            else:
                assert p.shape == tl.TensorShape(o.shape), f"{op.type}: infer {p.shape} != {o.shape}"
            assert p.dtype is tl.as_dtype(o.dtype), f"{op.type}: infer {p.dtype} != kernel {o.dtype}"
            assert sym.shape.is_compatible_with(o.shape), f"{op.type}: traced {sym.shape} vs {o.shape}"
            values[id(sym)] = o
    return values


def _trace(case, arrays, unknown_dims):
    graph = Graph("test")
    with graph_scope(graph):
        feeds, placeholders = {}, []
        for a in arrays:
            shape = [None] * a.ndim if unknown_dims else list(a.shape)
            p = apply("Placeholder", shape=tl.TensorShape(shape), dtype=tl.as_dtype(a.dtype))
            feeds[id(p)] = a
            placeholders.append(p)
        out = case.fn(*placeholders)
    return graph, feeds, out


@pytest.mark.parametrize("unknown_dims", [False, True], ids=["static", "none_dims"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_matches_eager(case, unknown_dims):
    """Every op's inference rule predicts its kernel's output, and a graph traced with static
    or all-None input dims computes what eager execution computes."""
    arrays = _arrays(case, case.dtypes[0])
    eager = case.fn(*[tl.constant(a) for a in arrays])
    graph, feeds, out = _trace(case, arrays, unknown_dims)
    graph.verify()
    values = _run_graph(graph, feeds)
    eager_list = eager if isinstance(eager, (list, tuple)) else [eager]
    out_list = out if isinstance(out, (list, tuple)) else [out]
    for e, o in zip(eager_list, out_list):
        got = values[id(o)] if id(o) in values else o.op.attrs["value"]
        np.testing.assert_array_equal(got, e.numpy())
        assert tl.as_dtype(got.dtype) is e.dtype
        if not unknown_dims:
            assert o.shape == e.shape or not o.shape.is_fully_defined(), (o.shape, e.shape)
        assert o.shape.is_compatible_with(e.shape)


def _weighted_gradients(case, tensors, weights):
    with tl.GradientTape() as tape:
        for t in tensors:
            if t.dtype.is_floating:
                tape.watch(t)
        out = case.fn(*tensors)
        outs = out if isinstance(out, (list, tuple)) else [out]
        total = tl.reduce_sum(outs[0] * tl.constant(weights[0]))
        for o, w in zip(outs[1:], weights[1:]):
            total = total + tl.reduce_sum(o * tl.constant(w))
    return tape.gradient(total, [t for t in tensors if t.dtype.is_floating])


@pytest.mark.parametrize("unknown_dims", [False, True], ids=["static", "none_dims"])
@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_traced_gradient_matches_eager(case, unknown_dims):
    """Gradient rules build the same values inside graphs, also where dims are unknown (their
    shape-dependent parts then go through run-time Shape ops)."""
    arrays = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in _arrays(case, "float64")]
    eager_out = case.fn(*[tl.constant(a) for a in arrays])
    eager_outs = eager_out if isinstance(eager_out, (list, tuple)) else [eager_out]
    rng = np.random.default_rng(3)
    weights = [rng.uniform(0.5, 1.5, size=tuple(o.shape)) for o in eager_outs]
    eager = _weighted_gradients(case, [tl.constant(a) for a in arrays], weights)
    graph = Graph("grad")
    with graph_scope(graph):
        feeds, placeholders = {}, []
        for a in arrays:
            shape = [None] * a.ndim if unknown_dims else list(a.shape)
            p = apply("Placeholder", shape=tl.TensorShape(shape), dtype=tl.as_dtype(a.dtype))
            feeds[id(p)] = a
            placeholders.append(p)
        traced = _weighted_gradients(case, placeholders, weights)
    graph.verify()
    values = _run_graph(graph, feeds)
    for e, t in zip(eager, traced):
        if e is None:
            assert t is None
            continue
        np.testing.assert_allclose(values[id(t)], e.numpy(), rtol=1e-12, atol=1e-12)


def test_cases_cover_every_array_op():
    import trainlib.graph.ops.array as array_module
    mine = {name for name, opdef in REGISTRY.items()
            if opdef.kernel.__module__ == array_module.__name__} - {"Placeholder"}
    covered = {op for c in CASES for op in c.ops} | {"Const"}
    assert mine <= covered, mine - covered
    for name in mine:
        if REGISTRY[name].differentiable:
            assert REGISTRY[name].grad is not None, name
            assert any(name in c.ops and c.grad for c in CASES), f"no gradient check for {name}"


def test_static_shapes_in_graph_with_unknown_batch():
    graph = Graph("batch")
    with graph_scope(graph):
        x = apply("Placeholder", shape=tl.TensorShape([None, 3]), dtype=tl.float32)
        assert tl.reshape(x, [-1, 3, 1]).shape.as_list() == [None, 3, 1]
        assert tl.transpose(x).shape.as_list() == [3, None]
        assert tl.concat([x, x], 1).shape.as_list() == [None, 6]
        assert tl.concat([x, x], 0).shape.as_list() == [None, 3]
        assert tl.stack([x, x]).shape.as_list() == [2, None, 3]
        assert tl.tile(x, [2, 2]).shape.as_list() == [None, 6]
        assert tl.pad(x, [[1, 1], [0, 2]]).shape.as_list() == [None, 5]
        assert x[:, 1].shape.as_list() == [None]
        assert x[1:, ::2].shape.as_list() == [None, 2]
        assert tl.gather(x, [0, 1], axis=1).shape.as_list() == [None, 2]
        assert tl.shape(x).shape.as_list() == [2]
        assert tl.squeeze(x).shape.rank is None
        assert tl.expand_dims(x, 1).shape.as_list() == [None, 1, 3]
        assert tl.reshape(x, tl.shape(x)).shape.as_list() == [None, None]
        n = tl.shape(x)[0]
        assert tl.reshape(x, [n, 3, 1]).shape.as_list() == [None, 3, 1]
        assert tl.reshape(x, [n, -1]).shape.as_list() == [None, None]
        assert tl.zeros([n, 3]).shape.as_list() == [None, 3]
        assert tl.broadcast_to(x, [2, n, 3]).shape.as_list() == [2, None, 3]
        assert tl.pad(x, [[n, 0], [0, 1]]).shape.as_list() == [None, None]
        assert [t.shape.as_list() for t in tl.split(x, 3, axis=1)] == [[None, 1]] * 3
        assert tl.one_hot(tl.zeros_like(x, tl.int32), 4).shape.as_list() == [None, 3, 4]
        assert tl.broadcast_to(x, [2, 5, 3]).shape.as_list() == [2, 5, 3]
        with pytest.raises(tl.errors.InvalidArgumentError, match="Dimension 1"):
            tl.concat([x, tl.zeros([2, 2])], 0)
        with pytest.raises(ValueError, match="num"):
            tl.unstack(x)
        y = apply("Placeholder", shape=tl.TensorShape(None), dtype=tl.float32)
        assert tl.reshape(y, [2, -1]).shape.as_list() == [2, None]
        assert tl.transpose(y).shape.rank is None
        assert y[0].shape.rank is None


def test_shape_reads_runtime_dims_in_function():
    @tl.function(input_signature=[tl.TensorSpec([None, None], tl.float32)])
    def f(x):
        return tl.shape(x), tl.size(x), tl.rank(x), tl.reshape(x, [tl.shape(x)[0] * 2, -1])

    s, n, r, y = f(tl.zeros([2, 4]))
    assert s.numpy().tolist() == [2, 4] and s.dtype is tl.int32
    assert int(n) == 8 and int(r) == 2 and y.shape == (4, 2)


# ------------------------------------------------------------------ behaviour details

def test_range_dtypes():
    assert tl.range(5).dtype is tl.int32
    assert tl.range(1.0, 3).dtype is tl.float32
    assert tl.range(tl.constant(4, tl.int64)).dtype is tl.int64
    assert tl.range(5, dtype=tl.float64).numpy().tolist() == [0, 1, 2, 3, 4]
    assert tl.range(5, 0, -2).numpy().tolist() == [5, 3, 1]
    assert tl.range(0, 1, 0.3).numpy().shape == (4,)


def test_zeros_shape_kinds():
    for shape in ([2, 3], (2, 3), tl.TensorShape([2, 3]), tl.constant([2, 3]), np.array([2, 3])):
        z = tl.zeros(shape)
        assert z.shape == (2, 3) and z.dtype is tl.float32
    assert tl.zeros([], tl.bool).numpy() == np.False_
    assert tl.ones(3, tl.int64).numpy().tolist() == [1, 1, 1]
    with pytest.raises(ValueError):
        tl.zeros(tl.TensorShape([None, 3]))


def test_eye_and_one_hot_defaults():
    assert tl.eye(2).dtype is tl.float32
    assert tl.one_hot([1], 2, on_value=tl.constant(3, tl.int64)).dtype is tl.int64
    assert tl.one_hot([-1, 9], 3).numpy().sum() == 0


def test_stop_gradient_stops_the_tape():
    x = tl.constant(3.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.stop_gradient(x * x)
        z = x * tl.stop_gradient(x)
    assert tape.gradient(y, x) is None
    assert float(tape.gradient(z, x)) == 3.0


def test_second_order_through_gather():
    x = tl.constant([1.0, 2.0, 3.0])
    with tl.GradientTape() as outer:
        outer.watch(x)
        with tl.GradientTape() as inner:
            inner.watch(x)
            y = tl.reduce_sum(tl.gather(x, [0, 0, 2]) ** 3)
        g = inner.gradient(y, x)
    assert g.numpy().tolist() == [6.0, 0.0, 27.0]
    assert outer.gradient(g, x).numpy().tolist() == [12.0, 0.0, 18.0]


def test_unstack_split_lists():
    assert tl.unstack(tl.zeros([0, 2])) == []
    parts = tl.split(tl.zeros([4]), 1)
    assert isinstance(parts, list) and len(parts) == 1


# ------------------------------------------------------------------ errors

def test_gather_out_of_range_names_index_and_range():
    for bad in ([0, 5], [-1]):
        with pytest.raises(tl.errors.InvalidArgumentError, match=r"indices\[\d\] = (5|-1) is not in \[0, 3\)"):
            tl.gather([1.0, 2.0, 3.0], bad)
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"indices\[1,0\] = 4 is not in \[0, 2\)"):
        tl.gather(tl.zeros([3, 2]), [[0], [4]], axis=1)
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"indices\[1\] = \[0, 7\]"):
        tl.gather_nd(tl.zeros([2, 2]), [[0, 0], [0, 7]])


def test_reshape_error_names_both_sizes():
    with pytest.raises(tl.errors.InvalidArgumentError, match="6 values.*has 4"):
        tl.reshape(tl.zeros([2, 3]), [4])
    with pytest.raises(tl.errors.InvalidArgumentError, match="7 values.*multiple of 2"):
        tl.reshape(tl.zeros([7]), [2, -1])


def test_concat_dtype_mismatch_names_both():
    with pytest.raises(tl.errors.InvalidArgumentError, match="float32.*int32|int32.*float32"):
        tl.concat([tl.zeros([2]), tl.constant([1, 2])], 0)
    with pytest.raises(tl.errors.InvalidArgumentError, match="Dimension 0 in both shapes"):
        tl.concat([tl.zeros([2, 2]), tl.zeros([3, 2])], 1)
    with pytest.raises(tl.errors.InvalidArgumentError, match="scalars"):
        tl.concat([tl.constant(1.0), tl.constant(2.0)], 0)


@pytest.mark.parametrize("call,pattern", [
    (lambda: tl.squeeze(tl.zeros([2, 1]), 0), r"squeeze dim\[0\].*got 2"),
    (lambda: tl.split(tl.zeros([5]), 2), "evenly divisible by 2"),
    (lambda: tl.split(tl.zeros([5]), [2, 2]), "4 vs. 5"),
    (lambda: tl.pad(tl.zeros([2]), [[-1, 0]]), "non-negative"),
    (lambda: tl.pad(tl.zeros([2]), [[2, 0]], "REFLECT"), "REFLECT"),
    (lambda: tl.transpose(tl.zeros([2, 3]), [0, 0]), "permutation"),
    (lambda: tl.broadcast_to(tl.zeros([3]), [2, 2]), "Unable to broadcast"),
    (lambda: tl.range(1, 5, 0), "delta != 0"),
    (lambda: tl.range(5, 1), "start <= limit"),
    (lambda: tl.zeros([2, 3])[0, 3], "index 3 of dimension 1"),
    (lambda: tl.slice(tl.zeros([3]), [2], [2]), r"size\[0\]"),
    (lambda: tl.stack([tl.zeros([2]), tl.zeros([3])]), "Shapes of all inputs"),
    (lambda: tl.unstack(tl.zeros([2]), num=3), "Unpack of 3"),
    (lambda: tl.tile(tl.zeros([2]), [1, 2]), "one entry per dim"),
    (lambda: tl.expand_dims(tl.zeros([2]), 3), "axis 3"),
    (lambda: tl.boolean_mask(tl.zeros([2]), [True]), "does not match|incompatible"),
])
def test_errors_are_invalid_argument(call, pattern):
    with pytest.raises(tl.errors.InvalidArgumentError, match=pattern):
        call()


@pytest.mark.parametrize("key", [1.5, tl.constant([0, 1]), tl.constant(1.0)])  # [0, 1] is (0, 1), a bool a mask, as TF
def test_getitem_rejects_unsupported_keys(key):
    with pytest.raises(TypeError, match="valid indices"):
        tl.zeros([3, 3])[key]


def test_numpy_index_errors_never_leak():
    for call in (lambda: tl.gather(tl.zeros([2, 2]), [[3]], axis=1),
                 lambda: tl.gather(tl.zeros([2, 3]), [0, 3], axis=1, batch_dims=1),
                 lambda: tl.gather(tl.zeros([2, 3]), [0, 1, 1], axis=1, batch_dims=1),
                 lambda: tl.gather_nd(tl.zeros([2]), [[-3]]),
                 lambda: tl.zeros([2])[-3]):
        with pytest.raises(tl.errors.InvalidArgumentError):
            call()


# ------------------------------------------------------------------ hypothesis: shapes and keys

dims = st.integers(0, 4)
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)


@given(shapes, st.data())
def test_reshape_any_factorization(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    target = list(data.draw(st.permutations(list(shape)))) if shape else []
    if target and all(target) and data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    np.testing.assert_array_equal(tl.reshape(x, target).numpy(), x.reshape(target))


@given(shapes.filter(lambda s: len(s) > 0), st.data())
def test_transpose_any_permutation(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    x = np.random.default_rng(0).random(shape)
    got = tl.transpose(x, perm)
    np.testing.assert_array_equal(got.numpy(), x.transpose(perm))
    spec = REGISTRY["Transpose"].infer(TensorSpec(shape, tl.float64), perm=tuple(perm))
    assert spec.shape == got.shape


@given(st.integers(1, 4), st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_concat_and_stack_random_counts(count, base, data):
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    rng = np.random.default_rng(1)
    parts = []
    for _ in range(count):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        parts.append(rng.random(shape))
    np.testing.assert_array_equal(tl.concat(parts, axis).numpy(), np.concatenate(parts, axis))
    same = [rng.random(base) for _ in range(count)]
    stack_axis = data.draw(st.integers(-len(base) - 1, len(base)))
    np.testing.assert_array_equal(tl.stack(same, stack_axis).numpy(), np.stack(same, stack_axis))
    back = tl.unstack(tl.stack(same, stack_axis), axis=stack_axis)
    for a, b in zip(back, same):
        np.testing.assert_array_equal(a.numpy(), b)


@st.composite
def keys(draw, shape):
    """A key indexing a prefix of the dims, or a prefix, `...` and a suffix; plus new axes."""
    def entry(d):
        if d and draw(st.booleans()):
            return draw(st.integers(-d, d - 1))
        bound = st.none() | st.integers(-d - 2, d + 2)
        step = st.none() | st.integers(-3, 3).filter(bool)
        return slice(draw(bound), draw(bound), draw(step))

    front = draw(st.integers(0, len(shape)))
    entries = [entry(d) for d in shape[:front]]
    if draw(st.booleans()):
        back = draw(st.integers(front, len(shape)))
        entries += [Ellipsis] + [entry(d) for d in shape[back:]]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple).flatmap(
    lambda s: st.tuples(st.just(s), keys(s))))
def test_getitem_matches_numpy_with_gradient(shape_key):
    shape, key = shape_key
    x = np.random.default_rng(2).random(shape)
    want = x[key]
    xt = tl.constant(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        got = xt[key]
        w = np.arange(want.size, dtype=np.float64).reshape(want.shape) + 1
        loss = tl.reduce_sum(got * w)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.shape == REGISTRY["StridedSlice"].infer(
        TensorSpec(shape, tl.float64), key=_strided_key(key)).shape
    expected = np.zeros_like(x)
    expected[key] = w
    np.testing.assert_array_equal(tape.gradient(loss, xt).numpy(), expected)


def _strided_key(key):
    out = []
    for k in key:
        if k is Ellipsis:
            out.append(("ellipsis",))
        elif k is None:
            out.append(("newaxis",))
        elif isinstance(k, slice):
            out.append(("slice", k.start, k.stop, k.step))
        else:
            out.append(("int", k))
    return tuple(out)


@given(shapes, st.integers(0, 3))
def test_empty_and_scalar_shapes_round_trip(shape, extra):
    x = np.zeros(shape, np.float32)
    assert tl.shape(x).numpy().tolist() == list(shape)
    assert tl.expand_dims(x, 0).shape == (1,) + shape
    assert tl.tile(tl.reshape(x, [-1]) if x.size else tl.reshape(x, [0]), [extra]).shape == \
        (x.size * extra,)
    padded = tl.pad(x, [[extra, 0]] * len(shape))
    np.testing.assert_array_equal(padded.numpy(), np.pad(x, [[extra, 0]] * len(shape)) if shape else x)


def test_docstring_examples():
    import doctest

    import trainlib.graph.ops.array as array_module
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(array_module, globs={"tl": tl}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# ------------------------------------------------------------------ the added array ops: edge cases

@given(x=st.lists(st.integers(0, 3), min_size=1, max_size=8),
       direction=st.sampled_from(["ASCENDING", "DESCENDING"]))
def test_argsort_is_stable_both_ways(x, direction):
    got = tl.argsort(tl.constant(x), direction=direction).numpy().tolist()
    key = (lambda i: (x[i], i)) if direction == "ASCENDING" else (lambda i: (-x[i], i))
    assert got == sorted(range(len(x)), key=key)


def test_unique_namedtuple_and_dtypes():
    y, idx = tl.unique(tl.constant([4.0, 1.0, 4.0]))
    assert y.numpy().tolist() == [4.0, 1.0] and idx.numpy().tolist() == [0, 1, 0]
    assert idx.dtype is tl.int32 and tl.unique([1], out_idx=tl.int64).idx.dtype is tl.int64
    assert tl.unique_with_counts([3, 3, 1]).count.numpy().tolist() == [2, 1]
    with pytest.raises(tl.errors.InvalidArgumentError, match="1-D"):
        tl.unique(tl.ones([2, 2]))


def test_ensure_shape_checks_eagerly_and_while_tracing():
    with pytest.raises(tl.errors.InvalidArgumentError, match="not compatible"):
        tl.ensure_shape(tl.ones([2, 3]), [3])

    @tl.function(input_signature=[tl.TensorSpec([None, None])])
    def f(x):
        return tl.ensure_shape(x, [None, 3])
    assert f.get_concrete_function().outputs[0].shape.as_list() == [None, 3]
    with pytest.raises(tl.errors.InvalidArgumentError, match="not compatible"):
        f(tl.ones([2, 2]))


def test_scatter_errors_name_index_and_shape():
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"indices\[1\] = \[5\]"):
        tl.scatter_nd([[0], [5]], [1, 2], [3])
    with pytest.raises(tl.errors.InvalidArgumentError, match="updates must have shape"):
        tl.tensor_scatter_nd_update(tl.zeros([3]), [[0]], tl.ones([2]))
    with pytest.raises(tl.errors.InvalidArgumentError):
        tl.tensor_scatter_nd_add(tl.zeros([3]), [[0]], tl.ones([1], tl.float64))


def test_misuse_of_the_added_array_functions():
    with pytest.raises(ValueError, match="same length"):
        tl.roll([1, 2], [1, 1], [0])
    with pytest.raises(ValueError, match="direction"):
        tl.sort([1, 2], direction="UP")
    with pytest.raises(ValueError, match="side"):
        tl.searchsorted([1, 2], [1], side="middle")
    with pytest.raises(tl.errors.InvalidArgumentError, match="repeats"):
        tl.repeat([[1, 2]], [1, 2, 3], axis=1)
    with pytest.raises(tl.errors.InvalidArgumentError, match="seq_lengths"):
        tl.reverse_sequence([[1, 2]], [3], seq_axis=1)
    with pytest.raises(ValueError, match="indexing"):
        tl.meshgrid([1], indexing="yx")


def test_newaxis_and_repeat_scalar():
    assert tl.newaxis is None
    assert tl.constant([1, 2])[tl.newaxis].shape.as_list() == [1, 2]
    assert tl.repeat(tl.constant(3), 2).numpy().tolist() == [3, 3]
