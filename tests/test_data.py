"""tl.data.Dataset: slicing, batching, shuffling, map, repeat, take, and iteration as tensors."""
import numpy as np
import pytest

import trainlib as tl
from trainlib.data import Dataset

CASES = []  # Keras-level module: no op types of its own


def test_slices_batch_and_tensors():
    x, y = np.arange(10, dtype=np.float32).reshape(5, 2), np.arange(5)
    ds = Dataset.from_tensor_slices((x, y))
    first = next(iter(ds))
    assert isinstance(first[0], tl.Tensor) and first[0].shape == (2,)
    batches = list(ds.batch(2))
    assert [tuple(b[0].shape) for b in batches] == [(2, 2), (2, 2), (1, 2)]
    assert len(ds.batch(2)) == 3 and len(ds.batch(2, drop_remainder=True)) == 2
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), y)


def test_shuffle_map_repeat_take():
    ds = Dataset.from_tensor_slices(np.arange(20))
    a = [int(v) for v in ds.shuffle(20, seed=3)]
    b = [int(v) for v in ds.shuffle(20, seed=3)]
    assert sorted(a) == list(range(20)) and a != list(range(20)) and a == b
    doubled = ds.map(lambda v: v * 2).take(3)
    assert [int(v) for v in doubled] == [0, 2, 4]
    assert len(list(ds.take(4).repeat(3))) == 12
    assert [int(v) for v in ds.skip(18)] == [18, 19]
    assert ds.prefetch(tl.data.AUTOTUNE if hasattr(tl, "data") else -1) is ds
    s = ds.shuffle(5)
    assert sorted(int(v) for v in s) == list(range(20))
    mapped = Dataset.from_tensor_slices((np.ones((4, 2), np.float32), np.arange(4))).map(
        lambda x, y: (x + 1.0, y)).batch(2)
    xb, yb = next(iter(mapped))
    np.testing.assert_array_equal(xb.numpy(), np.full((2, 2), 2.0))


def test_errors():
    with pytest.raises(ValueError, match="different first dims"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError):
        Dataset.from_tensor_slices(np.zeros(3)).batch(0)
    with pytest.raises(TypeError):
        len(Dataset.from_tensor_slices(np.zeros(3)).repeat())
