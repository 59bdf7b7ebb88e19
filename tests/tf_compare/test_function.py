"""tl.function semantics against tf.function: retrace counts for the same call sequences,
pretty-printed signatures, input_signature binding and errors, reduce_retracing, Variable
creation rules, Python side effects at trace time only, ConcreteFunctions, methods."""
import re

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402


def _run_calls(lib, calls, **options):
    traces = []

    def f(x=None, y=1, *rest, **kw):
        traces.append(1)
        return lib.constant(1.0)

    g = lib.function(f, **options)
    out = []
    for call in calls:
        args, kwargs = call(lib)
        try:
            g(*args, **kwargs)
            out.append("ok")
        except (TypeError, ValueError) as e:
            out.append(type(e).__name__)
        out.append((len(traces), g.experimental_get_tracing_count()))
    return out


CALLS = {
    "py ints": [lambda lib: ((1,), {}), lambda lib: ((2,), {}), lambda lib: ((1,), {})],
    "py floats, ints, bools": [lambda lib: ((1.0,), {}), lambda lib: ((1,), {}), lambda lib: ((True,), {})],
    "tensor shapes": [lambda lib: ((lib.constant([1.0]),), {}), lambda lib: ((lib.constant([1.0, 2.0]),), {}),
                      lambda lib: ((lib.constant([3.0]),), {}), lambda lib: ((lib.constant([1, 2]),), {})],
    "tensor vs python": [lambda lib: ((lib.constant(1.0),), {}), lambda lib: ((1.0,), {})],
    "lists": [lambda lib: (([1, 2],), {}), lambda lib: (([1, 3],), {}), lambda lib: (([1, 2, 3],), {}),
              lambda lib: (([lib.constant(1.0)],), {}), lambda lib: (([lib.constant(2.0)],), {})],
    "dicts": [lambda lib: (({"a": lib.constant(1.0)},), {}), lambda lib: (({"a": lib.constant(2.0)},), {}),
              lambda lib: (({"b": lib.constant(2.0)},), {})],
    "None": [lambda lib: ((None,), {}), lambda lib: ((None,), {}), lambda lib: ((lib.constant(1.0),), {})],
    "kwargs": [lambda lib: ((), {"x": lib.constant(1.0)}), lambda lib: ((lib.constant(1.0),), {}),
               lambda lib: ((), {"x": lib.constant(1.0), "y": 2}), lambda lib: ((lib.constant(2.0), 2), {})],
    "defaults": [lambda lib: ((lib.constant(1.0),), {}), lambda lib: ((lib.constant(1.0), 1), {}),
                 lambda lib: ((lib.constant(1.0), 2), {})],
    "numpy": [lambda lib: ((np.ones(2, "float32"),), {}), lambda lib: ((np.zeros(2, "float32"),), {}),
              lambda lib: ((np.ones(3, "float32"),), {})],
    "tuples": [lambda lib: (((1, lib.constant(1.0)),), {}), lambda lib: (((1, lib.constant(2.0)),), {}),
               lambda lib: (([1, lib.constant(2.0)],), {})],
    "strings": [lambda lib: (("a",), {}), lambda lib: (("b",), {}), lambda lib: (("a",), {})],
    "varargs": [lambda lib: ((lib.constant(1.0), 1, 2, 3), {}), lambda lib: ((lib.constant(1.0), 1, 2, 3), {}),
                lambda lib: ((lib.constant(1.0), 1, 2), {})],
    "extra keywords": [lambda lib: ((lib.constant(1.0),), {"z": 1}), lambda lib: ((lib.constant(1.0),), {"z": 2})],
    "nan": [lambda lib: ((float("nan"),), {}), lambda lib: ((float("nan"),), {})],
}


@pytest.mark.parametrize("name", list(CALLS))
def test_retrace_counts(name):
    check(lambda lib: _run_calls(lib, CALLS[name]))


