"""`tl.data.Dataset`: an input pipeline with tf.data's API, element structures, dtypes and
cardinalities.

Owns: lazily chained transformations over elements held as numpy arrays, nested
in tuples (namedtuples too) and dicts; Python lists are values, not structure,
as in tf.data. A ragged leaf is a RaggedTensor of numpy arrays; the slices of a
ragged rank 1 one are dense rows whose spec is a RaggedTensorSpec of ragged rank
0, so `batch` makes them a RaggedTensor again (as tf.data); `ragged_batch`
does so for every component with an unknown dim. Iteration yields eager `tl.Tensor`s. Invariants: a Dataset is
re-iterable (each `iter` starts over, reshuffling when asked); `cardinality`
follows tf.data's rules (INFINITE_CARDINALITY -1, UNKNOWN_CARDINALITY -2);
`element_spec` is computed on demand (a `map` is traced with `tl.function`
once to learn its output specs); `prefetch` and `cache` change nothing but are
accepted so that tf.data pipelines port unchanged. Functions passed to `map`,
`filter` and `reduce` run eagerly on each element (TF runs a traced graph, so
Python side effects differ); tuple elements are unpacked into positional
arguments, dicts are passed whole.
"""
import itertools
import os
import types
import warnings

import numpy as np

from .graph import dtypes
from .graph import errors
from .graph import function as function_lib
from .graph import op as op_lib
from .graph.ops import array as array_ops
from .graph import tensor as tensor_lib
from .graph import variables
from .graph import nest
from .graph.context import state
from .graph.errors import InvalidArgumentError
from .graph.op import owned_tensor
from .graph.ops import iterator as _iterator_ops
from .graph.ops.ragged import RaggedTensor, RaggedTensorSpec
from .graph.ops.sparse import SparseTensor, SparseTensorSpec
from .graph.properties import read_only
from . import tfrecord as _tfrecord

