"""`Trainer`: what makes a Model train (Keras 3's `keras.src.trainers.trainer.Trainer`).

Owns: `compile` (resolving the optimizer, a `CompileLoss`, a `CompileMetrics`),
`metrics` / `metrics_names` / `get_metrics_result`, `compute_loss` (the ONE place
where a step's total loss is formed: the compiled loss plus the model's own
`losses`) and `compute_metrics`, the steps (`train_step`, `test_step`,
`predict_step`), the functions that wrap them in ONE `tl.function` each
(forward, loss, gradients, optimizer update and metric updates together;
`steps_per_execution=N` runs N steps per call; `reduce_retracing` so a final
partial batch adds one trace, not one per epoch), and the loops (`fit`,
`evaluate`, `predict`, `*_on_batch`) over an `EpochIterator` with callbacks.
Distribution is the model's strategy object (`distribute_strategy`), called
through its interface only (`distribute.strategy.Strategy`). `compile(remat=...)`
makes the default train step recompute a Sequential model's layers segment by
segment and apply each segment's gradients at once (`_remat_train_step`).
Invariants: every Variable a step touches (layer weights, optimizer slots,
metric state) exists before the step's first trace: `_symbolic_build` builds
the layers from a scratch trace of the model, resolves the compiled loss and
metrics against the first batch, then builds the optimizer.
"""
import warnings

import numpy as np

from .. import callbacks as callbacks_module, metrics as metrics_module
from ..distribute.strategy import get_strategy
from ..graph.autodiff import GradientTape
from ..graph.nest import flatten, pack_as
from ..graph.dtypes import as_dtype, float32
from ..graph.function import function
from ..graph.ops.array import ones_like, shape as shape_of
from ..graph.op import apply, convert_to_tensor
from ..graph.ops.math import add_n, cast
from ..graph.tensor import TensorShape, TensorSpec, is_tensor
from ..layers.base import scratch_graph
from ..models import data_adapter
from ..optim import LossScaleOptimizer, get as get_optimizer
from ..settings import capped_epochs, capped_steps
from .compile_utils import (CompileLoss, CompileMetrics, compile_config, compile_from_config,
                            output_names_for)
from .epoch_iterator import _OUT_OF_DATA, EpochIterator
from ..graph.properties import read_only

__all__ = ["Trainer"]