@pytest.mark.parametrize("name", [n for n in CALLS if n not in ("kwargs", "defaults")])
def test_retrace_counts_reduce_retracing(name):
    check(lambda lib: _run_calls(lib, CALLS[name], reduce_retracing=True))


def _signatures(lib, calls, fn):
    g = lib.function(fn)
    for call in calls:
        g(*call(lib))
    text = g.pretty_printed_concrete_signatures()
    return re.sub(r"\d{6,}", "ID", text)  # capture ids differ; compare() maps tl. to tf.


def _f_tensor(x):
    return x * 2


def _f_two(x, n):
    return x * n


def _f_list_out(x):
    return [x, x * 2]


def _f_dict_out(x):
    return {"a": x, "b": (x, 1)}


def _f_none(x):
    return None


def _f_python(x):
    return 3


def _f_first(x):
    return x[0]


def _f_key(x):
    return x["k"]


def _f_same(x):
    return x


def _f_kinds(x, y=2, *args, z=3, **kw):
    return x


def _f_varargs(x, *args, **kw):
    return x


SIGNATURES = {
    "tensor": ([lambda lib: (lib.constant(1.0),)], _f_tensor),
    "tensor and python": ([lambda lib: (lib.constant([1, 2]), 3)], _f_two),
    "list out": ([lambda lib: (lib.constant(1.0),)], _f_list_out),
    "dict out": ([lambda lib: (lib.constant(1.0),)], _f_dict_out),
    "None out": ([lambda lib: (lib.constant(1.0),)], _f_none),
    "python out": ([lambda lib: (lib.constant(1.0),)], _f_python),
    "list in": ([lambda lib: ([lib.constant(1.0), 2],)], _f_first),
    "dict in": ([lambda lib: ({"k": lib.constant(1.0), "j": "s"},)], _f_key),
    "tuple in": ([lambda lib: ((lib.constant(1.0), None),)], _f_first),
    "several traces": ([lambda lib: (lib.constant(1.0),), lambda lib: (lib.constant([1.0]),), lambda lib: (2,)], _f_same),
    "bool": ([lambda lib: (True,)], _f_same),
    "capture": ([lambda lib: (lib.constant(1.0),)], None),
}


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_pretty_printed_concrete_signatures(name):
    calls, fn = SIGNATURES[name]
    if fn is None:
        def run(lib):
            c = lib.constant([1.0, 2.0])
            return _signatures(lib, calls, lambda x: x + c)
        check(run)
        return
    check(lambda lib: _signatures(lib, calls, fn))


def test_signature_parameter_kinds():
    def run(lib):
        g = lib.function(_f_kinds)
        g(lib.constant(1.0), z=4, w=lib.constant(2))
        h = lib.function(_f_varargs)
        h(lib.constant(1.0), 2, lib.constant(3), a=1, b=lib.constant([1]))
        text = g.pretty_printed_concrete_signatures() + "\n" + h.pretty_printed_concrete_signatures()
        return text
    check(run)


INPUT_SIGNATURE_ARGS = {
    "ok": lambda lib: [lib.constant([1.0, 2.0])],
    "wrong dtype": lambda lib: [lib.constant([1, 2])],
    "wrong rank": lambda lib: [lib.constant([[1.0]])],
    "python list": lambda lib: [[1.0, 2.0]],
    "python ints": lambda lib: [[1, 2]],
    "numpy float64": lambda lib: [np.ones(2)],
    "too many": lambda lib: [lib.constant([1.0]), lib.constant([1.0])],
    "too few": lambda lib: [],
    "None": lambda lib: [None],
    "string": lambda lib: ["a"],
}


@pytest.mark.parametrize("name", list(INPUT_SIGNATURE_ARGS))
@pytest.mark.parametrize("shape", [[None], [2], [3]], ids=str)
def test_input_signature_binding(name, shape):
    def run(lib):
        g = lib.function(lambda x: x * 2, input_signature=[lib.TensorSpec(shape, lib.float32)])
        return g(*INPUT_SIGNATURE_ARGS[name](lib)), g.experimental_get_tracing_count()
    check(run)