__all__ = ["Dataset", "TextLineDataset", "TFRecordDataset", "Iterator", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INF, _UNKNOWN = INFINITE_CARDINALITY, UNKNOWN_CARDINALITY


# -- element structures: tuples and dicts nest, everything else is a leaf

def _is_struct(s):
    return isinstance(s, (tuple, dict))


def _flat(s):
    return nest.flatten(s, nest.ELEMENT)


def _pack(structure, leaves):
    return nest.pack_as(structure, leaves, nest.ELEMENT)


def _same_structure(a, b):
    return nest.same_structure(a, b, nest.ELEMENT)


def _as_array(value):
    """A leaf as numpy: Python ints become int32 (int64 when too large), floats float32, as
    `tl.constant` does; numpy arrays keep their dtype and are copied (the caller may write into
    theirs later), tensors are not (they never change); a RaggedTensor, one of numpy arrays."""
    if isinstance(value, (RaggedTensor, SparseTensor)):
        return nest.rebuild(value, [_as_array(c) for c in nest.components(value)])
    if isinstance(value, (tensor_lib.Tensor, variables.Variable)) or tensor_lib.is_tensor(value):
        return np.asarray(value.numpy())
    if isinstance(value, (np.ndarray, np.generic)):
        return _string_leaf(value) if value.dtype.kind in "SUO" else np.array(value)
    try:
        array = np.asarray(value)
    except ValueError as e:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {e}") from None
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    elif array.dtype == np.int64 and (array.size == 0 or (array.min() >= -2 ** 31
                                                          and array.max() < 2 ** 31)):
        array = array.astype(np.int32)
    elif array.dtype.kind in "SUO":
        return _string_leaf(value)
    return array


def _string_leaf(value):
    """Strings as tl.string holds them (bytes in an object array); TypeError for other objects."""
    try:
        return np.array(array_ops.constant(value).numpy())
    except TypeError:
        raise TypeError(f"Can't convert {type(value).__name__} to a tensor: {value!r}") from None


def _to_arrays(element):
    if isinstance(element, list):
        element = tuple(element)   # tf.data turns a function's returned list into a tuple
    return _pack(element, [_as_array(a) for a in _flat(element)])


def _owned(leaf):
    if isinstance(leaf, (RaggedTensor, SparseTensor)):
        return nest.rebuild(leaf, [owned_tensor(c) for c in nest.components(leaf)])
    return owned_tensor(leaf)


def _to_tensors(element):
    # the pipeline's arrays are its own (user arrays were copied coming in): no second copy
    return _pack(element, [_owned(a) for a in _flat(element)])


def _spec_of(array):
    if isinstance(array, SparseTensor):
        return SparseTensorSpec.from_value(array)
    if isinstance(array, RaggedTensor):
        return RaggedTensorSpec([None] + array.shape.as_list()[1:],
                                dtypes.as_dtype(array.flat_values.dtype), array.ragged_rank)
    return tensor_lib.TensorSpec(array.shape, dtypes.as_dtype(array.dtype))


def _slice_spec(leaf):
    """The spec of one slice of a from_tensor_slices component (a ragged one's rows are dense
    values of ragged rank one less)."""
    if isinstance(leaf, RaggedTensor):
        return RaggedTensorSpec(leaf.shape[1:], dtypes.as_dtype(leaf.flat_values.dtype),
                                leaf.ragged_rank - 1)
    return tensor_lib.TensorSpec(leaf.shape[1:], dtypes.as_dtype(leaf.dtype))


def _rows(leaf):
    """The number of rows of a leaf (None for a scalar)."""
    if isinstance(leaf, RaggedTensor):
        return len(leaf.row_splits) - 1
    return len(leaf) if leaf.ndim else None


def _take_rows(leaf, index):
    """Row `index` (an int), rows `index` (a slice) or rows at `index` (an index array)."""
    if not isinstance(leaf, RaggedTensor):
        return leaf[index]
    if isinstance(index, (int, np.integer)):
        return _as_array(leaf[int(index)])
    if isinstance(index, slice):
        return _as_array(leaf[index])
    return _stack_ragged([_as_array(leaf[int(i)]) for i in index])


def _stack_ragged(parts):
    """Rows `parts` (dense arrays of one inner shape, or RaggedTensors of numpy arrays of one
    ragged rank) as one RaggedTensor of numpy arrays with a new outer ragged dimension."""
    if isinstance(parts[0], RaggedTensor):
        return _as_array(array_ops.stack([_owned(p) for p in parts]))
    inner = {p.shape[1:] for p in parts}
    if len(inner) != 1 or parts[0].ndim == 0:
        raise InvalidArgumentError(
            f"Cannot batch into a RaggedTensor values of shapes {sorted(p.shape for p in parts)}: "
            "only the first dim may differ")
    lengths = np.array([len(p) for p in parts], dtype=np.int64)
    return RaggedTensor(np.concatenate(parts), np.concatenate([[0], np.cumsum(lengths)]))


def _call(fn, element):
    return fn(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") \
        else fn(element)


def _merge_spec(a, b):
    shape = a.shape.most_specific_compatible_shape(b.shape)
    return tensor_lib.TensorSpec(shape, a.dtype)


def _check_positive(value, what, op):
    if int(value) <= 0:
        raise InvalidArgumentError(f"{op}: {what} must be greater than zero, got {int(value)}")


class Dataset:
    """A re-iterable sequence of elements (tensors, or tuples/dicts of tensors), as tf.data.

    Example:
        >>> ds = tl.data.Dataset.from_tensor_slices((x, y)).shuffle(100).batch(32)
        >>> for xb, yb in ds:
        ...     ...
    """

    def __init__(self, make_iterator, cardinality=_UNKNOWN, spec=None):
        self._make_iterator = make_iterator   # () -> iterator of numpy elements
        self._card = int(cardinality)
        self._spec_fn = spec if callable(spec) else (lambda: spec)
        self._spec = None
        self._handle = None

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Elements are the slices of `tensors` (arrays, tensors, lists, or tuples/dicts of
        them) along their first dim.

        Raises:
            ValueError: if a component is a scalar or the components have different first dims.
        """
        arrays = _to_arrays(tensors) if not isinstance(tensors, list) else _as_array(tensors)
        leaves = _flat(arrays)
        if any(_rows(a) is None for a in leaves):
            raise ValueError("from_tensor_slices needs tensors with at least one dimension")
        sizes = sorted({_rows(a) for a in leaves})
        if len(sizes) != 1:
            raise ValueError(f"from_tensor_slices: components have different first dims {sizes}")
        n = sizes[0]

        def make():
            for i in range(n):
                yield _pack(arrays, [_take_rows(a, i) for a in leaves])
        return _Sliced(make, n, arrays)

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: `tensors` itself."""
        element = _to_arrays(tensors) if not isinstance(tensors, list) else _as_array(tensors)
        return Dataset(lambda: iter([element]), 1,
                       lambda: _pack(element, [_spec_of(a) for a in _flat(element)]))

    @staticmethod
    def range(*args, output_type=None, name=None):
        """Elements start, start+step, ... below stop (int64 scalars unless `output_type`),
        like Python's range."""
        np_dtype = np.int64 if output_type is None else dtypes.as_dtype(output_type).as_numpy_dtype
        r = range(*[int(a) for a in args])
        return Dataset(lambda: (np.asarray(i, np_dtype) for i in r), len(r),
                       lambda: tensor_lib.TensorSpec([], dtypes.as_dtype(np_dtype)))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """Elements from calling `generator(*args)` anew for each iteration, converted to and
        checked against `output_signature` (a structure of `tl.TensorSpec`s).

        Raises:
            TypeError: without `output_signature` (or `output_types`).
            InvalidArgumentError: while iterating, when an element does not match the signature.
        """
        if output_signature is None:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the "
                                "`output_signature` argument or the `output_types` argument.")
            shapes = output_shapes
            if shapes is None:
                shapes = _pack(output_types, [None] * len(_flat(output_types)))
            output_signature = _pack(output_types, [
                tensor_lib.TensorSpec(tensor_lib.TensorShape(s) if s is not None else tensor_lib.TensorShape(None), t)
                for t, s in zip(_flat(output_types), _flat_shapes(shapes, output_types))])
        specs = _flat(output_signature)
        if not all(isinstance(s, tensor_lib.TensorSpec) for s in specs):
            raise TypeError(f"output_signature must be a structure of tl.TensorSpec, got "
                            f"{output_signature!r}")
        call_args = tuple(args or ())

        def convert(value):
            if not _same_structure(output_signature, value) or len(_flat(value)) != len(specs):
                raise InvalidArgumentError(
                    f"`generator` yielded an element that did not match the expected structure. "
                    f"The expected structure was {output_signature}, but the yielded element "
                    f"was {value!r}.")
            out = []
            for v, s in zip(_flat(value), specs):
                try:
                    a = np.asarray(v.numpy() if tensor_lib.is_tensor(v) else v).astype(
                        s.dtype.as_numpy_dtype)
                except (ValueError, TypeError):
                    raise InvalidArgumentError(
                        f"`generator` yielded an element that could not be converted to the "
                        f"expected type. The expected type was {s.dtype.name}, but the yielded "
                        f"element was {v!r}.") from None
                if not s.shape.is_compatible_with(tensor_lib.TensorShape(a.shape)):
                    raise InvalidArgumentError(
                        f"`generator` yielded an element of shape {tuple(a.shape)} where an "
                        f"element of shape {s.shape} was expected.")
                out.append(a)
            return _pack(output_signature, out)
        return Dataset(lambda: (convert(e) for e in generator(*call_args)), _UNKNOWN,
                       output_signature)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Elements are tuples (or the given nesting) of the elements of `datasets`, stopping
        at the shortest.

        Example:
            >>> tl.data.Dataset.zip(a, b)            # or zip((a, b)), zip({"x": a, "y": b})
        """
        if datasets is None:
            datasets = args[0] if len(args) == 1 else tuple(args)
        elif args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        parts = _flat(datasets)
        if not parts or not all(isinstance(d, Dataset) for d in parts):
            raise TypeError(f"Dataset.zip expects a (nested) structure of datasets, got "
                            f"{datasets!r}")

        def make():
            for items in zip(*[d._make_iterator() for d in parts]):
                yield _pack(datasets, items)
        cards = [d._card for d in parts]
        if _UNKNOWN in cards:
            card = _UNKNOWN
        else:
            finite = [c for c in cards if c != _INF]
            card = min(finite) if finite else _INF
        return Dataset(make, card, lambda: _pack(datasets, [d.element_spec for d in parts]))

    # -- transformations
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Stacks consecutive elements into batches of `batch_size` (the last may be smaller
        unless `drop_remainder`)."""
        _check_positive(batch_size, "Batch size", "batch")
        source = self

        def make():
            group = []
            for e in source._make_iterator():
                group.append(e)
                if len(group) == batch_size:
                    yield _stack(group, source)
                    group = []
            if group and not drop_remainder:
                yield _stack(group, source)
        return self._batched(make, batch_size, drop_remainder)

    def _batched(self, make, batch_size, drop_remainder):
        """The batched Dataset iterating `make`, knowing its batch size as tf.data's
        BatchDataset does (`_batch_size`, which Keras's split_dataset reads)."""
        batched = Dataset(make, self._batched_card(batch_size, drop_remainder),
                          self._batched_spec(batch_size, drop_remainder))
        batched._batch_size = int(batch_size)
        return batched

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64,
                     name=None):
        """Batches elements whose components may differ in shape: a component with an unknown
        dim in its spec (and every ragged one) batches into a `tl.RaggedTensor`, the others
        stack as `batch` stacks them.

        Example:
            >>> ds = tl.data.Dataset.from_tensor_slices(["a b", "c"]).map(tl.strings.split)
            >>> next(iter(ds.ragged_batch(2))).to_list()
            [[b'a', b'b'], [b'c']]
        """
        _check_positive(batch_size, "Batch size", "ragged_batch")
        if dtypes.as_dtype(row_splits_dtype) is not dtypes.int64:
            raise ValueError("ragged_batch: trainlib's row splits are int64")
        return _RaggedElements(self).batch(batch_size, drop_remainder)

    def _batched_card(self, batch_size, drop_remainder):
        n = self._card
        if n < 0:
            return n
        return n // batch_size if drop_remainder else -(-n // batch_size)

    def _batched_spec(self, batch_size, drop_remainder, shapes=None):
        def spec():
            inner = self.element_spec
            flat = _flat(inner)
            dims = shapes if shapes is not None else [s.shape for s in flat]
            n = batch_size if drop_remainder else None
            return _pack(inner, [s.batched(n) if isinstance(s, (RaggedTensorSpec, SparseTensorSpec))
                                 else tensor_lib.TensorSpec(
                                     tensor_lib.TensorShape([n]).concatenate(d), s.dtype)
                                 for s, d in zip(flat, dims)])
        return spec

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Batches elements of different shapes, padding each component to `padded_shapes`
        (a dim of None or -1 pads to the longest in the batch; by default every dim does).

        Raises:
            InvalidArgumentError: when an element is larger than its padded shape.
        """
        _check_positive(batch_size, "Batch size", "padded_batch")
        source = self
        spec = self.element_spec
        flat_spec = _flat(spec)
        if padded_shapes is None:
            shapes = [tensor_lib.TensorShape([None] * s.shape.rank) if s.shape.rank is not None else None
                      for s in flat_spec]
            if any(s is None for s in shapes):
                raise ValueError("padded_batch needs elements of known rank (or padded_shapes)")
        else:
            shapes = [tensor_lib.TensorShape([None if d is None or int(d) < 0 else int(d)
                                      for d in _dims(s)])
                      for s in _flat_shapes(padded_shapes, spec)]
        for s, p in zip(flat_spec, shapes):
            if not p.is_compatible_with(tensor_lib.TensorShape([None] * p.rank)) or (
                    s.shape.rank is not None and s.shape.rank != p.rank):
                raise ValueError(f"padded_batch: padded shape {p} is incompatible with the "
                                 f"element shape {s.shape}")
        if padding_values is None:
            pads = [0] * len(flat_spec)
        elif _is_struct(padding_values):
            pads = [_as_array(v) for v in _flat(padding_values)]
        else:
            pads = [_as_array(padding_values)] * len(flat_spec)

        def pad_group(group):
            out = []
            for i, (p, s) in enumerate(zip(shapes, flat_spec)):
                parts = [_flat(e)[i] for e in group]
                target = [d if d is not None else max(a.shape[k] for a in parts)
                          for k, d in enumerate(p.as_list())]
                batch = np.full([len(parts)] + target, pads[i], dtype=s.dtype.as_numpy_dtype)
                for j, a in enumerate(parts):
                    if a.ndim != len(target) or any(x > t for x, t in zip(a.shape, target)):
                        raise InvalidArgumentError(
                            f"padded_batch: attempted to pad to a smaller size than the input "
                            f"element: element shape {tuple(a.shape)}, padded shape {p}")
                    batch[(j,) + tuple(slice(0, x) for x in a.shape)] = a
                out.append(batch)
            return _pack(group[0], out)

        def make():
            group = []
            for e in source._make_iterator():
                group.append(e)
                if len(group) == batch_size:
                    yield pad_group(group)
                    group = []
            if group and not drop_remainder:
                yield pad_group(group)
        return Dataset(make, self._batched_card(batch_size, drop_remainder),
                       self._batched_spec(batch_size, drop_remainder, shapes))

    def unbatch(self, name=None):
        """Splits each batch back into its elements."""
        source = self

        def make():
            for e in source._make_iterator():
                leaves = _flat(e)
                sizes = {_rows(a) for a in leaves}
                if None in sizes or len(sizes) != 1:
                    raise InvalidArgumentError(f"unbatch: the components' first dims differ or "
                                               f"are missing: shapes {[a.shape for a in leaves]}")
                for i in range(sizes.pop()):
                    yield _pack(e, [_take_rows(a, i) for a in leaves])

        def spec():
            inner = self.element_spec
            if any(s.shape.rank == 0 for s in _flat(inner)):
                raise ValueError("Cannot unbatch an input with scalar components.")
            return _pack(inner, [RaggedTensorSpec(s.shape[1:], s.dtype, s.ragged_rank - 1)
                                 if isinstance(s, RaggedTensorSpec) and s.ragged_rank else
                                 tensor_lib.TensorSpec(s.shape[1:] if s.shape.rank is not None
                                                       else s.shape, s.dtype)
                                 for s in _flat(inner)])
        return Dataset(make, _UNKNOWN, spec)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Randomly reorders elements through a buffer of `buffer_size`: each output is drawn
        from the buffer, whose slot the next input refills, so a small buffer only shuffles
        locally. With a `seed` each run gives the same orders; `reshuffle_each_iteration`
        draws a new order for each pass over the data."""
        _check_positive(buffer_size, "buffer_size", "shuffle")
        next_rng = _pass_generators(seed, reshuffle_each_iteration)
        source = self

        def make():
            return _shuffled(source._make_iterator(), buffer_size, next_rng())
        return Dataset(make, self._card, lambda: self.element_spec)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies `map_func` to each element (tuple elements are unpacked into positional
        arguments; a returned list becomes a tuple)."""
        source = self

        def make():
            for e in source._make_iterator():
                yield _to_arrays(_call(map_func, _to_tensors(e)))

        def spec():
            return _traced_spec(map_func, self)
        return Dataset(make, self._card, spec)

    def filter(self, predicate, name=None):
        """Keeps the elements for which `predicate` returns a scalar bool tensor that is true.

        Raises:
            ValueError: when `predicate` returns something other than a scalar bool.
        """
        source = self

        def make():
            for e in source._make_iterator():
                keep = _call(predicate, _to_tensors(e))
                if not tensor_lib.is_tensor(keep):
                    keep = op_lib.convert_to_tensor(keep)
                if keep.dtype != dtypes.bool or keep.shape.rank != 0:
                    raise ValueError(f"Invalid `predicate`. `predicate` must return a `tl.bool` "
                                     f"scalar tensor, but its return type is "
                                     f"{tensor_lib.TensorSpec(keep.shape, keep.dtype)}.")
                if bool(keep.numpy()):
                    yield e
        return Dataset(make, _UNKNOWN, lambda: self.element_spec)

    def repeat(self, count=None, name=None):
        """Repeats the dataset `count` times (forever when None or -1)."""
        source = self
        count = -1 if count is None else int(count)

        def make():
            i = 0
            while count < 0 or i < count:
                empty = True
                for e in source._make_iterator():
                    empty = False
                    yield e
                if empty:
                    return
                i += 1
        n = self._card
        if count < 0:
            card = 0 if n == 0 else _INF
        elif count == 0 or n == 0:
            card = 0
        else:
            card = n if n < 0 else n * count
        return Dataset(make, card, lambda: self.element_spec)

    def take(self, count, name=None):
        """The first `count` elements (all when -1)."""
        source, count = self, int(count)

        def make():
            if count < 0:
                yield from source._make_iterator()
            else:
                yield from itertools.islice(source._make_iterator(), count)
        n = self._card
        if count < 0 or n == _UNKNOWN:
            card = n
        else:
            card = count if n == _INF else min(count, n)
        return Dataset(make, card, lambda: self.element_spec)

    def skip(self, count, name=None):
        """All but the first `count` elements (none when -1)."""
        source, count = self, int(count)

        def make():
            if count >= 0:
                yield from itertools.islice(source._make_iterator(), count, None)
        n = self._card
        card = n if n < 0 else (0 if count < 0 else max(0, n - count))
        return Dataset(make, card, lambda: self.element_spec)

    def concatenate(self, dataset, name=None):
        """This dataset's elements followed by `dataset`'s (same structure and dtypes).

        Raises:
            TypeError: when the element structures or dtypes differ.
        """
        first, second = self, dataset
        a, b = self.element_spec, dataset.element_spec
        if not _same_structure(a, b) or any(x.dtype != y.dtype
                                            for x, y in zip(_flat(a), _flat(b))):
            raise TypeError(f"Incompatible dataset elements:\n  {a} vs.   {b}")

        def make():
            yield from first._make_iterator()
            yield from second._make_iterator()
        cards = (self._card, dataset._card)
        card = _INF if _INF in cards else _UNKNOWN if _UNKNOWN in cards else sum(cards)
        return Dataset(make, card,
                       lambda: _pack(a, [_merge_spec(x, y) for x, y in zip(_flat(a), _flat(b))]))

    def enumerate(self, start=0, name=None):
        """Pairs each element with its int64 index, counting from `start`."""
        return Dataset.zip(Dataset.range(start, np.iinfo(np.int64).max), self)

    def shard(self, num_shards, index, name=None):
        """Every `num_shards`-th element, starting at `index`.

        Raises:
            InvalidArgumentError: unless 0 <= index < num_shards.
        """
        num_shards, index = int(num_shards), int(index)
        _check_positive(num_shards, "Number of shards", "shard")
        if not 0 <= index < num_shards:
            raise InvalidArgumentError(f"shard: index must be between 0 and {num_shards - 1} "
                                       f"(currently index = {index})")
        source = self

        def make():
            return itertools.islice(source._make_iterator(), index, None, num_shards)
        n = self._card
        card = n if n < 0 else n // num_shards + (index < n % num_shards)
        return Dataset(make, card, lambda: self.element_spec)

    def apply(self, transformation_func):
        """`transformation_func(self)`, which must return a Dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"`transformation_func` must return a Dataset, got "
                            f"{type(out).__name__}")
        return out

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements: state = reduce_func(state, element), starting at
        `initial_state`; returns the final state as tensors.

        Raises:
            TypeError: when `reduce_func` changes the state's structure or dtypes.
        """
        state = _to_tensors(_to_arrays(initial_state))
        specs = [(t.dtype, t.shape) for t in _flat(state)]
        for e in self._make_iterator():
            new = _to_tensors(_to_arrays(reduce_func(state, _to_tensors(e))))
            if not _same_structure(state, new) or [t.dtype for t in _flat(new)] != \
                    [d for d, _ in specs]:
                raise TypeError(f"The element types for the new state must match the initial "
                                f"state. Expected {state}; got {new}.")
            state = new
        return state

    def prefetch(self, buffer_size=None, name=None):
        """Accepted for tf.data compatibility; elements are produced on demand."""
        return self

    def cache(self, filename="", name=None):
        """Accepted for tf.data compatibility; elements are recomputed on each pass."""
        return self

    # -- inspection and iteration
    @property
    def element_spec(self):
        """The structure of `tl.TensorSpec`s of one element (None dims where sizes vary)."""
        if self._spec is None:
            self._spec = self._spec_fn()
            if self._spec is None:   # a source whose spec is learnt from its first element
                first = next(iter(self._make_iterator()))
                self._spec = _pack(first, [_spec_of(a) for a in _flat(first)])
        return self._spec

    def __iter__(self):
        """An `Iterator`: eagerly it yields tensors; inside a `tl.function` it is a new
        iterator at every call (an `AnonymousIterator` op), as tf.data's."""
        if state.graph is not None:
            return _GraphIterator(self, _iterator_ops.make_iterator(self._tl_handle()))
        return Iterator(self)

    # -- graph iteration (the protocol AutoGraph's `for` and the iterator ops use)
    def _tl_handle(self):
        """The resource handle a traced Function captures to start passes over this dataset."""
        if self._handle is None:
            self._handle = tensor_lib.Tensor(self, dtypes.resource)
        return self._handle

    def _tl_new_iterator(self):
        return Iterator(self)

    def _tl_graph_iteration(self):
        """(iterator handle, flat TensorSpecs, pack): a fresh pass at each call of the graph."""
        return (_iterator_ops.make_iterator(self._tl_handle()),) + _leaf_specs(self)

    def as_numpy_iterator(self):
        """Iterates elements as numpy arrays (in the element's structure)."""
        return iter(self._make_iterator())

    def __len__(self):
        if self._card == _INF:
            raise TypeError("The dataset is infinite.")
        if self._card == _UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return self._card

    def __bool__(self):
        return True   # never through __len__, which may raise

    def cardinality(self):
        """The number of elements as an int64 scalar tensor: INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2) when not a known count."""
        return array_ops.constant(self._card, dtype=dtypes.int64)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec}>"


