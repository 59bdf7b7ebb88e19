"""PyDataset's workers (trainlib/models/data_adapter.py): batches made by threads or processes
reach the model in index order, at most max_queue_size ahead, a worker's exception is raised in
fit, and the pool is gone when the epoch ends or its consumer stops."""
import multiprocessing
import os
import threading
import time

import numpy as np
import pytest

from trainlib import keras
from trainlib.models.data_adapter import PyDatasetBatches


class Numbered(keras.utils.PyDataset):
    """Batch i is x = i (8 rows), y = 2i; later indices are made faster, so workers finish them
    out of order; it records who made each batch."""

    def __init__(self, n=6, fail_at=None, **kwargs):
        super().__init__(**kwargs)
        self.n, self.fail_at = n, fail_at
        self.calls = []
        self.lock = threading.Lock()
        self.busy = self.most_busy = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with self.lock:
            self.calls.append(i)
            self.busy += 1
            self.most_busy = max(self.most_busy, self.busy)
        try:
            if i == self.fail_at:
                raise ValueError(f"batch {i} is broken")
            time.sleep(0.002 * (self.n - i))
            x = np.full((8, 2), float(i), np.float32)
            return {"x": x, "pid": np.full((8, 1), os.getpid(), np.int64)}, x[:, :1] * 2.0
        finally:
            with self.lock:
                self.busy -= 1


def _epoch(dataset, **kwargs):
    return [(float(b[0]["x"][0, 0]), int(b[0]["pid"][0, 0])) for b in
            PyDatasetBatches(dataset, **kwargs)]


@pytest.mark.parametrize("workers,processes", [(1, False), (4, False), (1, True), (3, True)])
def test_batches_come_in_index_order(workers, processes):
    data = Numbered(workers=workers, use_multiprocessing=processes, max_queue_size=4)
    batches = _epoch(data)
    assert [x for x, _ in batches] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    pids = {pid for _, pid in batches}
    assert (os.getpid() not in pids) if processes else (pids == {os.getpid()})
    if workers > 1 and not processes:
        assert data.most_busy > 1            # the threads did overlap
    assert not multiprocessing.active_children()


def test_shuffled_epochs_keep_their_order_with_workers():
    np.random.seed(3)
    expected = np.random.permutation(6).astype(float).tolist()
    np.random.seed(3)
    data = Numbered(workers=3)
    assert [x for x, _ in _epoch(data, shuffle=True)] == expected


def test_workers_stay_at_most_max_queue_size_ahead():
    data = Numbered(n=20, workers=4, max_queue_size=3)
    iterator = iter(PyDatasetBatches(data))
    next(iterator)
    time.sleep(0.2)                          # give the pool every chance to run ahead
    assert len(data.calls) <= 1 + 3
    iterator.close()                         # the consumer stops: the pool is shut down
    assert not [t for t in threading.enumerate() if t.name.startswith("PyDataset")]


@pytest.mark.parametrize("processes", [False, True])
def test_a_workers_exception_is_raised_in_fit_and_the_pool_is_gone(processes):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = Numbered(fail_at=3, workers=2, use_multiprocessing=processes)
    baseline = {t.ident for t in threading.enumerate()}
    with pytest.raises(ValueError, match="batch 3 is broken"):
        model.fit(_XOnly(data), epochs=1, verbose=0)

    def left():   # the failure is raised at once; batches running then finish, no new one starts
        return multiprocessing.active_children() or [
            t for t in threading.enumerate()
            if t.ident not in baseline and t.name.startswith("PyDataset")]
    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left()


class _XOnly(keras.utils.PyDataset):
    """`Numbered`'s batches as (x, y) for a one-input model."""

    def __init__(self, inner):
        super().__init__(workers=inner.workers, use_multiprocessing=inner.use_multiprocessing)
        self.inner = inner

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        inputs, y = self.inner[i]
        return inputs["x"], y


def test_fit_with_workers_trains_as_without():
    weights = []
    for workers, processes in [(1, False), (3, False), (2, True)]:
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        model.fit(_XOnly(Numbered(workers=workers, use_multiprocessing=processes)), epochs=2,
                  verbose=0, steps_per_epoch=5)
        weights.append(model.get_weights())
    for other in weights[1:]:
        for a, b in zip(weights[0], other):
            np.testing.assert_array_equal(a, b)
    assert not multiprocessing.active_children()


class _SleepThenFail(keras.utils.PyDataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):   # 0 is read first on the calling thread (the data's spec)
        if i == 1:
            time.sleep(4)
        if i == 2:
            raise ValueError("batch 2 is broken")
        return np.zeros((2, 1), np.float32), np.zeros((2, 1), np.float32)


def test_a_worker_failure_surfaces_without_waiting_for_a_sleeping_sibling():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    start = time.monotonic()
    with pytest.raises(ValueError, match="batch 2 is broken"):
        model.fit(_SleepThenFail(workers=2), verbose=0)
    assert time.monotonic() - start < 3   # the sibling sleeps 4 s
