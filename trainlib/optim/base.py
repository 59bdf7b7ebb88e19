"""`Optimizer`: the base class every optimizer builds on (Keras 3's design).

Owns: the learning rate (a float32 Variable, or a schedule evaluated at
`iterations`, so changing it never retraces a step), the `iterations`
counter, slot creation in `build(var_list)`, gradient clipping (`clipnorm`,
`global_clipnorm`, `clipvalue`), decoupled weight decay, and the order of one
update (`apply(grads, variables)`, as Keras 3, or `apply_gradients(pairs)`):
aggregate over replicas through the current distribution strategy (inside its
`run` only), clip, decay weights, `update_step` per variable, apply the variables'
constraints, count; the moving averages of the weights (`use_ema`, as Keras 3:
an "average" slot per variable, `finalize_variable_values` at the end of `fit`); and
`scale_loss`, the train step's hook for loss scaling (`loss_scale_factor`).
Invariants: subclasses implement only `build` and `update_step`; all
Variables (slots, counters) exist after `build`, which runs eagerly before
(or, at the latest, on the first trace of) a train step.

Flat parameters (issue 20): an optimizer whose `update_step` works element by
element (`elementwise_update = True`: SGD, Adam, AdamW, RMSprop, Adagrad, and any
subclass that says so) lays the variables of each dtype, and each slot of theirs,
out in one contiguous buffer (`flat.py`) at its first update, builds itself a
second time over the buffers' flat Variables, and from then on runs `update_step`
once per buffer on the concatenated gradients: the same elementwise math on the
same numbers, so the result is bit-equal to updating variable by variable, in a
handful of array calls whatever the number of variables.
"""
from .. import initializers
from ..distribute.strategy import current_strategy
from ..graph.autodiff import GradientTape
from ..graph.context import eager_scope
from ..graph.dtypes import as_dtype, float32, int64
from ..graph.ops.array import constant, ones_like, zeros_like
from ..graph.ops.control_flow import cond
from ..graph.ops.math import (cast, clip_by_value, equal, floordiv, floormod, maximum, minimum,
                              not_equal, reduce_sum, sqrt, square, where)
from ..graph.variables import Variable, children_changed
from ..naming import auto_name

from . import flat as _flat, schedules
from .schedules import LearningRateSchedule
from ..graph.properties import read_only

__all__ = ["Optimizer", "serialize"]


def _warn_lr(what):
    import warnings  # noqa: PLC0415 -- only tf.keras 2 code reaches this
    warnings.warn(f"{what} is deprecated (tf.keras 2); use `learning_rate`.", DeprecationWarning,
                  stacklevel=3)


