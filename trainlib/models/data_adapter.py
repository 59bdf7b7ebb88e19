"""Turning what `fit`/`evaluate`/`predict` receive into batches of numpy arrays.

Owns: arrays and tensors (checked for equal lengths, sliced in order or in a
fresh permutation per epoch, floating data cast to float32 as Keras does),
`tl.data.Dataset`s and Python generators (iterated as given), `PyDataset` (Keras 3's
`keras.utils.PyDataset`, tf.keras 2's `Sequence`: batches by index, their order shuffled
per epoch when asked, `on_epoch_end` called after each pass; with `workers` > 1 made ahead
by a thread pool, with `use_multiprocessing` by worker processes, at most `max_queue_size`
ahead, always yielded in index order, a worker's error raised in the caller, the pool shut
down when the epoch ends or its consumer stops), class weights,
`validation_split` (the last fraction, before any shuffling), and the checks of
what the data arguments are (`x` given, `batch_size` an integer), so a bad one
fails at once with a message naming the user's line, not deep in a step.
Invariant: every batch is a tuple (x, y, sample_weight) whose unused slots are
None, with the same structure every step, so a traced step is reused.
"""
import collections
import concurrent.futures
import multiprocessing
import numbers

import numpy as np

from ..graph.nest import flatten, pack_as
from ..graph.errors import user_location
from ..data import Dataset
from ..graph.op import convert_to_tensor


def _at():
    where = user_location()
    return f" (at {where})" if where else ""


def check_batch_size(batch_size, name="batch_size"):
    """`batch_size` as a Python int, or None when it is None or 0 (the default then applies, as
    in Keras).

    Raises:
        TypeError: for anything but an integer (`2.5` is not truncated; `True` is not 1).
        ValueError: for a negative integer.
    """
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise TypeError(f"{name} must be an integer (samples per batch), got {batch_size!r} of "
                        f"type {type(batch_size).__name__}; pass e.g. {name}=32{_at()}")
    if batch_size < 0:
        raise ValueError(f"{name} must be positive, got {batch_size}{_at()}")
    return int(batch_size) or None


def check_x(x):
    """Raises ValueError naming the user's line when `x` (the inputs) is None."""
    if x is None:
        raise ValueError("x is None: fit, evaluate and predict need the model's inputs as x "
                         f"(arrays or tensors, a tl.data.Dataset, or a generator){_at()}")


def _to_numpy(value):
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "shape") and
                                                          getattr(v, "ndim", 0) for v in value):
        return type(value)(_to_numpy(v) for v in value)  # several inputs
    array = np.asarray(value)
    if array.dtype.kind == "f" and array.dtype != np.float32:
        array = array.astype(np.float32)
    if array.dtype.kind in "SUO":
        try:  # strings: bytes in an object array, as tl.string holds them
            return np.array(convert_to_tensor(array).numpy())
        except TypeError:
            pass
        raise TypeError(f"Cannot use data of type {type(value).__name__} (an object array); pass "
                        "numpy arrays, tensors, a tl.data.Dataset or a generator")
    return array


def _lengths(structure):
    return [len(a) for a in flatten(structure) if a is not None]


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) from a batch given as x, (x,), (x, y) or (x, y, w)."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"Data must be x, (x,), (x, y) or (x, y, sample_weight); got a tuple of "
                         f"{len(data)}")
    return data, None, None


def _class_weights(y, class_weight):
    # keras class_weight_to_sample_weights: argmax of one-hot rows, else the label rounded
    y = np.asarray(y)
    if y.ndim > 1:
        y = y.argmax(axis=-1) if y.shape[-1] != 1 else np.squeeze(y, axis=-1)
    labels = np.round(y).astype(np.int64)
    return np.array([class_weight.get(int(c), 1.0) for c in labels], dtype=np.float32)


def _slice(structure, index):
    if type(structure) is np.ndarray:   # one array (the usual x or y): no structure to walk
        return structure[index]
    return pack_as(structure, [None if a is None else a[index] for a in flatten(structure)])


