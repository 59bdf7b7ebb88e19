"""The profiler (graph/profiler.py, `tl.profiler.experimental`): sessions as TensorFlow's,
the trace read back (gzip + Chrome Trace Event JSON, events nested), the summary naming
this file's lines, Trace blocks, and profiling off adding nothing to generated code.
No test asserts a time."""
import glob
import gzip
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import trainlib as tl
from trainlib.graph import profiler as profiler_module
from trainlib.graph import xplane as xplane_module

prof = tl.profiler.experimental
HERE = os.path.abspath(__file__)


def _line(marker):
    """`file:LINE` of the line of this file that carries `marker` in a comment."""
    with open(HERE, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return f"{HERE}:{number}"
    raise AssertionError(marker)


def _events(logdir):
    (path,) = glob.glob(os.path.join(str(logdir), "plugins", "profile", "*", "*.trace.json.gz"))
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def _assert_nested(events):
    """On each thread, two complete events either nest or do not overlap."""
    by_thread = {}
    for e in events:
        if e["ph"] == "X":
            by_thread.setdefault(e["tid"], []).append(e)
    for timed in by_thread.values():
        timed.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_ends = []
        for e in timed:
            while open_ends and open_ends[-1] <= e["ts"] + 1e-3:
                open_ends.pop()
            end = e["ts"] + e["dur"]
            if open_ends:
                assert end <= open_ends[-1] + 1e-3, e
            open_ends.append(end)


@pytest.fixture(autouse=True)
def _no_session_left():
    yield
    if profiler_module._session is not None:
        prof.stop(save=False)


def _step_function():
    w = tl.constant(np.linspace(-1, 1, 12).reshape(4, 3).astype("float32"))

    @tl.function
    def step(x):
        y = tl.matmul(x, w)  # profiled-matmul
        return tl.reduce_sum(tl.nn.relu(y) * 2.0)  # profiled-relu
    return step


def test_stop_without_start_raises_as_tensorflow():
    with pytest.raises(tl.errors.UnavailableError, match="No profiler is running"):
        prof.stop()


def test_start_while_running_raises(tmp_path):
    prof.start(str(tmp_path))
    with pytest.raises(tl.errors.AlreadyExistsError, match="Another profiler is running"):
        prof.start(str(tmp_path))
    prof.stop(save=False)
    assert not os.path.exists(tmp_path / "plugins")   # save=False writes nothing


def test_function_trace_reads_back_and_nests(tmp_path):
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    plain = float(step(x))
    prof.start(str(tmp_path))
    for _ in range(3):
        assert float(step(x)) == plain   # the profiled program computes the same
    prof.stop()
    run_dirs = glob.glob(str(tmp_path / "plugins" / "profile" / "*"))
    assert len(run_dirs) == 1
    assert len(os.path.basename(run_dirs[0]).split("_")) == 6   # YYYY_MM_DD_HH_MM_SS
    events = _events(tmp_path)
    timed = [e for e in events if e["ph"] == "X"]
    for e in timed:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert e["dur"] >= 0
    calls = [e for e in timed if e["cat"] == "function"]
    assert len(calls) == 3
    matmuls = [e for e in timed if e["cat"] == "op" and e["args"]["type"] == "MatMul"]
    assert len(matmuls) == 3
    assert matmuls[0]["args"]["line"] == _line("profiled-matmul")
    for call in calls:   # each call holds its ops
        inside = [e for e in timed if e["cat"] == "op" and call["ts"] <= e["ts"] and
                  e["ts"] + e["dur"] <= call["ts"] + call["dur"] + 1e-3]
        assert {e["args"]["type"] for e in inside} >= {"MatMul", "Relu"}
    _assert_nested(events)


def test_summary_names_the_users_lines(tmp_path):
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    step(x)
    prof.start(str(tmp_path))
    step(x)
    prof.stop()
    text = prof.summary()
    assert text == prof.summary(str(tmp_path))
    (saved,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "summary.txt"))
    assert open(saved, encoding="utf-8").read() == text
    assert "per op type:" in text and "MatMul" in text
    lines = text.split("per line of your source")[1]
    assert _line("profiled-matmul") in lines and _line("profiled-relu") in lines
    assert "tl.matmul(x, w)" in lines   # the source text beside the line


