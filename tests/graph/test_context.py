"""The per-thread tracing state (graph, tapes, device) and what relies on it across threads:
Function caches under concurrent first calls, Variable writes from several threads, the fork
handler. Races are made likely with a tiny thread switch interval and a barrier, and every
check is on exact final values."""
import copy
import os
import pickle
import signal
import sys
import threading
import time

import numpy as np
import pytest

import trainlib as tl
from tests.graph.strict_xp import strict_xp
from trainlib.graph import backend
from trainlib.graph.context import executing_eagerly, state


@pytest.fixture
def switch_often():
    """Threads switch every microsecond, so unguarded read-modify-write sequences interleave."""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(saved)


def run_threads(target, n=4):
    """Runs `target(i)` in `n` threads started together; returns the exceptions raised."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        barrier.wait()
        try:
            target(i)
        except Exception as e:  # noqa: BLE001 -- reported by the test
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_four_threads_racing_on_a_new_function_trace_it_once(switch_often):
    for round_ in range(3):  # a fresh Function each round: each round races on its first call
        traces = []

        @tl.function
        def f(x):
            traces.append(1)
            time.sleep(0.005)  # a slow trace: the other threads arrive while it runs
            return x * 2.0 + 1.0
        if round_ == 2:
            f = copy.deepcopy(f)  # a copy has a trace lock of its own

        results = [None] * 4
        errors = run_threads(lambda i: results.__setitem__(i, float(f(tl.constant(float(i))))))
        assert not errors, errors
        assert results == [1.0, 3.0, 5.0, 7.0]
        assert len(traces) == 1 and f.experimental_get_tracing_count() == 1


def test_threads_racing_on_a_method_share_one_trace(switch_often):
    class Model(tl.Module):
        def __init__(self):
            super().__init__()
            self.traces = 0

        @tl.function
        def __call__(self, x):
            self.traces += 1
            time.sleep(0.005)
            return x + 1.0

    model = Model()
    errors = run_threads(lambda i: model(tl.constant(1.0)))
    assert not errors, errors
    assert model.traces == 1


def test_assign_add_from_four_threads_gives_the_exact_total(switch_often):
    v = tl.Variable(0.0)
    # a copied and unpickled Variable has a lock of its own
    w = pickle.loads(pickle.dumps(copy.deepcopy(tl.Variable(np.zeros(3, np.float32)))))

    def add(i):
        for _ in range(1000):
            v.assign_add(1.0)
            w.assign_sub([1.0, 2.0, 3.0])
    assert not run_threads(add)
    assert float(v) == 4000.0
    np.testing.assert_array_equal(w.numpy(), [-4000.0, -8000.0, -12000.0])


def test_traced_in_place_writes_from_four_threads_give_the_exact_total():
    # large enough that numpy releases the GIL inside the in-place add: unguarded, two threads'
    # adds into the same buffer interleave and lose updates
    v = tl.Variable(np.zeros(1 << 20, np.float32))
    one = tl.ones([1 << 20])
    step = tl.function(lambda d: v.assign_add(d, read_value=False))
    step(one)
    step(one)  # the Variable owns its array now: the graph writes it in place

    def run(i):
        for _ in range(100):
            step(one)
    assert not run_threads(run)
    values = v.numpy()
    assert values.min() == values.max() == 402.0


def test_eager_work_in_another_thread_is_not_recorded_into_a_trace():
    v = tl.Variable(0.0)
    tracing, release = threading.Event(), threading.Event()

    @tl.function
    def f(x):
        tracing.set()
        assert release.wait(10)
        return x + 1.0

    worker = threading.Thread(target=lambda: f(tl.constant(1.0)))
    worker.start()
    assert tracing.wait(10)
    try:  # this thread works while the worker is inside f's trace
        assert executing_eagerly()
        v.assign_add(1.0)
        y = tl.constant(2.0) * 3.0
        assert type(y) is tl.Tensor and float(y) == 6.0
        assert float(v) == 1.0
    finally:
        release.set()
        worker.join(10)
    for _ in range(3):
        assert float(f(tl.constant(1.0))) == 2.0
    assert float(v) == 1.0  # f's graph holds no AssignAddVariableOp
    assert "AssignAddVariableOp" not in [op.type for op in
                                         f.get_concrete_function(tl.constant(1.0)).graph.get_operations()]


def test_a_tape_records_only_its_own_thread():
    x = tl.constant(3.0)
    out = {}
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        worker = threading.Thread(target=lambda: out.setdefault("y", x * x))
        worker.start()
        worker.join(10)
        z = x * 2.0
    assert tape.gradient(out["y"], x) is None  # as TensorFlow: tapes are per thread
    assert float(tape.gradient(z, x)) == 2.0


def test_device_scopes_are_per_thread_and_run_eagerly_is_global():
    seen = {}
    with backend.simulated_gpu(strict_xp):
        with tl.device("gpu"):
            assert tl.zeros([2]).device == "gpu"
            worker = threading.Thread(target=lambda: seen.setdefault("device", tl.zeros([2]).device))
            worker.start()
            worker.join(10)
    assert seen["device"] == "cpu"
    tl.config.run_functions_eagerly(True)
    try:
        worker = threading.Thread(target=lambda: seen.setdefault("eager", tl.config.functions_run_eagerly()))
        worker.start()
        worker.join(10)
    finally:
        tl.config.run_functions_eagerly(False)
    assert seen["eager"] is True


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_while_another_thread_traces_leaves_the_child_eager_and_unlocked():
    tracing, release = threading.Event(), threading.Event()
    v = tl.Variable(0.0)

    @tl.function
    def f(x):
        if not tracing.is_set():
            tracing.set()
            assert release.wait(20)
        return x + 1.0

    worker = threading.Thread(target=lambda: f(tl.constant(1.0)))
    worker.start()
    assert tracing.wait(10)
    try:
        pid = os.fork()
        if pid == 0:  # the child: only this thread exists; the worker's trace lock was held
            code = 1
            try:
                signal.alarm(20)  # a lock left held would hang the child: die instead
                ok = executing_eagerly() and state.graph is None and not state.tapes
                ok = ok and type(tl.constant(1.0) + 1.0) is tl.Tensor
                v.assign_add(2.0)
                ok = ok and float(v) == 2.0
                ok = ok and float(f(tl.constant(1.0))) == 2.0  # the signature the worker traces
                code = 0 if ok else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        worker.join(20)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert float(v) == 0.0 and float(f(tl.constant(1.0))) == 2.0
