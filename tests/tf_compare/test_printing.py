"""str()/repr() of tensors, Variables, shapes, specs and dtypes, and tl.print's output, compared
with TensorFlow's (trainlib prints `tl.` where TensorFlow prints `tf.`)."""
import os
import subprocess
import sys
import textwrap

import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

VALUES = {
    "float scalar": lambda lib: lib.constant(5.5), "float int-valued": lambda lib: lib.constant(5.0),
    "float vector": lambda lib: lib.constant([1.0, 0.0, 2.5]),
    "float matrix": lambda lib: lib.constant([[1.0, 2.0], [3.5, 4.25]]),
    "float64": lambda lib: lib.constant([1.0, 1 / 3], dtype=lib.float64),
    "float32 thirds": lambda lib: lib.constant([1 / 3, 2 / 3]),
    "float32 scalar third": lambda lib: lib.constant(1 / 3),
    "float64 scalar third": lambda lib: lib.constant(1 / 3, dtype=lib.float64),
    "float16": lambda lib: lib.constant([1.5], dtype=lib.float16),
    "int": lambda lib: lib.constant([1, 2, 3]), "int scalar": lambda lib: lib.constant(7),
    "int64": lambda lib: lib.constant([1, 2], dtype=lib.int64), "int64 scalar": lambda lib: lib.constant(3, dtype=lib.int64),
    "int8": lambda lib: lib.constant([1, 2], dtype=lib.int8), "uint8": lambda lib: lib.constant([1, 2], dtype=lib.uint8),
    "bool": lambda lib: lib.constant([True, False]), "bool scalar": lambda lib: lib.constant(True),
    "empty": lambda lib: lib.constant([]), "empty int": lambda lib: lib.zeros([0, 3], dtype=lib.int32),
    "empty 2d": lambda lib: lib.zeros([2, 0]),
    "large": lambda lib: lib.range(2000), "large float": lambda lib: lib.reshape(lib.range(2000.0), [40, 50]),
    "large 3d": lambda lib: lib.reshape(lib.range(3000), [10, 10, 30]),
    "1001": lambda lib: lib.range(1001), "1000": lambda lib: lib.range(1000),
    "3d": lambda lib: lib.reshape(lib.range(24), [2, 3, 4]),
    "tiny": lambda lib: lib.constant([1e-8, 1.0]), "huge": lambda lib: lib.constant([1e8, 1.0]),
    "nan inf": lambda lib: lib.constant([float("nan"), float("inf"), -float("inf")]),
    "negative": lambda lib: lib.constant([-1.5, 2.0]),  # (-0.0 alone: TF may hand back a cached 0.0)
    "scientific": lambda lib: lib.constant([1e-5, 1e5, 3.0]), "long rows": lambda lib: lib.ones([3, 20]),
    "mixed widths": lambda lib: lib.constant([[1.123456789, 100.5], [3.0, -0.001]]),
    "big float scalar": lambda lib: lib.constant(123456789.0), "small float scalar": lambda lib: lib.constant(1e-10),
    "Variable": lambda lib: lib.Variable([1.0, 2.0]),
    "Variable named": lambda lib: lib.Variable(3, name="v"),
    "Variable matrix": lambda lib: lib.Variable([[1.0, 2.0], [3, 4]], name="w"),
    "Variable bool": lambda lib: lib.Variable(True),
    "Variable third": lambda lib: lib.Variable(1 / 3),
    "TensorShape": lambda lib: lib.TensorShape([2, None]), "TensorShape unknown": lambda lib: lib.TensorShape(None),
    "TensorShape scalar": lambda lib: lib.TensorShape([]), "TensorShape 1": lambda lib: lib.TensorShape([3]),
    "TensorSpec": lambda lib: lib.TensorSpec([None, 3], lib.float32),
    "TensorSpec named": lambda lib: lib.TensorSpec([], lib.int32, name="x"),
    "TensorSpec unknown": lambda lib: lib.TensorSpec(None),
    "dtype": lambda lib: lib.float32, "dtype bool": lambda lib: lib.bool, "dtype int64": lambda lib: lib.int64,
    "tensor.shape": lambda lib: lib.constant([[1]]).shape,
    "as_dtype": lambda lib: lib.as_dtype("float"),
}


def _text(lib, make, how):
    text = how(make(lib))
    return text.replace("tf.", "tl.") if lib is tf else text


@pytest.mark.parametrize("how", [str, repr], ids=["str", "repr"])
@pytest.mark.parametrize("name", list(VALUES))
def test_str_and_repr(name, how):
    assert _text(tl, VALUES[name], how) == _text(tf, VALUES[name], how)


PRINT_PROGRAM = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow as lib
else:
    import trainlib as lib
def P(*a, **k):
    lib.print(*a, output_stream=sys.stdout, **k)
    sys.stdout.flush()
P(lib.constant(1.5))
P(lib.constant([1.5, 2.0, 3.25]))
P(lib.constant([[1, 2], [3, 4]]))
P(lib.constant([True, False]))
P("label:", lib.constant(3), 4, [1, 2], {"a": lib.constant(1.0)}, ("s", None))
P(lib.range(20))
P(lib.range(2000))
P(lib.reshape(lib.range(100), [10, 10]))
P(lib.reshape(lib.range(24), [2, 3, 4]))
P(lib.reshape(lib.range(120), [2, 3, 4, 5]))
P(lib.constant(1 / 3))
P(lib.constant([1 / 3, 1e-8, 1e8]))
P(lib.constant(1 / 3, dtype=lib.float64))
P(lib.constant([0.1, 2.5e-7], dtype=lib.float64))
P(lib.constant([]))
P(lib.zeros([2, 0]))
P(lib.zeros([0, 2]))
P(lib.constant([1.0, 2.0]), lib.constant(3), sep="|", end="!\\n")
P("s", None, 1.5, True)
P(lib.constant(np.nan), lib.constant(-np.inf))
P(lib.constant(-0.0), lib.constant(100.0), lib.constant(1e10), lib.constant(123456.7))
P(lib.constant(2, dtype=lib.int64), lib.constant(3, dtype=lib.uint8), lib.constant([1.5], dtype=lib.float16))
P(lib.Variable([1.0, 2.0]))
P(lib.constant([1.123456789]), summarize=1)
P(lib.range(10), summarize=2)
P(lib.range(10), summarize=-1)
P(lib.range(10), summarize=None)
P((lib.constant(1), lib.constant(2)))
P({"b": [lib.constant(1), "x"], "a": 2})
@lib.function
def f(x):
    print("python print", x.shape)
    P("in graph", x, x * 2)
    return x
f(lib.constant([1, 2])); f(lib.constant([3, 4])); f(lib.constant([1, 2, 3]))
"""


def _run(which, tmp_path):
    script = tmp_path / "print_program.py"
    script.write_text(textwrap.dedent(PRINT_PROGRAM))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_print_output(tmp_path):
    assert _run("tl", tmp_path) == _run("tf", tmp_path)
