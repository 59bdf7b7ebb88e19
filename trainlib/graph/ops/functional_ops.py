"""Higher-order functions over the first dimension: `map_fn`, `vectorized_map`, `scan`,
`foldl`, `foldr`, as TensorFlow's.

Owns: nothing of its own in the graph: each is a `while_loop` (a `While` op while
tracing, a Python loop eagerly) that reads element i with `gather` and collects
results in TensorArrays, so tapes and graph autodiff differentiate them through the
rules of those ops. Invariants: elements are the slices along axis 0 of every
tensor of `elems` (a nested structure), which must agree in length; results keep
the structure `fn` returns.
"""
from .. import dtypes as _dt
from ..nest import flatten, pack_as
from ..context import graph_scope
from ..op import convert_to_tensor
from ..tensor import TensorShape, TensorSpec
from .array import gather, shape
from .control_flow import _new_graph, while_loop
from .math import add
from .tensor_array import TensorArray

__all__ = ["map_fn", "vectorized_map", "scan", "foldl", "foldr"]


def _elements(op_name, elems):
    """(flat tensors, their common length n: an int or a scalar tensor)."""
    flat = [convert_to_tensor(e) for e in flatten(elems)]
    if not flat:
        raise ValueError(f"{op_name}: elems holds no tensors")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError(f"{op_name}: elems must have a first dimension to unstack, got a "
                             f"scalar of dtype {e.dtype.name}")
    dims = {e.shape[0] for e in flat if e.shape.rank is not None and e.shape[0] is not None}
    if len(dims) > 1:
        raise ValueError(f"{op_name}: the tensors of elems have different first dimensions "
                         f"{sorted(dims)}; they must all have the same length")
    n = dims.pop() if dims else shape(flat[0])[0]
    return flat, n


def _signature_dtypes(signature):
    leaves = flatten(signature)
    return [_dt.as_dtype(s.dtype if isinstance(s, TensorSpec) else s) for s in leaves]


def _check_result(op_name, result, dtypes):
    leaves = flatten(result)
    if len(leaves) != len(dtypes):
        raise ValueError(f"{op_name}: fn returned {len(leaves)} tensors, the output signature "
                         f"holds {len(dtypes)}; pass fn_output_signature matching fn's result")
    return [convert_to_tensor(v, dtype_hint=d) for v, d in zip(leaves, dtypes)]


def _known(tensors):
    return all(t.shape.is_fully_defined() for t in tensors)


def _collect(op_name, flat, n, structure, fn, out_structure, out_dtypes, out_shapes=None):
    """Runs `fn` on each element; the stacked results in `out_structure`.

    When the elements' shapes are not all known while tracing, element 0 is computed before
    the loop (its dims size the result buffers when the graph runs) and the loop starts at 1.
    """

    def apply_fn(i):
        element = pack_as(structure, [gather(e, i) for e in flat])
        values = _check_result(op_name, fn(element), out_dtypes)
        for v, d in zip(values, out_dtypes):
            if v.dtype is not d:
                raise TypeError(f"{op_name}: fn returned {v.dtype.name} where the output "
                                f"signature declares {d.name}")
        return values

    def body(i, *tas):
        return (add(i, 1),) + tuple(ta.write(i, v) for ta, v in zip(tas, apply_fn(i)))

    shapes = out_shapes or [None] * len(out_dtypes)
    tas = tuple(TensorArray(d, size=n, element_shape=s) for d, s in zip(out_dtypes, shapes))
    start = convert_to_tensor(0)
    if not all(e.shape.rank is not None and TensorShape(e.shape[1:]).is_fully_defined()
               for e in flat) and not all(
            s is not None and TensorShape(s).is_fully_defined() for s in shapes):
        tas = body(start, *tas)
        start, tas = tas[0], tas[1:]
    results = while_loop(lambda i, *_: i < n, body, (start,) + tuple(tas))
    return pack_as(out_structure, [ta.stack() for ta in results[1:]])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """Applies `fn` to each slice of `elems` along axis 0 and stacks the results.

    Args:
        fn: a function of one element (the structure of `elems`, sliced).
        elems: a tensor, or a nested structure of tensors of one length.
        fn_output_signature: dtypes or TensorSpecs (in the structure `fn` returns) when
            they differ from those of `elems` (`dtype`: its older name).

    Returns:
        The stacked results, in the structure `fn` returns.

    Raises:
        ValueError: for elems of different lengths, or results not matching the signature.

    Example:
        >>> tl.map_fn(lambda x: x * x, tl.constant([1, 2, 3]))
        <tl.Tensor: shape=(3,), dtype=int32, numpy=array([1, 4, 9], dtype=int32)>
    """
    flat, n = _elements("map_fn", elems)
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if signature is None:
        out_structure, out_dtypes = elems, [e.dtype for e in flat]
    else:
        out_structure, out_dtypes = signature, _signature_dtypes(signature)
    shapes = [s.shape if isinstance(s, TensorSpec) else None for s in flatten(signature)] \
        if signature is not None else None
    return _collect("map_fn", flat, n, elems, fn, out_structure, out_dtypes, shapes)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """Maps `fn` over axis 0 of `elems` as `map_fn` does, the output signature found by
    tracing `fn` once on an element (TensorFlow vectorizes the loop; trainlib runs it as a
    While loop with the same results).

    Example:
        >>> tl.vectorized_map(lambda x: tl.reduce_sum(x), tl.ones((4, 3)))
        <tl.Tensor: shape=(4,), dtype=float32, numpy=array([3., 3., 3., 3.], dtype=float32)>
    """
    flat, n = _elements("vectorized_map", elems)
    probe = _new_graph("vectorized_map_probe")
    with graph_scope(probe):
        placeholders = [probe.add_placeholder(e.shape[1:], e.dtype, f"elem_{i}")
                        for i, e in enumerate(flat)]
        result = fn(pack_as(elems, placeholders))
        dtypes = [convert_to_tensor(v).dtype for v in flatten(result)]
    return _collect("vectorized_map", flat, n, elems, fn, result, dtypes)


