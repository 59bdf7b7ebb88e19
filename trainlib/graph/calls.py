"""A traced graph called as ONE differentiable op: `PartitionedCall` / `StatefulPartitionedCall`.

Owns: `GraphFunction` (a traced graph, optimized on a copy and compiled once), the call op
(its kernel runs the callee's program; its outputs are inferred from the callee's outputs),
and the call's gradient, as TensorFlow's forward/backward function pair: built once per
callee from its traced graph, the forward function returns the callee's outputs followed by
the intermediates the backward pass reads, and the backward function maps (inputs, those
intermediates, output gradients) to input gradients, so random draws and other state are
not recomputed (for first-order gradients; when the saved intermediates get gradients of
their own, in higher orders, one more function recomputes the forward pass). A tl.function
called eagerly under a GradientTape becomes this op.
Invariants: a call op's inputs are the callee's graph inputs in order (arguments, then the
captured values: Variable handles give their Variables gradients); the backward function is
itself a call, so gradients of any order work.
"""
from . import dtypes as _dt
from .autodiff import GradientTape, NONE_FOR_MISSING_GRADIENTS, READS_VARIABLES_INSIDE, variable_of_handle
from .errors import UnimplementedError
from .exec.program import compile_graph
from .context import graph_scope, state
from .ir import copy_graph
from .op import apply, defop
from .passes import optimize
from .tensor import TensorSpec
from .tracing import FuncGraph

CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")


def optimized_copy(graph, options=None, report=None):
    """An optimized copy of `graph`; the traced graph is left as it is. The copy returns what
    the trace's output Identities read (they would copy nothing)."""
    optimized = graph.copy()
    optimized.outputs = [t.op.inputs[0] if t.op.type == "Identity" and not t.op.control_inputs
                         and t.op.inputs[0].op.type != "Placeholder" else t
                         for t in optimized.outputs]
    return optimize(optimized, options=options, report=report)


class GraphFunction:
    """A traced FuncGraph callable on tensors: what a call op runs.

    Attributes:
        graph: the graph as traced; `arg_placeholders` take the call's arguments, its
            `captures` are appended to them as the call op's last inputs.
        name: for generated code and errors.
    """

    def __init__(self, graph, name, program=None):
        self.graph = graph
        self.name = name
        self._program = program
        self._pair = None        # the forward/backward pair built for this graph
        self._forward_of = None  # the pair whose forward function this is
        self._recompute = None
        self._stateful = None

    @property
    def stateful(self):
        """True if an op of the graph has side effects (the call is StatefulPartitionedCall)."""
        if self._stateful is None:
            self._stateful = any(op.stateful for op in self.graph.operations)
        return self._stateful

    def run(self, arrays):
        """The output arrays of the graph on `arrays` (one per graph input)."""
        program = self._program
        if program is None:
            program = self._program = compile_graph(optimized_copy(self.graph), state.xp, self.name)
        try:
            return program.fn(*arrays)
        except Exception as e:
            translated = program.translate(e)
            if translated is None:
                raise
            raise translated from e

    def call(self, args):
        """The graph's outputs (a tuple) for the tensors `args`, as one call op. Under active
        tapes the op runs the forward function, whose extra outputs feed the backward pass."""
        if not state.tapes:
            return self._apply(args)
        pair = self._pair or _Pair(self)
        full = pair.forward._apply(list(args) + [v for v, _ in self.graph.captures])
        return full[:len(self.graph.outputs)]

    def _apply(self, args):
        out = apply(CALL_OPS[self.stateful], *args, *[v for v, _ in self.graph.captures], f=self)
        return out if isinstance(out, tuple) else () if out is None else (out,)


def _differentiable(t):
    return t.dtype.is_floating or t.dtype.is_complex


def _has_gradient(t):
    return _differentiable(t) or t.dtype is _dt.resource and variable_of_handle(t) is not None