class ArrayBatches:
    """Batches of in-memory arrays."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=32, shuffle=False,
                 class_weight=None, steps=None):
        check_x(x)
        batch_size = check_batch_size(batch_size)
        self.x, self.y = _to_numpy(x), _to_numpy(y)
        sw = _to_numpy(sample_weight)
        if class_weight is not None:
            if y is None:
                raise ValueError("class_weight needs targets y")
            if sw is not None:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
            if isinstance(self.y, (list, tuple, dict)):
                raise ValueError("`class_weight` is only supported for Models with a single "
                                 "output.")
            sw = _class_weights(self.y, class_weight)
        self.sample_weight = sw
        sizes = {"x": _lengths(self.x), "y": _lengths(self.y), "sample_weight": _lengths(sw)}
        all_sizes = {n for s in sizes.values() for n in s}
        if len(all_sizes) > 1:
            detail = ", ".join(f"{k} sizes: {v}" for k, v in sizes.items() if v)
            raise ValueError(f"Data cardinality is ambiguous: {detail}. Make sure all arrays "
                             "contain the same number of samples.")
        self.n = all_sizes.pop()
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        self.num_batches = -(-self.n // self.batch_size)
        self.steps = steps if steps is not None else self.num_batches
        self._steps_given = steps is not None
        self._seen = 0        # batches of the current pass over the data already given
        self._order = None

    def first_batch(self):
        return self._batch(np.arange(min(self.batch_size, self.n)))

    def reset(self):
        """Starts the next epoch at the beginning of a new pass (evaluate does, as Keras)."""
        self._seen = 0

    def _batch(self, index):
        x = _slice(self.x, index)
        if self.y is None and self.sample_weight is None:
            return (x,)
        return (x, _slice(self.y, index), None if self.sample_weight is None
                else _slice(self.sample_weight, index))[:3 if self.sample_weight is not None else 2]

    def __iter__(self):
        """One epoch's batches. With `steps` (steps_per_epoch), as Keras 3: an epoch
        continues the pass over the data where the previous one stopped, stops early
        when the pass ends (the next epoch starts a new pass), and never wraps around."""
        if not self._steps_given:
            self._seen = 0
        for _ in range(self.steps):
            if self._seen >= self.num_batches:
                break     # the EpochIterator warns, as Keras's does
            if self._seen == 0:
                self._order = np.random.permutation(self.n) if self.shuffle else None
            start = self._seen * self.batch_size
            stop = min(start + self.batch_size, self.n)
            index = self._order[start:stop] if self._order is not None else slice(start, stop)
            self._seen += 1
            yield self._batch(index)
        if self._seen >= self.num_batches:
            self._seen = 0


class IterableBatches:
    """Batches from a `tl.data.Dataset` or a Python generator/iterable, as given."""

    def __init__(self, data, steps=None):
        self.data = data
        self.steps = steps
        self._iterator = None
        self._peeked = None
        self._reiterable = hasattr(data, "__iter__") and not hasattr(data, "__next__")

    def _next_iterator(self):
        if self._reiterable:
            return iter(self.data)
        if self._iterator is None:
            self._iterator = iter(self.data)
        return self._iterator

    def first_batch(self):
        if self._peeked is None:
            it = self._next_iterator()
            try:
                self._peeked = _normalize(next(it))
            except StopIteration:
                raise ValueError("The dataset or generator yielded no data") from None
            if not self._reiterable:
                self._iterator = _chain([self._peeked], it)
        return self._peeked

    def __iter__(self):
        it = self._next_iterator()
        count = 0
        for item in it:
            yield _normalize(item)
            count += 1
            if self.steps is not None and count >= self.steps:
                return

    @property
    def length(self):
        if self.steps is not None:
            return self.steps
        try:
            return len(self.data)
        except TypeError:
            return None


def _chain(first, rest):
    yield from first
    yield from rest


def _normalize(item):
    if isinstance(item, dict):
        return (_to_numpy(item),)
    if isinstance(item, tuple):
        return tuple(_to_numpy(v) for v in item)
    return (_to_numpy(item),)


class PyDataset:
    """Batches by index, as Keras 3's `keras.utils.PyDataset` (tf.keras 2's `Sequence`).

    Subclass it with `__len__` (the number of batches) and `__getitem__(index)` (the batch
    x, (x, y) or (x, y, sample_weight)); `on_epoch_end` runs after each epoch. `fit`,
    `evaluate` and `predict` take an instance as x. Subclasses need not call
    `super().__init__()` (tf.keras 2 code often does not).

    Args:
        workers: how many batches are made at once: 1 makes them on the calling thread;
            more use a pool of threads (or of processes with `use_multiprocessing`).
        use_multiprocessing: make batches in worker processes (forked where the platform
            allows, else the instance must be picklable); with `workers=1`, one process.
        max_queue_size: how many batches the workers may make ahead of the one in use.

    Batches reach the model in index order (or the epoch's shuffled order) however many
    workers make them; an exception in `__getitem__` is raised in `fit` as it was raised.

    Example:
        >>> class Squares(PyDataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, i):
        ...         x = np.full((8, 1), float(i), np.float32)
        ...         return x, x * x
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError("a PyDataset subclass defines __getitem__(index)")

    def __len__(self):
        raise NotImplementedError("a PyDataset subclass defines __len__()")

    @property
    def num_batches(self):
        """The number of batches (`len(self)`)."""
        return len(self)

    def on_epoch_begin(self):
        """Runs before each epoch (override)."""

    def on_epoch_end(self):
        """Runs after each epoch (override, e.g. to reshuffle)."""

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class PyDatasetBatches:
    """Batches `dataset[i]` for each index of an epoch (shuffled order if asked)."""

    def __init__(self, dataset, steps=None, shuffle=False):
        self.data = dataset
        self.steps = steps
        self.shuffle = shuffle

    def first_batch(self):
        if len(self.data) == 0:
            raise ValueError("The PyDataset has no batches (its __len__ is 0)")
        return _normalize(self.data[0])

    @property
    def length(self):
        return self.steps if self.steps is not None else len(self.data)

    def __iter__(self):
        order = np.arange(len(self.data))
        if self.shuffle:
            np.random.shuffle(order)
        if self.steps is not None:
            order = order[:self.steps]
        self.data.on_epoch_begin()
        data = self.data
        workers, processes = data.workers, data.use_multiprocessing
        if workers > 1 or (workers > 0 and processes):
            batches = _made_by_workers(data, [int(i) for i in order], workers, processes,
                                       data.max_queue_size)
        else:
            batches = (data[int(i)] for i in order)
        try:
            for batch in batches:
                yield _normalize(batch)
        finally:
            batches.close()      # stops the workers, also when the consumer stops early
        self.data.on_epoch_end()


_WORKER_DATASET = [None]   # in a worker process: the PyDataset its pool was made for


def _init_worker(dataset):
    _WORKER_DATASET[0] = dataset


def _worker_batch(index):
    return _WORKER_DATASET[0][index]


def _made_by_workers(dataset, indices, workers, processes, max_queue_size):
    """`dataset[i]` for each of `indices`, in order, made by a pool of `workers` threads (or
    processes), at most `max_queue_size` (at least one) ahead of the consumer."""
    ahead = max(1, int(max_queue_size or 1))
    if processes:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        pool = concurrent.futures.ProcessPoolExecutor(max(1, workers), mp_context=context,
                                                      initializer=_init_worker,
                                                      initargs=(dataset,))
        get = _worker_batch
    else:
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="PyDataset")
        get = dataset.__getitem__
    pending = collections.deque()
    failed = False
    try:
        remaining = iter(indices)
        for index in remaining:
            pending.append(pool.submit(get, index))
            if len(pending) >= ahead:
                break
        while pending:
            # the first failure of any worker is raised at once (as Keras), not after the
            # batches before it are made
            while not pending[0].done():
                concurrent.futures.wait([f for f in pending if not f.done()],
                                        return_when=concurrent.futures.FIRST_COMPLETED)
                broken = next((f for f in pending if f.done() and not f.cancelled()
                               and f.exception() is not None), None)
                if broken is not None:
                    failed = True
                    broken.result()
            failed = not pending[0].cancelled() and pending[0].exception() is not None
            batch = pending.popleft().result()    # re-raises the worker's exception
            for index in remaining:
                pending.append(pool.submit(get, index))
                break
            yield batch
    finally:
        for future in pending:
            future.cancel()
        # after a failure, running siblings are not waited for (their results are unused)
        pool.shutdown(wait=not failed, cancel_futures=True)


