"""Dataset iterators as graph state: `next(it)` in a Function advances the captured iterator at
every call and raises OutOfRangeError at the end; `iter(ds)` inside a Function starts over at
every call; `for x in ds` in a Function is one graph loop (its size does not grow with the data,
shuffling and generators give fresh elements each call); the iterator ops are stateful."""
import numpy as np
import pytest

import trainlib as tl


def test_next_in_a_function_advances_per_call_then_ends():
    it = iter(tl.data.Dataset.range(1, 4))

    @tl.function
    def step():
        return next(it)

    assert [int(step()) for _ in range(3)] == [1, 2, 3]
    with pytest.raises(tl.errors.OutOfRangeError, match="End of sequence"):
        step()
    assert step.experimental_get_tracing_count() == 1
    types = [op.type for op in step.get_concrete_function().graph.get_operations()]
    assert "IteratorGetNext" in types


def test_iterator_of_structured_batches_and_eager_get_next():
    ds = tl.data.Dataset.from_tensor_slices(
        {"x": np.arange(10, dtype=np.float32).reshape(5, 2), "y": np.arange(5)}).batch(2)
    it = iter(ds)
    first = next(it)  # eagerly, then inside a Function: one iterator, one position
    step = tl.function(lambda: next(it))
    second, third = step(), step()
    assert first["x"].numpy().tolist() == [[0, 1], [2, 3]]
    assert second["y"].numpy().tolist() == [2, 3] and third["y"].numpy().tolist() == [4]
    with pytest.raises(tl.errors.OutOfRangeError):
        it.get_next()


def test_iter_inside_a_function_starts_over_at_every_call():
    data = {"start": 0}
    ds = tl.data.Dataset.from_generator(lambda: iter(range(data["start"], 10)), output_types=tl.int32)

    @tl.function
    def first_two():
        it = iter(ds)
        return next(it) * 10 + next(it)

    assert [int(first_two()) for _ in range(2)] == [1, 1]
    data["start"] = 5  # each call runs a new pass of the source, not values frozen at trace
    assert int(first_two()) == 56 and first_two.experimental_get_tracing_count() == 1


def test_for_over_a_dataset_is_a_graph_loop_with_fresh_elements():
    @tl.function
    def total(ds):
        s = tl.constant(0, tl.int64)
        for x in ds:
            s += x
        return s

    small, big = tl.data.Dataset.range(3), tl.data.Dataset.range(1000)
    assert int(total(small)) == 3 and int(total(big)) == 499500
    sizes = {len(total.get_concrete_function(d).graph.get_operations()) for d in (small, big)}
    assert len(sizes) == 1 and sizes.pop() < 15  # one loop, not 1000 unrolled bodies
    shuffled = tl.data.Dataset.range(20).shuffle(20)

    @tl.function
    def order(ds):
        out = tl.zeros([0], tl.int64)
        for x in ds:
            out = tl.concat([out, tl.reshape(x, [1])], 0)
        return out

    runs = [order(shuffled).numpy().tolist() for _ in range(4)]
    assert all(sorted(r) == list(range(20)) for r in runs) and len({tuple(r) for r in runs}) > 1


def test_break_and_a_generator_source():
    data = {"n": 3}
    ds = tl.data.Dataset.from_generator(lambda: iter(range(data["n"])), output_types=tl.int32)

    @tl.function
    def last_below(ds, limit):
        out = tl.constant(-1)
        for x in ds:
            if x >= limit:
                break
            out = x
        return out

    assert int(last_below(ds, 100)) == 2
    data["n"] = 50  # the generator runs at every call: the graph loop sees the new data
    assert int(last_below(ds, 100)) == 49 and int(last_below(ds, 7)) == 6


def test_iterator_ops_are_stateful_and_never_folded():
    it = iter(tl.data.Dataset.range(4))

    @tl.function
    def twice():
        return next(it) + next(it) * 0  # the second read still advances

    assert [int(twice()), int(twice())] == [0, 2]
    ops = twice.get_concrete_function().optimized_graph.get_operations()
    assert [op.type for op in ops].count("IteratorGetNext") == 2


def test_a_python_for_over_a_dataset_without_autograph_is_a_clear_error():
    @tl.function(autograph=False)
    def total():
        s = tl.constant(0, tl.int64)
        for x in tl.data.Dataset.range(3):
            s += x
        return s

    with pytest.raises(ValueError, match="AutoGraph"):
        total()


def test_dataset_loop_relaxes_shapes_its_elements_change():
    # the batches have an unknown first dim (the last one is short): `last` enters as (2,)
    # and leaves as (None,); the loop is built again with relaxed shapes (a ValueError naming the loop variable)
    ds = tl.data.Dataset.from_tensor_slices(tl.range(5.)).batch(2)

    @tl.function
    def last_batch():
        last = tl.zeros([2])
        for batch in ds:
            last = batch * 2.
        return last
    np.testing.assert_allclose(last_batch().numpy(), [8.])
    grow = tl.function(lambda: tl.while_loop(lambda x: tl.size(x) < 4,
                                             lambda x: tl.concat([x, x], 0), [tl.constant([1.])]),
                       autograph=False)
    with pytest.raises(ValueError, match="keeps its shape") as raised:
        grow()
    assert raised.value.loop_variable_changed_shape   # what the dataset loop relaxes by