_GET_NEXT_LIMIT = 32  # reads of one iterator in one trace before it is taken as a Python `for`


class TextLineDataset(Dataset):
    """The lines of text files, as scalar string elements without their line ends, file after
    file, as tf.data.TextLineDataset.

    Example:
        >>> for line in tl.data.TextLineDataset(["a.txt"]):
        ...     print(line.numpy())
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,
                 name=None):
        if compression_type:
            raise NotImplementedError("TextLineDataset reads uncompressed files only")
        names = np.asarray(array_ops.constant(filenames).numpy()).reshape(-1)
        paths = [n.decode("utf-8") for n in names]

        def make():
            for path in paths:
                with open(path, "rb") as f:
                    for line in f:
                        out = np.empty((), dtype=object)
                        out[()] = line.rstrip(b"\n").rstrip(b"\r")
                        yield out
        super().__init__(make, _UNKNOWN, tensor_lib.TensorSpec([], dtypes.string))


def _file_names(filenames, who):
    tensors = list(filenames) if isinstance(filenames, Dataset) else [array_ops.constant(filenames)]
    names = []
    for t in tensors:
        if t.dtype is not dtypes.string:
            raise TypeError(f"{who}: filenames must be strings, got {t.dtype.name}")
        names += np.asarray(t.numpy(), dtype=object).reshape(-1).tolist()
    return [n.decode("utf-8") for n in names]


class TFRecordDataset(Dataset):
    """The records of TFRecord files, as scalar string elements, as tf.data.TFRecordDataset.

    Args:
        filenames: a file name, a list or string tensor of them, or a Dataset of them.
        compression_type: "" or None, "ZLIB" or "GZIP".
        buffer_size: accepted (bytes of read buffer; must be >= 0).
        num_parallel_reads: read this many files at a time, their records interleaved one by
            one, in order (TF's deterministic order); None reads the files one after another.

    Raises:
        DataLossError (while iterating): for a corrupted record, naming the file and offset.

    Example:
        >>> for record in tl.data.TFRecordDataset(["data.tfrecord"]):
        ...     example = tl.train.Example.FromString(record.numpy())
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,
                 name=None):
        kind = _tfrecord.compression_of(compression_type, "TFRecordDataset")
        _tfrecord.check_buffer_size(buffer_size)
        paths = _file_names(filenames, "TFRecordDataset")
        cycle = 1 if num_parallel_reads is None else int(num_parallel_reads)
        if cycle == AUTOTUNE:
            cycle = os.cpu_count() or 1
        if cycle < 1:
            raise ValueError(f"TFRecordDataset: num_parallel_reads must be positive or "
                             f"tl.data.AUTOTUNE, got {num_parallel_reads}")

        def scalar(record):
            out = np.empty((), dtype=object)
            out[()] = record
            return out

        def make():  # tf.data's interleave with cycle_length=cycle, block_length=1
            pending, slots, at, more = iter(paths), [None] * cycle, 0, True
            while more or any(slots):
                if slots[at] is not None:
                    record = next(slots[at], None)
                    if record is None:
                        slots[at] = None
                    else:
                        yield scalar(record)
                    at = (at + 1) % cycle
                elif more:
                    path = next(pending, None)
                    if path is None:
                        more = False
                    else:
                        slots[at] = _tfrecord.read_records(path, kind)
                else:
                    at = (at + 1) % cycle
        super().__init__(make, _UNKNOWN, tensor_lib.TensorSpec([], dtypes.string))


