"""Keras 3 vs trainlib: keras.tree on the same structures, keras.config's floatx reaching layers,
Progbar's printed numbers for the same updates, Config, get_source_inputs, and the names of
keras.utils / keras.config / keras.tree / keras.preprocessing."""
import collections
import re

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from trainlib import keras as tk  # noqa: E402

Point = collections.namedtuple("Point", ["b", "a"])
STRUCTURES = [None, 3, "ab", [1, (2, {"b": 3, "a": [4, None]})],
              collections.OrderedDict([("z", 1), ("a", 2)]),
              collections.defaultdict(list, {"z": 1, "a": [2, 3]}), Point(1, [2, 3]),
              collections.deque([1, [2]], maxlen=5), [[], {}, ()], {10: "x", 2: "y"}]


def _outcome(fn):
    try:
        return ("ok", fn())
    except ValueError as e:
        return ("ValueError", str(e).split(";")[0].split("\n")[0])


@pytest.mark.parametrize("structure", STRUCTURES, ids=[repr(s)[:30] for s in STRUCTURES])
def test_tree_functions_agree(structure):
    for name, call in [
            ("flatten", lambda t: t.flatten(structure)),
            ("flatten_with_path", lambda t: t.flatten_with_path(structure)),
            ("is_nested", lambda t: t.is_nested(structure)),
            ("pack", lambda t: t.pack_sequence_as(structure, range(len(t.flatten(structure))))),
            ("map", lambda t: t.map_structure(lambda x: ("m", x), structure)),
            ("map_no_none", lambda t: t.map_structure(lambda x: 1, structure, none_is_leaf=False)),
            ("lists_to_tuples", lambda t: t.lists_to_tuples(structure)),
            ("traverse", lambda t: t.traverse(
                lambda x: t.MAP_TO_NONE if x == 2 else None, structure)),
            ("bottom_up", lambda t: t.traverse(
                lambda x: x * 10 if isinstance(x, int) else None, structure, top_down=False))]:
        expected, got = _outcome(lambda: call(keras.tree)), _outcome(lambda: call(tk.tree))
        assert got == expected, name
        if expected[0] == "ok" and expected[1] is not None:
            assert type(got[1]) is type(expected[1]), name
            if isinstance(expected[1], dict):
                assert list(got[1]) == list(expected[1]), name


PAIRS = [([1, 2], (1, 2)), ({"a": 1}, collections.OrderedDict(a=2)), ({"a": 1, "z": 2}, {"a": 1}),
         (Point(1, 2), (1, 2)), ([1, [2]], [1, 2]), ([None], [1]), ([1], [None]),
         ({"a": [1, 2]}, {"a": [3, 4]})]


@pytest.mark.parametrize("a,b", PAIRS)
def test_structure_checks_agree(a, b):
    for call in (lambda t: t.assert_same_structure(a, b), lambda t: t.assert_same_paths(a, b),
                 lambda t: t.map_structure(lambda x, y: (x, y), a, b),
                 lambda t: t.map_structure_up_to(a, lambda x: x, b)):
        expected, got = _outcome(lambda: call(keras.tree)), _outcome(lambda: call(tk.tree))
        assert got[0] == expected[0]
        if expected[0] == "ok":
            assert got == expected


def test_map_shape_structure_agrees():
    structure = {"a": (None, 3), "b": [(1, 2), [4]], "c": [[None], "x"]}
    assert tk.tree.map_shape_structure(str, structure) == \
        keras.tree.map_shape_structure(str, structure)


def test_floatx_reaches_layers_as_in_keras():
    def dtypes(k):
        k.utils.clear_session()
        seen = []
        for value in ("float32", "float64", None, "float16"):
            if value == "float64":
                k.config.set_floatx("float64")
            if value is None:
                k.utils.clear_session()
            if value == "float16":
                k.config.set_dtype_policy("mixed_float16")
            layer = k.layers.Dense(1)
            layer.build((None, 2))
            seen.append((str(layer.kernel.dtype).replace("<dtype: '", "").rstrip("'>"),
                         layer.compute_dtype, k.config.dtype_policy().name))
        k.config.set_floatx("float32")
        k.utils.clear_session()
        return seen
    assert dtypes(tk) == dtypes(keras)