class Trainer:
    """The training half of a Model: `compile`, then `fit`, `evaluate`, `predict`.

    Override `train_step` / `test_step` / `predict_step` (and `compute_loss`,
    `compute_metrics`, the `metrics` property) to customize what a step does; the
    loops, callbacks and graph compilation stay the same.

    Example:
        >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
        ...               metrics=["accuracy"])
        >>> history = model.fit(x, y, epochs=3, batch_size=32)
    """

    def __init__(self):
        self.compiled = False
        self.optimizer = None
        self.loss = None
        self.stop_training = False
        self.history = None
        self.run_eagerly, self.jit_compile, self.steps_per_execution = False, False, 1
        self.remat = False
        self._compile_loss = None
        self._compile_metrics = None
        self._loss_tracker = None
        self._reset_compiled_functions()
        # the strategy in whose scope the model is created (the one-process default otherwise)
        self._distribute_strategy = get_strategy()
        self._distribute_strategy.track_model(self)

    distribute_strategy = read_only("_distribute_strategy", "The distribution strategy the model "
                                                            "trains under.")

    def _reset_compiled_functions(self):
        self.train_function = self.test_function = self.predict_function = None

    # -- compile
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile=False, auto_scale_loss=True, remat=False):
        """Configures training (Keras 3's `Model.compile`).

        Args:
            optimizer: an Optimizer or its name ("adam", "sgd", "rmsprop", "adamw", "adagrad").
            loss: a Loss, a loss function, or its name ("mse", ...); for several outputs a
                list (output order), a dict keyed by output name (outputs left out get no
                loss), or one loss for every output. None: the loss is the model's own
                `losses` (`add_loss`) alone.
            loss_weights: weights of the losses of several outputs (list or dict).
            metrics: a list of Metrics, functions or names ("accuracy", "mae", ...); for
                several outputs a list with one entry (or list) per output, or a dict keyed
                by output name. Log keys are then prefixed with the output's name, and each
                output's loss is logged as "<output name>_loss", as Keras 3 does.
            weighted_metrics: as metrics, given the sample weights.
            run_eagerly: run the steps as plain Python (no tl.function), for debugging.
            steps_per_execution: train steps run per graph call.
            jit_compile: passed to tl.function.
            remat: trade compute for memory in the default train step (trainlib's option;
                Keras has none): False (default); True, or a number of layers per
                segment, for a Sequential model: its layers run in segments (about
                sqrt(number of layers) of them with True), the forward pass keeps only
                the segments' inputs, and the backward pass recomputes one segment at a
                time (`tl.recompute_grad`'s barrier) and applies that segment's gradients
                at once, so neither activations nor gradients pile up. Same gradients
                and update as without; about one more forward pass of time.

        Raises:
            ValueError: for unknown names, a loss dict naming no output,
                steps_per_execution < 1, or `remat` with a model that is no Sequential,
                a loss-scaling optimizer or `global_clipnorm`.
        """
        self.optimizer = get_optimizer(optimizer)
        # as Keras: a mixed_float16 model's optimizer scales the loss dynamically
        if auto_scale_loss and self.dtype_policy.name == "mixed_float16" and \
                not isinstance(self.optimizer, LossScaleOptimizer):
            self.optimizer = LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self.loss = loss
        names = self.output_names if hasattr(self, "output_names") else None
        if isinstance(loss, dict) and names is not None:
            unknown = sorted(set(loss) - set(names))
            if unknown:
                raise ValueError(f"loss is a dict with keys {sorted(loss)}, which must name the "
                                 f"model's outputs {names} (unknown: {unknown})")
        if isinstance(loss_weights, dict):
            if names is None:
                raise ValueError("loss_weights as a dict needs a functional model's output names")
            loss_weights = [loss_weights.get(name) for name in names]
        self._loss_weights = loss_weights
        self._compile_loss = CompileLoss(loss, loss_weights) if loss is not None else None
        # kept as given (a list, or per output a nested list or a dict); saving reads them
        self._metric_ids = metrics if isinstance(metrics, dict) else list(metrics or [])
        self._weighted_metric_ids = weighted_metrics if isinstance(weighted_metrics, dict) \
            else list(weighted_metrics or [])
        self._compile_metrics = CompileMetrics(self._metric_ids, self._weighted_metric_ids) \
            if (metrics or weighted_metrics) else None
        self._loss_tracker = metrics_module.Mean(name="loss")
        if int(steps_per_execution) < 1:
            raise ValueError(f"steps_per_execution must be >= 1, got {steps_per_execution}")
        self.remat = _check_remat(self, remat)
        self.run_eagerly = bool(run_eagerly)
        self.steps_per_execution = int(steps_per_execution)
        self.jit_compile = bool(jit_compile)
        self.compiled = True
        self._reset_compiled_functions()

    @property
    def _loss_fns(self):
        """The compiled loss of each output once resolved (one Loss for a one-output model)."""
        if self._compile_loss is None:
            return None
        if not self._compile_loss.built:
            loss = self._compile_loss.loss
            if isinstance(loss, dict):
                names = getattr(self, "output_names", None) or sorted(loss)
                loss = [loss.get(n) for n in names]
            return list(loss) if isinstance(loss, (list, tuple)) else loss
        fns = self._compile_loss.losses
        return fns[0] if len(fns) == 1 else list(fns)

    def _assert_compiled(self):
        if not self.compiled:
            raise RuntimeError("You must call compile() before using the model for training.")

    # -- metrics
    @property
    def metrics(self):
        """The loss tracker, the compiled metrics (one `CompileMetrics`), then each output's loss
        tracker: Keras 3's order."""
        if not self.compiled:
            return []
        out = [self._loss_tracker]
        if self._compile_metrics is not None:
            out.append(self._compile_metrics)
        if self._compile_loss is not None:
            out.extend(self._compile_loss.metrics)
        return out

    @property
    def metrics_names(self):
        """The names of `metrics` (as Keras 3: "loss", "compile_metrics", "<output>_loss"...)."""
        return [m.name for m in self.metrics]

    def _flat_metric_names(self):
        # Keras's _flatten_metrics_in_order: the metrics' own names first, then other keys sorted
        names = []
        for m in self.metrics:
            if isinstance(m, CompileMetrics):
                names.extend(sub.name for sub in m.metrics)
            else:
                names.append(m.name)
        return names

    def reset_metrics(self):
        """Resets the state of every metric."""
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self):
        """{log key: result} of every metric in `metrics` (a dict result is merged in)."""
        results = {}
        metrics = self.metrics
        with self._distribute_strategy.reduced_metric_states(metrics):
            for metric in metrics:
                result = metric.result()
                if isinstance(result, dict):
                    results.update(result)
                else:
                    results[metric.name] = result
        return results

    # -- building before the first step
    def _symbolic_build(self, batch):
        """Builds layers, the compiled loss and metrics, and optimizer slots from one batch."""
        x, y, _ = data_adapter.unpack_x_y_sample_weight(batch)
        needs_compile = self.compiled and (
            (self._compile_loss is not None and not self._compile_loss.built) or
            (self._compile_metrics is not None and not self._compile_metrics.built))
        if not self.built or needs_compile:
            with scratch_graph() as graph:
                placeholders = [graph.add_argument(TensorShape((None,) + tuple(a.shape[1:])),
                                                   as_dtype(a.dtype), f"x{i}")
                                for i, a in enumerate(flatten(x))]
                y_pred = self(pack_as(x, placeholders), training=False)
                y_pred_spec = pack_as(y_pred, [TensorSpec(t.shape, t.dtype)
                                               for t in flatten(y_pred)])
            if needs_compile:
                names = output_names_for(self, y_pred_spec)
                if self._compile_loss is not None and not self._compile_loss.built:
                    self._compile_loss.build(names)
                if self._compile_metrics is not None and not self._compile_metrics.built:
                    self._compile_metrics.build(y, y_pred_spec, names)
        if self.compiled and not self.optimizer.built and self.trainable_variables:
            self.optimizer.build(self.trainable_variables)

    # -- the steps (override to customize)
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The total loss of a batch: the compiled loss plus the model's own `losses`.

        As Keras 3: the compiled loss is summed over the outputs (weighted by
        `loss_weights`); every loss the model's layers added (`add_loss`, weight
        regularizers) is added to it. This is the one place a step's total loss
        is formed; override it to compute the loss another way.

        Args:
            x: the inputs (unused by default).
            y: the targets.
            y_pred: the model's outputs.
            sample_weight: per-sample weights (per output: a list or dict).
            training: whether the step trains.

        Returns:
            A scalar tensor.

        Raises:
            ValueError: when there is no loss at all (no compiled loss and no `losses`).
        """
        losses = []
        if self._compile_loss is not None:
            loss = self._compile_loss(y, y_pred, sample_weight)
            if loss is not None:
                losses.append(loss)
        for loss in getattr(self, "losses", None) or ():
            losses.append(loss if loss.dtype is float32 else cast(loss, float32))
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return losses[0] if len(losses) == 1 else add_n(losses)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Updates the compiled metrics; returns `get_metrics_result()` (the loss included)."""
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _track_loss(self, loss, x):
        first = flatten(x)[0]
        n = first.shape[0]
        n = float(n) if n is not None else cast(shape_of(first)[0], float32)
        self._loss_tracker.update_state(loss, sample_weight=n)

    def train_step(self, data):
        """One training step on a batch: forward, loss, gradients, update, metrics.

        Returns:
            {metric name: value} after the update.
        """
        if self.remat:
            return self._remat_train_step(data)
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
            scaled = self.optimizer.scale_loss(loss)   # a loss-scaling optimizer's hook
        self._track_loss(loss, x)
        variables = self.trainable_variables
        grads = tape.gradient(scaled, variables)
        grads = self._distribute_strategy.reduce_gradients(grads, x)
        self.optimizer.apply(grads, variables)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _remat_train_step(self, data):
        """`train_step` with `compile(remat=...)`: segments of layers, recomputed one at a
        time in the backward pass, each segment's gradients applied as soon as they are
        final (the optimizer counts the step once, after the last segment)."""
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        segments = _remat_segments(self._layers, self.remat)
        boundaries = [x]
        h = x
        for segment in segments[:-1]:   # no tape: only the segments' inputs stay alive
            h = _run_segment(segment, h)
            boundaries.append(h)
        last_vars = _segment_variables(segments[-1])
        with GradientTape() as tape:
            tape.watch(h)
            y_pred = _run_segment(segments[-1], h)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
        self._track_loss(loss, x)
        grads = tape.gradient(loss, [h] + last_vars)
        dh = grads[0]
        self._remat_apply(grads[1:], last_vars, x)
        for s in range(len(segments) - 2, -1, -1):
            segment, variables = segments[s], _segment_variables(segments[s])
            if dh is None:   # nothing above depends on this segment's output
                break
            # from a barrier after dh: the recomputation belongs to the backward pass
            h_in = apply("OptimizationBarrier", convert_to_tensor(boundaries[s]), dh, num_passed=1)
            h_in = h_in[0] if isinstance(h_in, tuple) else h_in
            with GradientTape() as tape:
                tape.watch(h_in)
                out = _run_segment(segment, h_in)
                # the layers' own losses (activity and weight regularizers) of this segment
                extra = [cast(l, float32) if l.dtype is not float32 else l
                         for layer in segment for l in layer.losses]
                targets, seeds = [out], [dh]
                if extra:
                    penalty = add_n(extra) if len(extra) > 1 else extra[0]
                    targets.append(penalty)
                    seeds.append(ones_like(penalty))
            grads = tape.gradient(targets, [h_in] + variables, output_gradients=seeds)
            dh = grads[0]
            self._remat_apply(grads[1:], variables, x)
        self.optimizer._count_step()
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _remat_apply(self, grads, variables, x):
        if not variables:
            return
        grads = self._distribute_strategy.reduce_gradients(list(grads), x)
        if any(g is not None for g in grads):
            self.optimizer._apply(list(zip(grads, variables)), aggregate=True, count=False)

    def test_step(self, data):
        """One evaluation step: forward (inference mode), loss, metrics."""
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        self._track_loss(loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        """One prediction step: the model's outputs in inference mode."""
        x, _, _ = data_adapter.unpack_x_y_sample_weight(data)
        return self(x, training=False)

    # -- the functions that wrap the steps
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
        overridden = getattr(type(self), base_step) is not getattr(Trainer, base_step)
        return function(fn, reduce_retracing=True, jit_compile=self.jit_compile,
                        autograph=overridden)

    def make_train_function(self, force=False):
        """The compiled train step (one tl.function around train_step)."""
        if self.train_function is None or force:
            self.train_function = self._compile_step(self.train_step, "train_step")
        return self.train_function

    def make_test_function(self, force=False):
        """The compiled test step (one tl.function around test_step)."""
        if self.test_function is None or force:
            self.test_function = self._compile_step(self.test_step, "test_step")
        return self.test_function

    def make_predict_function(self, force=False):
        """The compiled predict step (one tl.function around predict_step)."""
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
            x, y: arrays / tensors (several inputs or outputs as a list, tuple, or dict keyed
                by input / output name), or x a `tl.data.Dataset` / generator yielding
                (x, y) or (x, y, sample_weight).
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
            if data_adapter.is_iterable_data(x) or isinstance(x, data_adapter.PyDataset):
                raise ValueError("validation_split works with arrays only; pass validation_data")
            (x, y, sample_weight), validation_data = data_adapter.train_validation_split(
                (data_adapter._to_numpy(x), data_adapter._to_numpy(y),
                 data_adapter._to_numpy(sample_weight)), validation_split)
        epochs = capped_epochs(epochs)                 # keras.config.set_max_epochs
        steps_per_epoch = capped_steps(steps_per_epoch)   # keras.config.set_max_steps_per_epoch
        batches = data_adapter.make_batches(x, y, sample_weight, batch_size, shuffle, class_weight,
                                            steps_per_epoch)
        if getattr(batches, "n", None) == 0:
            raise ValueError("Expected input data to be non-empty: fit got 0 samples (check the "
                             "arrays passed as x, or validation_split leaving nothing to train on)")
        self._symbolic_build(batches.first_batch())
        strategy = self._distribute_strategy
        strategy.sync_variables(self.weights)
        callbacks, verbose = strategy.filter_callbacks(callbacks, verbose)
        iterator = EpochIterator(batches=strategy.distribute_batches(batches),
                                 steps_per_epoch=steps_per_epoch,
                                 steps_per_execution=self.steps_per_execution)
        val_iterator = None
        if validation_data is not None:
            val_iterator = EpochIterator(batches=self._validation_batches(
                validation_data, validation_batch_size or batch_size, validation_steps))
        verbose = 1 if verbose == "auto" else int(verbose)
        callbacks = callbacks_module.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0, model=self, verbose=verbose,
            epochs=epochs, steps=iterator.num_batches)
        train_function = self.make_train_function()
        single = self.steps_per_execution == 1
        self.stop_training = False
        self._initial_epoch = None
        callbacks.on_train_begin()
        # as Keras 3: a callback (BackupAndRestore) may move the start to where a run stopped
        initial_epoch = self._initial_epoch if self._initial_epoch is not None else initial_epoch
        self._initial_epoch = None
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            steps_done = 0
            for begin, end, group in iterator:
                callbacks.on_train_batch_begin(begin)
                logs = _to_floats(train_function(group[0] if single else group))
                callbacks.on_train_batch_end(end, logs)
                steps_done += len(group)
                if self.stop_training:
                    break
            if steps_done == 0:
                if not iterator.ran_out:
                    warnings.warn(_OUT_OF_DATA, stacklevel=2)
                break
            epoch_logs = dict(logs)
            if val_iterator is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._evaluate_batches(val_iterator, callbacks=callbacks)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            logs = epoch_logs
            if self.stop_training:
                break
        finalize = getattr(self.optimizer, "finalize_variable_values", None)
        if finalize is not None and epochs > 0:
            finalize(self.trainable_variables)   # as Keras 3: use_ema ends on the averages
        callbacks.on_train_end(logs)
        return callbacks.history

    def _validation_batches(self, validation_data, batch_size, steps):
        steps = capped_steps(steps)
        if isinstance(validation_data, data_adapter.PyDataset):
            return data_adapter.PyDatasetBatches(validation_data, steps)
        if data_adapter.is_iterable_data(validation_data):
            return data_adapter.IterableBatches(validation_data, steps)
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be (x_val, y_val), (x_val, y_val, "
                             "sample_weight) or a tl.data.Dataset")
        vx, vy = validation_data[0], validation_data[1]
        vw = validation_data[2] if len(validation_data) == 3 else None
        return data_adapter.ArrayBatches(vx, vy, vw, batch_size or 32, False, None, steps)

    def _evaluate_batches(self, iterator, callbacks):
        self._symbolic_build(iterator.first_batch())
        strategy = self._distribute_strategy
        strategy.sync_variables(self.weights)
        iterator = EpochIterator(batches=strategy.distribute_batches(iterator.batches),
                                 steps_per_execution=self.steps_per_execution)
        test_function = self.make_test_function()
        iterator.reset()
        self.reset_metrics()
        if callbacks is not None:
            callbacks.on_test_begin()
        logs = {}
        for begin, end, group in iterator:
            if callbacks is not None:
                callbacks.on_test_batch_begin(begin)
            for batch in group:
                logs = _to_floats(test_function(batch))
            if callbacks is not None:
                callbacks.on_test_batch_end(end, logs)
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
        iterator = EpochIterator(x, y, sample_weight, batch_size, steps, False)
        verbose = 1 if verbose == "auto" else int(verbose)
        callbacks, verbose = self._distribute_strategy.filter_callbacks(callbacks, verbose)
        cbs = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                            verbose=verbose, epochs=1, steps=iterator.num_batches)
        logs = self._evaluate_batches(iterator, cbs)
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for `x`, batch by batch, concatenated as numpy arrays."""
        iterator = EpochIterator(x, None, None, batch_size, steps, False)
        if not self.built:
            self._symbolic_build(iterator.first_batch())
        predict_function = self.make_predict_function()
        verbose = 1 if verbose == "auto" else int(verbose)
        callbacks, verbose = self._distribute_strategy.filter_callbacks(callbacks, verbose)
        cbs = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                            verbose=verbose, epochs=1, steps=iterator.num_batches)
        cbs.on_predict_begin()
        outputs = []
        structure = None
        for step, _, (batch,) in iterator:
            cbs.on_predict_batch_begin(step)
            out = predict_function(batch)
            outputs.append([np.asarray(t) for t in flatten(out)])
            structure = out
            cbs.on_predict_batch_end(step, {"outputs": out})
        cbs.on_predict_end()
        if not outputs:
            raise ValueError("predict got no data")
        merged = [np.concatenate(parts) for parts in zip(*outputs)]
        return merged[0] if is_tensor(structure) else pack_as(structure, merged)

    def _one_batch(self, x, y, sample_weight, class_weight=None):
        batches = data_adapter.ArrayBatches(x, y, sample_weight, len(flatten(
            data_adapter._to_numpy(x))[0]), False, class_weight)
        batch = batches.first_batch()
        self._symbolic_build(batch)
        self.reset_metrics()
        return batch

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One train step on one batch; returns the metrics (after resetting them first)."""
        self._assert_compiled()
        batch = self._one_batch(x, y, sample_weight, class_weight)
        fn = self.make_train_function()
        logs = _to_floats(fn([batch] if self.steps_per_execution > 1 else batch))
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One test step on one batch; returns the metrics of that batch."""
        self._assert_compiled()
        batch = self._one_batch(x, y, sample_weight)
        logs = _to_floats(self.make_test_function()(batch))
        return logs if return_dict else _as_list(logs, self._flat_metric_names())

    def predict_on_batch(self, x):
        """The model's outputs for one batch, as numpy."""
        batch = (data_adapter._to_numpy(x),)
        if not self.built:
            self._symbolic_build(batch)
        out = self.make_predict_function()(batch)
        return pack_as(out, [np.asarray(t) for t in flatten(out)])

    # -- tf.keras 2 names, kept so that its programs run (each warns once and calls Keras 3's)
    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """tf.keras 2's `self.compiled_loss(...)` in a custom `train_step`: the compiled loss
        plus the model's `losses` (`compute_loss`; `regularization_losses` are those already),
        and the "loss" tracker updated with it, as tf.keras 2 did."""
        _deprecated("model.compiled_loss()", "model.compute_loss(x, y, y_pred, sample_weight)")
        loss = self.compute_loss(None, y, y_pred, sample_weight)
        if self._loss_tracker is not None:
            self._track_loss(loss, y_pred)
        return loss

    @property
    def compiled_metrics(self):
        """tf.keras 2's `self.compiled_metrics`: `update_state(y, y_pred, sample_weight)` updates
        the metrics given to `compile`; `.metrics` lists them."""
        return _CompiledMetrics(self)

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      validation_freq=1, class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0):
        """tf.keras 2's `fit_generator`: `fit` with a generator, `Sequence` or Dataset."""
        _deprecated("Model.fit_generator", "Model.fit, which supports generators")
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                        validation_steps=validation_steps, validation_freq=validation_freq,
                        class_weight=class_weight, shuffle=shuffle, initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        """tf.keras 2's `evaluate_generator`: `evaluate` with a generator or `Sequence`."""
        _deprecated("Model.evaluate_generator", "Model.evaluate, which supports generators")
        return self.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        """tf.keras 2's `predict_generator`: `predict` with a generator or `Sequence`."""
        _deprecated("Model.predict_generator", "Model.predict, which supports generators")
        return self.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    # -- config
    def get_compile_config(self):
        """The arguments `compile` was given, as JSON (None before `compile`)."""
        if not self.compiled:
            return None
        return compile_config(self)

    def compile_from_config(self, config):
        """Compiles the model as `get_compile_config()`'s dict describes (Keras 3)."""
        compile_from_config(self, config)


