"""Checkpoints against TensorFlow: the same programs (the checkpoint guide's) on tf.train and
tl.train give the same restored values, kept checkpoint names, latest checkpoint, statuses
and deferred restorations (each library reads its own files). `save_weights` without an
extension is tf.keras 2's form, which Keras 3 refuses: tests/test_checkpoint.py covers it."""
import os

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from .compare import check  # noqa: E402

X = np.arange(6, dtype=np.float32).reshape(3, 2) / 6


def _folder(lib, tmp_path, name):
    return str(tmp_path / f"{lib.__name__}-{name}")


def _net(lib):
    class Net(lib.keras.Model):
        def __init__(self):
            super().__init__()
            self.l1 = lib.keras.layers.Dense(5, kernel_initializer="ones")

        def call(self, x):
            return self.l1(x)
    return Net()


def _train(lib, net, opt, steps):
    for _ in range(steps):
        with lib.GradientTape() as tape:
            loss = lib.reduce_mean((net(lib.constant(X)) - 1.0) ** 2)
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))


def test_guide_manager_train_restore(tmp_path):
    def program(lib):
        folder = _folder(lib, tmp_path, "guide")
        net, opt = _net(lib), lib.keras.optimizers.Adam(0.1)
        ckpt = lib.train.Checkpoint(step=lib.Variable(1), optimizer=opt, net=net)
        manager = lib.train.CheckpointManager(ckpt, folder, max_to_keep=3)
        saved = []
        for _ in range(5):
            _train(lib, net, opt, 1)
            ckpt.step.assign_add(1)
            saved.append(os.path.basename(manager.save()))
        kept = [os.path.basename(p) for p in manager.checkpoints]
        latest = os.path.basename(lib.train.latest_checkpoint(folder))
        # a fresh program resumes from the latest checkpoint (the net built first: Keras 3
        # layers on TensorFlow do not take deferred values; tests/test_checkpoint.py covers it)
        net2, opt2 = _net(lib), lib.keras.optimizers.Adam(0.1)
        net2(X)
        ckpt2 = lib.train.Checkpoint(step=lib.Variable(1), optimizer=opt2, net=net2)
        status = ckpt2.restore(manager.latest_checkpoint)
        _train(lib, net2, opt2, 1)
        status.assert_consumed()
        _train(lib, net, opt, 1)
        return [saved, kept, latest, ckpt2.step.read_value(), lib.identity(opt2.iterations),
                lib.identity(net2.l1.kernel), lib.identity(net.l1.kernel)]
    check(program, rtol=1e-5)


def test_delayed_restoration_and_statuses(tmp_path):
    def program(lib):
        prefix = _folder(lib, tmp_path, "delayed") + "/ckpt"
        layer = lib.train.Checkpoint(bias=lib.Variable(np.arange(5, dtype=np.float32)),
                                     kernel=lib.Variable(np.full((1, 5), 4.0, np.float32)))
        path = lib.train.Checkpoint(net=lib.train.Checkpoint(l1=layer)).save(prefix)
        to_restore = lib.Variable(lib.zeros([5]))
        fake_layer = lib.train.Checkpoint(bias=to_restore)
        status = lib.train.Checkpoint(net=lib.train.Checkpoint(l1=fake_layer)).restore(path)
        before = to_restore.read_value()
        deferred = lib.Variable(lib.zeros([1, 5]))
        not_yet = deferred.read_value()
        fake_layer.kernel = deferred
        outcomes = []
        for probe in (status.assert_existing_objects_matched, status.assert_consumed):
            try:
                probe()
                outcomes.append(True)
            except AssertionError:
                outcomes.append(False)
        return [os.path.basename(path), before, not_yet, deferred.read_value(), outcomes]
    check(program)


def test_partial_restore_statuses(tmp_path):
    def program(lib):
        prefix = _folder(lib, tmp_path, "partial") + "/weights"
        lib.train.Checkpoint(a=lib.Variable(1.0), b=lib.Variable(2.0)).write(prefix)
        a = lib.Variable(0.0)
        status = lib.train.Checkpoint(a=a).read(prefix)
        outcomes = []
        for probe in (status.assert_existing_objects_matched, status.assert_consumed):
            try:
                probe()
                outcomes.append(True)
            except AssertionError:
                outcomes.append(False)
        status.expect_partial()
        return [a.read_value(), outcomes]
    check(program)
