"""Saving over an existing export (and a `.keras` file) is atomic at every instant: a save killed
at any step leaves a directory that loads with exactly the old or exactly the new values, and the
next save removes what the killed one left behind."""
import os

import numpy as np
import pytest

import trainlib as tl
from trainlib import file_io, saved_model

from .helpers import arrays_path, edit_json

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked saver")

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def _model(seed):
    tl.random.set_seed(seed)
    inputs = tl.keras.Input((4,))
    return tl.keras.Model(inputs, tl.keras.layers.Dense(2)(tl.keras.layers.Dense(5)(inputs)))


@pytest.fixture(scope="module")
def models():
    old, new = _model(1), _model(2)
    return old, new, old.predict(X, verbose=0), new.predict(X, verbose=0)


def _serve(path):
    return saved_model.load(path).serve(X).numpy()


def _save_killed_at(step, save):
    """Runs `save()` in a forked child that dies (os._exit) on reaching step number `step`;
    returns the names of the steps it passed and whether it was killed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: never returns into pytest
        code = 3
        try:
            os.close(read)
            seen = []

            def hook(name):
                seen.append(name)
                os.write(write, (name + "\n").encode())
                if len(seen) == step:
                    os._exit(9)   # as a kill: no cleanup, no finally blocks

            file_io._step_hook = hook
            save()
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        steps = f.read().splitlines()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 9), f"the saver failed (exit {code}) after steps {steps}"
    return steps, code == 9


def _leftovers(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith((".tmp-", ".old-")))


def _to_old_layout(path):
    """Rewrites an export as versions before versioned arrays files wrote it (`variables.npz`)."""
    os.replace(arrays_path(path), path / "variables.npz")
    edit_json(path, lambda doc: doc["model"]["files"]["variables.npz"].pop("file"))


@pytest.mark.parametrize("layout", ["current", "old"])
def test_export_killed_at_every_step_loads_old_or_new(models, tmp_path, layout):
    old, new, old_out, new_out = models
    path = tmp_path / "export"

    def export_old():
        old.export(path, verbose=False)
        if layout == "old":
            _to_old_layout(path)

    export_old()
    step, outcomes = 1, []
    while True:
        steps, killed = _save_killed_at(step, lambda: new.export(path, verbose=False))
        got = _serve(path)
        same_as_old, same_as_new = np.array_equal(got, old_out), np.array_equal(got, new_out)
        assert same_as_old or same_as_new, f"killed after {steps}: neither old nor new values"
        outcomes.append((steps[-1] if steps else None, "old" if same_as_old else "new"))
        if not killed:
            break
        export_old()   # back to the old export; removes the killed save's rest
        assert _leftovers(path) == [] and _leftovers(tmp_path) == []
        assert sorted(os.listdir(path)) == sorted(["saved_model.json", arrays_path(path).name])
        step += 1
    names = [name for name, _ in outcomes]
    assert "renamed saved_model.json" in names and len(names) >= 7, names
    # before the pointer is replaced the old model loads, after it the new one
    switch = names.index("renamed saved_model.json")
    assert [o for _, o in outcomes[:switch]] == ["old"] * switch
    assert [o for _, o in outcomes[switch:]] == ["new"] * (len(outcomes) - switch)


def test_killed_saves_leave_temporaries_that_the_next_save_removes(models, tmp_path):
    old, new, _, new_out = models
    path = tmp_path / "export"
    old.export(path, verbose=False)
    steps, killed = _save_killed_at(3, lambda: new.export(path, verbose=False))  # a temp written
    assert killed and steps[-1].startswith("written")
    assert _leftovers(path), "the killed save should have left its temporary"
    # what saves of older trainlib versions left beside the export when killed
    for name in (".tmp-saved_model-abcd1234", ".old-saved_model-wxyz_987"):
        os.mkdir(tmp_path / name)
        (tmp_path / name / "saved_model.json").write_text("{}")
    new.export(path, verbose=False)
    assert _leftovers(path) == [] and _leftovers(tmp_path) == []
    np.testing.assert_array_equal(_serve(path), new_out)


def test_keras_file_killed_at_every_step(models, tmp_path):
    old, new, old_out, new_out = models
    path = tmp_path / "model.keras"
    old.save(path)
    for step in (1, 2):
        steps, killed = _save_killed_at(step, lambda: new.save(path))
        assert killed
        got = tl.saving.load_model(path).predict(X, verbose=0)
        assert np.array_equal(got, old_out if steps[-1] == "file_written" else new_out)
    (tmp_path / ".tmp-abcd_123.keras").write_bytes(b"left by an older version")
    assert _leftovers(tmp_path)
    old.save(path)
    assert _leftovers(tmp_path) == []
    np.testing.assert_array_equal(tl.saving.load_model(path).predict(X, verbose=0), old_out)


def test_a_running_save_keeps_its_temporary(models, tmp_path):
    """Temporaries are removed only when no save holds them (their lock is free)."""
    fcntl = pytest.importorskip("fcntl")
    old, _, _, _ = models
    path = tmp_path / "model.keras"
    busy = tmp_path / ".tmp-model.keras.0123456789ab"
    stale = tmp_path / ".tmp-model.keras.ba9876543210"
    stale.write_bytes(b"killed")
    with open(busy, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)   # as the save writing it holds it
        old.save(path)
        assert busy.exists() and not stale.exists()


def test_old_layout_exports_load_and_are_replaced(models, tmp_path):
    """Exports written before versioned arrays files (a fixed `variables.npz`) still load; saving
    over one removes its arrays file once the new version is in place."""
    old, new, old_out, new_out = models
    path = tmp_path / "export"
    old.export(path, verbose=False)
    _to_old_layout(path)
    np.testing.assert_array_equal(_serve(path), old_out)
    new.export(path, verbose=False)
    assert sorted(os.listdir(path)) == sorted(["saved_model.json", arrays_path(path).name])
    np.testing.assert_array_equal(_serve(path), new_out)


def test_readers_during_saves_see_old_or_new(models, tmp_path):
    """A load racing saves (in another process) finds a complete version: it re-reads
    saved_model.json when the arrays file it named was replaced meanwhile."""
    old, new, old_out, new_out = models
    path = tmp_path / "export"
    old.export(path, verbose=False)
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            for i in range(16):
                (new if i % 2 == 0 else old).export(path, verbose=False)
            code = 0
        finally:
            os._exit(code)
    loads = 0
    while loads == 0 or os.waitpid(pid, os.WNOHANG) == (0, 0):
        got = _serve(path)
        assert np.array_equal(got, old_out) or np.array_equal(got, new_out)
        loads += 1
    assert loads > 1


def test_refuses_to_replace_a_foreign_directory(models, tmp_path):
    old, _, _, _ = models
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(FileExistsError, match="holds no saved model"):
        old.export(tmp_path / "photos", verbose=False)
    assert os.listdir(tmp_path / "photos") == ["cat.jpg"]


def test_concurrent_saves_take_turns(models, tmp_path):
    """Two processes exporting into one directory never remove each other's files (a lock on the
    directory): both succeed, and the directory holds one complete version and nothing else."""
    old, new, old_out, new_out = models
    path = tmp_path / "export"
    old.export(path, verbose=False)
    children = []
    for model in (old, new):
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                for _ in range(10):
                    model.export(path, verbose=False)
                code = 0
            finally:
                os._exit(code)
        children.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    assert codes == [0, 0]
    got = _serve(path)
    assert np.array_equal(got, old_out) or np.array_equal(got, new_out)
    assert sorted(os.listdir(path)) == sorted(["saved_model.json", arrays_path(path).name])