def _numbers(text):
    """The metric part of each verbose=2 line (times differ between runs)."""
    return [re.sub(r"^\s*\d+/\d+ - \d+s - \d+\w+/step", "", line)
            for line in text.splitlines()]


@pytest.mark.parametrize("kwargs", [{}, {"stateful_metrics": ["acc"]},
                                    {"stateless_metrics": ["loss"]}])
def test_progbar_prints_the_same_numbers(capsys, kwargs):
    def run(k):
        bar = k.utils.Progbar(target=7, verbose=2, **kwargs)
        bar.update(1, [("loss", 4.0), ("acc", 0.125)])
        bar.update(4, [("loss", 1.5), ("acc", -0.5)])
        bar.add(2, [("loss", 2e-5), ("acc", 0.75)])
        bar.update(7, [("acc", 0.5)])
        bar2 = k.utils.Progbar(target=None, verbose=2, **kwargs)
        bar2.update(3, [("loss", 1.0)])
        bar2.target = 3
        bar2.update(3, [("loss", 2.0)], finalize=True)
        return capsys.readouterr().out
    expected = run(keras)
    assert _numbers(run(tk)) == _numbers(expected) and expected


def test_config_container_agrees():
    def use(k):
        config = k.utils.Config(b=1, a=2)
        config.c = 3
        config["d"] = 4
        config.freeze()
        frozen = _outcome(lambda: setattr(config, "e", 5))
        return list(config), list(config.keys()), config.to_json(), frozen[0], len(config)
    assert use(tk) == use(keras)


def test_get_source_inputs_order_agrees():
    def order(k):
        a, b, c = (k.Input((2,), name=n) for n in ("ina", "inb", "inc"))
        h = k.layers.Add()([k.layers.Dense(2)(c), b])
        out = k.layers.Concatenate()([h, a, b])
        return [t.name for t in k.utils.get_source_inputs(out)]
    assert order(tk) == order(keras)


@pytest.mark.parametrize("module,allowed_missing", [
    ("utils", {"FeatureSpace", "audio_dataset_from_directory", "bounding_boxes", "legacy"}),
    ("config", set()), ("tree", set()), ("preprocessing", set())])
def test_public_names_present(module, allowed_missing):
    import importlib  # noqa: PLC0415
    theirs = {n for n in dir(importlib.import_module(f"keras.{module}")) if not n.startswith("_")}
    ours = {n for n in dir(getattr(tk, module)) if not n.startswith("_")}
    assert theirs - ours <= allowed_missing


OPS_UNDER_FLOATX = {
    "zeros": lambda k: k.ops.zeros(2), "ones": lambda k: k.ops.ones(2),
    "full": lambda k: k.ops.full((2,), 1.0), "eye": lambda k: k.ops.eye(2),
    "tri": lambda k: k.ops.tri(2), "linspace": lambda k: k.ops.linspace(0, 1, 3),
    "convert": lambda k: k.ops.convert_to_tensor(1.0),
    "sqrt_int": lambda k: k.ops.sqrt(k.ops.convert_to_tensor(np.int32(4))),
    "int_plus_float": lambda k: k.ops.add(np.int32(1), 1.5),
    "normal": lambda k: k.random.normal((2,)), "uniform": lambda k: k.random.uniform((2,)),
    "one_hot": lambda k: k.ops.one_hot(np.array([1]), 3),
    "mean_int": lambda k: k.ops.mean(np.arange(3, dtype=np.int32)),
    "var_int": lambda k: k.ops.var(np.arange(3, dtype=np.int32)),
    "std_int": lambda k: k.ops.std(np.arange(3, dtype=np.int32)),
}


@pytest.mark.parametrize("name", sorted(OPS_UNDER_FLOATX))
def test_ops_follow_floatx_as_keras(name):
    def dtype_of(k):
        k.config.set_floatx("float64")
        try:
            value = OPS_UNDER_FLOATX[name](k)
        finally:
            k.config.set_floatx("float32")
        return str(getattr(value.dtype, "name", value.dtype)).replace("<dtype: '", "").rstrip("'>")
    assert dtype_of(tk) == dtype_of(keras)