class _GraphIterator:
    """`iter(dataset)` inside a traced Function: a symbolic iterator made at every call."""

    def __init__(self, dataset, handle):
        self._dataset = dataset
        self.handle = handle
        self._reads = (None, 0)  # (id of the graph being traced, get_next ops added to it)

    def __iter__(self):
        return self

    def __next__(self):
        return self.get_next()

    def get_next(self):
        """The next element (an `IteratorGetNext` op while tracing)."""
        graph, count = self._reads
        count = count + 1 if graph == id(state.graph) else 1
        self._reads = (id(state.graph), count)
        if count > _GET_NEXT_LIMIT:  # a Python `for` never ends on a graph iterator
            raise ValueError(
                f"{count} reads of one iterator while tracing one tl.function: `for x in dataset` "
                "runs as a graph loop only with AutoGraph (tl.function(autograph=True), the "
                "default); without it the Python loop would never end. Use next(it) a bounded "
                "number of times, or tl.while_loop.")
        specs, pack = _leaf_specs(self._dataset)
        return pack(_iterator_ops.get_next(self.handle, specs))

    def _tl_graph_iteration(self):
        return (self.handle,) + _leaf_specs(self._dataset)


class Iterator(_GraphIterator):
    """An iterator over a `Dataset`, as `iter(dataset)` gives, and state a Function can use.

    Eagerly `next(it)` returns the next element (tensors) and raises StopIteration at the
    end. Inside a `tl.function`, `next(it)` (or `it.get_next()`) is an `IteratorGetNext`
    op on the captured iterator: every call of the Function advances it (1, 2, 3 ...), and
    reading past the end raises `tl.errors.OutOfRangeError`, as tf.data's iterators.
    `for x in it` inside a Function is a graph loop over the rest of the data.
    """

    name = "iterator"

    def __init__(self, dataset):
        super().__init__(dataset, tensor_lib.Tensor(self, dtypes.resource))
        self._elements = iter(dataset._make_iterator())

    element_spec = read_only("_dataset.element_spec", "The structure of TensorSpecs of one "
                                                      "element.")

    def __next__(self):
        if state.graph is not None:
            return self.get_next()
        return _to_tensors(next(self._elements))

    def get_next(self):
        """The next element; `tl.errors.OutOfRangeError` at the end (also eagerly)."""
        if state.graph is not None:
            return super().get_next()
        try:
            return _to_tensors(next(self._elements))
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence", op="IteratorGetNext") from None

    def _tl_next_arrays(self):
        return [c for a in _flat(next(self._elements)) for c in _components(a)]

    def __repr__(self):
        return f"<tl.data.Iterator element_spec={self.element_spec}>"


