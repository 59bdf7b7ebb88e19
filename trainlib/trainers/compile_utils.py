"""`CompileLoss` and `CompileMetrics`: what `compile(loss=..., metrics=...)` becomes, as Keras 3.

Owns: matching losses, loss weights, targets and metrics to a model's outputs
(one output; several outputs given as a list in output order, or a dict keyed
by the output names; a loss for some outputs only), the per-output loss
trackers ("<output>_loss") of a model with several losses, and the log keys of
the compiled metrics (prefixed with the output's name when there are several,
a repeated name numbered "_1", "_2"..., a weighted metric named "weighted_..."), and the
compile config (`compile_config` / `compile_from_config`: compile's arguments as JSON, written
in .keras files and serialized models, resolved back only through custom objects, the
registry and trainlib's tables of losses and metrics).
Invariants: both resolve their structure once, from the specs of the first
batch (`build`), before any step is traced, so all their Variables exist when
the train step is traced; afterwards `__call__`/`update_state` only add ops.
"""
from ..graph.nest import flatten
from ..graph.dtypes import as_dtype
from ..graph.tensor import TensorSpec
from .. import losses as losses_module, metrics as metrics_module, optim
from ..graph.serialization import LoadError
from ..saving.object_registration import _custom, get_registered_name  # noqa: F401
from ..saving.serialization_lib import serialize_keras_object

__all__ = ["CompileLoss", "CompileMetrics", "as_loss", "compile_config", "compile_from_config"]


def as_loss(loss):
    """A `Loss` (or None) from a name, a Loss, or a per-sample function."""
    fn = losses_module.get(loss)
    if fn is None or isinstance(fn, losses_module.Loss):
        return fn
    return losses_module.LossFunctionWrapper(fn)


def _per_output(value, names, argument, allow_single=True):
    """`value` as one entry per output: a dict by output name, a list by position, or the same
    entry for every output. Raises ValueError naming `argument` on a mismatch."""
    n = len(names)
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"`{argument}` is a dict with keys {sorted(value)}; each key must name "
                             f"one of the model's outputs {names} (unknown: {unknown})")
        return [value.get(name) for name in names]
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"`{argument}` is a list of {len(value)} entries for a model with "
                             f"{n} outputs {names}: give one entry per output (None for none), "
                             "or a dict keyed by output name")
        return list(value)
    if not allow_single and value is not None:
        raise ValueError(f"`{argument}` must be a list or dict for a model with {n} outputs")
    return [value] * n


def targets_per_output(y, names, argument="y"):
    """The targets (or sample weights) of each output: a dict keyed by output name, a list or
    tuple in output order, or one array for a single output."""
    if len(names) == 1:
        if isinstance(y, dict) and len(y) == 1:
            return list(y.values())
        return [y]
    if y is None:
        return [None] * len(names)
    if isinstance(y, dict):
        missing = [k for k in y if k not in names]
        if missing:
            raise ValueError(f"`{argument}` is a dict with keys {sorted(y)}, which must name the "
                             f"model's outputs {names}")
        return [y.get(name) for name in names]
    flat = flatten(y)
    if len(flat) != len(names):
        if len(flat) == 1:
            return flat * len(names)
        raise ValueError(f"The model has {len(names)} outputs {names} but `{argument}` has "
                         f"{len(flat)} entries")
    return flat


def split_per_output(y_true, sample_weight, count, names):
    """(targets, sample weights), one of each per output of `count`: as given for one output,
    else by `targets_per_output` (one sample weight array serves every output)."""
    if count == 1:
        return [y_true], [sample_weight]
    targets = targets_per_output(y_true, names)
    weights = targets_per_output(sample_weight, names, "sample_weight") \
        if isinstance(sample_weight, (list, tuple, dict)) else [sample_weight] * count
    return targets, weights


def output_names_for(model, y_pred):
    """The names of the outputs in `y_pred` (flattened order), as Keras names them: a
    functional model's output layers (its output dict's keys), else "output_0", "output_1"..."""
    outs = flatten(y_pred)
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    names = model.output_names if hasattr(model, "output_names") else None
    if names is not None and len(names) == len(outs):
        return list(names)
    return [None] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))]