class Optimizer:
    """Base class: applies gradients to Variables.

    Subclasses implement `build(var_list)` (slots from `add_variable_from_reference`,
    after `super().build(var_list)`) and `update_step(gradient, variable, learning_rate)`,
    as in Keras 3. A subclass whose `update_step` treats every element on its own (no
    shapes, norms or state other than its slots) sets `elementwise_update = True`, and is
    then updated over flat buffers (see `fused`).

    Args:
        learning_rate: a float or a `tl.optim.schedules.LearningRateSchedule`.
        weight_decay: decoupled weight decay: before each update,
            `var -= var * weight_decay * learning_rate`.
        clipnorm: clip each gradient to this L2 norm.
        clipvalue: clip each gradient elementwise to [-clipvalue, clipvalue].
        global_clipnorm: clip all gradients together to this global L2 norm.
        use_ema: keep an exponential moving average of every trained variable (slots
            named "average", first among the slots), updated after each step.
        ema_momentum: the average's momentum (default 0.99; the first step copies).
        ema_overwrite_frequency: every this many steps, the variables take their averages.
        loss_scale_factor: a fixed loss scale: the train step multiplies the loss by it
            (`scale_loss`) and the update divides the gradients by it.
        gradient_accumulation_steps: update every k-th call with the mean of k gradients.
        name: the optimizer's name.
        fused: update the variables as flat buffers (one per dtype) rather than one by
            one: None (default) when the class's `update_step` is elementwise
            (`elementwise_update`), True to insist (ValueError otherwise), False never.
            Results are bit-equal either way.

    Example:
        >>> opt = tl.optim.SGD(learning_rate=0.1)
        >>> v = tl.Variable(1.0)
        >>> opt.apply_gradients([(tl.constant(2.0), v)])
        >>> float(v)
        0.8
    """

    #: True when `update_step` is elementwise, so it may run once over flat buffers
    elementwise_update = False

    def __init__(self, learning_rate=0.001, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, fused=None, **kwargs):
        if "lr" in kwargs:  # tf.keras 2's name of learning_rate
            _warn_lr("the `lr` argument")
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {sorted(kwargs)}")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of clipnorm, clipvalue and global_clipnorm can be set.")
        if gradient_accumulation_steps:
            if not (isinstance(gradient_accumulation_steps, int) and
                    gradient_accumulation_steps >= 2):
                raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. "
                                 f"Received: gradient_accumulation_steps="
                                 f"{gradient_accumulation_steps!r}")
        self.gradient_accumulation_steps = gradient_accumulation_steps or None
        if use_ema:  # checked as Keras 3 checks them, only when EMA is on
            if not 0 <= ema_momentum <= 1:
                raise ValueError("`ema_momentum` must be in the range [0, 1]. "
                                 f"Received: ema_momentum={ema_momentum}")
            if ema_overwrite_frequency and (not isinstance(ema_overwrite_frequency, int) or
                                            ema_overwrite_frequency < 1):
                raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. "
                                 f"Received: ema_overwrite_frequency={ema_overwrite_frequency}")
        self.use_ema = use_ema
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        if fused and not self.elementwise_update:
            raise ValueError(f"{type(self).__name__}(fused=True): its update_step is not marked "
                             "elementwise (set the class attribute elementwise_update = True "
                             "when update_step treats every element on its own)")
        self.fused = fused
        self.ema_momentum = ema_momentum
        # numbered per class as Keras 3 names optimizers: adam, adam_1, ...
        self.name = name or auto_name(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        with eager_scope():
            self._iterations = Variable(constant(0, dtype=int64), trainable=False,
                                        name="iteration")
            if isinstance(learning_rate, LearningRateSchedule):
                self._schedule = learning_rate
                self._learning_rate = None
            elif callable(learning_rate):
                raise TypeError("learning_rate must be a number or a LearningRateSchedule")
            else:
                self._schedule = None
                self._learning_rate = Variable(constant(float(learning_rate)), trainable=False,
                                               name="learning_rate")
        self.built = False
        self._variables = []
        self._index = {}
        self._slots_by_reference = {}  # (id(variable), slot name) -> the slot
        self._step_prepared = False    # `_prepare_update_steps` ran in this step already
        self._flat_groups = None       # after the first update: [(FlatGroup, index)] per dtype
        self._flat_state = {}          # the attributes a build over the flat Variables set
        self._flat_building = None     # while that build runs: id(flat Variable) -> FlatGroup

    @property
    def iterations(self):
        """The number of updates so far: the `iteration` Variable, or with
        `gradient_accumulation_steps=k` that counter (of calls) floor-divided by k, as Keras 3."""
        if self.gradient_accumulation_steps:
            return floordiv(self._iterations.read_value(), self.gradient_accumulation_steps)
        return self._iterations

    _iteration_counter = read_only("_iterations", "The Variable that counts calls of `apply` "
                                                  "(what checkpoints save).")

    # -- learning rate
    @property
    def learning_rate(self):
        """The current learning rate (a scalar tensor)."""
        if self._schedule is not None:
            # as Keras 3: the schedule sees the calls counted, accumulating or not
            return self._schedule(self._iterations)
        return self._learning_rate.read_value()

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, LearningRateSchedule):
            self._schedule = value
            return
        if self._schedule is not None:
            raise TypeError("This optimizer was created with a learning-rate schedule; its "
                            "learning rate cannot be set to a number.")
        self._learning_rate.assign(float(value))

    @property
    def lr(self):
        """tf.keras 2's name of `learning_rate` (deprecated): the rate's Variable, as tf.keras 2
        gave it (so `K.set_value(optimizer.lr, v)` works), or a schedule's current value."""
        _warn_lr("`optimizer.lr`")
        return self._learning_rate if self._schedule is None else self.learning_rate

    @lr.setter
    def lr(self, value):
        _warn_lr("`optimizer.lr`")
        self.learning_rate = value

    # -- variables
    def build(self, var_list):
        """Creates the slots for `var_list` (subclasses call super().build first)."""
        self._trainable_variables = list(var_list)
        self._index = {id(v): i for i, v in enumerate(self._trainable_variables)}
        # as Keras: the moving averages (use_ema), then the accumulators come first among
        # the slots, each in the order of var_list
        self._model_variables_moving_average = [
            self.add_variable_from_reference(v, "average") for v in var_list
        ] if self.use_ema else []
        self._accumulated_gradients = [
            self.add_variable_from_reference(v, "gradient_accumulator") for v in var_list
        ] if self.gradient_accumulation_steps else []
        self.built = True

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A slot Variable shaped and typed like `reference_variable`."""
        if self._flat_building is not None:
            return self._flat_slot(reference_variable, name)
        init = initializers.get(initializer)
        shape, dtype = tuple(reference_variable.shape), reference_variable.dtype
        # named as Keras 3 names it: after the variable's path ("sequential_dense_kernel_momentum")
        base = (getattr(reference_variable, "path", None) or
                reference_variable.name.split(":")[0]).replace("/", "_")
        v = Variable(lambda: init(shape, dtype=dtype), trainable=False, name=f"{base}_{name}",
                     dtype=dtype)
        self._variables.append(v)
        self._slots_by_reference[(id(reference_variable), name)] = v
        children_changed(self)   # a restored checkpoint may hold this slot's value
        return v

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """Slots of one or more names for every variable, created interleaved per variable
        (as Keras 3 orders them: a_0, b_0, a_1, b_1, ...).

        Args:
            trainable_variables: the reference Variables.
            name: a slot name, or a list of them.
            initializer: one initializer for all names, or a list (one per name).

        Returns:
            The list of slots for a single name; a tuple of lists for a list of names.
        """
        names = [name] if isinstance(name, str) else list(name)
        inits = initializer if isinstance(initializer, (list, tuple)) else [initializer] * len(names)
        if len(inits) != len(names):
            raise ValueError(f"add_optimizer_variables got {len(names)} names and {len(inits)} "
                             "initializers; pass one initializer, or one per name")
        slots = tuple([] for _ in names)
        for v in trainable_variables:
            for out, slot_name, init in zip(slots, names, inits):
                out.append(self.add_variable_from_reference(v, slot_name, init))
        return slots[0] if isinstance(name, str) else slots

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="none",
                     layout=None, name=None):
        """An optimizer Variable of its own (not shaped after a model variable), tracked
        in `variables` in creation order, as Keras 3's `add_variable`.

        Args:
            shape: its shape. initializer: an initializer or its name.
            dtype: default float32. name: its name.
        """
        del aggregation, layout   # one process, no sharding: accepted for Keras's signature
        init = initializers.get(initializer)
        dtype = as_dtype(dtype) if dtype is not None else float32
        shape = tuple(shape)
        with eager_scope():
            v = Variable(lambda: init(shape, dtype=dtype), trainable=False, name=name, dtype=dtype)
        self._variables.append(v)
        children_changed(self)
        return v

    def _attribute_variable(self, initial_value, dtype, name):
        """A Variable Keras 3 creates as a plain attribute (`backend.Variable`, not
        `add_variable`): tracked in `variables` as Keras's attribute tracking does, except
        while a LossScaleOptimizer builds this one (Keras builds it under
        `no_automatic_dependency_tracking`, so its files hold no such Variable)."""
        with eager_scope():
            v = Variable(constant(initial_value, dtype=dtype), trainable=False, name=name)
        if getattr(self, "_attribute_tracking", True):
            self._variables.append(v)
            children_changed(self)
        return v

    # -- flat parameters
    def _flat_slot(self, flat_variable, name):
        """During the build over flat Variables: the slots `name` of the group's members,
        gathered into one buffer (the flat slot)."""
        group = self._flat_building.get(id(flat_variable))
        if group is None:
            raise _NotFlat(f"a slot of {flat_variable.name}, which is no flat parameter group")
        slots = [self._slots_by_reference.get((id(v), name)) for v in group.members]
        if any(s is None for s in slots):
            raise _NotFlat(f"slot {name!r} is missing for some variables")
        return _flat.flat_slot(slots, f"{self.name}_flat_{name}").variable

    def _flatten(self):
        """Lays the variables out as flat groups (one per dtype) and builds a second set of
        state over their flat Variables; leaves the optimizer per-variable if it cannot."""
        self._flat_groups = []
        if self.fused is False or not self.elementwise_update:
            return
        by_dtype = {}
        for v in self._trainable_variables:
            by_dtype.setdefault(v.dtype, []).append(v)
        groups = [g for g in (_flat.group_for(vs, f"{self.name}_flat_{dtype.name}")
                              for dtype, vs in by_dtype.items()) if g is not None]
        if not groups:
            return
        before = dict(self.__dict__)
        self._flat_building = {id(g.variable): g for g in groups}
        try:
            with eager_scope():
                self.build([g.variable for g in groups])
        except _NotFlat:
            self.__dict__.clear()
            self.__dict__.update(before)
            return
        finally:
            self._flat_building = None
        after = dict(self.__dict__)
        self.__dict__.clear()
        self.__dict__.update(before)
        self._flat_state = {k: v for k, v in after.items()
                            if k not in before or before[k] is not v}
        self._flat_state.pop("_flat_building", None)
        self._flat_groups = groups

    def _update_flat(self, group, flat_grad, lr):
        """`update_step` once over `group`'s flat Variable, with the optimizer's flat state
        in place of its per-variable state for the duration."""
        flat_variable = group.variable
        saved = {k: self.__dict__.get(k, _MISSING) for k in self._flat_state}
        self.__dict__.update(self._flat_state)
        try:
            self.update_step(flat_grad, flat_variable,
                             lr if lr.dtype is flat_variable.dtype else cast(lr, flat_variable.dtype))
        finally:
            for k, v in saved.items():
                if v is _MISSING:
                    self.__dict__.pop(k, None)
                else:
                    self.__dict__[k] = v

    def _flat_partition(self, grads, variables):
        """[(group, its members' gradients)] for each flat group all of whose members have a
        gradient here, and the (gradient, variable) pairs left to update one by one."""
        if self._flat_groups is None:
            self._flatten()
        if not self._flat_groups:
            return [], list(zip(grads, variables))
        grad_of = {id(v): g for g, v in zip(grads, variables)}
        whole, covered = [], set()
        for group in self._flat_groups:
            if all(id(v) in grad_of for v in group.members):
                whole.append((group, [grad_of[id(v)] for v in group.members]))
                covered.update(id(v) for v in group.members)
        return whole, [(g, v) for g, v in zip(grads, variables) if id(v) not in covered]

    @property
    def variables(self):
        """iterations, the learning-rate Variable, then the slots."""
        head = [self._iterations] + ([self._learning_rate] if self._learning_rate is not None else [])
        return head + list(self._variables)

    def _var_index(self, variable):
        i = self._index.get(id(variable))
        if i is None:
            raise KeyError(f"Variable {variable.name} was not part of the var_list this optimizer "
                           "was built with. Build a new optimizer for a different set of variables.")
        return i

    # -- applying
    def scale_loss(self, loss):
        """The loss the train step differentiates (Keras 3's hook for loss scaling): times
        `loss_scale_factor` when set (the gradients are divided by it again before the
        update; a LossScaleOptimizer multiplies by its dynamic scale)."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    def apply(self, grads, trainable_variables=None):
        """Applies `grads` to `trainable_variables`: clip, weight decay, update, `iterations += 1`.

        As Keras 3's `Optimizer.apply`: without `trainable_variables`, the variables
        the optimizer was built with. Inside `run` of a distribution strategy the
        gradients are first summed over the replicas (`strategy.aggregate_gradients`).
        Gradients that are None are skipped.

        Args:
            grads: a list of gradients (tensors or None).
            trainable_variables: the Variables, in the same order.

        Raises:
            ValueError: if every gradient is None, or the two lists differ in length.

        Example:
            >>> opt = tl.optim.SGD(0.1)
            >>> v = tl.Variable([1.0, 2.0])
            >>> opt.apply([tl.constant([1.0, 1.0])], [v])
        """
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("apply(grads) without trainable_variables needs a built optimizer; "
                                 "call optimizer.build(variables) first or pass the variables")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"apply got {len(grads)} gradients for {len(trainable_variables)} "
                             "variables; pass one gradient (or None) per variable")
        self._apply(list(zip(grads, trainable_variables)), aggregate=True)

    def apply_gradients(self, grads_and_vars, experimental_aggregate_gradients=True):
        """Applies (gradient, variable) pairs: clip, weight decay, update, `iterations += 1`.

        Pairs whose gradient is None are skipped. Inside `strategy.run` of a
        distribution strategy the gradients are first summed over the replicas
        (one fused all-reduce), as TensorFlow's optimizers do, unless
        `experimental_aggregate_gradients=False`.

        Returns:
            The `iterations` Variable.

        Raises:
            ValueError: if every gradient is None.
        """
        self._apply(list(grads_and_vars), aggregate=experimental_aggregate_gradients)
        return self._iterations

    def _count_step(self):
        """`iterations += 1`: the end of a step whose variables were applied in parts
        (`_apply(..., count=False)`, as `compile(remat=...)` does segment by segment):
        the moving averages of the weights (use_ema), then the count."""
        self._update_moving_averages()
        self._step_prepared = False
        self._iterations.assign_add(constant(1, dtype=int64))

    def _apply(self, pairs, aggregate, count=True):
        pairs_kept = [(g, v) for g, v in pairs if g is not None]
        if not pairs_kept:
            names = [v.name for _, v in pairs]
            raise ValueError(f"No gradients provided for any variable: {names}. Check that the loss "
                             "depends on them and is computed inside the GradientTape.")
        if not self.built:
            self.build([v for _, v in pairs])
        if count:
            self._step_prepared = False
        grads = [g for g, _ in pairs_kept]
        variables = [v for _, v in pairs_kept]
        if aggregate:
            grads = current_strategy().aggregate_gradients(grads)
        for v in variables:
            self._var_index(v)
        if self.loss_scale_factor is not None:   # the train step scaled the loss by it
            grads = [g / self.loss_scale_factor for g in grads]
        if self.gradient_accumulation_steps:
            self._accumulate_or_update(grads, variables)
        else:
            self._update(self._clip_gradients(grads), variables)
        if count:
            self._update_moving_averages()
        # as Keras: each variable's constraint (add_weight(constraint=...)) projects it after
        # the updates (on every call, accumulating or not), in the same graph as the step
        for v in variables:
            constraint = getattr(v, "constraint", None)
            if constraint is not None:
                v.assign(constraint(v))
        if count:
            self._iterations.assign_add(constant(1, dtype=int64))
            self._step_prepared = False

    def _update(self, grads, variables, flat_grads=()):
        """Weight decay and `update_step` for (already clipped) `grads`: over the flat
        buffers where a group's gradients are all here (or joined already, in `flat_grads`:
        [(group, its flat gradient)]), the rest one by one."""
        grads = [g if g.dtype is v.dtype else cast(g, v.dtype) for g, v in zip(grads, variables)]
        lr = self.learning_rate
        whole, singles = self._flat_partition(grads, variables)
        whole = [(group, _flat.flat_gradient(gs)) for group, gs in whole] + list(flat_grads)
        self._apply_weight_decay([v for _, v in singles], lr, whole)
        if not self._step_prepared:   # once per step, also when it is applied in parts
            self._prepare_update_steps()
            self._step_prepared = True
        for group, flat_grad in whole:
            self._update_flat(group, flat_grad, lr)
        for g, v in singles:
            self.update_step(g, v, lr if lr.dtype is v.dtype else cast(lr, v.dtype))

    def _accumulate_or_update(self, grads, variables):
        """Keras 3's gradient accumulation, in the graph: every k-th call updates with the
        mean of the last k gradients (`(g + accumulated) / k`, then clipping, weight decay
        and `update_step`) and resets the accumulators; the other calls only add the
        gradients to them. One `If` in the step's graph chooses."""
        k = self.gradient_accumulation_steps
        grads = [g if g.dtype is v.dtype else cast(g, v.dtype) for g, v in zip(grads, variables)]
        clipping = any(c is not None and c > 0
                       for c in (self.clipnorm, self.clipvalue, self.global_clipnorm))
        # without clipping (which needs each variable's own gradient) a flat group
        # accumulates in its flat buffer: one add per group
        whole, singles = ([], list(zip(grads, variables))) if clipping else \
            self._flat_partition(grads, variables)
        flat_accumulators = self._flat_state.get("_accumulated_gradients", [])
        flat = [(group, _flat.flat_gradient(gs), flat_accumulators[self._flat_groups.index(group)])
                for group, gs in whole]
        single_accumulators = [self._accumulated_gradients[self._var_index(v)]
                               for _, v in singles]
        everything = [(g, acc) for (g, _), acc in zip(singles, single_accumulators)] + \
            [(g, acc) for _, g, acc in flat]

        def update():
            averaged = [(g + acc) / k for (g, _), acc in zip(singles, single_accumulators)]
            flat_averaged = [(group, (g + acc) / k) for group, g, acc in flat]
            self._update(self._clip_gradients(averaged), [v for _, v in singles], flat_averaged)
            for _, acc in everything:
                acc.assign(zeros_like(acc))
            return constant(True)

        def accumulate():
            for g, acc in everything:
                acc.assign(g + acc)
            return constant(False)

        is_update_step = equal(floormod(self._iterations + 1, k), 0)
        cond(is_update_step, update, accumulate)

    def _prepare_update_steps(self):
        """Step-wide state the update steps share, updated once per update before them
        (Keras 3's `_backend_update_step` prologue: Nadam's momentum-cache product)."""

    # -- moving averages of the weights (use_ema)
    def _average_pairs(self):
        """[(variable, its moving average)] for every trained variable: a flat group's
        buffer and its flat average where the variables are laid out flat, else one by one."""
        flat_averages = self._flat_state.get("_model_variables_moving_average") or []
        pairs, covered = [], set()
        for group, average in zip(self._flat_groups or (), flat_averages):
            pairs.append((group.variable, average))
            covered.update(id(v) for v in group.members)
        pairs.extend((v, a) for v, a in zip(self._trainable_variables,
                                            self._model_variables_moving_average)
                     if id(v) not in covered)
        return pairs

    def _update_moving_averages(self):
        """As Keras 3, after the update: `average = m * average + (1 - m) * variable` with
        `m = ema_momentum`, except `m = 0` on the first step (iterations == 0); every
        `ema_overwrite_frequency` steps the variables take their averages' values."""
        if not self.use_ema:
            return
        not_first_step = not_equal(self.iterations, constant(0, dtype=int64))
        for variable, average in self._average_pairs():
            momentum = cast(not_first_step, variable.dtype) * self.ema_momentum
            average.assign(momentum * average + (1 - momentum) * variable)
        if self.ema_overwrite_frequency:
            def overwrite():
                for variable, average in self._average_pairs():
                    variable.assign(average)
                return constant(True)

            due = equal(floormod(self.iterations + 1, self.ema_overwrite_frequency), 0)
            cond(due, overwrite, lambda: constant(False))

    def finalize_variable_values(self, var_list):
        """At the end of `fit`: with `use_ema`, the variables take their moving averages
        (as Keras 3); otherwise nothing."""
        if not self.use_ema or not self.built:
            return
        for v in var_list:
            i = self._index.get(id(v))
            if i is not None:
                v.assign(self._model_variables_moving_average[i])

    def minimize(self, loss, var_list, tape=None):
        """Computes the gradients of `loss` with `tape` and applies them.

        Args:
            loss: a tensor (with `tape`) or a zero-argument callable returning the loss.
            var_list: the Variables to update.
            tape: the GradientTape that recorded `loss`.
        """
        var_list = list(var_list)
        if tape is None:
            if not callable(loss):
                raise ValueError("minimize needs a tape when loss is a tensor")
            with GradientTape() as tape:
                loss = loss()
        grads = tape.gradient(loss, var_list)
        self.apply_gradients(zip(grads, var_list))

    def update_step(self, gradient, variable, learning_rate):
        """Updates one variable from its gradient (each optimizer implements this)."""
        raise NotImplementedError

    # -- clipping and weight decay
    def _clip_gradients(self, grads):
        if self.clipnorm is not None and self.clipnorm > 0:
            return [_clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue is not None and self.clipvalue > 0:
            return [clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _apply_weight_decay(self, variables, lr, flat_groups=()):
        """Decoupled weight decay of `variables` and of the members of `flat_groups`
        ([(group, gradient)]): a whole buffer at once when no member is excluded."""
        if not self.weight_decay:
            return
        variables = list(variables)
        for group, _ in flat_groups:
            if any(getattr(v, "_exclude_from_weight_decay", False) for v in group.members):
                variables.extend(group.members)
            else:
                _decay(group.variable, self.weight_decay, lr)
        for v in variables:
            if not getattr(v, "_exclude_from_weight_decay", False):
                _decay(v, self.weight_decay, lr)

    def exclude_from_weight_decay(self, var_list=None):
        """Marks Variables (e.g. biases) that weight decay must not touch."""
        for v in var_list or ():
            v._exclude_from_weight_decay = True

    # -- config
    def get_config(self):
        lr = self._schedule if self._schedule is not None else float(self._learning_rate.numpy())
        if self._schedule is not None:
            lr = schedules.serialize(lr)
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"])
        return cls(**config)


def serialize(optimizer):
    """An optimizer as Keras 3 serializes it: `{"module": "keras.optimizers", "class_name",
    "config", "registered_name"}`.

    Example:
        >>> tl.optim.serialize(tl.optim.SGD())["class_name"]
        'SGD'
    """
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"serialize expects an optimizer, got {type(optimizer).__name__}")
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


class _NotFlat(Exception):
    """The build over flat Variables asked for something flat groups cannot give."""


_MISSING = object()


def _decay(variable, weight_decay, lr):
    rate = lr if lr.dtype is variable.dtype else cast(lr, variable.dtype)
    variable.assign(variable - variable * weight_decay * rate)


def _clip_by_norm(g, clip_norm):
    # Keras's safe form: no NaN gradient at zero, unchanged below the norm
    l2sum = reduce_sum(square(g))
    positive = l2sum > 0
    norm = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
    return g * clip_norm / maximum(norm, cast(clip_norm, g.dtype))


def _clip_by_global_norm(grads, clip_norm):
    total = None
    for g in grads:
        s = reduce_sum(square(cast(g, float32) if g.dtype is not float32 else g))
        total = s if total is None else total + s
    norm = sqrt(total)
    # as Keras 3: `+ (norm - norm)` leaves a finite scale alone and makes it NaN when the
    # norm is inf or NaN, so a non-finite gradient spoils every gradient, not only its own
    scale = clip_norm * minimum(1.0 / norm, 1.0 / clip_norm) + (norm - norm)
    return [g * (scale if g.dtype is float32 else cast(scale, g.dtype)) for g in grads]