def _components(leaf):
    """The arrays a graph iterator hands over for one element leaf (a ragged one's
    components: flat values, then row splits)."""
    if isinstance(leaf, (RaggedTensor, SparseTensor)):
        return [np.asarray(c) for c in nest.components(leaf)]
    return [np.asarray(leaf)]


def _leaf_specs(dataset):
    """(the flat TensorSpecs of an element, RaggedTensorSpecs by their components, and a
    function packing such leaves into its structure)."""
    structure = dataset.element_spec
    specs = _flat(structure)
    composite = (RaggedTensorSpec, SparseTensorSpec)
    parts = [nest.components(s) if isinstance(s, composite) else [s] for s in specs]

    def pack(leaves):
        leaves, out = list(leaves), []
        for s, p in zip(specs, parts):
            taken, leaves = leaves[:len(p)], leaves[len(p):]
            out.append(nest.rebuild(s, taken) if isinstance(s, composite) else taken[0])
        return _pack(structure, out)
    return [c for p in parts for c in p], pack


def _pass_generators(seed, reshuffle_each_iteration):
    """A function giving the random generator of each pass over a shuffled dataset."""
    base = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2 ** 63)
    state = {"epoch": 0}

    def next_rng():
        epoch = state["epoch"]
        if reshuffle_each_iteration:
            state["epoch"] += 1
            if seed is None:
                epoch = None
        return np.random.default_rng(None if epoch is None else (base, epoch))
    return next_rng


