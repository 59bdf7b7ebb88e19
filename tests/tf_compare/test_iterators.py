"""Dataset iterators as graph state against TensorFlow: `it = iter(ds)` outside and `next(it)`
inside a Function advances per call (1, 2, 3), then OutOfRangeError; `for x in ds` inside a
Function is a graph loop (the graph's size does not grow with the data; `break` works) over
range, repeat, batch, zip, map, from_generator; and ConcreteFunction.graph as traced, with the
node counts of TensorFlow's guide for Python loops unrolled at trace time."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

PIPELINES = {
    "range": lambda lib: lib.data.Dataset.range(1, 6),
    "repeat": lambda lib: lib.data.Dataset.range(3).repeat(3),
    "batch": lambda lib: lib.data.Dataset.range(7).batch(3),
    "batch drop": lambda lib: lib.data.Dataset.range(7).batch(3, drop_remainder=True),
    "zip": lambda lib: lib.data.Dataset.zip((lib.data.Dataset.range(4),
                                             lib.data.Dataset.range(10, 20).map(lambda x: x * 2))),
    "zip batch repeat": lambda lib: lib.data.Dataset.zip(
        (lib.data.Dataset.range(5), lib.data.Dataset.range(5).map(lambda x: x * x))).batch(2).repeat(2),
    "slices dict": lambda lib: lib.data.Dataset.from_tensor_slices(
        {"a": np.arange(6, dtype=np.float32).reshape(3, 2), "b": np.array([1, 2, 3])}).batch(2),
}


def _leaves(element):
    if isinstance(element, dict):
        return [element[k] for k in sorted(element)]
    if isinstance(element, tuple):
        return list(element)
    return [element]


def _next_per_call(make):
    def run(lib):
        it = iter(make(lib))

        @lib.function
        def step():
            return _leaves(next(it))

        out = []
        for _ in range(20):
            try:
                out.append(step())
            except lib.errors.OutOfRangeError:
                out.append("end")
                break
        return out
    return run


def _loop_sum(make):
    def run(lib):
        @lib.function
        def total(ds):
            s = lib.constant(0.0, lib.float64)
            n = lib.constant(0)
            for element in ds:
                for leaf in _leaves(element):
                    s += lib.reduce_sum(lib.cast(leaf, lib.float64))
                n += 1
            return s, n

        ds = make(lib)
        return [total(ds), total(ds)]  # a second pass starts over
    return run


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_next_inside_a_function_advances_per_call(name):
    check(_next_per_call(PIPELINES[name]))


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_for_over_a_dataset_inside_a_function(name):
    check(_loop_sum(PIPELINES[name]))


def test_break_in_a_dataset_loop_and_an_iterator_argument():
    def run(lib):
        @lib.function
        def first_above(ds, limit):
            out = lib.constant(-1, lib.int64)
            for x in ds:
                if x > limit:
                    out = x
                    break
            return out

        ds = lib.data.Dataset.range(10)
        it = iter(lib.data.Dataset.range(5).repeat())

        @lib.function
        def take_two(it):
            return next(it) * 10 + next(it)

        return [first_above(ds, 4), first_above(ds, 20), take_two(it), take_two(it), take_two(it)]
    check(run)


def _graph_sizes(lib):
    def measure(f, *args):
        return len(f.get_concrete_function(*args).graph.as_graph_def().node)

    @lib.function
    def train(dataset):
        loss = lib.constant(0)
        for x, y in dataset:
            loss += lib.abs(y - x)  # a dummy computation
        return loss

    small_data, big_data = [(1, 1)] * 3, [(1, 1)] * 10
    sizes = [measure(train, small_data), measure(train, big_data)]
    small = lib.data.Dataset.from_generator(lambda: small_data, (lib.int32, lib.int32))
    big = lib.data.Dataset.from_generator(lambda: big_data, (lib.int32, lib.int32))
    sizes += [measure(train, small), measure(train, big)]
    return [lib.constant(sizes), train(big)]


def test_graph_sizes_of_the_guide_and_a_dataset_loop():
    # TensorFlow's guide: 11 and 32 nodes for 3 and 10 elements unrolled; a dataset loop
    # stays small (6 nodes in both libraries) whatever the data's size
    check(_graph_sizes)
