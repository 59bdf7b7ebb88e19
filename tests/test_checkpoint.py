"""tl.train.Checkpoint / CheckpointManager / latest_checkpoint: the cases TensorFlow's
checkpoint guide walks through (save, change, restore; delayed restoration; max_to_keep),
a save killed at every step, and the errors of bad files and bad arguments."""
import json
import os

import numpy as np
import pytest

import trainlib as tl
from trainlib import file_io
from trainlib.graph.serialization import LoadError

from .bounded import error_of


class Net(tl.keras.Model):
    def __init__(self):
        super().__init__()
        self.l1 = tl.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


X = np.arange(6, dtype=np.float32).reshape(3, 2) / 6
Y = np.ones((3, 5), np.float32)


def _train_step(net, opt):
    with tl.GradientTape() as tape:
        loss = tl.reduce_mean((net(X) - Y) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))


def _state(net, opt):
    return [v.numpy() for v in net.variables] + [v.numpy() for v in opt.variables]


def test_save_change_restore(tmp_path):
    v = tl.Variable([1.0, 2.0])
    module = tl.Module()
    module.w = tl.Variable(np.eye(2, dtype=np.float32))
    ckpt = tl.train.Checkpoint(v=v, module=module)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    assert tl.train.latest_checkpoint(str(tmp_path)) == path
    v.assign([5.0, 6.0])
    module.w.assign(np.zeros((2, 2), np.float32))
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(module.w.numpy(), np.eye(2))
    assert int(ckpt.save_counter) == 1
    assert ckpt.save(str(tmp_path / "ckpt")).endswith("ckpt-2")


def test_write_read_leave_counter_and_state_alone(tmp_path):
    v = tl.Variable(3)
    ckpt = tl.train.Checkpoint(v=v)
    prefix = ckpt.write(str(tmp_path / "weights"))
    assert prefix == str(tmp_path / "weights")
    assert not os.path.exists(tmp_path / "checkpoint")
    v.assign(7)
    ckpt.read(prefix).assert_consumed()
    assert int(v) == 3


def test_model_and_optimizer_resume_exactly(tmp_path):
    tl.random.set_seed(1)
    net, opt = Net(), tl.keras.optimizers.Adam(0.1)
    ckpt = tl.train.Checkpoint(step=tl.Variable(1), optimizer=opt, net=net)
    manager = tl.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    for _ in range(3):
        _train_step(net, opt)
    manager.save()
    saved = _state(net, opt)
    _train_step(net, opt)
    after_one_more = _state(net, opt)

    tl.random.set_seed(2)
    net2, opt2 = Net(), tl.keras.optimizers.Adam(0.1)
    ckpt2 = tl.train.Checkpoint(step=tl.Variable(1), optimizer=opt2, net=net2)
    status = ckpt2.restore(manager.latest_checkpoint)
    with pytest.raises(AssertionError, match="net/l1/kernel"):
        status.assert_consumed()     # the layer is not built yet: its values wait
    net2(X)                          # deferred: restored when the layer creates them
    for a, b in zip([v.numpy() for v in net2.variables], saved):
        np.testing.assert_array_equal(a, b)
    _train_step(net2, opt2)          # the slots are created, and restored, right here
    status.assert_consumed()
    for a, b in zip(_state(net2, opt2), after_one_more):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_delayed_restoration_of_a_variable_assigned_later(tmp_path):
    # TensorFlow's guide: a Checkpoint tree built by hand restores into Variables created
    # after the restore, once they are assigned to their attribute.
    fake_layer = tl.train.Checkpoint(bias=tl.Variable(tl.zeros([5])))
    root = tl.train.Checkpoint(net=tl.train.Checkpoint(l1=fake_layer))
    fake_layer.bias.assign(np.arange(5, dtype=np.float32))
    kernel = tl.Variable(np.full((1, 5), 4.0, np.float32))
    fake_layer.kernel = kernel
    path = root.save(str(tmp_path / "ckpt"))

    to_restore = tl.Variable(tl.zeros([5]))
    new_layer = tl.train.Checkpoint(bias=to_restore)
    new_root = tl.train.Checkpoint(net=tl.train.Checkpoint(l1=new_layer))
    status = new_root.restore(path)
    np.testing.assert_array_equal(to_restore.numpy(), np.arange(5))
    deferred = tl.Variable(tl.zeros([1, 5]))
    np.testing.assert_array_equal(deferred.numpy(), 0)    # not restored yet
    new_layer.kernel = deferred
    np.testing.assert_array_equal(deferred.numpy(), 4)    # restored on assignment
    status.assert_consumed()