def _check_remat(model, remat):
    """The `remat` compile option checked: False, True or a number of layers per segment."""
    if remat is False or remat is None or remat == 0:
        return False
    if not (remat is True or isinstance(remat, int) and remat > 0):
        raise ValueError(f"remat must be True, False or a positive number of layers per "
                         f"segment, got {remat!r}")
    if not hasattr(model, "_layers") or not _is_plain_sequential(model):
        raise ValueError("compile(remat=...) recomputes segments of a Sequential model's layers; "
                         f"{type(model).__name__} is no Sequential. Wrap the parts of its call "
                         "to recompute in tl.recompute_grad instead.")
    if isinstance(model.optimizer, LossScaleOptimizer) or model.optimizer.global_clipnorm:
        raise ValueError("compile(remat=...) applies each segment's gradients as soon as they "
                         "are final, which a loss-scaling optimizer and global_clipnorm (both "
                         "need every gradient first) cannot do")
    return remat


def _is_plain_sequential(model):
    """True for a Sequential model whose `call` is Sequential's own (its layers in a chain);
    told by `_obj_type`, as the savers do, since models sit above the trainer."""
    owner = next((c for c in type(model).__mro__ if "call" in vars(c)), None)
    return owner is not None and "_obj_type" in vars(owner) and \
        owner._obj_type(model) == "Sequential"