def _accumulate(op_name, fn, elems, initializer, reverse, keep_all):
    flat, n = _elements(op_name, elems)
    if initializer is None:
        acc_structure = elems
        first = n - 1 if reverse else 0
        acc = [gather(e, first) for e in flat]
        start = 1
    else:
        acc_structure = initializer
        acc = [convert_to_tensor(a) for a in flatten(initializer)]
        start = 0
    dtypes = [a.dtype for a in acc]
    tas = tuple(TensorArray(d, size=n) for d in dtypes) if keep_all else ()
    if keep_all and start:
        tas = tuple(ta.write(first, a) for ta, a in zip(tas, acc))
    k = len(acc)
    body = _step_body(op_name, fn, elems, flat, n, acc_structure, dtypes, reverse)
    step = convert_to_tensor(start)
    if keep_all and not start and not _known(acc):   # the first step sizes the buffers
        peeled = body(step, *acc, *tas)
        step, acc, tas = peeled[0], peeled[1:1 + k], peeled[1 + k:]
    results = while_loop(lambda step, *_: step < n, body, (step,) + tuple(acc) + tuple(tas))
    if keep_all:
        return pack_as(acc_structure, [ta.stack() for ta in results[1 + k:]])
    return pack_as(acc_structure, list(results[1:1 + k]))


def _step_body(op_name, fn, elems, flat, n, acc_structure, dtypes, reverse):
    k = len(dtypes)

    def body(step, *state):
        accs, outs = state[:k], state[k:]
        i = n - 1 - step if reverse else step
        element = pack_as(elems, [gather(e, i) for e in flat])
        new = _check_result(op_name, fn(pack_as(acc_structure, list(accs)), element), dtypes)
        outs = tuple(ta.write(i, v) for ta, v in zip(outs, new))
        return (add(step, 1),) + tuple(new) + outs

    return body


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """Accumulates `a = fn(a, x)` over the slices `x` of `elems`, stacking every `a`.

    Args:
        fn: a function of (accumulator, element) returning the new accumulator.
        elems: a tensor or nested structure of tensors, scanned along axis 0.
        initializer: the first accumulator (default: the first element, which is then
            also the first output).
        reverse: scan from the last element to the first (outputs stay aligned).

    Example:
        >>> tl.scan(lambda a, x: a + x, tl.constant([1, 2, 3, 4]))
        <tl.Tensor: shape=(4,), dtype=int32, numpy=array([ 1,  3,  6, 10], dtype=int32)>
    """
    return _accumulate("scan", fn, elems, initializer, reverse, keep_all=True)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """Folds `fn` over the slices of `elems` from the first: the final accumulator.

    Example:
        >>> tl.foldl(lambda a, x: a * x, tl.constant([1, 2, 3, 4]))
        <tl.Tensor: shape=(), dtype=int32, numpy=24>
    """
    return _accumulate("foldl", fn, elems, initializer, False, keep_all=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """Folds `fn` over the slices of `elems` from the last: the final accumulator.

    Example:
        >>> tl.foldr(lambda a, x: a - x, tl.constant([1, 2, 3]), initializer=tl.constant(0))
        <tl.Tensor: shape=(), dtype=int32, numpy=-6>
    """
    return _accumulate("foldr", fn, elems, initializer, True, keep_all=False)
