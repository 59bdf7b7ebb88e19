"""RaggedTensors as tl.function arguments and results, in tf.data, and joined by concat/stack:
the same programs on TensorFlow and trainlib."""
import numpy as np
import pytest

from .compare import check, tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow


def as_lists(value):
    """RaggedTensors as nested lists, tensors kept, through tuples, lists and dicts."""
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        return value.to_list()
    if isinstance(value, (list, tuple)):
        return [as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    return value


def functions(lib):
    """A function over a ragged argument, called with other row lengths and row counts; its
    results and trace count."""
    @lib.function
    def f(x):
        return x * 2, x.row_lengths(), x.to_tensor(), lib.strings.as_string(x.flat_values)
    out = [f(lib.ragged.constant([[1, 2], [3]])), f(lib.ragged.constant([[1], [2, 3, 4]])),
           f(lib.ragged.constant([[1], [], [5]]))]
    return as_lists(out), f.experimental_get_tracing_count()


def signature(lib):
    @lib.function(input_signature=[lib.RaggedTensorSpec([None, None], lib.string)])
    def f(x):
        return lib.strings.length(x).to_list() if False else (  # noqa: SIM108
            lib.strings.upper(x.flat_values), x.to_tensor(default_value="-"))
    return (as_lists(f(lib.strings.split(["a bc", "", "d"]))),
            as_lists(f(lib.ragged.constant([["x"]]))), str(f.input_signature[0]))


def ragged_results(lib):
    @lib.function
    def f(s):
        words = lib.strings.split(s)
        return words, {"n": words.row_lengths(), "w": lib.strings.upper(words)}
    return as_lists(f(lib.constant(["a b", "c d e", ""]))), \
        as_lists(f(lib.constant(["x"])))


def nested(lib):
    @lib.function
    def f(x):
        return x + 1, x.values.row_lengths()
    return as_lists(f(lib.ragged.constant([[[1], [2, 3]], [[4]]]))), \
        f.pretty_printed_concrete_signatures().replace("tf.", "").replace("tl.", "")


RT = [[1, 2], [3], [4, 5, 6]]
JOIN = {
    "concat0": lambda lib: lib.concat([lib.ragged.constant(RT), lib.ragged.constant([[7]])], 0),
    "concat1": lambda lib: lib.concat([lib.ragged.constant(RT),
                                       lib.ragged.constant([[7], [], [8, 9]])], 1),
    "concat_neg": lambda lib: lib.concat([lib.ragged.constant(RT), lib.ragged.constant(RT)], -1),
    "concat_dense": lambda lib: lib.concat([lib.ragged.constant(RT), lib.constant([[7, 8]])], 0),
    "concat_3d": lambda lib: lib.concat([lib.ragged.constant([[[1], [2, 3]], [[4]]]),
                                         lib.ragged.constant([[[5, 6]]])], 0),
    "stack0": lambda lib: lib.stack([lib.ragged.constant(RT), lib.ragged.constant([[7]])], 0),
    "stack1": lambda lib: lib.stack([lib.ragged.constant(RT),
                                     lib.ragged.constant([[7], [], [8, 9]])], 1),
    "stack_strings": lambda lib: lib.stack([lib.ragged.constant([["a"], ["b", "c"]]),
                                            lib.ragged.constant([[], ["d"]])], 0),
    "concat1_rows_differ": lambda lib: lib.concat([lib.ragged.constant(RT),
                                                   lib.ragged.constant([[1]])], 1),
}


@pytest.mark.parametrize("program", [functions, signature, ragged_results, nested],
                         ids=lambda p: p.__name__)
def test_ragged_in_functions(program):
    check(program)


@pytest.mark.parametrize("name", sorted(JOIN))
def test_concat_stack(name):
    check(lambda lib: as_lists(JOIN[name](lib)))


@pytest.mark.parametrize("name", ["concat0", "concat1", "stack0", "stack1", "concat_dense"])
def test_concat_stack_traced(name):
    check(lambda lib: as_lists(lib.function(lambda: JOIN[name](lib), autograph=False)()))


def test_concat_gradient():
    def program(lib):
        x = lib.Variable([1., 2., 3.])
        with lib.GradientTape() as tape:
            r = lib.RaggedTensor.from_row_lengths(x * 2, [2, 1])
            c = lib.stack([r, r * 3], axis=1)
            y = lib.reduce_sum(c.flat_values * lib.range(1., 7.))
        return tape.gradient(y, x)
    check(program)


DATA = {
    "slices": lambda lib: list(lib.data.Dataset.from_tensor_slices(lib.ragged.constant(RT))),
    "slices_spec": lambda lib: str(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).element_spec),
    "batch": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).batch(2)),
    "batch_spec": lambda lib: str(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).batch(2).element_spec),
    "ragged_batch": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).map(lambda x: x).ragged_batch(2)),
    "ragged_batch_spec": lambda lib: str(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).map(lambda x: x).ragged_batch(2).element_spec),
    "ragged_batch_split": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        ["a b", "c", "d e f"]).map(lib.strings.split).ragged_batch(2, drop_remainder=True)),
    "ragged_batch_dense": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.constant([[1, 2], [3, 4], [5, 6]])).ragged_batch(2)),
    "ragged_batch_tuple": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).map(lambda x: (x, lib.size(x))).ragged_batch(2)),
    "dict_3d": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        {"a": lib.ragged.constant([[[1.], [2., 3.]], [[4.]]]), "b": [1, 2]}).batch(2)),
    "dict_3d_spec": lambda lib: str(lib.data.Dataset.from_tensor_slices(
        {"a": lib.ragged.constant([[[1.], [2., 3.]], [[4.]]]), "b": [1, 2]}).batch(2)
        .element_spec),
    "unbatch": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).batch(2).unbatch()),
    "unbatch_spec": lambda lib: str(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).batch(2).unbatch().element_spec),
    "map_ragged_batches": lambda lib: list(lib.data.Dataset.from_tensor_slices(
        lib.ragged.constant(RT)).batch(2).map(lambda x: x.to_tensor())),
}


