"""`tl.callbacks`: hooks into `fit`/`evaluate`/`predict` (Keras 3's Callback API).

Owns: Callback, CallbackList (dispatch; fit adds History and, when verbose,
ProgbarLogger), History, ProgbarLogger (tqdm bars; verbose=2 prints one line
per epoch), EarlyStopping, ModelCheckpoint (atomic writes through
`model.save_weights`), LearningRateScheduler, ReduceLROnPlateau, CSVLogger,
TerminateOnNaN, LambdaCallback, BackupAndRestore (atomic `.weights.h5` backups
of the weights and the optimizer's state, named by epoch, so a killed `fit`
resumes where the last backup left it). Invariant: logs are dicts of Python
floats; nothing a callback writes is ever left half-written.
"""
import csv
import math
import os
import sys

import numpy as np

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


def _format_logs(logs):
    return " - ".join(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}"
                      for k, v in logs.items())


class ProgbarLogger(Callback):
    """Progress output: a tqdm bar per epoch with the running logs (verbose=1), or one
    line per epoch (verbose=2). Writes to stdout."""

    def __init__(self):
        super().__init__()
        self._bar = None
        self._mode = None

    def on_train_begin(self, logs=None):
        self._mode = "train"

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        verbose = self.params.get("verbose", 1)
        if verbose == 1:
            from tqdm.auto import tqdm  # noqa: PLC0415 -- optional until used
            self._bar = tqdm(total=self.params.get("steps"), desc=f"Epoch {epoch + 1}/"
                             f"{self.params.get('epochs', '?')}", unit="step", file=sys.stdout,
                             leave=True, dynamic_ncols=True)

    def on_train_batch_end(self, batch, logs=None):
        if self._bar is not None:
            self._bar.update(getattr(self.model, "steps_per_execution", 1))
            self._bar.set_postfix({k: f"{v:.4f}" for k, v in (logs or {}).items()}, refresh=False)

    def on_epoch_end(self, epoch, logs=None):
        verbose = self.params.get("verbose", 1)
        if self._bar is not None:
            self._bar.set_postfix({k: f"{v:.4f}" for k, v in (logs or {}).items()})
            self._bar.close()
            self._bar = None
        elif verbose == 2:
            print(f"Epoch {epoch + 1}/{self.params.get('epochs', '?')} - " + _format_logs(logs or {}),
                  file=sys.stdout, flush=True)

    def on_test_begin(self, logs=None):
        self._test_bar = None
        if self._mode != "train" and self.params.get("verbose", 1) == 1:
            from tqdm.auto import tqdm  # noqa: PLC0415
            self._test_bar = tqdm(total=self.params.get("steps"), desc="Evaluate", unit="step",
                                  file=sys.stdout)

    def on_test_batch_end(self, batch, logs=None):
        if getattr(self, "_test_bar", None) is not None:
            self._test_bar.update(1)
            self._test_bar.set_postfix({k: f"{v:.4f}" for k, v in (logs or {}).items()},
                                       refresh=False)

    def on_test_end(self, logs=None):
        if getattr(self, "_test_bar", None) is not None:
            self._test_bar.set_postfix({k: f"{v:.4f}" for k, v in (logs or {}).items()})
            self._test_bar.close()
            self._test_bar = None
        elif self._mode != "train" and self.params.get("verbose", 1) == 2:
            print(_format_logs(logs or {}), file=sys.stdout, flush=True)

    def on_train_end(self, logs=None):
        self._mode = None


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
            print(f"Epoch {self.stopped_epoch + 1}: early stopping", file=sys.stdout)
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.", file=sys.stdout)
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
                        print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
                    return
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                          f"{value:.5f}, saving model to {path}")
                self.best = value
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        folder = os.path.dirname(path)
        if folder and not os.path.exists(folder):
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {path}")


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
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {new}.")

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
                        print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
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
            print(f"Batch {batch}: Invalid loss, terminating training", file=sys.stdout)
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
