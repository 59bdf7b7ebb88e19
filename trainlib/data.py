"""`tl.data.Dataset`: a small input pipeline (from_tensor_slices, batch, shuffle, map, repeat, take).

Owns: lazily chained transformations over elements held as numpy arrays
(nested in tuples and dicts), and iteration yielding eager `tl.Tensor`s as
`tf.data` does. Invariants: a Dataset is re-iterable (each `iter` starts over,
reshuffling when asked); `prefetch` and `cache` change nothing but are
accepted so that tf.data pipelines port unchanged.
"""
import numpy as np

import trainlib as tl
from trainlib.graph.autodiff import flatten, pack_as

__all__ = ["Dataset", "AUTOTUNE"]

AUTOTUNE = -1


def _to_tensors(element):
    return pack_as(element, [tl.convert_to_tensor(a) for a in flatten(element)])


def _to_arrays(element):
    return pack_as(element, [np.asarray(a) for a in flatten(element)])


class Dataset:
    """A re-iterable sequence of elements (tensors, or tuples/dicts of tensors).

    Example:
        >>> ds = tl.data.Dataset.from_tensor_slices((x, y)).shuffle(100).batch(32)
        >>> for xb, yb in ds:
        ...     ...
    """

    def __init__(self, make_iterator, length=None):
        self._make_iterator = make_iterator   # () -> iterator of numpy elements
        self._length = length

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors):
        """Elements are the slices of `tensors` (arrays, tensors, or tuples/dicts of them) along
        their first dim.

        Raises:
            ValueError: if the components have different first dims.
        """
        arrays = pack_as(tensors, [_as_array(a) for a in flatten(tensors)])
        leaves = flatten(arrays)
        sizes = {len(a) if a.ndim else None for a in leaves}
        if None in sizes:
            raise ValueError("from_tensor_slices needs arrays with at least one dim")
        if len(sizes) != 1:
            raise ValueError(f"from_tensor_slices: components have different first dims {sorted(sizes)}")
        n = sizes.pop()

        def make():
            for i in range(n):
                yield pack_as(arrays, [a[i] for a in leaves])
        return _Sliced(make, n, arrays)

    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element: `tensors` itself."""
        element = pack_as(tensors, [_as_array(a) for a in flatten(tensors)])
        return Dataset(lambda: iter([element]), 1)

    @staticmethod
    def range(*args):
        """Elements start, start+step, ... below stop (int64 scalars), like Python's range."""
        r = range(*args)
        return Dataset(lambda: (np.int64(i) for i in r), len(r))

    @staticmethod
    def from_generator(generator, output_signature=None):
        """Elements from calling `generator()` anew for each iteration."""
        return Dataset(lambda: (_to_arrays(e) for e in generator()), None)

    # -- transformations
    def batch(self, batch_size, drop_remainder=False):
        """Stacks consecutive elements into batches of `batch_size` (the last may be smaller)."""
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        source = self

        def make():
            group = []
            for e in source._make_iterator():
                group.append(e)
                if len(group) == batch_size:
                    yield _stack(group)
                    group = []
            if group and not drop_remainder:
                yield _stack(group)
        length = None
        if self._length is not None:
            length = self._length // batch_size if drop_remainder else -(-self._length // batch_size)
        return Dataset(make, length)

    def unbatch(self):
        """Splits each batch back into its elements."""
        source = self

        def make():
            for e in source._make_iterator():
                leaves = flatten(e)
                for i in range(len(leaves[0])):
                    yield pack_as(e, [a[i] for a in leaves])
        return Dataset(make, None)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Randomly reorders elements with a buffer of `buffer_size` (as tf.data does)."""
        if buffer_size <= 0:
            raise ValueError(f"buffer_size must be positive, got {buffer_size}")
        source = self
        state = {"epoch": 0}

        def make():
            epoch = state["epoch"]
            if reshuffle_each_iteration:
                state["epoch"] += 1
            rng = np.random.default_rng(None if seed is None else (seed, epoch if
                                                                     reshuffle_each_iteration else 0))
            buffer = []
            for e in source._make_iterator():
                if len(buffer) < buffer_size:
                    buffer.append(e)
                    continue
                i = rng.integers(len(buffer))
                yield buffer[i]
                buffer[i] = e
            while buffer:
                yield buffer.pop(rng.integers(len(buffer)))
        return Dataset(make, self._length)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Applies `map_func` to each element (tuples are unpacked into arguments)."""
        source = self

        def make():
            for e in source._make_iterator():
                t = _to_tensors(e)
                out = map_func(*t) if isinstance(t, tuple) else map_func(t)
                yield _to_arrays(out)
        return Dataset(make, self._length)

    def filter(self, predicate):
        """Keeps the elements for which `predicate` is true."""
        source = self

        def make():
            for e in source._make_iterator():
                t = _to_tensors(e)
                if bool(predicate(*t) if isinstance(t, tuple) else predicate(t)):
                    yield e
        return Dataset(make, None)

    def repeat(self, count=None):
        """Repeats the dataset `count` times (forever when None or -1)."""
        source = self

        def make():
            i = 0
            while count is None or count < 0 or i < count:
                empty = True
                for e in source._make_iterator():
                    empty = False
                    yield e
                if empty:
                    return
                i += 1
        length = None if count is None or count < 0 or self._length is None else self._length * count
        return Dataset(make, length)

    def take(self, count):
        """The first `count` elements (all when -1)."""
        source = self

        def make():
            if count < 0:
                yield from source._make_iterator()
                return
            for i, e in enumerate(source._make_iterator()):
                if i >= count:
                    return
                yield e
        length = self._length if count < 0 else (count if self._length is None
                                                  else min(count, self._length))
        return Dataset(make, length)

    def skip(self, count):
        """All but the first `count` elements."""
        source = self

        def make():
            for i, e in enumerate(source._make_iterator()):
                if i >= count:
                    yield e
        return Dataset(make, None if self._length is None else max(0, self._length - count))

    def prefetch(self, buffer_size=None):
        """Accepted for tf.data compatibility; elements are produced on demand."""
        return self

    def cache(self, filename=""):
        """Accepted for tf.data compatibility; elements are recomputed on each pass."""
        return self

    # -- iteration
    def __iter__(self):
        for e in self._make_iterator():
            yield _to_tensors(e)

    def as_numpy_iterator(self):
        """Iterates elements as numpy arrays."""
        return iter(self._make_iterator())

    def __len__(self):
        if self._length is None:
            raise TypeError("The length of this dataset is unknown (infinite or filtered).")
        return self._length

    def cardinality(self):
        """The number of elements, or -2 when unknown (tf.data.UNKNOWN_CARDINALITY)."""
        return -2 if self._length is None else self._length


class _Sliced(Dataset):
    """from_tensor_slices: batching slices contiguous ranges directly instead of stacking."""

    def __init__(self, make_iterator, length, arrays):
        super().__init__(make_iterator, length)
        self._arrays = arrays

    def batch(self, batch_size, drop_remainder=False):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        arrays, n = self._arrays, self._length
        leaves = flatten(arrays)
        stop_at = n - n % batch_size if drop_remainder else n

        def make():
            for start in range(0, stop_at, batch_size):
                yield pack_as(arrays, [a[start:start + batch_size] for a in leaves])
        length = n // batch_size if drop_remainder else -(-n // batch_size)
        return Dataset(make, length)


def _as_array(value):
    if isinstance(value, tl.Tensor):
        return value.numpy() if value.shape.rank else np.asarray(value.numpy())
    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)   # Python floats become float32, as tensors do
    if array.dtype == np.int64 and not isinstance(value, np.ndarray):
        array = array.astype(np.int32)
    return array


def _stack(group):
    leaves = [flatten(e) for e in group]
    return pack_as(group[0], [np.stack(parts) for parts in zip(*leaves)])