class CompileLoss:
    """The loss `compile` was given, applied to a model's outputs.

    Args:
        loss: a loss (name, Loss, function) for every output, a list in output order,
            or a dict keyed by output name (outputs without a loss contribute nothing).
        loss_weights: a number, a list in output order, or a dict keyed by output name.

    Example:
        >>> compile_loss = CompileLoss({"score": "mse"}, {"score": 0.5})
        >>> compile_loss.build(["score", "label"])
        >>> total = compile_loss(y_true, y_pred)      # 0.5 * mse(score)
    """

    def __init__(self, loss, loss_weights=None):
        self.loss_weights = loss_weights
        # names resolve now, so an unknown one fails at compile, as in Keras
        if isinstance(loss, dict):
            self.loss = {k: as_loss(v) for k, v in loss.items()}
        elif isinstance(loss, (list, tuple)):
            self.loss = [as_loss(v) for v in loss]
        else:
            self.loss = as_loss(loss)
        self.built = False
        self.losses = None          # one Loss (or None) per output, after build
        self.weights = None         # one weight (or None) per output, after build
        self.metrics = []           # "<output>_loss" trackers when several losses apply
        self._tracker_of = {}       # output index -> its tracker

    def build(self, output_names):
        """Matches the losses and weights to the outputs named `output_names`."""
        names = list(output_names)
        if len(names) == 1:
            loss = self.loss
            if isinstance(loss, dict):
                loss = loss.get(names[0]) if names[0] in loss else \
                    (next(iter(loss.values())) if len(loss) == 1 else None)
            elif isinstance(loss, (list, tuple)):
                if len(loss) != 1:
                    raise ValueError(f"`loss` is a list of {len(loss)} for a model with one output")
                loss = loss[0]
            self.losses = [loss]
            weight = self.loss_weights
            if isinstance(weight, dict):
                weight = next(iter(weight.values()), None)
            elif isinstance(weight, (list, tuple)):
                weight = weight[0] if weight else None
            self.weights = [weight]
        else:
            self.losses = _per_output(self.loss, names, "loss")
            self.weights = _per_output(self.loss_weights, names, "loss_weights")
        active = [i for i, fn in enumerate(self.losses) if fn is not None]
        if len(active) > 1:
            self.metrics = [metrics_module.Mean(name=f"{names[i]}_loss") for i in active]
            self._tracker_of = dict(zip(active, self.metrics))
        self.output_names = names
        self.built = True

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The weighted sum of the outputs' losses (None when no output has a loss).

        With several losses each output's unweighted loss also goes to its
        "<output>_loss" tracker, one plain value per batch: Keras 3 weights it by the
        static batch size, which its dataset-fed steps never know, so every batch counts 1.
        """
        if not self.built:
            self.build(output_names_for(None, y_pred))
        outs = flatten(y_pred)
        if len(outs) != len(self.losses):
            raise ValueError(f"The model has {len(outs)} outputs but the compiled loss was built "
                             f"for {len(self.losses)}")
        ys, sws = split_per_output(y_true, sample_weight, len(outs), self.output_names)
        total = None
        for i, (fn, yt, yp, weight, sw) in enumerate(zip(self.losses, ys, outs, self.weights, sws)):
            if fn is None:
                continue
            if yt is None:
                raise ValueError(f"The output {self.output_names[i]!r} has a loss but no target "
                                 "was given for it")
            value = fn(yt, yp, sw)
            tracker = self._tracker_of.get(i)
            if tracker is not None:
                tracker.update_state(value)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


class CompileMetrics(metrics_module.Metric):
    """The metrics `compile` was given, as ONE metric named "compile_metrics" (as Keras 3).

    Its `result()` is a dict {log key: value}; `metrics` lists the metrics it holds.

    Args:
        metrics: a list of metrics (names, Metrics, functions) for a one-output model; for
            several outputs a list with one entry (or list) per output, or a dict keyed
            by output name.
        weighted_metrics: as `metrics`; these receive the sample weights.
    """

    def __init__(self, metrics, weighted_metrics=None, name="compile_metrics"):
        super().__init__(name=name)
        self._metric_ids, self._weighted_metric_ids = metrics, weighted_metrics
        self.built = False
        self.metrics = []
        self._entries = []          # (output index, metric, weighted, log key)

    def build(self, y_true, y_pred, output_names):
        """Resolves the metrics against the first batch's specs (as Keras 3's first call)."""
        outs = flatten(y_pred)
        names = list(output_names)
        n = len(outs)
        ys = [None] * n if y_true is None else \
            ([y_true] if n == 1 else targets_per_output(y_true, names))
        prefixes = [None] if n == 1 else names

        def spec_of(a):
            if a is None:
                return None
            return TensorSpec((None,) + tuple(a.shape[1:]), as_dtype(a.dtype))

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
                    metric = metrics_module.get(identifier, spec_of(ys[i]), outs[i])
                    if ys[i] is not None:
                        metric.build_state(spec_of(ys[i]).shape, outs[i].shape)
                    entries.append((i, metric, weighted))
        keys, counters = [], {}
        for i, m, weighted in entries:
            prefix = f"{prefixes[i]}_" if prefixes[i] else ""
            key = prefix + m.name
            if key in counters and weighted:
                key = f"{prefix}weighted_{m.name}"
            if key in counters:
                counters[key] += 1
                key = f"{key}_{counters[key] - 1}"
            else:
                counters[key] = 1
            keys.append(key)
        self._entries = [(i, m, w, key) for (i, m, w), key in zip(entries, keys)]
        self.metrics = [m for _, m, _ in entries]
        self.output_names = names
        self.built = True

    @property
    def keys(self):
        """The log keys of the metrics, in order."""
        return [key for *_, key in self._entries]

    @property
    def variables(self):
        """The state Variables of every metric it holds."""
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Updates every metric with its output's targets and predictions."""
        outs = flatten(y_pred)
        ys, weights = split_per_output(y_true, sample_weight, len(outs), self.output_names)
        for i, m, weighted, _ in self._entries:
            m.update_state(ys[i], outs[i], weights[i] if weighted else None)

    def result(self):
        """{log key: result} of the metrics."""
        return {key: m.result() for _, m, _, key in self._entries}

    def reset_state(self):
        """Resets every metric it holds."""
        for m in self.metrics:
            m.reset_state()

    def get_config(self):
        """{"name"}: what it holds comes from compile, not from a config."""
        return {"name": self.name}