def test_input_signature_scalar_conversions():
    def run(lib):
        g = lib.function(lambda x: x * 2, input_signature=[lib.TensorSpec([], lib.float32)])
        h = lib.function(lambda x: x * 2, input_signature=[lib.TensorSpec([], lib.int32)])
        out = [g(1), g(2.5)]
        try:
            h(1.5)
        except TypeError:
            out.append("TypeError")
        return out
    check(run)


def test_input_signature_keywords_and_nesting():
    def run(lib):
        f = lib.function(lambda x, y: x + y,
                         input_signature=[lib.TensorSpec([], lib.float32), lib.TensorSpec([], lib.float32)])
        g = lib.function(lambda d: d["a"] * 2, input_signature=[{"a": lib.TensorSpec([None], lib.float32)}])
        return f(lib.constant(1.0), y=lib.constant(2.0)), f(y=1.0, x=2.0), g({"a": lib.constant([1.0, 2.0])})
    check(run)


def test_reduce_retracing_relaxes_dims_then_rank():
    def run(lib):
        f = lib.function(lambda x: x * 2, reduce_retracing=True)
        for n in (1, 2, 3, 4, 5):
            f(lib.ones([n]))
        f(lib.ones([2, 2]))
        f(lib.ones([3, 3]))
        f(lib.ones([3]))
        f(lib.ones([3], dtype=lib.int32))
        f(lib.ones([4], dtype=lib.int32))
        text = f.pretty_printed_concrete_signatures()
        return f.experimental_get_tracing_count(), text
    check(run)


FUNCTION_CASES = {}


def fcase(fn):
    FUNCTION_CASES[fn.__name__] = fn
    return fn


@fcase
def variable_created_every_call_raises(lib):
    @lib.function
    def f(x):
        v = lib.Variable(1.0)
        return v + x
    return f(lib.constant(1.0))


@fcase
def variable_created_once_traces_twice(lib):
    vs = []

    @lib.function
    def f(x):
        if not vs:
            vs.append(lib.Variable(2.0))
        return vs[0] * x
    return f(lib.constant(1.0)), f(lib.constant(2.0)), f(lib.constant([1.0])), f.experimental_get_tracing_count()


@fcase
def variable_assign_in_graph(lib):
    v = lib.Variable(1.0)

    @lib.function
    def f(x):
        v.assign_add(x)
        v.assign(v * 2)
        return v.read_value()
    return f(lib.constant(1.0)), f(lib.constant(1.0)), v.numpy()


@fcase
def variable_assign_wrong_dtype(lib):
    return lib.Variable(1.0).assign(1)


@fcase
def variable_assign_wrong_shape(lib):
    return lib.Variable([1.0, 2.0]).assign([1.0])


@fcase
def variable_assign_int_list(lib):
    return lib.Variable([1.0, 2.0]).assign([1, 2])


@fcase
def variable_assign_float64(lib):
    return lib.Variable([1.0, 2.0]).assign(lib.constant([1, 2], dtype=lib.float64))


@fcase
def variable_ops(lib):
    v = lib.Variable([1.0, 2.0])
    return (v + 1, v * v, -v, v[0], v.shape, v.dtype, v.trainable, lib.reduce_sum(v),
            v.assign_sub([1.0, 1.0]), v.value())


@fcase
def variable_dtypes(lib):
    return lib.Variable(1, dtype=lib.float32), lib.Variable([1.5], dtype=lib.float64)


@fcase
def variable_float_to_int(lib):
    return lib.Variable(1.5, dtype=lib.int32)


@fcase
def variable_names(lib):
    return lib.Variable(1.0, name="abc").name


@fcase
def python_side_effects_at_trace_only(lib):
    log = []

    @lib.function
    def f(x):
        log.append(1)
        return x
    f(lib.constant(1))
    f(lib.constant(2))
    f(lib.constant(3.0))
    return len(log)


