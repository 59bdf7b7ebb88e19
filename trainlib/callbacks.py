"""`tl.callbacks`: hooks into `fit`/`evaluate`/`predict` (Keras 3's Callback API).

Owns: Callback, CallbackList (dispatch; fit adds History and, when verbose,
ProgbarLogger), History, ProgbarLogger (a Progbar per epoch, as Keras 3's), EarlyStopping, ModelCheckpoint (atomic writes through
`model.save_weights`), LearningRateScheduler, ReduceLROnPlateau, CSVLogger,
TerminateOnNaN, LambdaCallback, BackupAndRestore (atomic `.weights.h5` backups
of the weights and the optimizer's state, named by epoch, so a killed `fit`
resumes where the last backup left it), SwapEMAWeights (the optimizer's moving averages
in the model for evaluation). Invariant: logs are dicts of Python
floats; nothing a callback writes is ever left half-written.
"""
import contextlib
import csv
import math
import os
import time

import numpy as np

from . import summary as summary_lib
from .graph import profiler
from .log import get_logger
from .progbar import Progbar
from .settings import print_msg

__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger", "EarlyStopping",
           "ModelCheckpoint", "LearningRateScheduler", "ReduceLROnPlateau", "CSVLogger",
           "TerminateOnNaN", "LambdaCallback", "BackupAndRestore"]