@pytest.mark.parametrize("name", sorted(DATA))
def test_datasets(name):
    def program(lib):
        out = as_lists(DATA[name](lib))
        return out.replace("tf.", "").replace("tl.", "") if isinstance(out, str) else out
    check(program)


def test_ragged_elements_in_graph_iteration():
    def program(lib):
        ds = lib.data.Dataset.from_tensor_slices(["a b", "c d e", "f"]).map(
            lib.strings.split).ragged_batch(2)

        @lib.function
        def total():
            n = lib.constant(0, lib.int64)
            for batch in ds:
                n += lib.reduce_sum(batch.row_lengths())
            return n

        @lib.function
        def first(it):
            return next(it).to_tensor(default_value="-")
        return total(), first(iter(ds))
    check(program)


OPERATORS = {
    "neg": lambda lib, r: -r, "radd": lambda lib, r: 1 + r, "rmul": lambda lib, r: 2 * r,
    "rsub": lambda lib, r: 10 - r, "lt": lambda lib, r: r < 3, "ge": lambda lib, r: r >= 3,
    "ne": lambda lib, r: r != 2, "pow": lambda lib, r: r ** 2, "floordiv": lambda lib, r: r // 2,
    "mod": lambda lib, r: r % 2, "ragged_ragged": lambda lib, r: r * r - r,
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators(name):
    check(lambda lib: as_lists(OPERATORS[name](lib, lib.ragged.constant([[1, 2], [], [3, 4, 5]]))))


def test_indexing_inside_a_function():
    def program(lib):
        @lib.function
        def rows(x, i):
            return x[0], x[-1], x[i], x[1:], x[-2:], x[:-1], x[5:], x.nrows(), x.row_lengths()
        rt = lib.ragged.constant([[1, 2], [], [3, 4, 5]])
        return as_lists(rows(rt, lib.constant(1))), as_lists(rows(rt, lib.constant(-1)))
    check(program)


MATH = {
    "square": lambda lib, r: lib.square(r), "sqrt": lambda lib, r: lib.sqrt(lib.cast(r, lib.float32)),
    "cast": lambda lib, r: lib.cast(r, lib.float64), "maximum": lambda lib, r: lib.maximum(r, 3),
    "add_ragged": lambda lib, r: lib.add(r, r), "multiply_scalar": lambda lib, r: lib.multiply(2, r),
    "add_vector": lambda lib, r: lib.add(r, lib.constant([1, 2, 3])),
}


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_functions_map_flat_values(name):
    def program(lib):
        rt = lib.ragged.constant([[1, 2], [], [3, 4, 5]])
        return as_lists(MATH[name](lib, rt)), as_lists(lib.function(
            lambda x: MATH[name](lib, x), autograph=False)(rt))
    if name == "add_vector":  # TF broadcasts a dense vector per row; trainlib refuses it
        with pytest.raises(ValueError, match="scalars or RaggedTensors"):
            program(tl)
        return
    check(program)


DIGITS = [[3, 1, 4, 1], [], [5, 9, 2], [6], []]


@pytest.mark.parametrize("fn", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                "reduce_prod"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_reductions(fn, dtype):
    def program(lib):
        rt = lib.cast(lib.ragged.constant(DIGITS), getattr(lib, dtype))
        f = getattr(lib, fn)
        traced = lib.function(lambda x: f(x, axis=1), autograph=False)(rt)
        return f(rt, axis=1), f(rt, axis=-1, keepdims=True), f(rt), traced
    with np.errstate(invalid="ignore", divide="ignore"):
        check(program)


def test_reduction_over_rows_is_refused_clearly():
    with pytest.raises(ValueError, match="ragged axis 1"):
        tl.reduce_sum(tl.ragged.constant(DIGITS), axis=0)


def test_from_tensor_and_repr_inside_a_function():
    def program(lib):
        @lib.function(autograph=False)
        def f(x):
            r = lib.RaggedTensor.from_tensor(x)
            assert "RaggedTensor" in repr(r)
            return lib.reduce_sum(r, axis=1), lib.concat([r, x], axis=0)
        return as_lists(f(lib.constant([[1, 2], [3, 4]])))
    check(program)