def test_fit_attributes_layer_ops_to_the_line_that_made_the_layer(tmp_path):
    model = tl.Sequential([tl.layers.Dense(8, activation="relu"),  # profiled-dense
                           tl.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((32, 4), "float32"), np.ones((32, 1), "float32")
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    prof.start(str(tmp_path))
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    prof.stop()
    lines = prof.summary().split("per line of your source")[1]
    dense_row = next(r for r in lines.splitlines() if _line("profiled-dense") in r)
    assert "[dense" in dense_row
    matmuls = [e for e in _events(tmp_path) if e.get("args", {}).get("type") == "MatMul"]
    # 2 steps, each the first Dense's product and its kernel's gradient: its line, not fit's
    assert sum(e["args"]["line"] == _line("profiled-dense") for e in matmuls) == 2 * 2


def test_control_flow_ops_nest_in_their_loop(tmp_path):
    @tl.function
    def loop(x):
        return tl.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tl.sin(v)), (0, x))[1]

    x = tl.constant(np.ones(3, "float32"))
    expected = loop(x).numpy()
    prof.start(str(tmp_path))
    np.testing.assert_array_equal(loop(x).numpy(), expected)
    prof.stop()
    events = _events(tmp_path)
    assert sum(e.get("args", {}).get("type") == "Sin" for e in events) == 3
    _assert_nested(events)


def test_trace_block_is_an_event_holding_eager_ops(tmp_path):
    prof.start(str(tmp_path))
    with prof.Trace("my_block", step_num=3, note="x"):
        tl.matmul(tl.ones((2, 2)), tl.ones((2, 2)))  # profiled-eager
    prof.stop()
    events = _events(tmp_path)
    (block,) = [e for e in events if e["name"] == "my_block"]
    assert block["args"] == {"step_num": 3, "note": "x"}
    (eager,) = [e for e in events if e.get("cat") == "eager" and e["name"] == "MatMul"]
    assert eager["args"]["line"] == _line("profiled-eager")
    assert block["ts"] <= eager["ts"] <= eager["ts"] + eager["dur"] <= block["ts"] + block["dur"] + 1e-3
    assert "steps (Trace with step_num): 1" in prof.summary()


def test_trace_without_a_session_records_nothing(tmp_path):
    with prof.Trace("alone"):
        pass
    with prof.Profile(str(tmp_path)):
        pass
    assert not [e for e in _events(tmp_path) if e["name"] == "alone"]


def test_profiling_off_adds_nothing_to_generated_code(tmp_path):
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    step(x)
    concrete = step.get_concrete_function(x)
    plain = concrete.python_source
    assert "clock" not in plain and "record" not in plain
    prof.start(str(tmp_path))
    assert "record(" in concrete.python_source   # the profiled variant runs meanwhile
    traced_now = _step_function()
    traced_now(x)   # traced while profiling: profiled from its first call
    assert "record(" in traced_now.get_concrete_function(x).python_source
    prof.stop(save=False)
    assert concrete.python_source == plain
    assert "record(" not in traced_now.get_concrete_function(x).python_source


def test_tensorflow_names():
    assert repr(prof.ProfilerOptions()) == ("ProfilerOptions(host_tracer_level=2, "
                                            "python_tracer_level=0, device_tracer_level=1, "
                                            "delay_ms=None)")
    for refused in (lambda: prof.client.trace("grpc://localhost:6009", "logs", 100),
                    lambda: prof.client.monitor("grpc://localhost:6009", 100),
                    lambda: prof.server.start(6009)):
        with pytest.raises(tl.errors.UnimplementedError, match="in process only"):
            refused()


def test_summary_of_a_logdir_without_profile(tmp_path):
    with pytest.raises(ValueError, match="no profile"):
        prof.summary(str(tmp_path))


