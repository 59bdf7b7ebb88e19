"""Callbacks in fit: hook order, checkpoints (atomic), schedulers, CSV logs, NaN termination."""
import csv
import os
import signal
import sys

import numpy as np
import pytest

import trainlib as tl
from trainlib import callbacks, layers, losses, models, optim

CASES = []  # Keras-level module: no op types of its own


def _model(lr=0.1):
    m = models.Sequential([layers.Input(shape=(3,)), layers.Dense(2)])
    m.compile(optim.SGD(lr), losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64)


def test_hook_order_and_history():
    calls = []
    cb = callbacks.LambdaCallback(on_train_begin=lambda logs: calls.append("train_begin"),
                                  on_epoch_begin=lambda e, logs: calls.append(f"epoch{e}"),
                                  on_batch_end=lambda b, logs: calls.append(f"batch{b}"),
                                  on_train_end=lambda logs: calls.append("train_end"))
    x, y = _data()
    h = _model().fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[cb])
    assert calls == ["train_begin", "epoch0", "batch0", "batch1", "epoch1", "batch0", "batch1",
                     "train_end"]
    assert h.epoch == [0, 1] and len(h.history["loss"]) == 2


def test_model_checkpoint_best_only_and_csv(tmp_path):
    x, y = _data()
    model = _model()
    ckpt = callbacks.ModelCheckpoint(str(tmp_path / "best.weights.npz"), monitor="loss",
                                     save_best_only=True, save_weights_only=True)
    log = tmp_path / "log.csv"
    model.fit(x, y, epochs=3, verbose=0, callbacks=[ckpt, callbacks.CSVLogger(str(log))])
    assert (tmp_path / "best.weights.npz").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]
    other = _model()
    other.load_weights(tmp_path / "best.weights.npz")
    rows = list(csv.DictReader(open(log)))
    assert [r["epoch"] for r in rows] == ["0", "1", "2"] and "loss" in rows[0]
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_learning_rate_schedulers_do_not_retrace():
    x, y = _data()
    model = _model(0.1)
    sched = callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    h = model.fit(x, y, epochs=3, batch_size=32, verbose=0, callbacks=[sched])
    assert h.history["learning_rate"] == [np.float32(0.1), np.float32(0.05), np.float32(0.1 / 3)]
    assert model.train_function.experimental_get_tracing_count() == 1
    model2 = _model(0.1)
    plateau = callbacks.ReduceLROnPlateau(monitor="loss", mode="max", factor=0.5, patience=1)
    model2.fit(x, y, epochs=3, verbose=0, callbacks=[plateau])
    assert float(model2.optimizer.learning_rate) == np.float32(0.025)


def test_terminate_on_nan():
    x, y = _data()
    x[0, 0] = np.nan
    model = _model()
    h = model.fit(x, y, epochs=5, batch_size=32, verbose=0, callbacks=[callbacks.TerminateOnNaN()])
    assert len(h.history["loss"]) == 1 and np.isnan(h.history["loss"][0])


def test_model_checkpoint_whole_model_and_path_checks(tmp_path):
    x, y = _data()
    model = _model()
    ckpt = callbacks.ModelCheckpoint(str(tmp_path / "ckpt-{epoch}.keras"), monitor="loss")
    model.fit(x, y, epochs=2, verbose=0, callbacks=[ckpt])
    restored = tl.saving.load_model(tmp_path / "ckpt-2.keras")
    for a, b in zip(model.get_weights(), restored.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"\.keras"):
        callbacks.ModelCheckpoint(str(tmp_path / "ckpt.npz"))
    with pytest.raises(ValueError, match=r"\.weights\.npz"):
        callbacks.ModelCheckpoint(str(tmp_path / "ckpt.keras"), save_weights_only=True)



def test_model_checkpoint_weights_h5_with_integer_save_freq(tmp_path):
    x, y = _data()          # 32 samples, batch 8: 4 batches an epoch, 8 in all
    model = _model()
    ckpt = callbacks.ModelCheckpoint(str(tmp_path / "w-{epoch:02d}-{loss:.3f}.weights.h5"),
                                     monitor="loss", save_weights_only=True, save_freq=3)
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[ckpt])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[0].startswith("w-01-") and names[1].startswith("w-02-")
    other = _model()
    other.load_weights(tmp_path / names[1])    # saved after batch 6 (epoch 2's second)
    assert not np.array_equal(other.get_weights()[0], model.get_weights()[0])
    best = tmp_path / "best_model.h5"
    model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.ModelCheckpoint(
        str(best), monitor="loss", save_best_only=True, save_weights_only=True)])
    other.load_weights(best)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    whole = tmp_path / "whole_model.h5"     # tf.keras 2's whole-model file, as Keras 3 allows
    model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.ModelCheckpoint(str(whole))])
    for a, b in zip(model.get_weights(), tl.saving.load_model(whole).get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"must end in `\.keras`.*\.h5"):
        callbacks.ModelCheckpoint(str(tmp_path / "best_model.pkl"))
    for bad in (0, 2.5, True, "batch"):
        with pytest.raises(ValueError, match="save_freq"):
            callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq=bad)

