"""Iterators as graph state: `AnonymousIterator`, `IteratorGetNext`, `IteratorGetNextAsOptional`.

Owns: the ops through which a traced Function reads input pipelines, as tf.data's iterator
resource ops. A resource value here is a host-side Python object: a source (a Dataset) whose
`_tl_new_iterator()` starts a pass, or an iterator whose `_tl_next_arrays()` returns the next
element's leaves as host arrays and raises StopIteration at the end. All three ops are
stateful (never merged, folded or pruned; ordered with the other side effects), so every call
of a Function advances the iterator it captured.
Invariants: the element leaves keep the specs given as the `output_specs` attr (dims may be
None); at the end of the data `IteratorGetNext` raises `OutOfRangeError` ("End of sequence"),
and `IteratorGetNextAsOptional` returns has_value=False with zero-filled leaves.
"""
from .. import dtypes as _dt
from ..backend import transfer
from ..errors import OutOfRangeError, op_error
from ..op import apply, defop, spec

__all__ = ["make_iterator", "get_next", "get_next_as_optional"]


def _resource_infer(source, **_static):
    return spec([], _dt.resource)


@defop("AnonymousIterator", infer=_resource_infer, stateful=True, differentiable=False)
def _anonymous_iterator(xp, source):
    return source._tl_new_iterator()


def _leaves_infer(handle, *, output_specs):
    return tuple(spec(s.shape, s.dtype) for s in output_specs)


def _next_leaves(xp, iterator, output_specs, op_name):
    arrays = iterator._tl_next_arrays()
    if len(arrays) != len(output_specs):
        raise op_error(OutOfRangeError, op_name, f"the iterator gave {len(arrays)} values for an "
                       f"element of {len(output_specs)}")
    return tuple(transfer(xp, a) for a in arrays)


@defop("IteratorGetNext", infer=_leaves_infer, stateful=True, differentiable=False, num_outputs=None)
def _get_next(xp, iterator, output_specs):
    try:
        return _next_leaves(xp, iterator, output_specs, "IteratorGetNext")
    except StopIteration:
        raise op_error(OutOfRangeError, "IteratorGetNext", "End of sequence") from None


def _optional_infer(handle, *, output_specs):
    return (spec([], _dt.bool),) + _leaves_infer(handle, output_specs=output_specs)


@defop("IteratorGetNextAsOptional", infer=_optional_infer, stateful=True, differentiable=False,
       num_outputs=None)
def _get_next_as_optional(xp, iterator, output_specs):
    try:
        leaves = _next_leaves(xp, iterator, output_specs, "IteratorGetNextAsOptional")
    except StopIteration:
        return (xp.asarray(False),) + tuple(
            xp.zeros([] if s.shape.rank is None else [0 if d is None else d for d in s.shape],
                     dtype=s.dtype.np) for s in output_specs)
    return (xp.asarray(True),) + leaves


def make_iterator(source_handle):
    """A new iterator (a resource) over the source behind `source_handle`, made at every call."""
    return apply("AnonymousIterator", source_handle)


def get_next(handle, output_specs):
    """The next element's leaves (a list); OutOfRangeError at the end of the data."""
    out = apply("IteratorGetNext", handle, output_specs=tuple(output_specs))
    return list(out) if isinstance(out, tuple) else [] if out is None else [out]


def get_next_as_optional(handle, output_specs):
    """(has_value, the next element's leaves): has_value is False at the end of the data."""
    has_value, *leaves = apply("IteratorGetNextAsOptional", handle, output_specs=tuple(output_specs))
    return has_value, leaves