def _nested_intervals(draw_widths):
    """Events of one thread built from a nesting: (site, start, end, tid)."""
    events, cursor = [], [0]
    site = profiler_module.Site("op", "x", "X")

    def block(depth, spec):
        start = cursor[0]
        for child in spec:
            cursor[0] += child[0]
            if depth < 3:
                block(depth + 1, child[1])
        cursor[0] += 1
        events.append((site, start, cursor[0], 1))
    for spec in draw_widths:
        block(0, spec)
        cursor[0] += 1
    return events


_specs = st.lists(st.tuples(st.integers(0, 5), st.lists(st.tuples(st.integers(0, 5), st.just([])),
                                                        max_size=3)), max_size=3)


@settings(max_examples=50, deadline=None)
@given(st.lists(_specs, min_size=1, max_size=4))
def test_self_times_add_up_to_the_outer_blocks(specs):
    events = _nested_intervals(specs)
    timed = profiler_module.self_times(events)
    assert all(own >= 0 for _, _, own in timed)
    outer = [e for e in events if not any(o[1] <= e[1] and e[2] <= o[2] and o is not e
                                          for o in events)]
    assert sum(own for _, _, own in timed) == sum(e[2] - e[1] for e in outer)


def test_xplane_holds_the_traces_events(tmp_path):
    """The XSpace TensorBoard's profile plugin reads (read back with xplane.py's message
    classes) has the JSON trace's events: same names, durations and op types."""
    pytest.importorskip("google.protobuf")
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    step(x)
    prof.start(str(tmp_path))
    step(x)
    with prof.Trace("block", step_num=7):
        step(x)
    prof.stop()
    (path,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
    with open(path, "rb") as f:
        space = xplane_module.messages()["XSpace"].FromString(f.read())
    (plane,) = space.planes
    assert plane.name == "/host:CPU"
    names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
    stat_names = {key: metadata.name for key, metadata in plane.stat_metadata.items()}
    assert all(key == metadata.id for key, metadata in plane.event_metadata.items())
    got = []
    for line in plane.lines:
        for event in line.events:
            stats = {stat_names[stat.metadata_id]: getattr(stat, stat.WhichOneof("value"))
                     for stat in event.stats}
            got.append((names[event.metadata_id], event.duration_ps, stats.get("type"),
                        stats.get("step_num")))
    want = []
    for e in _events(tmp_path):
        if e["ph"] != "X":
            continue
        name = e["name"] if e["cat"] in ("trace", "function") else f"{e['name']}:{e['args']['type']}"
        want.append((name, round(e["dur"] * 1e6), e["args"].get("type"), e["args"].get("step_num")))
    assert sorted(got, key=str) == sorted(want, key=str)
    assert any(g[0] == "block" and g[3] == 7 for g in got)


def test_without_protobuf_the_trace_and_summary_are_written_and_no_xplane(tmp_path, monkeypatch):
    monkeypatch.setattr(xplane_module, "messages", lambda: None)
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    prof.start(str(tmp_path))
    step(x)
    prof.stop()
    (run,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*"))
    assert not glob.glob(os.path.join(run, "*.xplane.pb"))
    assert glob.glob(os.path.join(run, "*.trace.json.gz"))
    assert os.path.exists(os.path.join(run, "summary.txt"))
    assert any(e["ph"] == "X" for e in _events(tmp_path))


def test_a_call_under_a_tape_is_one_eager_event_and_keeps_the_plain_program(tmp_path):
    step = _step_function()
    x = tl.constant(np.ones((5, 4), "float32"))
    step(x)
    prof.start(str(tmp_path))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = step(x)  # profiled-tape-call
    tape.gradient(y, x)
    prof.stop()
    calls = [e for e in _events(tmp_path) if e.get("cat") == "eager" and "PartitionedCall" in e["name"]]
    assert calls and calls[0]["args"]["line"] == _line("profiled-tape-call")
    graph_function = step.get_concrete_function(x)._graph_function()
    assert "record(" not in graph_function._program.source