def test_model_checkpoint_verbose_messages_as_keras_3_15(tmp_path, capsys):
    model = tl.Sequential([tl.layers.Input((2,)), tl.layers.Dense(1, kernel_initializer="zeros")])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    best = tmp_path / "best.keras"
    ckpt = callbacks.ModelCheckpoint(str(best), monitor="val_loss", save_best_only=True,
                                     verbose=1)
    history = model.fit(x, y, validation_data=(x, -100 * y), epochs=3, verbose=0,
                        callbacks=[ckpt])
    first = history.history["val_loss"][0]
    out = capsys.readouterr().out
    assert out.startswith(f"\nEpoch 1: val_loss improved from None to {first:.5f}, saving model "
                          f"to {best}\n\nEpoch 1: finished saving model to {best}\n")
    assert f"\nEpoch 2: val_loss did not improve from {first:.5f}\n" in out
    every = tmp_path / "e{epoch}.weights.npz"
    model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.ModelCheckpoint(
        str(every), save_weights_only=True, verbose=1)])
    path = tmp_path / "e1.weights.npz"
    assert capsys.readouterr().out == (f"\nEpoch 1: saving model to {path}\n\nEpoch 1: finished "
                                       f"saving model to {path}\n")
    assert path.exists()


def test_learning_rate_scheduler_verbose_message_as_keras_3_15(capsys):
    x, y = _data()
    model = _model()
    sched = callbacks.LearningRateScheduler(lambda epoch, lr: 0.5 / (epoch + 1), verbose=1)
    history = model.fit(x, y, epochs=2, verbose=0, callbacks=[sched])
    assert capsys.readouterr().out == ("\nEpoch 1: LearningRateScheduler setting learning rate "
                                       "to 0.5.\n\nEpoch 2: LearningRateScheduler setting "
                                       "learning rate to 0.25.\n")
    assert history.history["learning_rate"] == pytest.approx([0.5, 0.25])


_BACKUP_SCRIPT = r"""
import os, signal, sys
import numpy as np
import trainlib as tl
backup, out, kill_epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
tl.random.set_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 4)).astype("float32")
y = rng.normal(size=(32, 1)).astype("float32")
model = tl.Sequential([tl.layers.Input((4,)), tl.layers.Dense(8, activation="tanh"),
                       tl.layers.Dense(1)])
model.compile(optimizer=tl.optim.Adam(0.01), loss="mse")

class Kill(tl.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
    def on_train_batch_end(self, batch, logs=None):
        if self.epoch == kill_epoch and batch == 2:     # mid-epoch, mid-fit
            os.kill(os.getpid(), signal.SIGKILL)

history = model.fit(x, y, batch_size=8, epochs=5, shuffle=False, verbose=0,
                    callbacks=[tl.callbacks.BackupAndRestore(backup), Kill()])
np.save(out, np.concatenate([v.numpy().ravel().astype("float64")
                             for v in model.weights + model.optimizer.variables]))
print("epochs run:", len(history.history["loss"]))
"""


def test_backup_and_restore_resumes_a_killed_fit(tmp_path):
    """A `fit` killed by SIGKILL in its fourth epoch, run again with the same BackupAndRestore
    folder, resumes at that epoch and ends with the weights and optimizer state of a run
    that was never interrupted."""
    import subprocess  # noqa: PLC0415

    script = tmp_path / "train.py"
    script.write_text(_BACKUP_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))] +
        [p for p in [os.environ.get("PYTHONPATH")] if p]))

    def run(backup, out, kill_epoch):
        return subprocess.run([sys.executable, str(script), str(tmp_path / backup),
                               str(tmp_path / out), str(kill_epoch)], env=env,
                              capture_output=True, text=True, timeout=300)

    killed = run("backup", "killed.npy", 3)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert os.listdir(tmp_path / "backup") == ["epoch-000003.weights.h5"]   # nothing else
    resumed = run("backup", "resumed.npy", -1)
    assert resumed.returncode == 0, resumed.stderr
    assert "epochs run: 2" in resumed.stdout     # epochs 4 and 5 only
    assert not os.listdir(tmp_path / "backup")  # deleted after a finished fit
    straight = run("fresh", "straight.npy", -1)
    assert "epochs run: 5" in straight.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "resumed.npy"),
                                  np.load(tmp_path / "straight.npy"))


def test_backup_and_restore_checks_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="save_freq"):
        tl.callbacks.BackupAndRestore(tmp_path, save_freq="sometimes")
    with pytest.raises(ValueError, match="backup_dir"):
        tl.callbacks.BackupAndRestore(None)