def _shuffled(items, buffer_size, rng):
    """`items` in the order a shuffle buffer of `buffer_size` drawing from `rng` gives them."""
    buffer = []
    for e in items:
        if len(buffer) < buffer_size:
            buffer.append(e)
            continue
        i = rng.integers(len(buffer))
        yield buffer[i]
        buffer[i] = e
    while buffer:
        i = rng.integers(len(buffer))
        buffer[i], buffer[-1] = buffer[-1], buffer[i]
        yield buffer.pop()


class _Sliced(Dataset):
    """from_tensor_slices: batching slices contiguous ranges directly instead of stacking;
    shuffling runs the shuffle buffer on indices, and its batches gather those rows."""

    def __init__(self, make_iterator, length, arrays):
        super().__init__(make_iterator, length,
                         lambda: _pack(arrays, [_slice_spec(a) for a in _flat(arrays)]))
        self._arrays = arrays

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        _check_positive(batch_size, "Batch size", "batch")
        arrays, n = self._arrays, self._card
        leaves = _flat(arrays)
        stop_at = n - n % batch_size if drop_remainder else n

        order = self._order

        def make():
            rows = order() if order is not None else None
            for start in range(0, stop_at, batch_size):
                if rows is None:
                    yield _pack(arrays, [_take_rows(a, slice(start, start + batch_size))
                                         for a in leaves])
                else:
                    picked = rows[start:start + batch_size]
                    yield _pack(arrays, [_take_rows(a, picked) for a in leaves])
        return self._batched(make, batch_size, drop_remainder)

    _order = None  # a function giving each pass's row order (shuffled datasets only)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        _check_positive(buffer_size, "buffer_size", "shuffle")
        next_rng = _pass_generators(seed, reshuffle_each_iteration)
        arrays, n = self._arrays, self._card
        leaves = _flat(arrays)

        def order():  # the same draws as shuffling the elements themselves
            return np.fromiter(_shuffled(range(n), buffer_size, next_rng()), dtype=np.intp, count=n)

        def make():
            for i in order():
                yield _pack(arrays, [_take_rows(a, i) for a in leaves])

        shuffled = _Sliced(make, n, arrays)
        shuffled._order = order
        return shuffled