class _Traced:
    """The callee replayed into a new graph under a tape that watches its float inputs and the
    Variables behind its resource inputs (the same ops in the same order every time)."""

    def __init__(self, callee, name):
        graph = self.graph = FuncGraph(name)
        self.inputs = []
        for p in callee.graph.inputs:
            variable = p.op.attrs.get("_variable")
            t = graph.add_placeholder(p.shape, p.dtype, p.op.name,
                                      {"_variable": variable} if variable is not None else None)
            graph.arg_placeholders.append(t)
            self.inputs.append(t)
        self.sources = [t if _differentiable(t) else variable_of_handle(t)
                        for t in self.inputs if _has_gradient(t)]
        self.tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self.tape.watch(self.sources)
        env = {id(p): t for p, t in zip(callee.graph.inputs, self.inputs)}
        tapes, state.tapes = state.tapes, [self.tape]
        try:
            with graph_scope(graph):
                for op in callee.graph.operations:
                    if op.type == "Placeholder":
                        continue
                    args = [env[id(t)] for t in op.inputs]
                    if "_retrace" in op.attrs:  # a custom gradient: its rule around new tensors
                        outs = op.attrs["_retrace"](args[op.attrs["num_results"]:])
                    else:
                        new = graph.add_op(op.opdef, args, dict(op.attrs), name=op.name)
                        if op.opdef.differentiable:
                            self.tape._record(new)
                        outs = new.outputs
                    for t, o in zip(op.outputs, outs):
                        env[id(t)] = o
        finally:
            state.tapes = tapes
        self.outputs = [env[id(t)] for t in callee.graph.outputs]
        self.n_forward_ops = len(graph.operations)

    def gradient(self, targets):
        """One seed placeholder per target, then d(targets . seeds) / d(sources); returns
        (the seeds, one gradient per input: None where there is none)."""
        graph = self.graph
        with graph_scope(graph):
            seeds = [graph.add_placeholder(t.shape, t.dtype, "dy") for t in targets]
            grads = iter(self.tape.gradient(targets, self.sources, output_gradients=seeds))
        return seeds, [next(grads) if _has_gradient(t) else None for t in self.inputs]


