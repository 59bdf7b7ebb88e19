"""`GradientTape.gradient` explains every None: a warning (or, with
`unconnected_gradients="explain"`, a ValueError) naming the source, where its path to the
target left the tape (op and user's line) and the fix; `.numpy()` on a watched value under a
recording tape warns, naming the line."""
import warnings

import numpy as np
import pytest

import trainlib as tl


def _line(marker):
    """`this_file.py:LINE` of the line of this module holding `marker`."""
    with open(__file__, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if marker in text and "_line(" not in text:
                return f"{__file__}:{number}"
    raise AssertionError(marker)


def _explain(fn):
    with pytest.raises(ValueError) as info:
        fn("explain")
    return str(info.value)


def test_each_way_a_path_leaves_the_tape_is_named_with_its_line():
    x = tl.constant([1.0, 2.0])
    v, u, w = tl.Variable([3.0, 4.0]), tl.Variable([1.0, 1.0]), tl.Variable([0.0, 0.0])

    def run(mode, source):
        with tl.GradientTape() as tape:
            tape.watch(x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = tl.constant(x.numpy() * 2)  # LEAVES-NUMPY
            b = tl.cast(v, tl.int32)  # LEAVES-CAST
            c = tl.stop_gradient(u * 2.0)  # LEAVES-STOP
            w.assign(x * 3.0)  # LEAVES-ASSIGN
            y = tl.reduce_sum(a) + tl.cast(tl.reduce_sum(b), tl.float32) + \
                tl.reduce_sum(c) + tl.reduce_sum(w)
        return tape.gradient(y, source, unconnected_gradients=mode)

    message = _explain(lambda mode: run(mode, x))
    assert "source 0" in message and "numpy() turned it into a numpy value" in message
    assert _line("LEAVES-NUMPY") in message
    assert "AssignVariableOp stored it into Variable" in message and _line("LEAVES-ASSIGN") in message
    message = _explain(lambda mode: run(mode, v))
    assert "Cast made int32 values" in message and _line("LEAVES-CAST") in message
    message = _explain(lambda mode: run(mode, u))
    assert "tl.stop_gradient stopped it" in message and _line("LEAVES-STOP") in message


def test_sources_the_tape_never_saw():
    v, frozen = tl.Variable([1.0]), tl.Variable(2.0, trainable=False)
    c, n = tl.constant(3.0), tl.constant(4)

    def run(mode, source):
        with tl.GradientTape() as tape:
            y = tl.reduce_sum(v * 2.0) * frozen + c * 2.0 + tl.cast(n, tl.float32)
        return tape.gradient(y, source, unconnected_gradients=mode)

    assert "not trainable" in _explain(lambda mode: run(mode, frozen))
    assert "does not watch it; call tape.watch(x)" in _explain(lambda mode: run(mode, c))
    assert "dtype int32 carries no gradient" in _explain(lambda mode: run(mode, n))
    other = tl.Variable([5.0])
    assert "never read while the tape recorded" in _explain(lambda mode: run(mode, other))


def test_the_default_warns_once_per_source_and_still_returns_none():
    x = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        k = tl.argmax(x)
        y = tl.cast(k, tl.float32) * 2.0
    with pytest.warns(UserWarning, match=r"ArgMax, which has no gradient, consumed it") as record:
        g = tape.gradient(y, x)  # GRADIENT-CALL
    assert g is None
    assert any(w.filename == __file__ and f"{w.filename}:{w.lineno}" == _line("GRADIENT-CALL")
               for w in record)
    zero = tl.GradientTape()
    with zero:
        zero.watch(x)
        y = tl.cast(tl.argmax(x), tl.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # "zero" asked for zeros: nothing to explain
        np.testing.assert_array_equal(zero.gradient(y, x, unconnected_gradients="zero").numpy(),
                                      [0.0, 0.0])


def test_explanations_inside_a_function_name_the_users_line():
    @tl.function
    def f(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.cast(tl.argmax(x), tl.float32) * 2.0  # ARGMAX-IN-GRAPH
        return tape.gradient(y, x, unconnected_gradients="explain")

    with pytest.raises(ValueError, match="ArgMax") as info:
        f(tl.constant([1.0, 3.0]))
    assert _line("ARGMAX-IN-GRAPH") in str(info.value)


def test_a_target_that_does_not_depend_on_the_source():
    x, z = tl.constant([1.0]), tl.constant([2.0])

    def run(mode):
        with tl.GradientTape() as tape:
            tape.watch([x, z])
            y = z * 3.0 if False else z * 2.0  # the branch using x is not taken
        return tape.gradient(y, x, unconnected_gradients=mode)

    assert "does not depend on it" in _explain(run)


def test_numpy_on_a_watched_value_under_a_recording_tape_warns_naming_the_line():
    x = tl.constant([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        with pytest.warns(UserWarning, match="numpy") as record:
            y.numpy()  # NUMPY-CALL
        with pytest.warns(UserWarning, match="np.asarray"):
            np.asarray(y)
    assert any(f"{w.filename}:{w.lineno}" == _line("NUMPY-CALL") for w in record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y.numpy()                       # the tape no longer records
        with tl.GradientTape():
            tl.constant([1.0]).numpy()  # not watched
            x.numpy()                   # this tape does not watch x