def _flat_shapes(shapes, structure):
    """`shapes` flattened against `structure` (a shape given as a list or TensorShape is a
    leaf)."""
    if isinstance(structure, dict):
        return [s for k in sorted(structure) for s in _flat_shapes(shapes[k], structure[k])]
    if isinstance(structure, tuple):
        return [s for sh, st in zip(shapes, structure) for s in _flat_shapes(sh, st)]
    return [shapes]


def _dims(shape):
    """A shape given as a TensorShape, tensor, array, list or tuple, as a list of dims."""
    if isinstance(shape, tensor_lib.TensorShape):
        return shape.as_list()
    if tensor_lib.is_tensor(shape) or isinstance(shape, np.ndarray):
        return np.asarray(shape).tolist()
    return list(shape)


def _traced_spec(fn, dataset):
    """The output specs of `fn` over `dataset`'s elements, found by tracing it with
    `tl.function` (None dims stay None); if tracing fails, the specs of its first output."""
    inner = dataset.element_spec
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            concrete = function_lib.function(lambda *a: _call(fn, _pack(inner, a))).get_concrete_function(
                *_flat(inner))
        out = concrete.structured_outputs
        if isinstance(out, list):
            out = tuple(out)
        return _pack(out, [tensor_lib.TensorSpec(t.shape, t.dtype) if tensor_lib.is_tensor(t) else
                           RaggedTensorSpec.from_value(t) if isinstance(t, RaggedTensor) else
                           SparseTensorSpec(t.shape, t.dtype) if isinstance(t, SparseTensor) else
                           _spec_of(_as_array(t)) for t in _flat(out)])
    except Exception:  # noqa: BLE001 - eager-only functions: learn the spec from one element
        for e in dataset._make_iterator():
            out = _to_arrays(_call(fn, _to_tensors(e)))
            return _pack(out, [_spec_of(a) for a in _flat(out)])
        raise