# ------------------------------------------------------------------ compile config
# what `get_compile_config` writes and `compile_from_config` reads (Keras 3's `compile_config`
# of .keras files and serialized models)

def _serialize_named(obj, kind):
    """A loss or metric argument of compile as Keras 3 writes it: a name (kept as given), a
    list, a dict per output, `serialize_keras_object` of an instance, and for a function
    `{"module": "builtins", "class_name": "function", "config": name, ...}`."""
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (list, tuple)):
        return [_serialize_named(o, kind) for o in obj]
    if isinstance(obj, dict):  # per output name (multi-output compile)
        return {str(k): _serialize_named(v, kind) for k, v in obj.items()}
    if isinstance(obj, type):
        obj = obj()
    wrapped = getattr(obj, "fn", None) if type(obj) is losses_module.LossFunctionWrapper else \
        getattr(obj, "_fn", None) if type(obj) is metrics_module.MeanMetricWrapper else None
    if wrapped is not None:
        obj = wrapped
    if hasattr(obj, "get_config") or callable(obj) and hasattr(obj, "__name__"):
        return serialize_keras_object(obj)
    raise ValueError(f"Cannot save the compiled {kind} {obj!r}: it is neither a name, an instance "
                     "with get_config nor a named function")


def compile_config(model):
    """The arguments `compile` was called with, as Keras 3 writes them (None for an
    uncompiled model)."""
    if not getattr(model, "compiled", False):
        return None
    return {"optimizer": serialize_keras_object(model.optimizer),
            "loss": _serialize_named(model.loss, "loss"),
            "loss_weights": model._loss_weights,
            "metrics": _serialize_named(model._metric_ids, "metric"),
            "weighted_metrics": _serialize_named(model._weighted_metric_ids, "metric"),
            "run_eagerly": model.run_eagerly, "steps_per_execution": model.steps_per_execution,
            "jit_compile": model.jit_compile}


