"""Reverse-mode autodiff: `GradientTape`, eagerly and inside graphs alike.

Owns: recording (apply hands every op to the active tapes, eager ops and graph
Operations through the same fields; the differentiable ones are recorded, the others
only noted where they consume a tracked value), the backward driver
(reverse walk, gradient aggregation, undoing broadcasting ONCE here, never in
the per-op rules), Variables as sources (their reads are what get watched).
Also: `recompute_grad` (rematerialization through `custom_gradient` and the
`OptimizationBarrier` op), and the explanations of None gradients: a tape notes
where tracked values leave it (ops with no gradient, integer results, `.numpy()`)
and `gradient` names that place, with the op and the user's line, for each source
that gets no gradient.
Invariants: gradients are built from trainlib ops, so inside a trace the
backward pass becomes part of the same graph; integer and boolean values get
no gradient; only ops between the sources and the target are differentiated.
"""
import enum
import functools
import warnings

from . import dtypes as _dt
from .context import state
from .errors import UnimplementedError, user_location
from .nest import flatten, pack_as
from .op import apply, convert_to_tensor, defop
from .tensor import Tensor, is_tensor
from .variables import Variable


def variable_of_handle(handle):
    """The Variable behind a resource handle (eager: its value; traced: the capture's Variable)."""
    value = handle._value if isinstance(handle, Tensor) else handle.op.attrs.get("_variable")
    return value if isinstance(value, Variable) else None  # not an iterator's object


# ops whose resource inputs are Variables read inside them (their gradients reach the Variables)
READS_VARIABLES_INSIDE = {"CustomGradient", "If", "While"}
# ops whose gradient rule gets None (not zeros) for outputs that received no gradient
NONE_FOR_MISSING_GRADIENTS = set()


def recording(tensors):
    """True if an active tape would record an op reading `tensors`: one of them is watched or
    computed from watched values, or is the handle of a Variable a tape watches (explicitly,
    or as a trainable Variable it watches when accessed)."""
    for tape in state.tapes:
        for t in tensors:
            if id(t) in tape._tracked:
                return True
            if t.dtype is _dt.resource:
                var = variable_of_handle(t)
                if var is not None and (id(var) in tape._watched_vars or
                                        tape._watch_accessed and var.trainable):
                    return True
    return False


def _differentiable_dtype(dtype):
    return dtype.is_floating or dtype.is_complex


class UnconnectedGradients(str, enum.Enum):
    """What `GradientTape.gradient` returns for a source the target does not depend on:
    `NONE` (None, with a warning that says why), `ZERO` (zeros shaped like the source), or
    `EXPLAIN` (trainlib's: a ValueError that says why). Equal to the plain strings "none",
    "zero" and "explain", which `gradient` also accepts.

    Example:
        >>> tape.gradient(y, x, unconnected_gradients=tl.UnconnectedGradients.ZERO)
    """
    NONE = "none"
    ZERO = "zero"
    EXPLAIN = "explain"