class Callback:
    """Base class: override any of the `on_*` hooks; `self.model` and `self.params` are set by fit.

    Example:
        >>> class Print(tl.callbacks.Callback):
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         print(epoch, logs["loss"])
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class CallbackList(Callback):
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        if add_history and not any(isinstance(c, History) for c in self.callbacks):
            self.callbacks.append(History())
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.insert(0, ProgbarLogger())
        if model is not None:
            self.set_model(model)
        self.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        super().set_params(params)
        for c in self.callbacks:
            c.set_params(params)

    @property
    def history(self):
        return next((c for c in self.callbacks if isinstance(c, History)), None)


def _dispatch(name):
    arity = 2 if ("epoch" in name or "batch" in name) else 1

    def hook(self, *args, **kwargs):
        # always hand logs over positionally, as Keras does (LambdaCallback relies on it)
        args = args + (kwargs.pop("logs", {}),) if len(args) < arity else args
        for c in self.callbacks:
            getattr(c, name)(*args)
    hook.__name__ = name
    return hook


for _hook in [n for n in vars(Callback) if n.startswith("on_")]:
    setattr(CallbackList, _hook, _dispatch(_hook))


class History(Callback):
    """Records each epoch's logs: `history.history["loss"]` is the list of epoch losses."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Progress output of `fit`/`evaluate`/`predict`, as Keras 3's: "Epoch i/N" (when N > 1),
    then a `Progbar` per epoch showing the logs as they are (verbose=1: a live tqdm bar;
    verbose=2: one line per epoch, "32/32 - 0s - 2ms/step - loss: 0.1234"). Inside `fit`,
    validation is silent. Everything goes through `keras.config`'s interactive logging
    (stdout, or the "trainlib" logger when disabled)."""

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_train_end(self, logs=None):
        self._called_in_fit = False

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset_progbar()
            self._maybe_init_progbar()

    def on_predict_begin(self, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose and self.epochs > 1:
            print_msg(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update_progbar(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update_progbar(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update_progbar(batch, None)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize_progbar(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize_progbar(logs)

    def on_predict_end(self, logs=None):
        self._finalize_progbar(logs)

    def _reset_progbar(self):
        self.seen = 0
        self.progbar = None

    def _maybe_init_progbar(self):
        if self.progbar is None:
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step",
                                   stateless_metrics=set())

    def _update_progbar(self, batch, logs=None):
        self._maybe_init_progbar()
        self.seen = batch + 1     # one-based
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize_progbar(self, logs):
        self._maybe_init_progbar()
        if self.target is None:
            self.target = self.seen
            self.progbar.target = self.target
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)


def _monitor_op(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode == "auto":
        mode = "max" if any(s in monitor for s in ("acc", "auc", "precision", "recall")) else "min"
    return mode


class _MonitorCallback(Callback):
    """What EarlyStopping and ReduceLROnPlateau share with Keras 3's MonitorCallback.

    In "auto" mode the direction is decided at the first epoch end, from the
    model's metrics: "loss" and metrics that are errors go down, accuracies and
    confusion metrics go up; any other name is a ValueError asking for a mode.
    An improvement is `current - min_delta > best` (max) or
    `current + min_delta < best` (min), written as Keras writes it.
    """

    def __init__(self, monitor="val_loss", mode="auto", min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            import warnings  # noqa: PLC0415
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto "
                          "mode.", stacklevel=3)
            mode = "auto"
        self.monitor, self.mode = monitor, mode
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        if self.mode in ("min", "max"):
            self.monitor_op = self.mode
        else:
            name = self.monitor[4:] if self.monitor.startswith("val_") else self.monitor
            if name == "loss":
                self.monitor_op = "min"
            compiled = []
            for m in getattr(self.model, "metrics", None) or ():
                compiled.extend(getattr(m, "metrics", None) or [m])   # CompileMetrics holds several
            for m in compiled:
                direction = getattr(m, "_direction", None)
                if m.name == name and direction is not None:
                    self.monitor_op = "max" if direction == "up" else "min"
            if self.monitor_op is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but it "
                    "cannot tell whether that metric should be maximized or minimized. Pass "
                    "mode='max' to monitor the highest value, or mode='min' for the lowest.")
        if self.monitor_op == "min":
            self.min_delta *= -1

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        if self.monitor_op == "min":
            return value - self.min_delta < reference
        return value - self.min_delta > reference


class EarlyStopping(_MonitorCallback):
    """Stops training when `monitor` has stopped improving for `patience` epochs.

    Args:
        monitor: the log key watched (default "val_loss").
        min_delta: the smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        mode: "min", "max" or "auto" (max for accuracy-like keys).
        baseline: stop unless the monitored value beats this.
        restore_best_weights: set the model back to the best epoch's weights when stopping
            (and at the end of training).
        start_from_epoch: epochs to wait before watching.
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta)
        self.patience, self.verbose = patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        value = (logs or {}).get(self.monitor)
        if value is None:
            import warnings  # noqa: PLC0415
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs or {})}",
                          stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(value, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                print_msg(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) after each epoch or every `save_freq` batches, atomically.

    Args:
        filepath: may hold `{epoch}` and log keys, e.g. "ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5".
            With save_weights_only: a `.weights.h5` (or `.h5`: Keras 3's HDF5 layout, which
            Keras loads) or `.weights.npz` path; else a `.keras` path.
        monitor, mode, save_best_only: with save_best_only, save only when `monitor` improves.
        save_weights_only: save weights (`model.save_weights`) rather than the whole model.
        save_freq: "epoch", or an int: save after every `save_freq` training batches (counted
            across epochs), with that batch's logs.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq < 1):
            raise ValueError("ModelCheckpoint: unrecognized save_freq: expected 'epoch' or a "
                             f"positive int, received save_freq={save_freq!r}")
        self.save_freq, self._batches_seen, self._current_epoch = save_freq, 0, 0
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        # as Keras 3: the extension says what is written, checked now rather than after an epoch
        if save_weights_only and not self.filepath.endswith((".weights.npz", ".h5")):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
                             "provided must end in `.weights.h5` (Keras 3's HDF5 layout) or "
                             f"`.weights.npz` (trainlib's). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format) "
                             "or `.h5` (tf.keras 2's). Received: "
                             f"filepath={self.filepath} (or pass save_weights_only=True with a "
                             "`.weights.h5` path)")
        self.mode = _monitor_op(mode, monitor)
        self.best = initial_value_threshold

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_seen += 1
        if self._batches_seen % self.save_freq == 0:
            self._save(self._current_epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, logs)

    def _save(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None:
                import warnings  # noqa: PLC0415
                warnings.warn(f"Can save best model only with {self.monitor} available.",
                              stacklevel=2)
            else:
                # Keras 3.15's messages, word for word (the best so far as "None" at first)
                best = "None" if self.best is None else f"{self.best:.5f}"
                better = self.best is None or (value < self.best if self.mode == "min"
                                               else value > self.best)
                if not better:
                    if self.verbose > 0:
                        print_msg(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
                    return
                if self.verbose > 0:
                    print_msg(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                          f"{value:.5f}, saving model to {path}")
                self.best = value
        elif self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: saving model to {path}")
        folder = os.path.dirname(path)
        if folder and not os.path.exists(folder):
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: finished saving model to {path}")


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch start to `schedule(epoch, current_lr)`."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(self.model.optimizer.learning_rate)
        try:
            new = self.schedule(epoch, lr)
        except TypeError:  # a one-argument schedule
            new = self.schedule(epoch)
        new = float(new)
        if not math.isfinite(new):
            raise ValueError(f"LearningRateScheduler: schedule returned {new} at epoch {epoch}")
        self.model.optimizer.learning_rate = new
        if self.verbose:
            # Keras 3.15's message, word for word
            print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {new}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ReduceLROnPlateau(_MonitorCallback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved for `patience` epochs.

    Args:
        monitor: default "val_loss"; factor: default 0.1; patience: default 10;
        min_delta: default 1e-4; cooldown: epochs to wait after a reduction; min_lr: the floor.
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__(monitor, mode, min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau needs factor < 1, got {factor}")
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        logs["learning_rate"] = float(self.model.optimizer.learning_rate)
        value = logs.get(self.monitor)
        if value is None:
            import warnings  # noqa: PLC0415
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                          f"which is not available. Available metrics are: {','.join(logs)}.",
                          stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(value, self.best):
            self.best, self.wait = value, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(self.model.optimizer.learning_rate)
                if old > float(np.float32(self.min_lr)):
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose:
                        print_msg(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """Writes each epoch's logs as a CSV row (header: epoch, then the log keys)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = os.fspath(filename), separator, append
        self._file = None
        self._writer = None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename)
        self._file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self._writer = None
        self._has_header = bool(exists)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self._writer is None:
            self._keys = sorted(logs)
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self._keys,
                                          delimiter=self.separator)
            if not self._has_header:
                self._writer.writeheader()
        self._writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self._keys}})
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch loss is NaN or infinite."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print_msg(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: on_epoch_begin(epoch, logs), on_epoch_end, on_batch_begin(batch,
    logs), on_batch_end, on_train_begin(logs), on_train_end."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_batch_begin": on_batch_begin, "on_train_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end, **kwargs}
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


class BackupAndRestore(Callback):
    """Backs up the training state so that a `fit` that was killed resumes where it stopped.

    At the end of every epoch (or every `save_freq` batches) the model's weights and the
    optimizer's state (its slots and `iterations`) are written, atomically, to
    `<backup_dir>/epoch-<N>.weights.h5`, N being the epoch training resumes at; then the
    older backup is removed, so the folder always holds at least one complete backup.
    When `fit` starts, the newest backup is restored and training continues at its epoch
    (a run killed inside an epoch redoes that epoch from its start). After a `fit` that
    ends normally the backup is deleted (unless `delete_checkpoint=False`).

    Args:
        backup_dir: the folder of the backup (made if missing); one per training job.
        save_freq: "epoch", an int (back up every that many batches), or False.
        delete_checkpoint: delete the backup once `fit` finishes.

    Example:
        >>> model.fit(x, y, epochs=10,
        ...           callbacks=[tl.callbacks.BackupAndRestore("/tmp/backup")])
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore needs a backup_dir; received backup_dir=None")
        if save_freq != "epoch" and save_freq is not False and (
                isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError("Invalid value for argument `save_freq`. Received: "
                             f"save_freq={save_freq}. Expected either 'epoch' or an integer "
                             "value.")
        self.backup_dir, self.save_freq = os.fspath(backup_dir), save_freq
        self.double_checkpoint, self.delete_checkpoint = double_checkpoint, delete_checkpoint
        self._epoch, self._batches = 0, 0

    def _backups(self):
        """[(epoch, path)] of the backups in the folder, newest last."""
        if not os.path.isdir(self.backup_dir):
            return []
        found = []
        for name in os.listdir(self.backup_dir):
            stem = name[len("epoch-"):-len(".weights.h5")]
            if name.startswith("epoch-") and name.endswith(".weights.h5") and stem.isdigit():
                found.append((int(stem), os.path.join(self.backup_dir, name)))
        return sorted(found)

    def on_train_begin(self, logs=None):
        model = self.model
        if not model.built:
            raise ValueError("To use the BackupAndRestore callback, your model must be built "
                             "before you call `fit()`. Call it on data or build() it first.")
        backups = self._backups()
        if not backups:
            return
        optimizer = getattr(model, "optimizer", None) if getattr(model, "compiled", False) \
            else None
        if optimizer is not None and not optimizer.built and model.trainable_variables:
            optimizer.build(model.trainable_variables)   # its state is restored too
        epoch, path = backups[-1]
        model.load_weights(path)
        model._initial_epoch = epoch
        self._epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int) and not isinstance(self.save_freq, bool):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._backup(self._epoch)   # mid-epoch: that epoch is redone on resume

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._backup(epoch + 1)

    def _backup(self, next_epoch):
        os.makedirs(self.backup_dir, exist_ok=True)
        older = self._backups()
        path = os.path.join(self.backup_dir, f"epoch-{next_epoch:06d}.weights.h5")
        self.model.save_weights(path)            # atomic: complete or absent
        for _, old in older:
            if old != path:
                os.remove(old)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint:
            for _, path in self._backups():
                os.remove(path)


__all__ += ["TensorBoard"]


class TensorBoard(Callback):
    """Logs training to TensorBoard through `tl.summary`, as Keras 3's callback: event files in
    `log_dir/train` and `log_dir/validation`.

    Per epoch: `epoch_<metric>` scalars (train logs and the learning rate in train/, the
    `val_` logs without their prefix in validation/); with `update_freq` "batch" or N, also
    `batch_<metric>` every N train batches (step = the global batch count); after `evaluate`
    in fit, `evaluation_<metric>_vs_iterations` at the optimizer's iteration count; with
    `histogram_freq` N, a histogram of every weight (`<weight path>/histogram`) every N
    epochs (and `/image` summaries when `write_images`); with `write_graph`, the model's
    config as Keras's "keras" summary and the traced train step's graph; with
    `profile_batch` N or (start, stop), those train batches (counted from 1 over the whole
    fit) are profiled by `tl.profiler.experimental` into `log_dir/train/plugins/profile/
    <run>/` (a trace TensorBoard's profile plugin and Perfetto open, and `summary.txt`:
    time per op and per line of your source), each batch a "Profiled batch" Trace. Needs
    the `tensorboard` package. Embeddings are accepted only when off.

    Example:
        >>> model.fit(x, y, epochs=3, callbacks=[tl.callbacks.TensorBoard("logs", update_freq=10)])
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        if embeddings_freq:
            raise ValueError("TensorBoard: embeddings_freq is not supported by trainlib (got "
                             f"embeddings_freq={embeddings_freq!r}); pass 0")
        self._start_batch, self._stop_batch = _profile_range(profile_batch)
        self._profiling = False
        self._batch_trace = None
        if update_freq not in ("batch", "epoch") and not (isinstance(update_freq, int)
                                                          and update_freq > 0):
            raise ValueError(f'TensorBoard: update_freq must be "batch", "epoch" or a positive '
                             f"int, got {update_freq!r}")
        self.log_dir = str(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._global_train_batch = self._global_test_batch = 0
        self._writers = {}
        self._pushed = []
        self._should_write_graph = False

    def _writer(self, kind):
        if kind not in self._writers:
            folder = "train" if kind == "train" else "validation"
            self._writers[kind] = summary_lib.create_file_writer(
                os.path.join(self.log_dir, folder))
        return self._writers[kind]

    def set_model(self, model):
        super().set_model(model)
        self._writers = {}
        self._should_write_graph = bool(self.write_graph)
        if self.write_graph and type(model).__name__ in ("Functional", "Sequential"):
            self._write_model_config()

    def _write_model_config(self):
        try:
            config = self.model.to_json()
        except Exception as e:  # noqa: BLE001 -- as Keras: a model that cannot say its config
            import warnings  # noqa: PLC0415
            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {e}", stacklevel=2)
            return
        meta = summary_lib.plugin_metadata("graph_keras_model", b"1")
        with self._writer("train").as_default():
            summary_lib.write("keras", np.array(config.encode(), dtype=object), step=0,
                              metadata=meta)

    def _push(self, kind, step):
        if self.update_freq == "epoch":
            return
        stack = contextlib.ExitStack()
        stack.enter_context(self._writer(kind).as_default(step))
        stack.enter_context(summary_lib.record_if(lambda: step % self.update_freq == 0))
        self._pushed.append(stack)

    def _pop(self):
        if self.update_freq != "epoch" and self._pushed:
            self._pushed.pop().close()

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._push("train", 0)

    def on_train_end(self, logs=None):
        self._pop()
        self._stop_profile()
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    def on_test_begin(self, logs=None):
        self._push("val", self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations") and logs:
            with self._writer("val").as_default():
                for name, value in logs.items():
                    summary_lib.scalar(f"evaluation_{name}_vs_iterations", value,
                                       step=int(optimizer.iterations.numpy()))
        self._pop()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop()
            self._push("train", self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start = time.perf_counter()
        if self._start_batch and self._global_train_batch == self._start_batch:
            self._start_profile()
        if self._profiling:
            self._batch_trace = profiler.Trace("Profiled batch", step_num=batch)
            self._batch_trace.__enter__()

    def _start_profile(self):
        try:   # as Keras: a profiler that cannot start (another runs) is logged, not fatal
            profiler.start(os.path.join(self.log_dir, "train"))
            self._profiling = True
        except Exception as e:  # noqa: BLE001
            get_logger().error("Failed to start profiler: %s", e)

    def _stop_profile(self):
        if self._profiling:
            self._profiling = False
            profiler.stop()

    def on_train_batch_end(self, batch, logs=None):
        if self._batch_trace is not None:
            self._batch_trace.__exit__(None, None, None)
            self._batch_trace = None
        if self._profiling and self._global_train_batch >= self._stop_batch:
            self._stop_profile()
        if self._should_write_graph:
            self._should_write_graph = False
            fn = getattr(self.model, "train_function", None)
            if fn is not None and hasattr(fn, "_concrete_functions") and fn._concrete_functions():
                with self._writer("train").as_default():
                    summary_lib.graph(fn)
        if self.update_freq == "epoch":
            return
        if self.write_steps_per_second:
            summary_lib.scalar("batch_steps_per_second",
                               1.0 / max(time.perf_counter() - self._batch_start, 1e-12),
                               step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                summary_lib.scalar(f"batch_{name}", value, step=self._global_train_batch)

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop()
            self._push("val", self._global_test_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._epoch_start = time.perf_counter()
            self._epoch_iterations = int(self.model.optimizer.iterations.numpy())

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch(epoch, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch(self, epoch, logs):
        if not logs:
            return
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if optimizer is not None and hasattr(optimizer, "learning_rate"):
            train["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        if self.write_steps_per_second:
            done = int(self.model.optimizer.iterations.numpy()) - self._epoch_iterations
            train["steps_per_second"] = done / max(time.perf_counter() - self._epoch_start, 1e-12)
        for kind, values in (("train", train), ("val", val)):
            if values:
                with self._writer(kind).as_default():
                    for name, value in values.items():
                        summary_lib.scalar(f"epoch_{name}", value, step=epoch)

    def _log_weights(self, epoch):
        with self._writer("train").as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = weight.path.replace(":", "_")
                    summary_lib.histogram(f"{name}/histogram", weight, step=epoch)
                    if self.write_images:
                        image = _weight_image(np.asarray(weight.numpy()))
                        if image is not None:
                            summary_lib.image(f"{name}/image", image, step=epoch)
        self._writer("train").flush()


def _profile_range(profile_batch):
    """(start, stop) batches of a TensorBoard `profile_batch` (0: (0, 0), no profiling),
    checked as Keras checks it; "start,stop" strings are Keras's legacy form."""
    message = ("profile_batch must be a non-negative integer or 2-tuple of positive integers. "
               "A pair of positive integers signifies a range of batches to profile. "
               f"Found: {profile_batch}")
    value = profile_batch
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",")]
        except ValueError:
            raise ValueError(message) from None
        value = value[0] if len(value) == 1 else value
    if isinstance(value, int) and not isinstance(value, bool):
        start = stop = value
    elif isinstance(value, (tuple, list)) and len(value) == 2 and \
            all(isinstance(v, int) for v in value):
        start, stop = value
    else:
        raise ValueError(message)
    if start < 0 or stop < start:
        raise ValueError(message)
    return start, stop


def _weight_image(w):
    """A weight as [k, height, width, 1] for an image summary, as Keras's callback lays
    it out (None for shapes it does not draw)."""
    w = np.squeeze(w)
    if w.ndim == 1:
        w = w.reshape(1, w.shape[0], 1, 1)
    elif w.ndim == 2:
        if w.shape[0] > w.shape[1]:
            w = w.T
        w = w.reshape(1, w.shape[0], w.shape[1], 1)
    elif w.ndim == 3:
        w = np.transpose(w, (2, 0, 1))
        w = w.reshape(w.shape[0], w.shape[1], w.shape[2], 1)
    return w if w.ndim == 4 and w.shape[-1] in (1, 3, 4) else None


class SwapEMAWeights(Callback):
    """Swaps the model's weights with the optimizer's moving averages (`use_ema=True`)
    for evaluation and prediction, and back afterwards (as Keras 3's).

    The swap exchanges values in place (the raw weights wait in the average slots), so
    nothing is copied twice; with `swap_on_epoch=True` the model also holds the averages
    from each epoch's end to the next epoch's beginning, so callbacks after this one
    (`ModelCheckpoint`) see them, and after the last epoch the averages are kept.

    Args:
        swap_on_epoch: also swap at epoch end and back at epoch begin (default False).

    Raises:
        ValueError: at the first swap, if the optimizer does not use EMA.

    Example:
        >>> model.compile(optimizer=tl.optim.SGD(use_ema=True), loss="mse")
        >>> model.fit(x, y, validation_data=(xv, yv),
        ...           callbacks=[tl.callbacks.SwapEMAWeights()])
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _ema_optimizers(self):
        optimizer = getattr(self.model.optimizer, "inner_optimizer", self.model.optimizer)
        inner = getattr(optimizer, "optimizers", None)
        if inner is not None:   # a MultiOptimizer: those of its optimizers that use EMA
            found = [o for o in inner if getattr(o, "use_ema", False)]
            if not found:
                raise ValueError("SwapEMAWeights must be used when at least one inner "
                                 "optimizer has `use_ema=True` set. Received a MultiOptimizer "
                                 "with all inner optimizers having `use_ema=False`.")
            return found
        if not getattr(optimizer, "use_ema", False):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the "
                             f"optimizer. Received: use_ema={getattr(optimizer, 'use_ema', None)}")
        return [optimizer]

    def _pairs(self):
        return [(v, a) for o in self._ema_optimizers()
                for v, a in zip(o._trainable_variables, o._model_variables_moving_average)]

    def _swap_variables(self):
        for variable, average in self._pairs():
            raw = np.array(variable.numpy(), copy=True)
            variable.assign(average.numpy())
            average.assign(raw)

    def _finalize_ema_values(self):
        for variable, average in self._pairs():
            average.assign(variable.numpy())

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            if epoch == self.params.get("epochs", 0) - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    on_predict_begin = on_test_begin
    on_predict_end = on_test_end   # Keras 3.15 never swaps back here (`if not`): a bug


__all__ += ["SwapEMAWeights"]