def _remat_segments(layers, remat):
    """The layers cut into segments: about sqrt(n) of them (remat=True), or `remat` layers
    each; a Variable shared by two segments is refused (it would be updated twice)."""
    layers = list(layers)
    size = max(1, round(len(layers) ** 0.5)) if remat is True else int(remat)
    if remat is True:
        size = -(-len(layers) // size)
    segments = [layers[i:i + size] for i in range(0, len(layers), size)] or [[]]
    owner = {}
    for i, segment in enumerate(segments):
        for v in _segment_variables(segment):
            if owner.setdefault(id(v), i) != i:
                raise ValueError(f"compile(remat=...): Variable {v.name} belongs to layers of two "
                                 "segments; share no layer across segments")
    return segments


def _segment_variables(segment):
    seen, out = set(), []
    for layer in segment:
        for v in layer.trainable_variables:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def _run_segment(segment, h):
    for layer in segment:
        h = layer(h, training=True)
    return h


def _to_floats(logs):
    # sorted by key: Keras 3's logs come out of a tf.function, whose dict outputs are sorted;
    # a nested dict (a step returning {"compile_metrics": {...}}) is flattened, as Keras does
    out = {}
    for key in sorted(logs):
        value = logs[key]
        if isinstance(value, dict):
            out.update(_to_floats(value))
        else:
            out[key] = float(value)
    return out


def _as_list(logs, names):
    values = [logs[n] for n in names if n in logs]
    values += [logs[k] for k in sorted(logs) if k not in names]
    return values[0] if len(values) == 1 else values


def _deprecated(old, new):
    warnings.warn(f"`{old}` is deprecated (tf.keras 2) and will be removed in a future version. "
                  f"Please use `{new}`.", DeprecationWarning, stacklevel=3)


class _CompiledMetrics:
    """tf.keras 2's `model.compiled_metrics`: the metrics passed to `compile`."""

    def __init__(self, model):
        self._model = model

    @property
    def metrics(self):
        compiled = self._model._compile_metrics  # noqa: SLF001 -- the trainer's own state
        return [] if compiled is None else list(compiled.metrics)

    def update_state(self, y_true, y_pred, sample_weight=None):
        _deprecated("model.compiled_metrics.update_state()",
                    "for metric in self.metrics: metric.update_state(y, y_pred)")
        compiled = self._model._compile_metrics  # noqa: SLF001
        if compiled is not None:
            compiled.update_state(y_true, y_pred, sample_weight)

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()