class GradientTape:
    """Records ops so that gradients of a target with respect to sources can be computed.

    Works eagerly and inside `tl.function`: there the gradient ops join the
    traced graph. Trainable Variables read inside the block are watched
    automatically; other tensors need `tape.watch`.

    Args:
        persistent: allow several `gradient` calls (else one).
        watch_accessed_variables: watch trainable Variables automatically.

    Example:
        >>> x = tl.constant(3.0)
        >>> with tl.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> float(tape.gradient(y, x))
        6.0
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self.reset()

    def reset(self):
        """Forgets everything recorded so far."""
        self._ops = []
        self._tracked = {}        # id(tensor) -> tensor: watched or derived from watched
        self._watched_vars = {}   # id(Variable) -> Variable
        self._reads = {}          # id(read output) -> Variable
        self._cuts = []           # where tracked values left the tape: (ids, what, location)
        self._used = False

    # -- recording
    def __enter__(self):
        state.tapes.append(self)
        return self

    def __exit__(self, *exc):
        self._stop()

    def _stop(self):
        if self in state.tapes:
            state.tapes.remove(self)

    def watch(self, tensor):
        """Watches tensors or Variables (nested structures allowed)."""
        for t in flatten(tensor):
            if isinstance(t, Variable):
                self._watched_vars[id(t)] = t
            elif is_tensor(t):
                if _differentiable_dtype(t.dtype):
                    self._tracked[id(t)] = t
            else:
                raise ValueError(f"tape.watch needs tensors or Variables, got {type(t).__name__}")

    def watched_variables(self):
        """The Variables this tape has watched, in the order they were created (as TensorFlow)."""
        seen, out = set(), []
        for v in list(self._watched_vars.values()) + list(self._reads.values()):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return tuple(sorted(out, key=lambda v: getattr(v, "_unique_id", 0)))

    def _note_cut(self, tensors, what, location=None):
        """Notes that tracked `tensors` went where the tape cannot follow (`what`, with a fix)."""
        ids = {id(t) for t in tensors if id(t) in self._tracked}
        if ids:
            if len(self._cuts) >= _MAX_CUTS:
                del self._cuts[: _MAX_CUTS // 2]
            self._cuts.append((ids, what, location or user_location()))
        return bool(ids)

    def _note_conversion(self, tensor, how):
        """A tracked value became a numpy/Python value (`how`); True if this tape tracks it."""
        return self._note_cut([tensor], f"{how} turned it into a numpy value, constant to the "
                              "tape (keep the computation in tl ops)")

    def _record(self, op):
        tracked = self._tracked
        if not op.opdef.differentiable:
            if any(id(t) in tracked for t in op.inputs):
                self._note_cut(op.inputs, _cut_reason(op), getattr(op, "location", None))
            return
        if op.opdef.name in READS_VARIABLES_INSIDE:  # Variables read inside them
            for h in op.inputs:
                if h.dtype is _dt.resource:
                    var = variable_of_handle(h)
                    if var is not None and (id(var) in self._watched_vars or
                                            self._watch_accessed and var.trainable):
                        self._watched_vars[id(var)] = var
                        self._reads[id(h)] = var
                        tracked[id(h)] = h
        if op.opdef.name == "ReadVariableOp":
            var = variable_of_handle(op.inputs[0])
            if var is None:
                return
            if id(var) not in self._watched_vars:
                if not (self._watch_accessed and var.trainable):
                    return
                self._watched_vars[id(var)] = var
            out = op.outputs[0]
            self._reads[id(out)] = var
            tracked[id(out)] = out
            return
        for t in op.inputs:
            if id(t) in tracked:
                break
        else:
            return
        self._ops.append(op)
        kept = False
        for out in op.outputs:
            if _differentiable_dtype(out.dtype):
                tracked[id(out)] = out
                kept = True
        if not kept and op.outputs:
            dtype = op.outputs[0].dtype.name
            self._note_cut(op.inputs, f"{op.opdef.name} made {dtype} values, which carry no "
                           "gradient (keep a floating dtype along the path)",
                           getattr(op, "location", None))

    def stop_recording(self):
        """A context in which ops are not recorded by this tape."""
        tape = self

        class _Paused:
            def __enter__(self):
                self.was = tape in state.tapes
                tape._stop()

            def __exit__(self, *exc):
                if self.was:
                    state.tapes.append(tape)

        return _Paused()

    # -- differentiation
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """d(sum of target) / d(each source), shaped like the sources.

        Args:
            target: a tensor, or a nested structure of tensors (their gradients add up).
            sources: a tensor, Variable, or nested structure of them.
            output_gradients: gradients of the target(s) to start from (default ones).
            unconnected_gradients: "none" (None for unconnected sources, each with a warning
                that says where its path to the target left the tape: a `.numpy()` or
                Python number, an assign, an integer cast, `stop_gradient`, another op with
                no gradient, a Variable never read or a value never watched, with the op and
                the line), "zero" (zeros, silently), or "explain" (a ValueError with that
                explanation instead of None).

        Returns:
            The gradients, in the structure of `sources`.

        Raises:
            RuntimeError: on a second call of a non-persistent tape.
            ValueError: with unconnected_gradients="explain", for a source with no gradient.
        """
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set "
                               "of gradients; use GradientTape(persistent=True) for more.")
        if unconnected_gradients not in ("none", "zero", "explain"):
            raise ValueError(f"unconnected_gradients must be 'none', 'zero' or 'explain' (or "
                             f"tl.UnconnectedGradients.NONE / ZERO), got {unconnected_gradients!r}")
        if target is None:
            raise TypeError("Argument `target` should be a tensor or a nested structure of tensors "
                            "or Variables to be differentiated, but received None.")
        self._used = True
        targets = flatten(target)
        seeds = flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        source_leaves = flatten(sources)
        # a Variable target is its own value: d(v)/d(v) is its seed (ones), as TensorFlow
        var_seeds = {}
        for t, seed in zip(targets, seeds):
            if isinstance(t, Variable):  # watched or not, as a tensor target that is a source
                g = apply("OnesLike", t.read_value()) if seed is None else _as_grad(seed, t)
                var_seeds[id(t)] = g if id(t) not in var_seeds else var_seeds[id(t)] + g
        was_recording = self in state.tapes
        self._stop()  # this tape must not record its own backward pass
        try:
            grads = backprop(self._ops, targets, seeds)
            out = []
            for s in source_leaves:
                if isinstance(s, Variable):
                    g = var_seeds.get(id(s))
                    for read_id, var in self._reads.items():
                        if var is s and read_id in grads:
                            g = grads[read_id] if g is None else g + grads[read_id]
                elif is_tensor(s):
                    g = grads.get(id(s)) if _differentiable_dtype(s.dtype) else None
                else:
                    raise ValueError(f"gradient sources must be tensors or Variables, got {type(s).__name__}")
                if g is None and unconnected_gradients == "zero":
                    g = apply("ZerosLike", s.read_value() if isinstance(s, Variable) else s)
                elif g is None and id(s) not in var_seeds:
                    message = self._explain_none(s, len(out), targets)
                    if unconnected_gradients == "explain":
                        raise ValueError(message)
                    _warn_at_user_line(message)
                out.append(g)
        finally:
            if was_recording:
                state.tapes.append(self)
        if not self._persistent:
            self._ops, self._tracked = [], {}
        return pack_as(sources, out)

    def _explain_none(self, source, index, targets):
        """Why `source` (number `index` of the sources) got no gradient from `targets`: the
        message of the warning (or, with unconnected_gradients="explain", the error)."""
        if isinstance(source, Variable):
            name = f"Variable '{source.name}'"
            starts = {rid for rid, v in self._reads.items() if v is source}
            if not starts:
                if not source.trainable and id(source) not in self._watched_vars:
                    why = ("it is not trainable, so the tape does not watch it; call "
                           "tape.watch(variable) to differentiate with respect to it")
                else:
                    why = ("it was never read while the tape recorded; compute the target from "
                           "it inside the `with tl.GradientTape()` block")
                return _none_message(name, why)
        else:
            name = getattr(source, "name", None) if not isinstance(source, Tensor) else None
            name = f"source {index} ({name or f'shape {source.shape}, {source.dtype.name}'})"
            if not _differentiable_dtype(source.dtype):
                return _none_message(name, f"its dtype {source.dtype.name} carries no gradient; "
                                     "cast it to a floating dtype before using it")
            if id(source) not in self._tracked:
                return _none_message(name, "the tape does not watch it; call tape.watch(x) "
                                     "before computing from it (only trainable Variables are "
                                     "watched automatically)")
            starts = {id(source)}
        reached = set(starts)
        for op in self._ops:
            if any(id(t) in reached for t in op.inputs):
                reached.update(id(o) for o in op.outputs)
        if any(id(t) in reached for t in targets):
            return _none_message(name, "its path to the target runs only through ops whose "
                                 "gradient gives it none")
        cuts = [(what, where) for ids, what, where in self._cuts if ids & reached]
        if cuts:
            listed = "; ".join(f"{what} at {where}" for what, where in cuts[-3:])
            return _none_message(name, f"its path to the target left the tape: {listed}")
        return _none_message(name, "the target does not depend on it (no value computed from it "
                             "reached the target: a branch not taken, or another value used)")

    def jacobian(self, target, sources, unconnected_gradients="none", experimental_use_pfor=False):
        """d(target[i]) / d(source) for every element i of the target, stacked in front.

        Returns tensors of shape target.shape + source.shape.
        """
        from .ops import array as _array  # noqa: PLC0415 -- ops (control_flow) import this module
        target = apply("Identity", target) if not is_tensor(target) else target
        n = target.shape.num_elements()
        if n is None:
            raise ValueError("jacobian needs a target of static shape")
        persistent, self._persistent = self._persistent, True
        rows = []
        try:
            for i in range(n):
                seed = _array.reshape(_array.one_hot(i, n, dtype=target.dtype), list(target.shape))
                rows.append(self.gradient(target, sources, output_gradients=seed,
                                          unconnected_gradients=unconnected_gradients))
        finally:
            self._persistent = persistent
        leaves = flatten(sources)
        out = []
        for j, s in enumerate(leaves):
            row_j = [flatten(r)[j] for r in rows]
            shape = list(target.shape) + list(s.shape)
            if any(g is None for g in row_j):
                out.append(None)
            else:
                out.append(_array.reshape(_array.stack(row_j), shape))
        return pack_as(sources, out)


    def batch_jacobian(self, target, source, unconnected_gradients="none",
                       parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of each example: `result[b, i..., j...]` is
        d(target[b, i...]) / d(source[b, j...]), assuming example b of the target depends only
        on example b of the source (as TensorFlow's `batch_jacobian`).

        Args:
            target: a tensor of shape [batch, y...] (the y dims known while tracing).
            source: a tensor of shape [batch, x...].
            unconnected_gradients: "none" (None when unconnected) or "zero".

        Returns:
            A tensor of shape [batch, y..., x...] (zeros when the target does not depend on
            the source, whatever `unconnected_gradients` says, as TensorFlow).

        Raises:
            ValueError: for a scalar target or source, or unknown y dims.

        Example:
            >>> x = tl.constant([[1., 2.], [3., 4.]])
            >>> with tl.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.batch_jacobian(y, x).shape
            TensorShape([2, 2, 2])
        """
        from .ops import array as _array  # noqa: PLC0415 -- the array ops sit above autodiff
        if target.shape.rank in (None, 0) or source.shape.rank in (None, 0):
            raise ValueError(f"batch_jacobian needs a target and a source with a batch "
                             f"dimension first, got shapes {target.shape} and {source.shape}")
        inner = target.shape[1:]
        n = inner.num_elements()
        if n is None:
            raise ValueError(f"batch_jacobian needs the target's non-batch dims known, got "
                             f"{target.shape}")
        persistent, self._persistent = self._persistent, True
        rows = []
        try:
            for i in range(n):   # one seed per output position, every example at once
                seed = _array.broadcast_to(_array.reshape(
                    _array.one_hot(i, n, dtype=target.dtype), inner.as_list()),
                    _array.shape(target))
                rows.append(self.gradient(target, source, output_gradients=seed,
                                          unconnected_gradients=unconnected_gradients))
        finally:
            self._persistent = persistent
        shape = _array.concat([_array.shape(source)[:1], inner.as_list(),
                               _array.shape(source)[1:]], 0)
        if any(r is None for r in rows):   # zeros either way, as TensorFlow's
            return _array.zeros(shape, dtype=target.dtype)
        return _array.reshape(_array.stack(rows, axis=1), shape)   # rows: [batch, x...]