def is_iterable_data(x):
    """True for a tl.data.Dataset, a generator or another iterator (not arrays or tensors)."""
    return isinstance(x, Dataset) or hasattr(x, "__next__")


def make_batches(x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None,
                 steps=None):
    """The batch source for `x` (arrays/tensors, a Dataset, or a generator)."""
    check_x(x)
    check_batch_size(batch_size)  # a bad one is an error even where a Dataset batches itself
    if isinstance(x, PyDataset):
        if y is not None:
            raise ValueError("When x is a PyDataset (Sequence), y must be None: its batches hold "
                             "(x, y) pairs")
        return PyDatasetBatches(x, steps, shuffle)
    if is_iterable_data(x):
        if y is not None:
            raise ValueError("When x is a dataset or generator, y must be None: the dataset "
                             "yields (x, y) pairs")
        return IterableBatches(x, steps)
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, class_weight, steps)


def train_validation_split(arrays, validation_split):
    """Splits each array (nested structures allowed) into its first and last fraction."""
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
    flat = [a for a in flatten(arrays) if a is not None]
    n = len(flat[0])
    split_at = int(np.floor(n * (1.0 - validation_split)))
    if split_at in (0, n):
        raise ValueError(f"validation_split={validation_split} leaves no data on one side of "
                         f"{n} samples")
    train = pack_as(arrays, [None if a is None else a[:split_at] for a in flatten(arrays)])
    val = pack_as(arrays, [None if a is None else a[split_at:] for a in flatten(arrays)])
    return train, val
