"""`tl.Model`: a Layer with a training loop (compile, fit, evaluate, predict) and weight files.

Owns: compile (string resolution of optimizer, loss, metrics), the train /
test / predict steps and their compilation into ONE `tl.function` each
(forward, loss, gradients, optimizer update and metric updates together;
`steps_per_execution=N` unrolls N steps per call; `reduce_retracing` so a
final partial batch adds one trace, not one per epoch), the epoch loop with
callbacks, and `.npz` weight files (written to a temporary file then renamed;
read with `allow_pickle=False`).
Invariants: every Variable the step touches (layer weights, optimizer slots,
metric state) exists before the step's first trace: `_build_for_batch`
builds layers from a scratch trace of the model, then the optimizer;
`Model(inputs, outputs)` returns a functional model.
"""
import os

import numpy as np

import trainlib as tl
from trainlib import callbacks as callbacks_module, losses as losses_module, \
    metrics as metrics_module, optim
from trainlib.distribute.strategy import current_mpi_strategy
from trainlib.graph.autodiff import flatten, pack_as
from trainlib.graph.tensor import TensorShape, TensorSpec
from trainlib.layers.base import Layer, scratch_graph

from . import data_adapter

__all__ = ["Model"]


class Model(Layer):
    """A Layer that trains: `compile`, then `fit`, `evaluate`, `predict`.

    Build one by subclassing (layers in `__init__`, computation in `call`), with
    the functional API (`tl.Model(inputs, outputs)`), or with `tl.Sequential`.

    Example:
        >>> inputs = tl.layers.Input(shape=(4,))
        >>> outputs = tl.layers.Dense(3, activation="softmax")(inputs)
        >>> model = tl.Model(inputs, outputs)
        >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
        ...               metrics=["accuracy"])
        >>> history = model.fit(x, y, epochs=3, batch_size=32)
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs):
            from .functional import Functional  # noqa: PLC0415 -- functional subclasses Model
            return Functional.__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        super().__init__(**kwargs)
        self.compiled = False
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self.run_eagerly, self.jit_compile, self.steps_per_execution = False, False, 1
        self._reset_compiled_functions()
        # data-parallel when created in an MPIStrategy's scope (tl.distribute)
        self._distribute_strategy = current_mpi_strategy()
        if self._distribute_strategy is not None:
            self._distribute_strategy._track(self)

    def _reset_compiled_functions(self):
        self.train_function = self.test_function = self.predict_function = None

    # -- compile
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile=False, auto_scale_loss=True):
        """Configures training.

        Args:
            optimizer: an Optimizer or its name ("adam", "sgd", "rmsprop", "adamw", "adagrad").
            loss: a Loss, a loss function, or its name ("mse", "sparse_categorical_crossentropy",
                ...); for several outputs a list (output order), a dict keyed by the output
                layers' names, or one loss for every output.
            metrics: a list of Metrics, functions or names ("accuracy", "mae", ...); for
                several outputs a list with one entry (or list) per output, or a dict keyed
                by output name. Log keys are then prefixed with the output's name, and each
                output's loss is logged as "<output name>_loss", as Keras 3 does.
            weighted_metrics: as metrics, given the sample weights.
            loss_weights: weights of the losses of several outputs (list or dict).
            run_eagerly: run the steps as plain Python (no tl.function), for debugging.
            steps_per_execution: train steps run per graph call.
            jit_compile: passed to tl.function.

        Raises:
            ValueError: for unknown names or steps_per_execution < 1.
        """
        self.optimizer = optim.get(optimizer)
        # -- mixed precision (keras-layer): as Keras, a mixed_float16 model's optimizer scales
        # the loss dynamically
        if auto_scale_loss and self.dtype_policy.name == "mixed_float16" and \
                not isinstance(self.optimizer, optim.LossScaleOptimizer):
            self.optimizer = optim.LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self.loss = loss
        names = self._output_names()
        if isinstance(loss, dict):
            if names is None or not set(loss) <= set(names):
                raise ValueError(f"loss is a dict with keys {sorted(loss)}, which must name the "
                                 f"model's outputs {names}")
            loss = [loss.get(name) for name in names]
        if isinstance(loss, (list, tuple)):
            self._loss_fns = [_as_loss(l) for l in loss]
        elif names is not None and len(names) > 1 and loss is not None:
            self._loss_fns = [_as_loss(loss) for _ in names]   # one loss for every output
        else:
            self._loss_fns = _as_loss(loss)
        if isinstance(loss_weights, dict):
            if names is None:
                raise ValueError("loss_weights as a dict needs a functional model's output names")
            loss_weights = [loss_weights.get(name) for name in names]
        self._loss_weights = loss_weights
        # kept as given (a list, or per output a nested list or a dict); saving reads them
        self._metric_ids = metrics if isinstance(metrics, dict) else list(metrics or [])
        self._weighted_metric_ids = weighted_metrics if isinstance(weighted_metrics, dict) \
            else list(weighted_metrics or [])
        self._compiled_metrics = None
        self._metric_entries = []
        self._output_loss_trackers = []
        self._loss_tracker = metrics_module.Mean(name="loss")
        if int(steps_per_execution) < 1:
            raise ValueError(f"steps_per_execution must be >= 1, got {steps_per_execution}")
        self.run_eagerly = bool(run_eagerly)
        self.steps_per_execution = int(steps_per_execution)
        self.jit_compile = bool(jit_compile)
        self.compiled = True
        self._reset_compiled_functions()

    def _assert_compiled(self):
        if not self.compiled:
            raise RuntimeError("You must call compile() before using the model for training.")

    def _output_names(self):
        """The names of a functional model's output layers (None for other models)."""
        outputs = getattr(self, "_flat_outputs", None)
        if outputs is None:
            return None
        return [kt.node.layer.name if kt.node is not None else kt.layer.name for kt in outputs]

    @property
    def metrics(self):
        """The loss tracker, the compiled metrics, then each output's loss tracker (Keras's order)."""
        if not self.compiled:
            return []
        return [self._loss_tracker] + list(self._compiled_metrics or []) + \
            list(self._output_loss_trackers)

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def _flat_metric_names(self):
        # Keras's _flatten_metrics_in_order: the metrics' own names first, then other keys sorted
        return [self._loss_tracker.name] + [m.name for m in self._compiled_metrics or ()] + \
            [m.name for m in self._output_loss_trackers]

    def reset_metrics(self):
        """Resets the state of every metric."""
        for m in self.metrics:
            m.reset_state()

    # -- building before the first step
    def _build_for_batch(self, batch):
        """Builds layers, compiled metrics and optimizer slots from one batch, eagerly."""
        x, y, _ = data_adapter.unpack_x_y_sample_weight(batch)
        needs_metrics = self.compiled and self._compiled_metrics is None
        y_pred_spec = None
        if not self.built or needs_metrics:
            with scratch_graph() as graph:
                leaves = flatten(x)
                placeholders = [graph.add_argument(TensorShape((None,) + tuple(a.shape[1:])),
                                                   tl.as_dtype(a.dtype), f"x{i}")
                                for i, a in enumerate(leaves)]
                y_pred = self(pack_as(x, placeholders), training=False)
                y_pred_spec = pack_as(y_pred, [TensorSpec(t.shape, t.dtype)
                                               for t in flatten(y_pred)])
        if needs_metrics:
            self._resolve_metrics(y, y_pred_spec)
        if self.compiled and not self.optimizer.built and self.trainable_variables:
            self.optimizer.build(self.trainable_variables)

    def _resolve_metrics(self, y, y_pred_spec):
        """Builds the compiled metrics and per-output loss trackers, as Keras 3's CompileMetrics
        and CompileLoss do at their first call."""
        outs = flatten(y_pred_spec) if y_pred_spec is not None else [None]
        ys = [None] * len(outs) if y is None else flatten(y)
        n = len(outs)
        names = self._output_names() if n > 1 else None
        names = names if names is not None and len(names) == n else \
            ([None] if n == 1 else [f"output_{i}" for i in range(n)])

        def spec_of(a):
            if a is None:
                return None
            return TensorSpec((None,) + tuple(a.shape[1:]), tl.as_dtype(a.dtype))

        def per_output(spec, argument):
            if not spec:
                return [None] * n
            if n == 1:
                return [flatten(spec) if isinstance(spec, (list, tuple, dict)) else [spec]]
            if isinstance(spec, dict) and set(spec) <= set(names):
                spec = [spec.get(name) for name in names]
            if isinstance(spec, (list, tuple)) and len(spec) == n:
                return [None if s is None else list(s) if isinstance(s, (list, tuple)) else [s]
                        for s in spec]
            raise ValueError(f"Invalid `{argument}`. `{argument}` should contain metrics objects "
                             "and either be a dict or a list matching the output names of the "
                             f"model {names}. Received: {argument}={spec}")

        entries = []
        for weighted, spec, argument in ((False, self._metric_ids, "metrics"),
                                         (True, self._weighted_metric_ids, "weighted_metrics")):
            for i, ids in enumerate(per_output(spec, argument)):
                for identifier in ids or ():
                    metric = metrics_module.get(identifier, spec_of(ys[i] if i < len(ys) else None),
                                                outs[i])
                    entries.append((i, metric, weighted))
        # the log keys, as Keras 3's CompileMetrics.result names them: prefixed with the output's
        # name when there are several, a repeated name gets "_1", "_2"... among the metrics and
        # a "weighted_" prefix among the weighted metrics
        keys, counters = [], {}
        for i, m, weighted in entries:
            prefix = f"{names[i]}_" if names[i] else ""
            name = prefix + m.name
            if name in counters and weighted:
                name = f"{prefix}weighted_{m.name}"
            if name in counters:
                counters[name] += 1
                name = f"{name}_{counters[name] - 1}"
            else:
                counters[name] = 1
            keys.append(name)
        self._metric_entries = [(i, m, w, key) for (i, m, w), key in zip(entries, keys)]
        self._compiled_metrics = [m for _, m, _ in entries]
        self._compiled_metric_keys = keys
        losses = self._loss_fns if isinstance(self._loss_fns, list) else \
            [self._loss_fns] * n if n > 1 and self._loss_fns is not None else []
        self._output_loss_trackers = [metrics_module.Mean(name=f"{names[i]}_loss")
                                      for i, fn in enumerate(losses) if fn is not None] \
            if sum(fn is not None for fn in losses) > 1 else []
        self._output_loss_tracker_index = [i for i, fn in enumerate(losses) if fn is not None] \
            if self._output_loss_trackers else []

    # -- steps (override train_step / test_step / predict_step to customize)
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of a batch plus the model's `losses` (add_loss, regularizers)."""
        # -- layer losses (keras-layer): Keras 3 adds each of `self.losses`, in float32
        total = self._compiled_loss(y, y_pred, sample_weight) if self._loss_fns is not None \
            else None
        for extra in self.losses:
            extra = extra if extra.dtype is tl.float32 else tl.cast(extra, tl.float32)
            total = extra if total is None else total + extra
        if total is None:
            raise ValueError("compile() was called without a loss; pass loss=... to compile, or "
                             "override compute_loss / train_step")
        return total

    def _compiled_loss(self, y, y_pred, sample_weight):
        """The compiled loss of a batch (summed over outputs, weighted by loss_weights).

        With several losses each output's unweighted loss also goes to its
        "<output>_loss" tracker, one plain value per batch: Keras 3 weights it by the
        static batch size, which its dataset-fed steps never know, so every batch counts 1.
        """
        fns = self._loss_fns
        outs = flatten(y_pred)
        if not isinstance(fns, list):
            if len(outs) == 1:
                value = fns(y, y_pred, sample_weight)
                weight = self._loss_weights
                if isinstance(weight, (list, tuple)):
                    weight = weight[0] if weight else None
                return value if weight is None else value * weight
            fns = [fns] * len(outs)
        ys = flatten(y) if len(outs) > 1 else [y]
        if len(fns) != len(outs) or len(ys) != len(outs):
            raise ValueError(f"{len(fns)} losses for {len(outs)} outputs and {len(ys)} targets")
        weights = list(self._loss_weights) if isinstance(self._loss_weights, (list, tuple)) \
            else [self._loss_weights] * len(fns)
        if isinstance(sample_weight, (list, tuple, dict)):
            weights_per_output = flatten(sample_weight)
        else:
            weights_per_output = [sample_weight] * len(outs)
        trackers = dict(zip(getattr(self, "_output_loss_tracker_index", ()),
                            getattr(self, "_output_loss_trackers", ())))
        total = None
        for i, (fn, yt, yp, w, sw) in enumerate(zip(fns, ys, outs, weights, weights_per_output)):
            if fn is None:
                continue
            value = fn(yt, yp, sw)
            if i in trackers:
                trackers[i].update_state(value)
            if w is not None:
                value = value * w
            total = value if total is None else total + value
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Updates the compiled metrics; returns {name: result} including the loss."""
        outs = flatten(y_pred)
        if len(outs) == 1:
            ys, outs = [y], [y_pred]
        else:
            ys = flatten(y)
        if sample_weight is None:
            weights = [None] * len(outs)
        else:
            weights = flatten(sample_weight) if isinstance(sample_weight, (list, tuple, dict)) \
                else [sample_weight]
            if len(weights) < len(outs):  # one weight array serves every output
                weights = [weights[0]] * len(outs)
        for i, m, weighted, _ in self._metric_entries:
            m.update_state(ys[i], outs[i], weights[i] if weighted else None)
        return self.get_metrics_result()

    def get_metrics_result(self):
        """{log key: result} of the loss tracker and the compiled metrics."""
        if self._distribute_strategy is not None:
            return self._distribute_strategy._metric_results(self.metrics)
        if not self.compiled:
            return {}
        results = {self._loss_tracker.name: self._loss_tracker.result()}
        for key, m in zip(getattr(self, "_compiled_metric_keys", ()), self._compiled_metrics or ()):
            results[key] = m.result()
        for m in self._output_loss_trackers:
            results[m.name] = m.result()
        return results

    def _track_loss(self, loss, x):
        first = flatten(x)[0]
        n = first.shape[0]
        n = float(n) if n is not None else tl.cast(tl.shape(first)[0], tl.float32)
        self._loss_tracker.update_state(loss, sample_weight=n)

    def train_step(self, data):
        """One training step on a batch: forward, loss, gradients, update, metrics.

        Returns:
            {metric name: value} after the update.
        """
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        with tl.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
            # -- loss scaling (keras-layer): identity unless a LossScaleOptimizer
            scaled_loss = self.optimizer.scale_loss(loss)
        self._track_loss(loss, x)
        variables = self.trainable_variables
        grads = tape.gradient(scaled_loss, variables)
        if self._distribute_strategy is not None:
            grads = self._distribute_strategy._average_gradients(grads, x)
        self.optimizer.apply_gradients(zip(grads, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step: forward (inference mode), loss, metrics."""
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        self._track_loss(loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        """One prediction step: the model's outputs in inference mode."""
        x, _, _ = data_adapter.unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _compile_step(self, step, base_step):
        def one(data):
            return step(data)

        def several(batches):
            logs = None
            for data in batches:
                logs = step(data)
            return logs

        fn = several if base_step == "train_step" and self.steps_per_execution > 1 else one
        if self.run_eagerly:
            return fn
        # AutoGraph only for user steps: the library's own steps have no tensor control flow
        overridden = getattr(type(self), base_step) is not getattr(Model, base_step)
        return tl.function(fn, reduce_retracing=True, jit_compile=self.jit_compile,
                           autograph=overridden)

    def make_train_function(self, force=False):
        """The compiled train step (one tl.function around train_step)."""
        if self.train_function is None or force:
            self.train_function = self._compile_step(self.train_step, "train_step")
        return self.train_function

    def make_test_function(self, force=False):
        if self.test_function is None or force:
            self.test_function = self._compile_step(self.test_step, "test_step")
        return self.test_function

    def make_predict_function(self, force=False):
        if self.predict_function is None or force:
            self.predict_function = self._compile_step(self.predict_step, "predict_step")
        return self.predict_function

    # -- loops
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """Trains for `epochs` epochs; returns the `History` callback (`history.history`).

        Args:
            x, y: arrays / tensors (several inputs as a list or dict), or x a
                `tl.data.Dataset` / generator yielding (x, y) or (x, y, sample_weight).
            batch_size: default 32 (arrays only).
            epochs: the last epoch index + 1.
            verbose: "auto" (= 1: tqdm bars), 0 (silent), 2 (one line per epoch).
            callbacks: a list of `tl.callbacks.Callback`.
            validation_split: fraction of the arrays (taken from the end) kept for validation.
            validation_data: (x_val, y_val) or a Dataset, evaluated after each epoch.
            shuffle: reshuffle arrays each epoch.
            class_weight: {class index: weight}, turned into sample weights.
            sample_weight: per-sample weights.
            initial_epoch: the epoch to start from (for resuming).
            steps_per_epoch: batches per epoch (default: one pass over the data).

        Returns:
            A `tl.callbacks.History`.

        Raises:
            RuntimeError: if the model is not compiled.
            ValueError: on mismatched x/y lengths or bad arguments.
        """
        self._assert_compiled()
        if validation_split and validation_data is None:
            if data_adapter.is_iterable_data(x):
                raise ValueError("validation_split works with arrays only; pass validation_data")
            (x, y, sample_weight), validation_data = data_adapter.train_validation_split(
                (data_adapter._to_numpy(x), data_adapter._to_numpy(y),
                 data_adapter._to_numpy(sample_weight)), validation_split)
        batches = data_adapter.make_batches(x, y, sample_weight, batch_size, shuffle, class_weight,
                                            steps_per_epoch)
        if getattr(batches, "n", None) == 0:
            raise ValueError("Expected input data to be non-empty: fit got 0 samples (check the "
                             "arrays passed as x, or validation_split leaving nothing to train on)")
        self._build_for_batch(batches.first_batch())
        strategy = self._distribute_strategy
        if strategy is not None:
            strategy.broadcast_variables(self.weights)
            callbacks, verbose = strategy._fit_callbacks(callbacks, verbose)
            batches = strategy._shard_batches(batches)
        val_batches = None
        if validation_data is not None:
            val_batches = self._validation_batches(validation_data,
                                                   validation_batch_size or batch_size,
                                                   validation_steps)
        verbose = 1 if verbose == "auto" else int(verbose)
        steps = batches.length if strategy is not None else \
            batches.steps if isinstance(batches, data_adapter.ArrayBatches) else batches.length
        callbacks = callbacks_module.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0, model=self, verbose=verbose,
            epochs=epochs, steps=steps)
        train_function = self.make_train_function()
        self.stop_training = False
        callbacks.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            step = 0
            for group in _groups(iter(batches), self.steps_per_execution):
                callbacks.on_train_batch_begin(step)
                out = train_function(group[0] if self.steps_per_execution == 1 else group)
                logs = _to_floats(out)
                # Keras reports the group's last step as begin + steps_per_execution - 1,
                # even for a short final group
                callbacks.on_train_batch_end(step + self.steps_per_execution - 1, logs)
                step += len(group)
                if self.stop_training:
                    break
            if step == 0:
                import warnings  # noqa: PLC0415
                warnings.warn("Your input ran out of data; interrupting training. Make sure the "
                              "dataset or generator can yield steps_per_epoch * epochs batches "
                              "(use .repeat()).", stacklevel=2)
                break
            epoch_logs = dict(logs)
            if val_batches is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._evaluate_batches(val_batches, callbacks=callbacks)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            logs = epoch_logs
            if self.stop_training:
                break
        callbacks.on_train_end(logs)
        return callbacks.history

    def _validation_batches(self, validation_data, batch_size, steps):
        if data_adapter.is_iterable_data(validation_data):
            return data_adapter.IterableBatches(validation_data, steps)
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be (x_val, y_val), (x_val, y_val, "
                             "sample_weight) or a tl.data.Dataset")
        vx, vy = validation_data[0], validation_data[1]
        vw = validation_data[2] if len(validation_data) == 3 else None
        return data_adapter.ArrayBatches(vx, vy, vw, batch_size or 32, False, None, steps)

    def _evaluate_batches(self, batches, callbacks):
        self._build_for_batch(batches.first_batch())
        if self._distribute_strategy is not None:
            self._distribute_strategy.broadcast_variables(self.weights)
            batches = self._distribute_strategy._shard_batches(batches)
        test_function = self.make_test_function()
        if hasattr(batches, "reset"):
            batches.reset()
        self.reset_metrics()
        if callbacks is not None:
            callbacks.on_test_begin()
        logs = {}
        spe = self.steps_per_execution
        for i, group in enumerate(_groups(iter(batches), spe)):
            if callbacks is not None:
                callbacks.on_test_batch_begin(i * spe)
            for batch in group:
                logs = _to_floats(test_function(batch))
            if callbacks is not None:
                callbacks.on_test_batch_end(i * spe + spe - 1, logs)
        if callbacks is not None:
            callbacks.on_test_end(logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):
        """The loss and metrics over the data, in inference mode.

        Returns:
            The loss alone (no metrics), a list [loss, metric...], or a dict with return_dict.
        """
        self._assert_compiled()
        batches = data_adapter.make_batches(x, y, sample_weight, batch_size, False, None, steps)
        verbose = 1 if verbose == "auto" else int(verbose)
        if self._distribute_strategy is not None:
            callbacks, verbose = self._distribute_strategy._fit_callbacks(callbacks, verbose)
        n = batches.steps if isinstance(batches, data_adapter.ArrayBatches) else batches.length
        cbs = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                            verbose=verbose, epochs=1, steps=n)
        logs = self._evaluate_batches(batches, cbs)
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for `x`, batch by batch, concatenated as numpy arrays."""
        batches = data_adapter.make_batches(x, None, None, batch_size, False, None, steps)
        first = batches.first_batch()
        if not self.built:
            self._build_for_batch(first)
        predict_function = self.make_predict_function()
        verbose = 1 if verbose == "auto" else int(verbose)
        n = batches.steps if isinstance(batches, data_adapter.ArrayBatches) else batches.length
        cbs = callbacks_module.CallbackList(callbacks, model=self, verbose=verbose, epochs=1,
                                            steps=n)
        cbs.on_predict_begin()
        outputs = []
        for step, batch in enumerate(batches):
            cbs.on_predict_batch_begin(step)
            out = predict_function(batch)
            outputs.append([np.asarray(t) for t in flatten(out)])
            structure = out
            cbs.on_predict_batch_end(step, {"outputs": out})
        cbs.on_predict_end()
        if not outputs:
            raise ValueError("predict got no data")
        merged = [np.concatenate(parts) for parts in zip(*outputs)]
        return pack_as(structure, merged) if not tl.is_tensor(structure) else merged[0]

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One train step on one batch; returns the metrics (after resetting them first)."""
        self._assert_compiled()
        batches = data_adapter.ArrayBatches(x, y, sample_weight, len(flatten(
            data_adapter._to_numpy(x))[0]), False, class_weight)
        batch = batches.first_batch()
        self._build_for_batch(batch)
        self.reset_metrics()
        fn = self.make_train_function()
        logs = _to_floats(fn([batch] if self.steps_per_execution > 1 else batch))
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One test step on one batch; returns the metrics of that batch."""
        self._assert_compiled()
        batches = data_adapter.ArrayBatches(x, y, sample_weight, len(flatten(
            data_adapter._to_numpy(x))[0]), False)
        batch = batches.first_batch()
        self._build_for_batch(batch)
        self.reset_metrics()
        logs = _to_floats(self.make_test_function()(batch))
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def predict_on_batch(self, x):
        """The model's outputs for one batch, as numpy."""
        batch = (data_adapter._to_numpy(x),)
        if not self.built:
            self._build_for_batch(batch)
        out = self.make_predict_function()(batch)
        return pack_as(out, [np.asarray(t) for t in flatten(out)])

    # -- weights files
    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None):
        """Exports the model for inference as a SavedModel directory, as Keras 3's `export`.

        The directory has a `serving_default` signature and a `serve` endpoint taking
        the model's inputs; `tl.saved_model.load(filepath)` runs it without this code.

        Args:
            filepath: the directory to write (atomically).
            input_signature: TensorSpecs of the inputs, needed when the model has no
                known inputs (a subclassed model never called on an Input).

        Example:
            >>> model.export("exported")
            >>> tl.saved_model.load("exported").serve(x)
        """
        from ..saved_model import export_model  # noqa: PLC0415 -- saving sits above models
        export_model(self, filepath, input_signature=input_signature)
        if verbose:
            print(f"Saved the model for serving to '{filepath}' (endpoint 'serve', signature "
                  "'serving_default').")

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the whole model (architecture, weights, compile config, optimizer state) to a
        `.keras` file, as Keras 3; `tl.saving.load_model` restores it and training resumes.

        Raises:
            ValueError: for another extension (`export` writes a SavedModel; ".h5" needs h5py).

        Example:
            >>> model.save("model.keras")
            >>> model = tl.saving.load_model("model.keras")
        """
        from .saving_keras import save_model  # noqa: PLC0415 -- the format module imports models
        save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Writes the weights, in `weights` order, to an `.npz` file (atomically: a temporary
        file in the same folder, then a rename); a path without an extension
        ("my_checkpoint") writes a `tl.train.Checkpoint` of the model instead.

        Raises:
            ValueError: if the name has an extension other than ".npz".
        """
        filepath = os.fspath(filepath)
        if _is_checkpoint_prefix(filepath):   # tf.keras 2's TensorFlow-checkpoint form
            if not overwrite and os.path.exists(filepath + ".index"):
                raise FileExistsError(filepath + ".index")
            from ..checkpoint import save_weights_checkpoint  # noqa: PLC0415 -- above models
            save_weights_checkpoint(self, filepath)
            return
        if not filepath.endswith(".npz"):
            raise ValueError(f"save_weights writes .npz files (e.g. 'model.weights.npz') or, "
                             f"for a path without an extension, a checkpoint; got "
                             f"{filepath!r}")
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(filepath)
        from .saving_keras import save_weights_npz  # noqa: PLC0415
        save_weights_npz(self, filepath)

    def load_weights(self, filepath):
        """Reads weights written by `save_weights` (never unpickles anything), within the load
        limits (`tl.saving.set_load_limits`).

        Raises:
            LoadError: (a ValueError) naming the file, for a truncated, corrupted, foreign or
                mismatched file, or a pipe or device instead of a file.
            ValueError: for an unbuilt model.
        """
        filepath = os.fspath(filepath)
        if _is_checkpoint_prefix(filepath):
            from ..checkpoint import load_weights_checkpoint  # noqa: PLC0415 -- above models
            return load_weights_checkpoint(self, filepath)
        if filepath.endswith((".keras", ".h5", ".hdf5")):  # Keras 3 reads a .keras file's weights
            from .saving_keras import load_weights  # noqa: PLC0415
            return load_weights(self, filepath)
        from .saving_keras import load_weights_npz  # noqa: PLC0415
        load_weights_npz(self, filepath)

    # -- summary
    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints a table of layers, output shapes and parameter counts, then the totals.

        The layout is Keras 3's: lines of `line_length` (default: 88, or 108 with a
        "Connected to" column for branching functional models, at most the
        terminal's width - 4), column `positions` as fractions of a line.
        """
        from .summary import format_summary  # noqa: PLC0415
        text = format_summary(self, line_length=line_length, positions=positions)
        (print_fn or print)(text)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    def get_compile_config(self):
        if not self.compiled:
            return None
        return {"optimizer": {"class_name": type(self.optimizer).__name__,
                              "config": self.optimizer.get_config()},
                "loss": losses_module.serialize(self._loss_fns) if not isinstance(self._loss_fns, list)
                else [losses_module.serialize(l) for l in self._loss_fns],
                "metrics": _metric_names(self._metric_ids or []),
                "steps_per_execution": self.steps_per_execution}


def _is_checkpoint_prefix(filepath):
    """A weights path without an extension names a checkpoint prefix (`<path>.index` and
    `<path>.data-*.npz`), as tf.keras 2 wrote TensorFlow checkpoints for such paths."""
    return not os.path.splitext(os.path.basename(filepath))[1]


def _metric_names(spec):
    if isinstance(spec, dict):
        return {k: _metric_names(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return [_metric_names(m) for m in spec]
    return spec if isinstance(spec, str) or spec is None else getattr(spec, "name", None)


def _as_loss(loss):
    fn = losses_module.get(loss)
    if fn is None or isinstance(fn, losses_module.Loss):
        return fn
    return losses_module.LossFunctionWrapper(fn)


def _groups(iterator, size):
    group = []
    for item in iterator:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _to_floats(logs):
    # sorted by key: Keras 3's logs come out of a tf.function, whose dict outputs are sorted
    return {k: float(logs[k]) for k in sorted(logs)}


def _as_list(logs, names):
    values = [logs[n] for n in names if n in logs]
    values += [logs[k] for k in sorted(logs) if k not in names]
    return values[0] if len(values) == 1 else values