_MAX_CUTS = 256   # notes kept per tape (the latest)


def _cut_reason(op):
    """What a non-differentiable op did to a tracked value, and the fix."""
    kind = op.opdef.name
    if kind == "StopGradient":
        return "tl.stop_gradient stopped it (remove it if a gradient should flow)"
    if op.opdef.variable_access in ("assign", "update"):
        var = variable_of_handle(op.inputs[0])
        return (f"{kind} stored it into Variable '{getattr(var, 'name', '?')}' (a write carries "
                "no gradient; read values of a Variable are new sources)")
    return f"{kind}, which has no gradient, consumed it"


def _warn_at_user_line(message):
    where = user_location() or "?:0"
    filename, _, line = where.rpartition(":")
    warnings.warn_explicit(message, UserWarning, filename or where,
                           int(line) if line.isdigit() else 0)


def _none_message(name, why):
    return f"GradientTape.gradient: no gradient for {name}: {why}."


def backprop(ops, targets, seeds):
    """Walks the recorded `ops` backwards from `targets`; returns {id(tensor): gradient}.

    The op rules return gradients of the broadcast shape; they are summed to
    each input's shape here, and contributions to one tensor are added up.
    """
    from .ops.array import ones_like, zeros_like  # noqa: PLC0415 -- ops import this module
    grads = {}
    for t, seed in zip(targets, seeds):
        if not is_tensor(t) or not _differentiable_dtype(t.dtype):
            continue
        g = ones_like(t) if seed is None else _as_grad(seed, t)
        grads[id(t)] = grads[id(t)] + g if id(t) in grads else g
    for op in reversed(ops):
        outs = op.outputs
        if not any(id(o) in grads for o in outs):
            continue
        if op.opdef.name in NONE_FOR_MISSING_GRADIENTS:
            dys = [grads.get(id(o)) for o in outs]
        else:
            dys = [grads.get(id(o)) if id(o) in grads else
                   (zeros_like(o) if _differentiable_dtype(o.dtype) else None) for o in outs]
        rule = op.opdef.grad
        if rule is None:
            raise UnimplementedError(f"No gradient is defined for op {op.opdef.name}; wrap the "
                                     "computation in tl.stop_gradient or define a tl.custom_gradient.",
                                     op=op.opdef.name)
        # the gradient's ops (unbroadcasting and sums included) are attributed to the forward
        # op's line (the profiler's summary)
        location = getattr(op, "location", None)   # an eager tape's EagerOp has none
        origin = getattr(op, "origin", None) or ((location, None) if location else None)
        state.origins.append(origin)
        try:
            in_grads = rule(op, *dys)
            for x, g in zip(op.inputs, in_grads):
                if g is None or not _differentiable_dtype(x.dtype) and x.dtype is not _dt.resource:
                    continue
                if x.dtype is not _dt.resource:
                    g = _unbroadcast(g, x)
                key = id(x)
                grads[key] = grads[key] + g if key in grads else g
        finally:
            state.origins.pop()
    return grads