def test_expect_partial_and_existing_objects(tmp_path):
    a, b = tl.Variable(1.0), tl.Variable(2.0)
    path = tl.train.Checkpoint(a=a, b=b).write(str(tmp_path / "two"))
    status = tl.train.Checkpoint(a=tl.Variable(0.0)).read(path)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="'b'"):
        status.assert_consumed()
    assert status.expect_partial() is status
    extra = tl.train.Checkpoint(a=tl.Variable(0.0), c=tl.Variable(0.0))
    with pytest.raises(AssertionError, match="'c'"):
        extra.read(path).assert_existing_objects_matched()


def test_max_to_keep_deletes_the_oldest(tmp_path):
    v = tl.Variable(0)
    ckpt = tl.train.Checkpoint(v=v)
    manager = tl.train.CheckpointManager(ckpt, str(tmp_path / "ckpts"), max_to_keep=2)
    assert manager.latest_checkpoint is None
    for i in range(1, 5):
        v.assign(i)
        manager.save()
    names = [os.path.basename(p) for p in manager.checkpoints]
    assert names == ["ckpt-3", "ckpt-4"]
    files = sorted(os.listdir(tmp_path / "ckpts"))
    assert [f for f in files if f.endswith(".index")] == ["ckpt-3.index", "ckpt-4.index"]
    assert len([f for f in files if ".data-" in f]) == 2
    # a new manager over the directory finds them again (the state file)
    again = tl.train.CheckpointManager(ckpt, str(tmp_path / "ckpts"), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    assert again.latest_checkpoint == manager.latest_checkpoint
    v.assign(0)
    ckpt.restore(again.latest_checkpoint)
    assert int(v) == 4


def test_checkpoint_interval_and_step_counter(tmp_path):
    step = tl.Variable(0, dtype=tl.int64)
    manager = tl.train.CheckpointManager(tl.train.Checkpoint(step=step), str(tmp_path), None,
                                         step_counter=step, checkpoint_interval=3)
    written = []
    for _ in range(7):
        written.append(manager.save())
        step.assign_add(1)
    assert [os.path.basename(p) for p in written if p] == ["ckpt-0", "ckpt-3", "ckpt-6"]
    assert manager.save(check_interval=False).endswith("ckpt-7")


def test_restore_or_initialize(tmp_path):
    v = tl.Variable(1.0)
    calls = []
    manager = tl.train.CheckpointManager(tl.train.Checkpoint(v=v), str(tmp_path), 1,
                                         init_fn=lambda: calls.append(1))
    assert manager.restore_or_initialize() is None and calls == [1]
    manager.save()
    v.assign(9.0)
    assert manager.restore_or_initialize() == manager.latest_checkpoint
    assert float(v) == 1.0


def test_restore_accepts_a_directory_and_none(tmp_path):
    v = tl.Variable(2.0)
    ckpt = tl.train.Checkpoint(v=v)
    ckpt.save(str(tmp_path / "ckpt"))
    v.assign(0.0)
    ckpt.restore(str(tmp_path))
    assert float(v) == 2.0
    status = ckpt.restore(None)
    with pytest.raises(AssertionError):
        status.assert_consumed()


def test_save_weights_without_extension_writes_a_checkpoint(tmp_path):
    tl.random.set_seed(3)
    model = tl.keras.Sequential([tl.keras.Input((2,)), tl.keras.layers.Dense(3)])
    expected = model.predict(X, verbose=0)
    prefix = str(tmp_path / "my_checkpoint")
    model.save_weights(prefix)
    assert os.path.isfile(prefix + ".index")
    for w in model.weights:
        w.assign(np.zeros(w.shape, np.float32))
    model.load_weights(prefix).assert_consumed()
    np.testing.assert_array_equal(model.predict(X, verbose=0), expected)
    with pytest.raises(FileExistsError):
        model.save_weights(prefix, overwrite=False)


def test_bad_arguments_and_files(tmp_path):
    with pytest.raises(ValueError, match="trackable"):
        tl.train.Checkpoint(data=iter([1, 2]))
    v = tl.Variable([1.0, 2.0])
    path = tl.train.Checkpoint(v=v).write(str(tmp_path / "c"))
    with pytest.raises(ValueError, match="shape"):
        tl.train.Checkpoint(v=tl.Variable([1.0, 2.0, 3.0])).read(path)
    with pytest.raises(ValueError, match="dtype"):
        tl.train.Checkpoint(v=tl.Variable([1, 2])).read(path)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        tl.train.Checkpoint(v=v).read(str(tmp_path / "missing"))
    index = json.loads((tmp_path / "c.index").read_text())
    shard = tmp_path / index["shard"]
    shard.write_bytes(shard.read_bytes()[:40])
    with pytest.raises(LoadError, match="truncated or corrupted"):
        tl.train.Checkpoint(v=v).read(path)
    (tmp_path / "c.index").write_text("{not json")
    with pytest.raises(LoadError, match="c.index"):
        tl.train.Checkpoint(v=v).read(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked saver")
def test_save_killed_at_every_step_leaves_a_readable_checkpoint(tmp_path):
    v = tl.Variable(np.arange(4, dtype=np.float32))
    ckpt = tl.train.Checkpoint(v=v)
    folder = str(tmp_path / "ckpts")
    tl.train.CheckpointManager(ckpt, folder, max_to_keep=1).save()   # ckpt-1 holds 0..3
    step = 1
    while True:
        killed = _save_killed_at(step, folder)
        latest = tl.train.latest_checkpoint(folder)
        assert latest is not None, f"killed at step {step}: no checkpoint left"
        fresh = tl.Variable(np.zeros(4, np.float32))
        tl.train.Checkpoint(v=fresh).restore(latest).assert_consumed()
        expected = np.arange(4) if latest.endswith("ckpt-1") else np.arange(4) + 10
        np.testing.assert_array_equal(fresh.numpy(), expected)
        if not killed:
            break
        step += 1
    assert step > 4      # the shard, the index and the state file were each interrupted
    assert latest.endswith("ckpt-2")


def _save_killed_at(step, folder):
    """Runs one more manager save (values + 10) in a forked child that dies (os._exit) at
    step number `step` of the file writes; True when it was killed."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            seen = []

            def hook(name):
                seen.append(name)
                if len(seen) == step:
                    os._exit(9)   # as a kill: no cleanup, no finally blocks

            v = tl.Variable(np.arange(4, dtype=np.float32) + 10)
            ckpt = tl.train.Checkpoint(v=v)
            manager = tl.train.CheckpointManager(ckpt, folder, max_to_keep=1)
            file_io._step_hook = hook
            manager.save(checkpoint_number=2)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 9), f"the saver failed (exit {code})"
    return code == 9


def test_a_failed_restore_changes_nothing(tmp_path):
    a = tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(4),
                             tl.keras.layers.Dense(2)])
    b = tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(4),
                             tl.keras.layers.Dense(5)])
    path = tl.train.Checkpoint(model=a).save(str(tmp_path / "ck"))
    before = [w.numpy().copy() for w in b.weights]
    with pytest.raises(ValueError, match="has shape"):
        tl.train.Checkpoint(model=b).restore(path)
    for w, x in zip(b.weights, before):   # the first layer's fitting values not assigned
        np.testing.assert_array_equal(w.numpy(), x)


def test_a_fifo_shard_is_refused_and_killed_saves_temporaries_are_cleaned(tmp_path):
    ckpt = tl.train.Checkpoint(v=tl.Variable([1.0, 2.0]))
    path = ckpt.save(str(tmp_path / "ck"))
    shard = next(p for p in tmp_path.iterdir() if ".data-" in p.name)
    shard.unlink()
    os.mkfifo(shard)
    assert "not a regular file" in str(error_of(lambda: ckpt.restore(path)))
    shard.unlink()
    killed = [tmp_path / ".tmp-ck-7.data-0a1b2c3d.npz.00112233aabb",
              tmp_path / ".tmp-ck-7.index.00112233aabb"]
    for p in killed:   # what a save killed between its writes leaves (unlocked)
        p.write_bytes(b"partial")
    ckpt.save(str(tmp_path / "ck"))
    assert not any(p.exists() for p in killed)