@fcase
def concrete_function(lib):
    f = lib.function(lambda x: x * 2)
    c = f.get_concrete_function(lib.TensorSpec([None], lib.float32))
    return (c(lib.constant([1.0, 2.0])), c([1.0, 2.0]), [t.shape for t in c.inputs], [t.dtype for t in c.outputs],
            f.experimental_get_tracing_count())


@fcase
def concrete_function_wrong_dtype(lib):
    c = lib.function(lambda x: x * 2).get_concrete_function(lib.TensorSpec([None], lib.float32))
    return c(lib.constant([1, 2]))


@fcase
def concrete_function_python_scalar_for_vector(lib):
    c = lib.function(lambda x: x * 2).get_concrete_function(lib.TensorSpec([None], lib.float32))
    return c(1.0)


@fcase
def concrete_function_signature(lib):
    f = lib.function(lambda x: x * 2)
    c = f.get_concrete_function(lib.TensorSpec([None], lib.float32, name="inp"))
    return c.pretty_printed_signature()


@fcase
def run_functions_eagerly(lib):
    log = []

    @lib.function
    def f(x):
        log.append(1)
        return x * 2
    lib.config.run_functions_eagerly(True)
    try:
        result = f(lib.constant(1)), f(lib.constant(2)), lib.config.functions_run_eagerly()
    finally:
        lib.config.run_functions_eagerly(False)
    return result, len(log), lib.config.functions_run_eagerly()


@fcase
def structured_outputs(lib):
    return lib.function(lambda x: (x, [x * 2, {"k": x}], None, 3))(lib.constant(1.0))


@fcase
def nested_functions(lib):
    inner = lib.function(lambda x: x + 1)
    outer = lib.function(lambda x: inner(x) * 2)
    return outer(lib.constant(1)), inner.experimental_get_tracing_count(), outer.experimental_get_tracing_count()


@fcase
def methods_and_modules(lib):
    class M(lib.Module):
        def __init__(self):
            super().__init__()
            self.v = lib.Variable(2.0, name="v")

        @lib.function
        def __call__(self, x):
            return x * self.v
    m = M()
    m(lib.constant(1.0))
    m(lib.constant(2.0))
    m2 = M()
    m2(lib.constant(1.0))
    m(lib.constant([1.0]))
    return (m.__call__.experimental_get_tracing_count(), m2.__call__.experimental_get_tracing_count(),
            [v.name for v in m.variables], [v.name for v in m.trainable_variables])


@fcase
def module_variables(lib):
    class M(lib.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.Variable(1.0, name="a")
            self.b = [lib.Variable(2.0, name="b"), lib.Variable(3.0, trainable=False, name="c")]
            self.sub = lib.Module()
            self.sub.d = lib.Variable(4.0, name="d")
    m = M()
    return [v.name for v in m.variables], [v.name for v in m.trainable_variables]


@fcase
def captured_tensor_is_fixed(lib):
    c = [lib.constant(1.0)]
    f = lib.function(lambda x: x + c[0])
    first = f(lib.constant(1.0))
    c[0] = lib.constant(5.0)
    return first, f(lib.constant(1.0))


@fcase
def captured_python_value_is_fixed(lib):
    k = [1.0]
    f = lib.function(lambda x: x + k[0])
    first = f(lib.constant(1.0))
    k[0] = 3.0
    return first, f(lib.constant(1.0))


@fcase
def objects_by_identity(lib):
    class O:
        pass
    f = lib.function(lambda o, x: x)
    a, b = O(), O()
    f(a, lib.constant(1))
    f(b, lib.constant(1))
    f(a, lib.constant(1))
    return f.experimental_get_tracing_count()


@pytest.mark.parametrize("name", list(FUNCTION_CASES))
def test_function_semantics(name):
    check(FUNCTION_CASES[name])