def _as_grad(seed, like):
    return convert_to_tensor(seed, dtype=like.dtype)


def _unbroadcast(g, x):
    gs, xs = g.shape, x.shape
    if gs == xs and xs.is_fully_defined():
        return g
    if gs.is_fully_defined() and xs.is_fully_defined():
        from .ops import array as _array, math as _math  # noqa: PLC0415 -- ops import this module
        axes = _array._reduce_axes_to(tuple(gs), tuple(xs))
        if axes:
            g = _math.reduce_sum(g, axis=list(axes))
        return _array.reshape(g, list(xs)) if tuple(g.shape) != tuple(xs) else g
    return apply("SumToShapeOf", g, x)


def _custom_gradient_kernel(xp, *arrays, num_results, **_static):
    return tuple(arrays[:num_results])


def _custom_gradient_infer(*specs, num_results, **_static):
    return tuple(specs[:num_results])


def _custom_gradient_rule(op, *dys):
    """The user's rule: None for the forward results (their own ops are never differentiated),
    then one gradient per input tensor and per Variable the function read."""
    n = op.attrs["num_results"]
    grads = op.attrs["_grad_fn"](list(dys))
    return (None,) * n + tuple(grads)


# CustomGradient(results..., inputs..., variable handles...) -> results: an identity on the
# results whose gradient is the user's rule. Its inputs name what the rule differentiates, so
# tapes reach the inputs and Variables only through it, eagerly and in graphs alike (as
# TensorFlow's IdentityN with an overridden gradient). `_retrace` re-runs the decorated function
# on new inputs, for replays of a loop body that must build a fresh rule around fresh tensors.
defop("CustomGradient", infer=_custom_gradient_infer, grad=_custom_gradient_rule,
      num_outputs=None)(_custom_gradient_kernel)