class _Pair:
    """The forward and backward functions of one callee (see the module docstring)."""

    def __init__(self, callee):
        callee._pair = self
        self.callee = callee
        traced = _Traced(callee, callee.name + "_forward")
        graph = traced.graph
        self.n_inputs = len(traced.inputs)
        self.n_results = len(traced.outputs)
        self.float_results = [i for i, t in enumerate(traced.outputs) if _differentiable(t)]
        seeds, grads = traced.gradient([traced.outputs[i] for i in self.float_results])
        forward_ops = graph.operations[:traced.n_forward_ops]
        backward_ops = graph.operations[traced.n_forward_ops:]
        index = {id(op): i for i, op in enumerate(forward_ops)}
        saved, seen = [], set()
        for t in [x for op in backward_ops for x in op.inputs] + [g for g in grads if g is not None]:
            if id(t.op) in index and t.op.type != "Placeholder" and id(t) not in seen:
                seen.add(id(t))
                saved.append(t)
        self.saved_at = [(index[id(t.op)], t.value_index) for t in saved]
        self.grad_mask = [g is not None for g in grads]
        # forward: the callee's ops, returning its outputs and then the saved intermediates
        env = {}
        fwd = copy_graph(graph, env, {}, None)
        fwd.operations = fwd.operations[:traced.n_forward_ops]
        kept = {id(op) for op in fwd.operations}
        fwd.stateful_ops = [op for op in fwd.operations if op.stateful]
        fwd.captures = [(v, p) for v, p in fwd.captures if id(p.op) in kept]
        fwd._capture_index = {id(v): p for v, p in fwd.captures}
        fwd.arg_placeholders = [env[id(t)] for t in traced.inputs]
        fwd.inputs = fwd.arg_placeholders + [p for _, p in fwd.captures]
        with graph_scope(fwd):
            fwd.outputs = [apply("Identity", env[id(t)]) for t in traced.outputs + saved]
        self.forward = GraphFunction(fwd, callee.name + "_forward")
        self.forward._forward_of = self
        # backward: (callee inputs, saved intermediates, output gradients) -> input gradients
        bwd = FuncGraph(callee.name + "_backward")
        env = {}
        for t in traced.inputs + saved + seeds:
            attrs = {"_variable": t.op.attrs["_variable"]} if "_variable" in t.op.attrs else None
            name = t.op.name if t.op.type == "Placeholder" else "saved"
            env[id(t)] = bwd.add_placeholder(t.shape, t.dtype, name, attrs)
            bwd.arg_placeholders.append(env[id(t)])
        captured = {id(p): value for value, p in graph.captures}
        with graph_scope(bwd):
            for op in backward_ops:
                if op.type == "Placeholder":
                    if id(op.outputs[0]) not in env:  # a value a gradient rule captured
                        env[id(op.outputs[0])] = bwd._capture(captured[id(op.outputs[0])])
                    continue
                new = bwd.add_op(op.opdef, [env[id(t)] for t in op.inputs], dict(op.attrs),
                                 name=op.name)
                for t, o in zip(op.outputs, new.outputs):
                    env[id(t)] = o
            bwd.outputs = [apply("Identity", env[id(g)]) for g in grads if g is not None]
        bwd.inputs = list(bwd.arg_placeholders) + [p for _, p in bwd.captures]
        self.backward = GraphFunction(bwd, callee.name + "_backward")

    def input_gradients(self, op, dys):
        """Gradients for the forward call `op`'s inputs from its outputs' `dys` (None where
        an output got no gradient)."""
        inputs = list(op.inputs[:self.n_inputs])
        results, saved = op.outputs[:self.n_results], op.outputs[self.n_results:len(op.outputs)]
        if any(d is not None for d in dys[self.n_results:]):
            grads = self._through_saved(op, inputs, dys)
        else:
            seeds = [dys[i] if dys[i] is not None else apply("ZerosLike", results[i])
                     for i in self.float_results]
            out = iter(self.backward.call(inputs + list(saved) + seeds))
            grads = [next(out) if m else None for m in self.grad_mask]
        return tuple(grads) + (None,) * (len(op.inputs) - self.n_inputs)

    def _through_saved(self, op, inputs, dys):
        """Higher order: the saved intermediates got gradients too; one function recomputes the
        forward pass and differentiates outputs and intermediates together."""
        if self.callee._recompute is None:
            traced = _Traced(self.callee, self.callee.name + "_recompute")
            forward_ops = traced.graph.operations[:traced.n_forward_ops]
            saved = [forward_ops[i].outputs[k] for i, k in self.saved_at]
            targets = [t for t in traced.outputs + saved if _differentiable(t)]
            seeds, grads = traced.gradient(targets)
            graph = traced.graph
            with graph_scope(graph):
                graph.outputs = [apply("Identity", g) for g in grads if g is not None]
            graph.arg_placeholders = list(traced.inputs) + seeds
            graph.inputs = graph.arg_placeholders + [p for _, p in graph.captures]
            self.callee._recompute = (GraphFunction(graph, self.callee.name + "_recompute"),
                                      [g is not None for g in grads])
        fn, mask = self.callee._recompute
        outs = list(op.outputs)
        seeds = [d if d is not None else apply("ZerosLike", t)
                 for d, t in zip(dys, outs) if _differentiable(t)]
        out = iter(fn.call(inputs + seeds))
        return [next(out) if m else None for m in mask]


def _call_kernel(xp, *arrays, f, **_static):
    return tuple(f.run(arrays))


def _call_infer(*specs, f, **_static):
    return tuple(TensorSpec(t.shape, t.dtype) for t in f.graph.outputs)


def _call_grad(op, *dys):
    pair = op.attrs["f"]._forward_of
    if pair is None:
        raise UnimplementedError(f"{op.type} of {op.attrs['f'].name} ran without its forward "
                                 "function (no tape was active), so it saved nothing to "
                                 "differentiate", op=op.type)
    return pair.input_gradients(op, list(dys))


for _name, _stateful in zip(CALL_OPS, (False, True)):
    defop(_name, infer=_call_infer, grad=_call_grad, stateful=_stateful, num_outputs=None)(_call_kernel)
    READS_VARIABLES_INSIDE.add(_name)
    NONE_FOR_MISSING_GRADIENTS.add(_name)
