"""tl.string tensors: conversion, printing, generic ops, numeric-op errors, graphs, gradients."""
import numpy as np
import pytest

import trainlib as tl


def test_conversion_and_storage():
    t = tl.constant(["a", "é"])
    assert t.dtype is tl.string and tl.as_dtype("string") is tl.string and tl.as_dtype(str) is tl.string
    assert t.numpy().dtype == object and t.numpy().tolist() == [b"a", "é".encode()]
    assert tl.constant(np.array(["x", "yy"])).numpy().tolist() == [b"x", b"yy"]
    assert tl.constant(np.array([b"x"])).numpy().tolist() == [b"x"]
    assert tl.constant(b"raw").numpy() == b"raw"
    with pytest.raises(TypeError, match="mixes strings"):
        tl.constant(["a", 1])
    with pytest.raises(TypeError, match="ragged"):
        tl.constant([["a"], ["b", "c"]])
    with pytest.raises(TypeError, match="to_number"):
        tl.constant(["1"], dtype=tl.int32)


def test_printing_as_tensorflow():
    t = tl.constant(["a", "b"])
    assert repr(t) == "<tl.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>"
    assert str(t) == "tl.Tensor([b'a' b'b'], shape=(2,), dtype=string)"
    assert repr(tl.constant("a")) == "<tl.Tensor: shape=(), dtype=string, numpy=b'a'>"
    assert str(tl.constant("a")) == "tl.Tensor(b'a', shape=(), dtype=string)"


def test_generic_ops_and_comparisons():
    t = tl.constant(["a", "b", "c"])
    assert tl.reshape(t, [3, 1]).shape == (3, 1)
    assert tl.concat([t, t], 0).numpy().tolist() == [b"a", b"b", b"c"] * 2
    assert tl.gather(t, [2, 0]).numpy().tolist() == [b"c", b"a"]
    assert t[1].numpy() == b"b" and t[1].dtype is tl.string
    assert tl.where([True, False, True], t, "z").numpy().tolist() == [b"a", b"z", b"c"]
    assert (t == "b").numpy().tolist() == [False, True, False]
    assert (t != tl.constant(["a", "x", "c"])).numpy().tolist() == [False, True, False]
    assert (t + "!").numpy().tolist() == [b"a!", b"b!", b"c!"]


def test_picked_elements_stay_string_tensors_in_graphs():
    @tl.function(autograph=False)
    def pick(x):
        return tl.strings.upper(x[0]), [tl.strings.length(u) for u in tl.unstack(x)], x[0] == x[1]
    first, lengths, same = pick(tl.constant(["ab", "cde"]))
    assert first.numpy() == b"AB" and [int(v) for v in lengths] == [2, 3] and not bool(same)
    assert [v.numpy() for v in tl.constant(["p", "q"])] == [b"p", b"q"]


def test_numeric_ops_refuse_strings():
    t = tl.constant(["a"])
    with pytest.raises(TypeError, match="Mul"):
        t * t
    with pytest.raises(TypeError, match="Sum"):
        tl.reduce_sum(t)
    with pytest.raises(tl.errors.UnimplementedError, match="Cast"):
        tl.cast(t, tl.float32)
    with pytest.raises(tl.errors.UnimplementedError, match="Cast"):
        tl.cast(tl.constant([1]), tl.string)


def test_graphs_signatures_control_flow_and_gradients():
    words = tl.constant(["x", "y"])

    @tl.function(input_signature=[tl.TensorSpec([None], tl.string)])
    def f(x):
        y = tl.concat([x, words], 0)  # a captured string tensor
        if tl.size(y) > 3:
            y = tl.strings.upper(y)
        s = tl.constant("")
        i = tl.constant(0)
        while i < 2:
            s = s + "."
            i += 1
        return y, s
    y, s = f(tl.constant(["a", "b"]))
    assert y.numpy().tolist() == [b"A", b"B", b"X", b"Y"] and s.numpy() == b".."
    y, _ = f(tl.constant(["a"]))
    assert y.numpy().tolist() == [b"a", b"x", b"y"]
    assert f.experimental_get_tracing_count() == 1
    v = tl.Variable(1.0)
    with tl.GradientTape() as tape:
        out = tl.where(v > 0, words, words)
    assert tape.gradient(out, v) is None


def test_string_ops_run_on_the_host_under_a_gpu_device():
    from tests.graph.strict_xp import strict_xp
    from trainlib.graph import backend
    with backend.simulated_gpu(strict_xp), tl.device("gpu"):
        words = tl.constant(["ab", "c"])
        upper = tl.strings.upper(words)
        lengths = tl.strings.length(words)
    assert upper.numpy().tolist() == [b"AB", b"C"] and upper.device == "cpu"
    assert lengths.numpy().tolist() == [2, 1]