def custom_gradient(f=None):
    """Decorates `f(*x)` returning `(y, grad_fn)` so that tapes use `grad_fn(dy)` as its gradient.

    The rule replaces the gradient of the ops inside `f`, eagerly and inside
    `tl.function` (also in loop bodies, and for higher-order gradients: the
    ops of `grad_fn` are recorded by outer tapes). `grad_fn(*dys)` gets one
    upstream gradient per output and returns one gradient per tensor argument.
    If `f` reads trainable Variables that are not its arguments,
    `grad_fn(*dys, variables=...)` must return `(input_grads, variable_grads)`,
    as TensorFlow's.

    Example:
        >>> @tl.custom_gradient
        ... def clip_grad(x):
        ...     def grad(dy):
        ...         return tl.clip_by_value(dy, -1.0, 1.0)
        ...     return tl.identity(x), grad
    """
    if f is None:
        return custom_gradient
    name = getattr(f, "__name__", "f")

    def wrapped(*args, **kwargs):
        args = tuple(convert_to_tensor(a) if not is_tensor(a) and not isinstance(a, Variable)
                     and _is_value(a) else a for a in args)
        watcher = GradientTape(watch_accessed_variables=True)
        # outer tapes record the inside of f too (as TensorFlow's), so that ops grad_fn reuses
        # (a value computed in f) differentiate for higher-order gradients; the first-order
        # walk never enters them, as the CustomGradient op gives its results no gradient
        tapes = state.tapes
        state.tapes = tapes + [watcher]
        try:
            outputs, grad_fn = f(*args, **kwargs)
            leaves = flatten(outputs)
            results = [convert_to_tensor(o) if not is_tensor(o) else o for o in leaves]
        finally:
            state.tapes = tapes
        arg_leaves = [a for a in flatten(list(args)) + flatten(kwargs)
                      if is_tensor(a) or isinstance(a, Variable)]
        variables = [v for v in watcher.watched_variables()
                     if v.trainable and not any(v is a for a in arg_leaves)]
        if variables:
            import inspect  # noqa: PLC0415
            params = inspect.signature(grad_fn).parameters
            if "variables" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                raise TypeError(f"@tl.custom_gradient {name} reads the trainable Variables "
                                f"{[v.name for v in variables]}, so its grad_fn must accept a "
                                "`variables` keyword argument and return (input_grads, variable_grads).")
        n_args = len(arg_leaves)

        def rule(dys):
            dys = [dy if dy is not None else apply("ZerosLike", r) for dy, r in zip(dys, results)]
            if variables:
                input_grads, var_grads = grad_fn(*dys, variables=list(variables))
                var_grads = list(var_grads)
                if len(var_grads) != len(variables):
                    raise ValueError(f"@tl.custom_gradient {name}: grad_fn returned "
                                     f"{len(var_grads)} Variable gradients for {len(variables)} "
                                     "Variables")
            else:
                input_grads, var_grads = grad_fn(*dys), []
            input_grads = flatten(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
            if len(input_grads) != n_args:
                raise ValueError(f"@tl.custom_gradient {name} expected grad_fn to return {n_args} "
                                 f"gradients, but it returned {len(input_grads)}")
            return [None if g is None else _as_grad(g, x) for g, x in zip(input_grads, inputs)] + \
                [None if g is None else _as_grad(g, v) for g, v in zip(var_grads, variables)]

        # a Variable argument enters as a read of it (recorded by the tapes), as TensorFlow's
        inputs = [a.read_value() if isinstance(a, Variable) else a for a in arg_leaves]
        handles = [v.handle if state.graph is None else state.graph.capture_variable(v)
                   for v in variables]

        def retrace(new_inputs):
            it = iter(new_inputs)
            rebuilt = [next(it) if is_tensor(a) or isinstance(a, Variable) else a for a in args]
            return flatten(wrapped(*rebuilt, **kwargs))

        out = apply("CustomGradient", *results, *inputs, *handles, num_results=len(results),
                    _grad_fn=rule, _retrace=retrace)
        out = list(out) if isinstance(out, tuple) else [] if out is None else [out]
        if state.graph is not None:  # an identity after it, so it is never a graph output itself
            out = [apply("Identity", o) for o in out]
        return pack_as(outputs, out)

    import functools  # noqa: PLC0415
    return functools.wraps(f)(wrapped)


def grad_pass_through(f):
    """Wraps `f` so that its gradient is the identity: `f(x)` forward, the upstream gradient
    passed to `x` unchanged backward (a straight-through estimator). Variables `f` reads
    get no gradient through it, as TensorFlow's.

    Example:
        >>> x = tl.Variable(1.0)
        >>> with tl.GradientTape() as tape:
        ...     y = tl.grad_pass_through(tl.round)(x * 0.7)
        >>> float(tape.gradient(y, x))
        0.7
    """
    def straight_through(*args, **kwargs):
        def grad(*dys, variables=None):
            if variables is not None:
                return dys, [None] * len(variables)
            return dys
        return f(*args, **kwargs), grad

    return custom_gradient(straight_through)


def _barrier_kernel(xp, *arrays, num_passed, **_static):
    return tuple(arrays[:num_passed])


def _barrier_infer(*specs, num_passed, **_static):
    return tuple(specs[:num_passed])


# OptimizationBarrier(values..., after...) -> values: an identity on `values` that runs after
# `after` (its extra inputs) and is never merged, folded or simplified away. A recomputation
# starts from its outputs, so the recomputed ops are new ops of the backward pass (common
# subexpression elimination cannot merge them with the forward ones, which would keep the
# forward values alive), as XLA's op of that name does for JAX's remat.
defop("OptimizationBarrier", infer=_barrier_infer, num_outputs=None,
      grad=lambda op, *dys: tuple(dys) + (None,) * (len(op.inputs) - len(dys)))(_barrier_kernel)


def recompute_grad(f):
    """Wraps `f` so that the backward pass recomputes its intermediate values instead of
    keeping them from the forward pass (rematerialization, gradient checkpointing).

    Only `f`'s inputs and outputs stay alive between the forward and the backward pass;
    what `f` computes in between is computed again, from its inputs, when the gradient
    reaches it. This trades one more forward pass of `f` for its activations' memory, in
    eager code and in `tl.function` graphs alike (the memory plan of the compiled step
    shows the drop). The gradients are those of `f` itself. `f` should be deterministic:
    random ops inside it draw again when recomputed.

    Args:
        f: a function of tensors (and keyword arguments that are not tensors) returning a
            tensor or a nested structure of tensors. It may read trainable Variables.

    Returns:
        A function with `f`'s signature and results.

    Example:
        >>> block = tl.recompute_grad(lambda x: tl.tanh(tl.tanh(x) * 2.0))
        >>> x = tl.constant([0.5, 1.0])
        >>> with tl.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = tl.reduce_sum(block(x))
        >>> tape.gradient(y, x).shape
        TensorShape([2])
    """
    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        def forward(*inputs):
            result = f(*inputs, **kwargs)

            def grad_fn(*dys, variables=None):
                tensors = [i for i, a in enumerate(inputs) if is_tensor(a)]
                differentiated = [i for i, a in enumerate(inputs)
                                  if is_tensor(a) or isinstance(a, Variable)]
                fresh = list(inputs)
                if tensors:
                    passed = apply("OptimizationBarrier", *[inputs[i] for i in tensors], *dys,
                                   num_passed=len(tensors))
                    passed = list(passed) if isinstance(passed, tuple) else [passed]
                    for i, t in zip(tensors, passed):
                        fresh[i] = t
                with GradientTape() as tape:
                    for i in differentiated:
                        tape.watch(fresh[i])
                    again = f(*fresh, **kwargs)
                sources = [fresh[i] for i in differentiated] + list(variables or [])
                grads = tape.gradient(flatten(again), sources, output_gradients=list(dys))
                n = len(differentiated)
                return (grads[:n], grads[n:]) if variables else grads[:n]
            return result, grad_fn
        return custom_gradient(forward)(*args)

    return wrapped


def _is_value(a):
    """Numbers, lists and arrays: arguments that convert to tensors (others pass through)."""
    return isinstance(a, (int, float, list)) or hasattr(a, "__array__")
