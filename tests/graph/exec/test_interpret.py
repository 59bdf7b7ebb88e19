"""The Interpreter runs a graph op by op in the current context; Replay re-runs it for values only."""
import numpy as np

import trainlib as tl
from trainlib.graph.exec.interpret import Interpreter, Replay


def _traced(fn, *args):
    return tl.function(fn).get_concrete_function(*args)


def test_interpreting_a_graph_eagerly_gives_what_its_compiled_code_gives():
    def f(x, y):
        return tl.nn.relu(tl.matmul(x, y) - 1.0), tl.reduce_sum(x * 2.0)

    x = tl.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = tl.constant(np.ones((3, 2), np.float32))
    cf = _traced(f, x, y)
    got = Interpreter().run(cf.graph, [x, y])
    want = cf(x, y)
    for g, w in zip(got, want):
        assert isinstance(g, tl.Tensor)
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_replay_does_not_repeat_effects_and_gives_the_values_written(capfd):
    v = tl.Variable(1.0)

    def f(x):
        tl.print("printed once")
        v.assign_add(x)
        return v.read_value() * 2.0

    x = tl.constant(3.0)
    cf = _traced(f, x)
    capfd.readouterr()
    graph = cf.graph
    inputs = [x] + [c for c, _ in graph.captures]
    out = Replay().run(graph, inputs)
    assert float(v.numpy()) == 1.0          # the write was not repeated
    assert float(out[0]) == 2.0             # the read after it sees the Variable as it is
    assert "printed once" not in "".join(capfd.readouterr())
    Interpreter().run(graph, inputs)
    assert float(v.numpy()) == 4.0          # the plain interpreter runs the write
    assert "printed once" in "".join(capfd.readouterr())
