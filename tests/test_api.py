"""Walks the public API table of DESIGN.md and finds every listed name on `tl`."""
import os
import re

import pytest

import trainlib as tl

DESIGN = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "DESIGN.md")

# area -> namespace the bare names of that row live in
_NAMESPACES = {"creation": "", "math (also `tl.math.*`)": "", "arrays": "", "nn (`tl.nn.*`)": "nn",
               "random (`tl.random.*`)": "random"}
_ROWS_DONE = ("values", "dtypes", "creation", "math (also `tl.math.*`)", "arrays", "nn (`tl.nn.*`)",
              "random (`tl.random.*`)", "graphs", "control flow", "AutoGraph", "autodiff", "config",
              "errors")


def _table():
    if not os.path.exists(DESIGN):
        pytest.skip("../shared/DESIGN.md is not beside the checkout")
    rows = {}
    for line in open(DESIGN, encoding="utf-8"):
        m = re.match(r"^\| (.+?) \| (.+) \|$", line.strip())
        if m and m.group(1) not in ("area", "---"):
            rows[m.group(1)] = m.group(2)
    return rows


def _resolve(path):
    obj = tl
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _names(area, text):
    ns = _NAMESPACES.get(area)
    if ns is not None and area in _NAMESPACES:
        names = re.findall(r"`([^`]+)`", text)
        words = []
        for chunk in names:
            words += chunk.split() if " " in chunk and "(" not in chunk else [chunk]
        prefix = ns + "." if ns else ""
        return [prefix + w.split("(")[0] for w in words if re.fullmatch(r"[a-z_0-9]+(\(.*\))?", w)]
    # other rows: every `tl.x.y` mentioned
    return sorted({m.rstrip(".") for m in re.findall(r"tl\.([A-Za-z_][\w.]*)", text)
                   if not m.endswith("*")})


@pytest.mark.parametrize("area", _ROWS_DONE)
def test_every_listed_name_exists(area):
    rows = _table()
    assert area in rows, f"DESIGN.md has no row {area!r}"
    names = _names(area, rows[area])
    assert names, area
    missing = []
    for name in names:
        name = name.replace("float16/32/64", "float16").replace("int8/16/32/64", "int8")
        name = re.sub(r"/.*", "", name)
        try:
            _resolve(name)
        except AttributeError:
            missing.append(name)
    assert not missing, f"{area}: missing {missing}"


def test_math_names_also_under_tl_math():
    rows = _table()
    for name in _names("math (also `tl.math.*`)", rows["math (also `tl.math.*`)"]):
        assert hasattr(tl.math, name), name


def test_dtype_variants_and_debugging():
    for d in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"):
        assert getattr(tl, d) is getattr(tl.dtypes, d)
    for name in ("assert_equal", "assert_less", "assert_greater", "check_numerics"):
        assert callable(getattr(tl.debugging, name))
    for name in ("OpError", "InvalidArgumentError", "NotFoundError", "ResourceExhaustedError",
                 "UnimplementedError"):
        assert issubclass(getattr(tl.errors, name), Exception)


def test_bad_arguments_get_clear_errors():
    import numpy as np
    with pytest.raises(ValueError, match="units"):
        tl.layers.Dense("a")
    with pytest.raises(tl.errors.InvalidArgumentError, match="depth must be non-negative"):
        tl.one_hot([1], -3)
    with pytest.raises(TypeError, match="callables"):
        tl.while_loop(1, 2, [tl.constant(0)])
    with pytest.raises(TypeError, match="callables"):
        tl.cond(True, 1, 2)
    model = tl.Sequential([tl.layers.Input((3,)), tl.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="non-empty"):
        model.fit(np.zeros((0, 3)), np.zeros((0, 1)), verbose=0)


def test_keras_utils_to_categorical_and_set_random_seed():
    import numpy as np
    out = tl.keras.utils.to_categorical([0, 2, 1], num_classes=3)
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert out.dtype == np.float64  # as Keras 3's
    assert tl.utils.to_categorical(np.array([[1], [0]])).shape == (2, 2)
    with pytest.raises(ValueError, match="num_classes"):
        tl.utils.to_categorical([3], num_classes=2)
    tl.keras.utils.set_random_seed(7)
    a = tl.random.uniform([3]).numpy(), np.random.rand()
    tl.keras.utils.set_random_seed(7)
    b = tl.random.uniform([3]).numpy(), np.random.rand()
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]