def _stack_sparse(parts):
    """SparseTensors (of numpy components) batched as tf.data batches them: one more leading
    dimension, the dense shape the largest of each dim."""
    indices = [np.concatenate([np.full((len(p.indices), 1), i, np.int64), np.asarray(p.indices)],
                              axis=1) for i, p in enumerate(parts)]
    shape = np.max(np.stack([np.asarray(p.dense_shape) for p in parts]), axis=0)
    return nest.rebuild(parts[0], [np.concatenate(indices),
                                   np.concatenate([np.asarray(p.values) for p in parts]),
                                   np.concatenate([[len(parts)], shape]).astype(np.int64)])


def _stack(group, source=None):
    """One batch of the elements `group` of `source`: components stacked; ragged ones (and the
    dense rows of a ragged-rank-0 spec) as RaggedTensors."""
    leaves = [_flat(e) for e in group]
    out = []
    specs = None
    for i, parts in enumerate(zip(*leaves)):
        if isinstance(parts[0], RaggedTensor):
            out.append(_stack_ragged(parts))
            continue
        if isinstance(parts[0], SparseTensor):
            out.append(_stack_sparse(parts))
            continue
        shapes = {p.shape for p in parts}
        if len(shapes) != 1:  # the rows of a ragged component batch as one again (tf.data)
            specs = specs or (_flat(source.element_spec) if source is not None else [None] * len(parts))
            if isinstance(specs[i], RaggedTensorSpec):
                out.append(_stack_ragged(parts))
                continue
            raise InvalidArgumentError(f"Cannot batch tensors with different shapes in component "
                                       f"{i}: shapes {sorted(shapes)}")
        out.append(np.stack(parts))
    return _pack(group[0], out)


class _RaggedElements(Dataset):
    """`source` whose components with an unknown dim are ragged of ragged rank 0 (their
    batches are RaggedTensors), as tf.data's ragged_batch sees them."""

    def __init__(self, source):
        def spec():
            inner = source.element_spec
            return _pack(inner, [RaggedTensorSpec(s.shape, s.dtype, 0)
                                 if type(s) is tensor_lib.TensorSpec and s.shape.rank and
                                 not s.shape.is_fully_defined() else s for s in _flat(inner)])
        super().__init__(source._make_iterator, source._card, spec)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        source = self

        def make():
            ragged = [isinstance(s, RaggedTensorSpec) for s in _flat(source.element_spec)]
            group = []
            for e in itertools.chain(source._make_iterator(), [None]):
                if e is not None:
                    group.append(e)
                if group and (len(group) == batch_size or e is None and not drop_remainder):
                    flat = [_flat(x) for x in group]
                    yield _pack(group[0], [_stack_ragged(parts) if r else np.stack(parts)
                                           for r, parts in zip(ragged, zip(*flat))])
                    group = []
        return Dataset(make, self._batched_card(batch_size, drop_remainder),
                       self._batched_spec(batch_size, drop_remainder))


class _DatasetTFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file, one record per element, as
    tf.data.experimental.TFRecordWriter.

    Example:
        >>> tl.data.experimental.TFRecordWriter("out.tfrecord").write(serialized_dataset)
    """

    def __init__(self, filename, compression_type=None):
        self._filename = filename
        self._options = _tfrecord.TFRecordOptions(
            _tfrecord.compression_of(compression_type, "TFRecordWriter"))

    def write(self, dataset):
        """Writes every element of `dataset` (scalar strings).

        Raises:
            TypeError: if the elements are not scalar strings.
        """
        spec = dataset.element_spec if isinstance(dataset, Dataset) else None
        if not isinstance(spec, tensor_lib.TensorSpec) or spec.dtype is not dtypes.string or \
                spec.shape.rank != 0:
            raise TypeError(f"TFRecordWriter.write: expected a dataset of scalar strings, got "
                            f"element_spec {spec}")
        with _tfrecord.TFRecordWriter(self._filename, self._options) as writer:
            for element in dataset:
                writer.write(element.numpy())


experimental = types.SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=lambda dataset: dataset.cardinality(), TFRecordWriter=_DatasetTFRecordWriter)