def _resolve(value, functions, classes, custom_objects, kind):
    """The object a `_serialize_named` value describes (custom_objects, registry, trainlib)."""
    hint = (": pass it in custom_objects or register it with "
            "tl.saving.register_keras_serializable (or load with compile=False)")
    if value is None or isinstance(value, str):
        return value  # compile resolves names itself, exactly as when it was first called
    if isinstance(value, list):
        return [_resolve(v, functions, classes, custom_objects, kind) for v in value]
    if isinstance(value, dict) and isinstance(value.get("per_output"), dict):
        return {k: _resolve(v, functions, classes, custom_objects, kind)
                for k, v in value["per_output"].items()}
    if isinstance(value, dict) and (value.get("class_name") == "function" or
                                    set(value) == {"function"}):
        name = value["config"] if "config" in value else value["function"]
        fn = _custom(name, custom_objects) or (functions.get(name) if isinstance(name, str)
                                                else None)
        if fn is None or isinstance(fn, type) or not callable(fn):
            raise LoadError(f"unknown {kind} function {name!r}{hint}")
        return fn
    if isinstance(value, dict) and isinstance(value.get("class_name"), str):
        name = value["class_name"]
        cls = _custom(name, custom_objects) or classes.get(name)
        if not isinstance(cls, type):
            raise LoadError(f"unknown {kind} class {name!r}{hint}")
        config = value.get("config")
        if config is None:
            return cls()
        if not isinstance(config, dict):
            raise LoadError(f"the config of {kind} {name!r} is not a JSON object")
        return cls.from_config(config)
    if isinstance(value, dict):   # Keras 3: one entry per output name
        return {k: _resolve(v, functions, classes, custom_objects, kind) for k, v in value.items()}
    raise LoadError(f"malformed {kind} entry {value!r}")


def compile_from_config(model, config, custom_objects=None):
    """Compiles `model` as `compile_config` described (classes and functions resolved through
    `custom_objects`, the custom object scopes and the registry).

    Raises:
        LoadError: for a malformed entry or an unknown class or function.
    """
    if not isinstance(config, dict):
        raise LoadError("compile_config is not a dict")
    opt = config.get("optimizer")
    if not isinstance(opt, dict) or not isinstance(opt.get("class_name"), str) or \
            not isinstance(opt.get("config"), dict):
        raise LoadError(f"malformed optimizer entry {opt!r}")
    cls = _custom(opt.get("registered_name") or opt["class_name"], custom_objects) or \
        _custom(opt["class_name"], custom_objects)
    optimizer = cls.from_config(opt["config"]) if isinstance(cls, type) else \
        optim.get({"class_name": opt["class_name"], "config": opt["config"]})
    loss = _resolve(config.get("loss"), losses_module._FUNCTIONS, losses_module._CLASSES,
                    custom_objects, "loss")
    metrics = _resolve(config.get("metrics") or [], _METRIC_FUNCTIONS, metrics_module._CLASSES,
                       custom_objects, "metric")
    weighted = _resolve(config.get("weighted_metrics") or [], _METRIC_FUNCTIONS,
                        metrics_module._CLASSES, custom_objects, "metric")
    model.compile(optimizer=optimizer, loss=loss, metrics=metrics or None,
                  loss_weights=config.get("loss_weights"), weighted_metrics=weighted or None,
                  run_eagerly=bool(config.get("run_eagerly", False)),
                  steps_per_execution=config.get("steps_per_execution", 1),
                  jit_compile=bool(config.get("jit_compile", False)))


# per-sample functions a compile call may name as metrics (losses included, as Keras allows)
_METRIC_FUNCTIONS = {**losses_module._FUNCTIONS,
                     **{name: getattr(metrics_module, name) for name in (
                         "accuracy", "binary_accuracy", "categorical_accuracy",
                         "sparse_categorical_accuracy", "top_k_categorical_accuracy",
                         "sparse_top_k_categorical_accuracy") if hasattr(metrics_module, name)}}
